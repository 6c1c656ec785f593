"""Pairings in: a round read from a FIDE TRF-16 file and from a pairings CSV (the samples in
tests/data were written by hand in the formats' layouts, see tests/data/README.md), the
round on the tables by board number, the players' details as settings (the ``players``
command, applied to the next game once the game under way has moves) and as PGN tags."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_table_helpers import Hands

from service.pairings import ByeKind, PairingsError, load_pairings, read_pairings
from service.pairings.assign import assign
from service.pairings.csv_pairings import parse_csv
from service.pairings.trf import parse_trf
from service.table import Table, TableError, TableSettings
from service.table.realtime import RealtimeTable

DATA = Path(__file__).parent / "data"
TRF = DATA / "pairings-round3.trf"
CSV = DATA / "pairings-round1.csv"


def trf_line(rank: int, name: str, rounds: list[tuple[int, str, str]], *, title: str = "",
             rating: int = 2000, fed: str = "GER", fide: int = 0) -> str:  # fmt: skip
    """A ``001`` record in the format's columns."""
    line = f"001 {rank:4d} m{title:>3} {name:<33} {rating:4d} {fed:<3} "
    line += (f"{fide:11d}" if fide else " " * 11) + " 2000/01/01  0.0 " + f"{rank:4d}"
    assert len(line) == 89
    for opponent, colour, result in rounds:
        line += f"  {opponent:04d} {colour} {result}"
    return line


def test_the_trf_round_gives_pairings_boards_byes_and_details() -> None:
    round_ = load_pairings(TRF, 3)
    assert round_.number == 3
    assert len(round_.pairings) == 9
    boards = [(p.board, p.white.name, p.black.name) for p in round_.pairings]
    # Boards by the pair's higher score (before round 3), its sum, the better start rank.
    assert boards == [
        (1, "García Núñez, José", "Dubois, Amélie"),  # 1.5 + 2
        (2, "Björk, Åsa", "van den Berg, Pieter"),  # 2 + 1
        (3, "Wróbel, Łukasz", "Müller, Jürgen"),  # 1.5 + 1.5, start rank 1
        (4, "Ødegaard, Sigrid", "Kovačević, Ana"),  # 1 + 1.5
        (5, "Novák, Jiří", "Lefèvre, Élodie"),  # 1 + 0.5, start rank 8
        (6, "Petrović, Marko", "Ferreira, João"),  # 0.5 + 1, start rank 16
        (7, "Smith, John", "Öztürk, Emre"),  # 0 + 1, start rank 9
        (8, "Żukowski, Tomasz", "Schulz, Karl-Heinz"),  # 0 + 1, start rank 15
        (9, "Nakamura, Yui", "Søndergaard, Mads"),  # 0.5 + 0.5
    ]
    third = round_.pairings[2]
    assert (third.white.title, third.white.elo, third.white.federation) == ("IM", "2467", "POL")
    assert (third.white.fide_id, third.white.team) == ("1100003", "Klub Szachowy Wisła")
    assert (third.black.title, third.black.elo, third.black.team) == ("GM", "2598", "SC Nordlicht")
    assert round_.pairings[0].black.title == "WIM"
    assert round_.pairings[4].white.title == "CM"
    byes = {b.player.name: b.kind for b in round_.byes}
    assert byes == {"O'Brien, Seán": ByeKind.ZERO, "Unrated, Newcomer": ByeKind.HALF}
    newcomer = next(b.player for b in round_.byes if b.player.name.startswith("Unrated"))
    assert (newcomer.elo, newcomer.fide_id, newcomer.federation) == (None, None, "GER")


def test_earlier_rounds_of_the_trf_are_read_too() -> None:
    first = load_pairings(TRF, 1)
    assert len(first.pairings) == 10
    assert first.byes == ()
    # Every player starts with 0: boards by the better starting rank.
    assert [p.board for p in first.pairings] == list(range(1, 11))
    assert first.pairings[0].white.name == "Müller, Jürgen"
    second = load_pairings(TRF, 2)
    assert len(second.pairings) == 10  # the forfeit (+/-) is a pairing all the same


def test_a_round_the_trf_does_not_have_is_one_line_naming_the_file() -> None:
    no_round = r"pairings-round3\.trf:11: no pairings for round 4 \(it has rounds 1-3\)$"
    with pytest.raises(PairingsError, match=no_round):
        load_pairings(TRF, 4)
    with pytest.raises(PairingsError, match=r"say which \(--round N\)"):
        load_pairings(TRF, None)


TWO = "Two, Player"
BAD_TRF_LINES = [
    (trf_line(2, TWO, [(1, "b", "1")], title="XX9"), r"r3\.trf:2: title \(columns 11-13\) 'XX9'"),
    ("001  abc m    Name" + " " * 80, r"r3\.trf:2: starting rank \(columns 5-8\)"),
    (trf_line(2, "", [(1, "b", "1")]), r"r3\.trf:2: the name \(columns 15-47\) is empty"),
    (trf_line(2, TWO, [(1, "x", "1")]), r"r3\.trf:2: round 1 \(columns 92-99\): the colour 'x'"),
    (trf_line(2, TWO, [(1, "b", "?")]), r"r3\.trf:2: round 1 \(columns 92-99\): the result '\?'"),
    (trf_line(2, TWO, [(1, "w", "1")]), r"r3\.trf:1: round 1: plays 2 with white, but line 2 "),
    (trf_line(1, "Again, Player", [(1, "b", "1")]), r"r3\.trf:2: starting rank 1 is already "),
]


@pytest.mark.parametrize(("line", "message"), BAD_TRF_LINES)
def test_a_bad_trf_record_is_one_line_naming_file_and_line(line: str, message: str) -> None:
    text = trf_line(1, "One, Player", [(2, "w", "0")]) + "\n" + line + "\n"
    with pytest.raises(PairingsError, match=message) as caught:
        parse_trf(text, 1, "r3.trf")
    assert "\n" not in str(caught.value)


def test_a_trf_line_that_ends_early_reads_its_missing_fields_as_unknown() -> None:
    rounds = [(2, "w", " "), (3, "b", " ")]
    lines = [trf_line(1, "A, A", rounds[:1]), trf_line(2, "B, B", [(1, "b", " ")]),
             trf_line(3, "C, C", [(0, "-", "U")])]  # fmt: skip
    round_ = parse_trf("\r\n".join(lines).replace("2000 GER", "     GER"), 1, "x.trf")
    assert [(p.white.name, p.black.name) for p in round_.pairings] == [("A, A", "B, B")]
    assert round_.pairings[0].white.elo is None
    assert [(b.player.name, b.kind) for b in round_.byes] == [("C, C", ByeKind.ALLOCATED)]


def test_the_csv_gives_boards_details_and_a_bye() -> None:
    round_ = load_pairings(CSV, None)
    assert round_.number is None
    assert [(p.board, p.white.name, p.black.name) for p in round_.pairings] == [
        (1, "Müller, Jürgen", "Wróbel, Łukasz"),
        (2, "Ødegaard, Sigrid", "García Núñez, José"),
        (3, "Smith, John", "Nakamura, Yui"),
    ]
    first = round_.pairings[0]
    assert (first.white.title, first.white.elo, first.white.federation) == ("GM", "2598", "GER")
    assert first.black.team == "Klub Szachowy Wisła"
    assert round_.pairings[2].white.title is None
    assert [(b.player.name, b.kind) for b in round_.byes] == [("O'Brien, Seán", ByeKind.ABSENT)]


def test_a_csv_without_boards_numbers_its_rows_and_takes_semicolons() -> None:
    round_ = parse_csv("white;black\nA, A;B, B\nC, C;D, D\n", "r.csv", 2)
    assert [(p.board, p.white.name) for p in round_.pairings] == [(1, "A, A"), (2, "C, C")]
    assert round_.number == 2


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("white,rating,black\n", r"r\.csv:1: unknown column 'rating'"),
        ("board,white\n1,A\n", r"r\.csv:1: the header has no 'black' column"),
        ("board,white,black\n1,A,B\nx,C,D\n", r"r\.csv:3: board must be a number"),
        ("board,white,black\n1,A,B\n1,C,D\n", r"r\.csv:3: board 1 is already the game of line 2"),
        ("board,white,white_elo,black\n1,A,hi,B\n", r"r\.csv:2: white_elo 'hi' is not a rating"),
        ("board,white,black\n1,A, B,C\n", r"r\.csv:2: 4 fields for 3 columns \(quote a name"),
        ("board,white,black\n2,A,\n", r"r\.csv:2: board 2 has no black"),
        ("", r"r\.csv:1: no header row"),
    ],
)
def test_a_bad_csv_is_one_line_naming_file_and_line(text: str, message: str) -> None:
    with pytest.raises(PairingsError, match=message):
        read_pairings(text.encode(), "r.csv", None)


def test_a_file_that_is_not_text_or_missing_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(PairingsError, match=r"a\.trf:2: a NUL byte"):
        read_pairings(b"001\n\0", "a.trf", 1)
    with pytest.raises(PairingsError, match=r"nothere\.trf: no such pairings file$"):
        load_pairings(tmp_path / "nothere.trf", 1)
    latin = 'board,white,black\n1,"Müller, Jürgen",B\n'.encode("cp1252")
    assert read_pairings(latin, "w.csv", None).pairings[0].white.name == "Müller, Jürgen"


def test_the_round_goes_to_tables_by_board_number() -> None:
    round_ = load_pairings(TRF, 3)
    boards = {"top": 1, "2": 2, "3": 3, "extra": 12}
    plan = assign(round_, boards)
    assert [(o.table, o.pairing.board) for o in plan.orders] == [("top", 1), ("2", 2), ("3", 3)]
    assert [p.board for p in plan.no_table] == [4, 5, 6, 7, 8, 9]
    assert plan.unpaired == (("extra", 12),)
    assert len(plan.byes) == 2
    args = plan.orders[2].args
    assert args["white"] == "Wróbel, Łukasz"
    assert args["black"] == "Müller, Jürgen"
    assert args["white_title"] == "IM"
    assert args["black_title"] == "GM"
    assert args["board"] == "3"
    assert args["round"] == "3"
    assert args["white_fide_id"] == "1100003"
    assert args["black_elo"] == "2598"
    assert "white_team" in args  # unknown details are sent as None: a previous one is cleared


# --- at a table ------------------------------------------------------------------------------

DETAILS = {
    "white": "Müller, Jürgen", "white_title": "GM", "white_elo": "2598",
    "white_federation": "GER", "white_fide_id": "4600002", "white_team": "SC Nordlicht",
    "black": "Ødegaard, Sigrid", "black_title": "WGM", "black_elo": "2431",
    "black_federation": "NOR", "black_fide_id": None, "black_team": None,
    "board": "3", "round": "3",
}  # fmt: skip


def test_a_table_without_details_shows_and_writes_what_it_did() -> None:
    hands = Hands()
    state = hands.table.state()
    assert not any(key.endswith(("_title", "_elo", "_team")) for key in state["settings"])
    assert "board" not in state["settings"]
    assert "details" not in hands.table.summary()
    assert "Elo" not in hands.table.pgn()
    assert "[Board" not in hands.table.pgn()


def test_players_with_details_are_settings_state_and_pgn_tags() -> None:
    hands = Hands()
    hands.admin("players", **DETAILS)
    settings = hands.table.state()["settings"]
    assert settings["white"] == "Müller, Jürgen"
    assert settings["white_title"] == "GM"
    assert settings["board"] == "3"
    assert settings["round"] == "3"
    assert "black_fide_id" not in settings  # unknown: absent
    summary = hands.table.summary()
    assert summary["details"]["white_elo"] == "2598"
    assert summary["details"]["board"] == "3"
    hands.play("e2e4", "P", True)
    pgn = hands.table.pgn()
    tags = [line for line in pgn.splitlines() if line.startswith("[")]
    assert tags[:7] == [
        '[Event "?"]', '[Site "?"]', tags[2], '[Round "3"]', '[White "Müller, Jürgen"]',
        '[Black "Ødegaard, Sigrid"]', '[Result "*"]',
    ]  # fmt: skip
    assert tags[7:16] == [
        '[WhiteTitle "GM"]', '[WhiteElo "2598"]', '[WhiteFideId "4600002"]',
        '[WhiteFederation "GER"]', '[WhiteTeam "SC Nordlicht"]', '[BlackTitle "WGM"]',
        '[BlackElo "2431"]', '[BlackFederation "NOR"]', '[Board "3"]',
    ]  # fmt: skip
    assert tags[16].startswith("[TimeControl")


def test_a_pairing_for_a_game_with_moves_waits_for_the_next_game() -> None:
    hands = Hands()
    hands.admin("players", **DETAILS)
    hands.play("e2e4", "P", True)
    next_round = {**DETAILS, "white": "Next, One", "white_title": None, "round": "4"}
    out = hands.admin("players", **next_round)
    assert out[-1].data["applies"] == "next game"
    assert hands.table.settings.white == "Müller, Jürgen"
    assert hands.table.settings.round == "3"
    assert hands.table.settings.white_title == "GM"
    hands.admin("start")
    assert hands.table.settings.white == "Next, One"
    assert hands.table.settings.round == "4"
    assert hands.table.settings.white_title is None
    assert hands.table.settings.black_title == "WGM"


@pytest.mark.parametrize(
    ("key", "value"),
    [("white_elo", "high"), ("white_title", "grandmaster"), ("black_federation", "G3R"),
     ("board", "three"), ("white_fide_id", "12a")],
)  # fmt: skip
def test_a_detail_in_the_wrong_form_is_refused(key: str, value: str) -> None:
    hands = Hands()
    with pytest.raises(TableError, match=f"setting {key} "):
        hands.admin("players", white="A", **{key: value})


def test_settings_stored_before_the_details_still_make_a_table() -> None:
    old = {"white": "Ann", "black": "Bob", "event": "?", "site": "?", "round": "1",
           "time_control": "300+0", "rules": "casual", "variant": "standard",
           "start": None, "options": None}  # fmt: skip
    table = Table("1", TableSettings(**old))
    assert table.settings.white_title is None
    assert set(table.state()["settings"]) == set(old)


def test_a_realtime_table_takes_the_details_too() -> None:
    table = RealtimeTable("rt", {"white": "A", "black": "B"})
    table.admin("players", {**DETAILS}, 0.0)
    assert table.settings.white_title == "GM"
    assert table.settings.board == "3"
    assert '[WhiteElo "2598"]' in table.pgn()
    assert '[Board "3"]' in table.pgn()
    assert table.summary()["details"]["black_title"] == "WGM"


def test_players_waiting_for_the_next_game_are_shown_until_it_begins() -> None:
    from service.web.stream import summary as overview

    hands = Hands()
    assert "next_players" not in hands.table.state()
    hands.play("e2e4", "P", True)
    hands.admin("players", **DETAILS)
    waiting = hands.table.state()["next_players"]
    assert waiting["white"] == "Müller, Jürgen"
    assert waiting["white_title"] == "GM"
    assert waiting["round"] == "3"
    assert hands.table.summary()["next_players"] == waiting
    assert {**hands.table.summary(), "connection": None} == overview(hands.table.state())
    hands.admin("start")
    assert "next_players" not in hands.table.state()
    assert "next_players" not in hands.table.summary()


def test_numbers_of_a_players_command_may_be_json_numbers() -> None:
    hands = Hands()
    hands.admin("players", white="A", white_elo=2598, board=3, round=4, black_fide_id=1500001)
    settings = hands.table.settings
    assert (settings.white_elo, settings.board, settings.round) == ("2598", "3", "4")
    assert settings.black_fide_id == "1500001"


def test_a_replaced_player_takes_no_details_of_the_one_before() -> None:
    hands = Hands()
    hands.admin("players", **DETAILS)
    hands.admin("players", white="Müller, Jürgen")  # the same player: details kept
    assert hands.table.settings.white_title == "GM"
    hands.admin("players", white="Someone, Else")  # another: no title or rating of his
    settings = hands.table.settings
    assert (settings.white_title, settings.white_elo, settings.white_team) == (None, None, None)
    assert settings.black_title == "WGM"  # the other side keeps its player
    hands.admin("players", black="Other, Player", black_elo="2000")  # with its own details
    assert (hands.table.settings.black_elo, hands.table.settings.black_title) == ("2000", None)
