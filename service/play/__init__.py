"""Play online from the board: the local WebSocket API that lichess's and chess.com's DGT
pages speak (the "eboards" API of DGT LiveChess, ``ws://localhost:1982/api/v1.0``), served
from our driver and recogniser.

* :mod:`service.play.eboard` -- one board's feed state, pure: board events and recogniser
  events in, the ``eboardevent`` feed (board placement, SAN list since the last setup,
  clock) and the squares to light out;
* :mod:`service.play.api` -- the calls (``eboards``, ``subscribe``, ``unsubscribe``,
  ``call`` with method ``setup``), pure: a message in, the answers and feeds out;
* :mod:`service.play.server` -- the thin aiohttp WebSocket server and the board link.
"""
