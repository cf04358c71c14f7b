"""JSON from an untrusted peer, parsed within bounds: a nesting depth cap before `json.loads` sees it.

`json.loads` recurses once per nested array or object, so `[[[[…` 100,000 deep raises `RecursionError` (not a
`ValueError`), and an integer of more than 4,300 digits raises a plain `ValueError`. `loads` turns every way a
text can fail into one `JsonRejected` with a one-line reason, so a caller can charge it to whoever sent the text.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["MAX_DEPTH", "JsonRejected", "loads", "too_deep"]

MAX_DEPTH = 64  # the protocols' own messages nest 2 or 3 levels deep

_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_OPEN = frozenset(b"[{")


class JsonRejected(ValueError):
    """The text is not JSON, or not JSON within the bounds (the message says which, in one line)."""


def too_deep(raw: bytes, limit: int = MAX_DEPTH) -> bool:
    """Whether arrays and objects nest deeper than `limit` in `raw` (brackets inside strings do not count). The
    scan stops past the limit, so a 1 MB `[[[[…` costs `limit` steps, and text with few brackets costs none."""
    if raw.count(b"[") + raw.count(b"{") <= limit:
        return False
    depth = 0
    for b in _STRING.sub(b"", raw).translate(None, _NOT_BRACKETS):
        depth += 1 if b in _OPEN else -1
        if depth > limit:
            return True
    return False


def loads(raw: bytes | str, max_depth: int = MAX_DEPTH) -> Any:
    """The JSON value of `raw`; `JsonRejected` if it is not UTF-8 JSON or nests deeper than `max_depth`."""
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    if too_deep(data, max_depth):
        raise JsonRejected(f"arrays and objects nested deeper than {max_depth} levels")
    try:
        return json.loads(data)
    except UnicodeDecodeError:
        raise JsonRejected("not UTF-8") from None
    except (ValueError, RecursionError) as exc:
        raise JsonRejected(f"malformed JSON: {str(exc).splitlines()[0][:120]}") from None
