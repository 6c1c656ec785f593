"""service.json_text: compact JSON that reads back as the standard library's does."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from service.json_text import dumps

_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text()
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)  # fmt: skip


@pytest.mark.slow
@given(_values)
def test_reads_back_as_the_standard_library_text_does(value: object) -> None:
    text = dumps(value)
    assert json.loads(text) == json.loads(json.dumps(value))


def test_spelling_that_differs_still_reads_the_same() -> None:
    assert dumps({"a": [1, 2.5], "b": None}) == '{"a":[1,2.5],"b":null}'  # compact
    assert dumps({"name": "Müller <b>"}) == '{"name":"Müller <b>"}'  # UTF-8, not \\u escapes
    assert json.loads(dumps({"t": 1e-07})) == {"t": 1e-07}
    assert dumps({1: "a", None: "b"}) == '{"1":"a","null":"b"}'  # keys as json writes them
    assert dumps((1, 2)) == "[1,2]"
    assert dumps(math.nan) == "null"  # JSON has no NaN; a browser could not read "NaN"


def test_what_orjson_refuses_is_written_by_the_standard_library() -> None:
    big = 2**70
    assert json.loads(dumps({"n": big})) == {"n": big}


def test_utf8_dumps_is_dumps_or_none_for_a_lone_surrogate() -> None:
    from service.json_text import utf8_dumps

    for value in ({"a": [1, 2.5], "b": None}, {"name": "Müller"}, {"n": 2**70}, {1: "x"}):
        assert utf8_dumps(value) == dumps(value)
    assert utf8_dumps({"a": "x\ud800"}) is None
    assert utf8_dumps({"\udfff": 1}) is None
    assert utf8_dumps({"a": "x\ud800", "n": 2**70}) is None  # the standard library's text too
