"""The PGN text both tables write: roster, escaping, movetext lines."""

from __future__ import annotations

from dataclasses import dataclass

from service.pgn import LINE_WIDTH, escape, game_text, seven_tag_roster


@dataclass
class Settings:
    event: str = "Club"
    site: str = "Hall"
    round: str = "3"
    white: str = 'Ann "The Rook" \\ Smith'
    black: str = "Bob"


def test_the_roster_is_the_seven_tags_in_order() -> None:
    tags = seven_tag_roster(Settings(), "1-0")
    assert list(tags) == ["Event", "Site", "Date", "Round", "White", "Black", "Result"]
    assert tags["Date"] == "????.??.??"
    assert tags["Result"] == "1-0"


def test_quotes_and_backslashes_are_escaped_in_tag_values() -> None:
    assert escape('a "b" \\ c') == 'a \\"b\\" \\\\ c'
    text = game_text(seven_tag_roster(Settings(), "*"), ["*"])
    assert '[White "Ann \\"The Rook\\" \\\\ Smith"]' in text.splitlines()


def test_movetext_lines_stay_within_the_width_and_a_long_token_stands_alone() -> None:
    tokens = [f"{n}. e4 e5" for n in range(1, 40)]
    long_comment = "{" + "x" * (LINE_WIDTH + 10) + "}"
    tokens[20:20] = [long_comment]
    text = game_text({"Result": "*"}, [*tokens, "*"])
    head, body = text.split("\n\n", 1)
    assert head == '[Result "*"]'
    lines = body.rstrip("\n").splitlines()
    assert long_comment in lines  # alone on its line
    assert all(len(line) <= LINE_WIDTH for line in lines if line != long_comment)
    assert " ".join(lines).split() == " ".join([*tokens, "*"]).split()  # nothing lost
    assert text.endswith("*\n")
