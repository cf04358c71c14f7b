"""Byte sizes as Docker writes them (`2g`, `256m`, `1048576`): the one parser, for the config and the sandbox."""

from __future__ import annotations

import re

_UNITS = {"": 1, "b": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}


def parse_bytes(value: str | int) -> int:
    """'2g' / '256m' / '512k' / '1048576' → bytes (Docker's binary units); ValueError names the bad value."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if not isinstance(value, str):
        raise ValueError(f"not a size: {value!r} (examples: 2g, 256m, 1048576)")
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([bkmgt]?)b?\s*", value.lower())
    if not m:
        raise ValueError(f"not a size: {value!r} (examples: 2g, 256m, 1048576)")
    return int(float(m.group(1)) * _UNITS[m.group(2)])
