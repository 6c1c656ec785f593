"""A re-reading's quick test that failed holds while the game still made the actions its
tries went through, each read among the same readings; a game that is another, went
another way, or whose actions were read again (or gained readings) asks again."""

from __future__ import annotations

from service.recognize.recognizer import _Dead, _Played
from service.variants import get_variant
from service.variants.base import LegalAction, VariantGame


def _play(game: VariantGame, uci: str) -> _Played:
    action = next(la for la in game.legal_actions() if la.uci == uci)
    played = _Played(action, game.san(action.action), game.move_number(), ())
    game.apply(action.action)
    return played


def _game_and_played(ucis: tuple[str, ...]) -> tuple[VariantGame, list[_Played]]:
    variant = get_variant("standard")
    game = variant.new_game(variant.default_start())
    return game, [_play(game, uci) for uci in ucis]


def _other(game: VariantGame, uci: str) -> LegalAction:
    return next(la for la in game.legal_actions() if la.uci == uci)


def test_a_failed_test_holds_while_its_actions_stand() -> None:
    ucis = ("e2e4", "e7e5", "g1f3", "b8c6")
    game, played = _game_and_played(ucis)
    later = played[1:]  # the action read another way first, then those after it
    tried = later[1:2]  # its tries went through one more action
    dead = _Dead(game, ucis[:3], tuple((p, p.alternatives, p.unseen, p.swept) for p in tried))
    assert dead.holds(game, ucis, later)
    assert dead.holds(game, ucis[:3], later[:2])  # no action after: the same tries
    more = (*ucis, "f1c4")
    assert dead.holds(game, more, [*later, _play(game, "f1c4")])  # any action after

    # another game, or the game gone another way before the tries stopped
    other, _ = _game_and_played(ucis)
    assert not dead.holds(other, ucis, later)
    assert not dead.holds(game, ("e2e4", "e7e5", "b1c3", "b8c6"), later)


def test_a_failed_test_is_asked_again_once_its_actions_change() -> None:
    ucis = ("e2e4", "e7e5", "g1f3", "b8c6")
    game, played = _game_and_played(ucis)
    later = played[1:]
    tried = later[1:2]
    dead = _Dead(game, ucis[:3], tuple((p, p.alternatives, p.unseen, p.swept) for p in tried))
    # the action read again (a new _Played, the same move)
    again = _Played(later[1].action, later[1].san, later[1].number, ())
    assert not dead.holds(game, ucis, [later[0], again, later[2]])
    # the action gained another reading, or was read as a swept capture
    spare = _other(game, "a2a3")  # (any action stands for another reading here)
    later[1].alternatives += ((spare, "a3"),)
    assert not dead.holds(game, ucis, later)
    later[1].alternatives = tried[0].alternatives = ()
    dead = _Dead(game, ucis[:3], tuple((p, p.alternatives, p.unseen, p.swept) for p in tried))
    assert dead.holds(game, ucis, later)
    later[1].swept = True
    assert not dead.holds(game, ucis, later)
    later[1].swept = False
    later[1].unseen = (spare,)
    assert not dead.holds(game, ucis, later)
