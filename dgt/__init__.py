"""Driver for DGT electronic chessboards and clocks: the wire protocol, transports, the
board and clock, and a faithful emulator.  It knows bytes and squares, not chess rules."""

import logging

from dgt.board import Board, BoardInfo, BoardState, LedKind
from dgt.bus_master import BusBoard, BusMaster
from dgt.clock import Clock, ClockSender, ClockState
from dgt.mirror import Mirror
from dgt.sync import SyncBoard
from dgt.transports import Transport, open_transport

logging.getLogger(__name__).addHandler(logging.NullHandler())

__all__ = [
    "Board",
    "BoardInfo",
    "BoardState",
    "BusBoard",
    "BusMaster",
    "Clock",
    "ClockSender",
    "ClockState",
    "LedKind",
    "Mirror",
    "SyncBoard",
    "Transport",
    "open_transport",
]
