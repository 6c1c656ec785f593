"""A faithful virtual DGT board.

- :class:`VirtualBoard` (``dgt.emulator.board``): one board as a pure state machine: host
  bytes in, answer bytes out, time passed in; pieces lifted and placed, a clock lever and
  buttons.  A classic e-Board, a Revelation II or a Pegasus.
- :class:`VirtualClock` (``dgt.emulator.clock``): the DGT 3000 (or XL) on its clock port.
- :class:`BusLine` (``dgt.emulator.bus``): several boards on one bus-mode line.
- :class:`EmulatorServer` (``dgt.emulator.pty``): any of these on a real pseudo-terminal,
  with unplug / plug and a stable path.
- :class:`Console` (``dgt.emulator.console``) and :func:`replay_games`
  (``dgt.emulator.replay``): act on the board by hand or play PGN games on it with human
  timing (``dgt.emulator.human``).
"""

from dgt.emulator.board import BoardMode, VirtualBoard, start_squares
from dgt.emulator.bus import BusLine, make_bus
from dgt.emulator.clock import ClockModel, VirtualClock
from dgt.emulator.console import Console, ConsoleError, LocalLine, Player, parse_command
from dgt.emulator.pty import EmulatorServer
from dgt.emulator.replay import read_games, replay_games

__all__ = [
    "BoardMode",
    "BusLine",
    "ClockModel",
    "Console",
    "ConsoleError",
    "EmulatorServer",
    "LocalLine",
    "Player",
    "VirtualBoard",
    "VirtualClock",
    "make_bus",
    "parse_command",
    "read_games",
    "replay_games",
    "start_squares",
]
