"""Driver for DGT electronic chessboards and clocks: the wire protocol, transports, the
board and clock, and a faithful emulator.  It knows bytes and squares, not chess rules."""

import logging

logging.getLogger(__name__).addHandler(logging.NullHandler())
