"""``service.web``: the hall's mirror on the web.

* ``/`` overview of all tables, ``/tables/ID`` one table (board, clocks, moves, scores,
  claims, irregularities, link), both live over Server-Sent Events (``/api/stream``);
* PGN feeds: ``/games.pgn`` (every game), ``/rounds/R.pgn`` (all games of a round),
  ``/games/ID.pgn`` (one game), ``[%clk]`` on every move, ``GameId`` and ``Board`` tags,
  a stable order and ``?feed=lichess|other`` (:mod:`service.web.feeds`); every 200 JSON or
  PGN answer with an ETag (304) and gzip;
* JSON: ``/api/tables``, ``/api/tables/ID``, ``/api/tables/ID/log``, ``/api/games``;
* admin: ``/admin`` the organiser's page; ``POST /api/admin/tables/ID/COMMAND`` (start, end,
  players, claim, rule, correct) and ``GET /api/admin/options``, both with
  ``Authorization: Bearer TOKEN``; ``GET /api/broadcast`` (the lichess pushes) too.

Public pages are read-only; every error is a one-line JSON ``{"error": ...}``.  Admin text
that no store can hold is refused at the edge (:mod:`service.web.edge`), as is a ``Host``
the service is not bound to or configured for (``[service] hosts``); the connections,
header time-out and open-files limit are in :mod:`service.web.limits`.
"""

from service.web.app import WebServer, create_app

__all__ = ["WebServer", "create_app"]
