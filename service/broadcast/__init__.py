"""``service.broadcast``: the games where a relay can follow them.

* :mod:`~service.broadcast.lichess_pgn`: a game as a relay reads it (``GameId``, ``Board``,
  the segments of an illegal move that stood, what lichess cannot read), pure;
* :mod:`~service.broadcast.hall_feeds`: the hall's games in the one stable order of every
  feed, and change notes for the pusher and the folder;
* :mod:`~service.broadcast.push`: rounds pushed to lichess (``[broadcast]`` config);
* :mod:`~service.broadcast.folder`: the LiveChess folder layout (``--pgn-dir``).
"""
