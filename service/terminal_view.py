"""A plain-text picture of a board and its clock, for ``dgt-service monitor``.

Pure: it formats what it is given and knows nothing of terminals beyond the width of a
line.  The command redraws it in place on a terminal and prints event lines otherwise.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from dgt.events import (
    BoardEvent,
    BoardMemory,
    BoardSnapshot,
    ButtonPressed,
    ClockConnection,
    ClockUpdate,
    LeverMoved,
    LinkLost,
    LinkRestored,
    SquareChanged,
)
from dgt.protocol.constants import Piece
from dgt.recording import square_name


def clock_text(seconds: float) -> str:
    """``h:mm:ss`` from one hour up, else ``m:ss``."""
    total = max(0, int(seconds))
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def describe(event: BoardEvent) -> str:
    """One line for the event list."""
    match event:
        case SquareChanged(square=square, piece=piece, previous=previous):
            if piece is Piece.EMPTY:
                return f"lift  {square_name(square)} ({previous.symbol})"
            return f"place {square_name(square)} {piece.symbol}"
        case BoardSnapshot(reason=reason):
            return f"board dump ({reason})"
        case ClockUpdate(left=left, right=right, running=running):
            state = "running" if running else "stopped"
            return f"clock {clock_text(left)} | {clock_text(right)} {state}"
        case LeverMoved(high=high):
            return f"clock pressed: {high.value} time runs"
        case ButtonPressed(button=button):
            return f"clock button {button}"
        case ClockConnection(connected=connected, version=version, reason=reason):
            if connected:
                v = f" version {version[0]}.{version[1]}" if version else ""
                return f"clock connected{v}"
            return f"clock disconnected{': ' + reason if reason else ''}"
        case BoardMemory(records=records):
            return f"board memory: {len(records)} records"
        case LinkLost(reason=reason):
            return f"LINK LOST: {reason}"
        case LinkRestored(changed=changed, downtime=downtime):
            moved = ", ".join(sorted(square_name(s) for s in changed)) or "nothing"
            return f"link back after {downtime:.1f} s; changed meanwhile: {moved}"
    return repr(event)


@dataclass
class MonitorView:
    """What the monitor shows; fed events, rendered on demand."""

    title: str = ""
    squares: list[Piece] = field(default_factory=lambda: [Piece.EMPTY] * 64)
    clock: ClockUpdate | None = None
    link: str = "connecting"
    recent: list[str] = field(default_factory=list)
    keep: int = 8

    def apply(self, event: BoardEvent) -> None:
        match event:
            case SquareChanged(square=square, piece=piece):
                self.squares[square] = piece
            case BoardSnapshot(squares=squares):
                self.squares = list(squares)
                self.link = "ready"
            case ClockUpdate():
                self.clock = event
            case LinkLost():
                self.link = "link lost, reconnecting"
            case LinkRestored():
                self.link = "ready"
        if not isinstance(event, ClockUpdate):
            self.recent.append(f"{event.time:10.3f}  {describe(event)}")
            del self.recent[: -self.keep]

    def render(self) -> str:
        lines = [self.title, f"link: {self.link}", ""]
        for rank in range(7, -1, -1):
            row = []
            for file in range(8):
                piece = self.squares[rank * 8 + file]
                dark = (rank + file) % 2 == 0
                row.append(piece.symbol if piece is not Piece.EMPTY else ("." if dark else " "))
            lines.append(f" {rank + 1}  " + " ".join(row))
        lines.append("    a b c d e f g h")
        lines.append("")
        lines.append(self._clock_line())
        lines.append("")
        lines.extend(self.recent)
        return "\n".join(lines)

    def _clock_line(self) -> str:
        c = self.clock
        if c is None:
            return "clock: (no clock data yet)"
        left = clock_text(c.left) + (" flag" if c.left_flag else "")
        right = clock_text(c.right) + (" flag" if c.right_flag else "")
        lever = "\\" if c.lever_high.value == "left" else "/"
        state = "running" if c.running else "stopped"
        return f"clock: {left:>10}  {lever}  {right:<10} ({state})"


def render_lines(events: Iterable[BoardEvent]) -> list[str]:
    """Event lines for a non-terminal output (a pipe or a file)."""
    return [f"{e.time:10.3f}  {describe(e)}" for e in events]
