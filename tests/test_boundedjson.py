"""`harness.boundedjson` (issue 27): every way a peer's text can fail is one `JsonRejected`, a nesting depth cap
keeps `json.loads` from recursing 100,000 deep, and brackets inside strings do not count."""

from __future__ import annotations

import pytest

from harness import boundedjson
from harness.boundedjson import MAX_DEPTH, JsonRejected, loads, too_deep
from harness.protocol import ProtocolError, decode_json


@pytest.mark.parametrize(("raw", "reason"), [
    (b"[" * 100_000, "nested deeper than 64 levels"),
    (b'{"a":' * 100_000, "nested deeper than 64 levels"),
    (b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1), "nested deeper than 64 levels"),
    (b"1" * 5000, "malformed JSON: Exceeds the limit (4300 digits)"),
    (b"[\"\xc3\x28\"]", "not UTF-8"),
    (b"{not json", "malformed JSON: Expecting property name"),
    (b"[]" * 500_000, "malformed JSON: Extra data"),
])
def test_what_a_peer_can_send_is_one_rejection_naming_it(raw: bytes, reason: str) -> None:
    with pytest.raises(JsonRejected) as info:
        loads(raw)
    assert reason in str(info.value)
    assert "\n" not in str(info.value)


def test_within_bounds_is_plain_json() -> None:
    at_limit = b"[" * MAX_DEPTH + b"]" * MAX_DEPTH
    assert too_deep(at_limit) is False and loads(at_limit) is not None
    assert loads(b'{"content": "[[[[' + b"[" * 1000 + b'", "n": 2}') == {"content": "[[[[" + "[" * 1000, "n": 2}
    assert loads('{"a": [1, {"b": "\\"]"}]}') == {"a": [1, {"b": '"]'}]}


def test_the_servers_own_decoding_is_bounded_too() -> None:
    """A native client's step body nested 100,000 deep is a one-line 4xx, not a RecursionError in a handler."""
    with pytest.raises(ProtocolError) as info:
        decode_json(b"[" * 100_000)
    assert str(info.value) == f"arrays and objects nested deeper than {boundedjson.MAX_DEPTH} levels"
    with pytest.raises(ProtocolError, match="body is not UTF-8"):
        decode_json(b"\xff")
