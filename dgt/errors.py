"""The driver's exceptions.  Every message says what happened and what to do about it."""

from __future__ import annotations


class DgtError(Exception):
    """Base of every error the driver raises."""


class ProtocolError(DgtError):
    """Bytes that cannot be a DGT message (only raised by strict decoders, never by the
    frame parser, which skips garbage)."""


class ConnectionFailed(DgtError):
    """A port or device could not be opened or stopped answering."""


class PortNotFound(ConnectionFailed):
    def __init__(self, port: str) -> None:
        super().__init__(
            f"no such port {port}: check the cable, or run 'dgt-service scan' to list boards"
        )
        self.port = port


class PortPermissionDenied(ConnectionFailed):
    def __init__(self, port: str) -> None:
        super().__init__(
            f"permission denied on {port}: install udev/99-dgt.rules "
            "(see README) or add yourself to group dialout, then plug the board in again"
        )
        self.port = port


class PortBusy(ConnectionFailed):
    def __init__(self, port: str) -> None:
        super().__init__(f"{port} is in use by another program: close it and try again")
        self.port = port


class NotADgtBoard(ConnectionFailed):
    def __init__(self, port: str, seconds: float) -> None:
        super().__init__(
            f"{port} did not answer like a DGT board within {seconds:g} s: "
            "is this the right port, and is the board switched on?"
        )
        self.port = port


class LinkClosed(DgtError):
    """The board object was closed; no more commands can be sent."""


class ClockNotAnswering(DgtError):
    """A clock command got no acknowledgement after every retry."""


class NotSupported(DgtError):
    """The board cannot do this (LEDs on a board without LEDs, a clock on a Pegasus)."""
