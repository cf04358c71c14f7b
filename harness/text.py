"""Untrusted text made safe for a terminal: `printable` escapes every control character.

Folder names, `submission.yaml` fields and reasons built from them come from participants; printed raw, an ESC
sequence in them recolours the organizer's terminal, rewrites its title, moves the cursor over other lines or
hides text. Every place that prints such a string goes through `printable`. A name the harness makes something of
(a submission id: its results folder, its image's tag) goes through `safe_name` once, where it is made.
"""

from __future__ import annotations

import unicodedata

#: Format characters that reorder or hide text on a terminal (bidirectional overrides and isolates).
_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(ch: str) -> str:
    if ch in _SHORT:
        return _SHORT[ch]
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: object) -> str:
    """`text` as one terminal-safe line: control characters (C0, DEL, C1) and bidirectional overrides are
    written as Python-style escapes (`\\x1b`, `\\n`, `\\u202e`); everything else, any script included, is kept."""
    s = str(text)
    if s.isprintable() and not _BIDI.intersection(s):
        return s
    return "".join(_escape(c) if unicodedata.category(c) == "Cc" or c in _BIDI else c for c in s)


def printable_lines(text: object) -> str:
    """`text` with every line made `printable` (the line breaks kept): for multi-line messages such as an agent's
    traceback."""
    return "\n".join(printable(line) for line in str(text).splitlines())


def safe_name(text: str) -> str:
    """`text` with every control character (C0, DEL, C1) and bidirectional override replaced by `_`: a name the
    harness makes a folder or a tag of (a submission id), safe to print and to write as is."""
    if text.isprintable() and not _BIDI.intersection(text):
        return text
    return "".join("_" if unicodedata.category(c) == "Cc" or c in _BIDI else c for c in text)
