"""The one rule for a torn last line of an instances.log, shared by every reader.

The writer puts each record on disk with one write call of the whole line, newline included, so an interrupted
write leaves a final line that starts like a record (`{`) and lacks its newline. That line is *torn*: the
instance is decoded again on resume, and a partial run is scored without it. Anything else that is not a record
(a bad line in the middle, a final line that does not start with `{` such as NUL bytes) is an error that names
the line, never skipped.
"""

from __future__ import annotations


def is_torn_tail(tail: bytes | str) -> bool:
    """True if `tail`, the bytes after the last newline of a log, is an interrupted write of one record."""
    if isinstance(tail, bytes):
        stripped_bytes = tail.lstrip(b" \t\r")
        return stripped_bytes[:1] == b"{"
    return tail.lstrip(" \t\r")[:1] == "{"
