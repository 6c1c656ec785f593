"""A re-reading's quick test (``Recognizer._may_explore``) keeps its answer while the actions
after the one read another way keep their readings, and works it out again once one of them
was read anew: a new reading of the last action may make legal what was not."""

from __future__ import annotations

from collections.abc import Sequence

from service.recognize.recognizer import Recognizer, _Played
from service.variants import get_variant
from service.variants.base import LegalAction, VariantGame


def _play(game: VariantGame, uci: str) -> _Played:
    action = next(la for la in game.legal_actions() if la.uci == uci)
    played = _Played(action, game.san(action.action), game.move_number(), ())
    game.apply(action.action)
    return played


def _recognizer(ucis: Sequence[str]) -> tuple[Recognizer, VariantGame, list[_Played]]:
    variant = get_variant("standard")
    game = variant.new_game(variant.default_start())
    played = [_play(game, uci) for uci in ucis]
    recognizer = Recognizer(variant="standard", presence_only=True)
    recognizer._game = game
    recognizer._played = played
    return recognizer, game, played


def test_the_answer_is_kept_until_a_later_action_is_read_anew() -> None:
    # (no method patched to count the tests made: a compiled recogniser's calls do not go
    # through the class; a wrong answer planted in the memo tells whether it was used)
    ucis = ("e2e4", "e7e5", "g1f3", "b8c6")
    recognizer, game, played = _recognizer(ucis)
    first = next(la for la in _start_actions() if la.uci == "d2d4")  # e2e4 read another way
    assert recognizer._may_explore(0, first, ucis) is True  # the later actions stay legal
    (key, (answer, readings)), *others = recognizer._explorable.items()
    assert not others
    assert answer is True
    recognizer._explorable[key] = (False, readings)  # planted
    assert recognizer._may_explore(0, first, ucis) is False  # kept: the same readings

    spare = next(la for la in game.legal_actions() if la.uci == "a2a3")
    played[-1].alternatives += ((spare, "a3"),)  # the last action gained another reading
    assert recognizer._may_explore(0, first, ucis) is True  # worked out again
    recognizer._explorable[key] = (False, recognizer._explorable[key][1])
    assert recognizer._may_explore(0, first, ucis) is False  # kept, with the new reading

    played[-1].swept = True  # read as a swept capture
    assert recognizer._may_explore(0, first, ucis) is True


def _start_actions() -> Sequence[LegalAction]:
    variant = get_variant("standard")
    return variant.new_game(variant.default_start()).legal_actions()
