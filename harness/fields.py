"""Unknown keys and values in YAML, with a "did you mean" suggestion (task config, submission.yaml)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from typing import Any


def _norm(name: str) -> str:
    return name.lower().replace("_", "").replace("-", "").replace(" ", "")


def suggest(name: str, known: Iterable[str]) -> str | None:
    """The known name `name` most likely misspells (same letters without `_`/`-`, else a close match), or None."""
    known = list(known)
    for k in known:
        if _norm(k) == _norm(name):
            return k
    for k in known:  # the same letters in another order: a transposition ('taks' is 'task', not 'tracks')
        if sorted(_norm(k)) == sorted(_norm(name)):
            return k
    # Typos keep the first letter far more often than not: a 0.6 match must share it ('src' → 'source'), any other
    # needs 0.8 (so 'extra' is not taken for 'track').
    by_norm = {_norm(k): k for k in known}
    for close in difflib.get_close_matches(_norm(name), list(by_norm), n=3, cutoff=0.6):
        if close[:1] == _norm(name)[:1] or difflib.SequenceMatcher(None, close, _norm(name)).ratio() >= 0.8:
            return by_norm[close]
    return None


def not_one_of(value: object, choices: Iterable[str]) -> str:
    """`'words' is not one of word, char; did you mean 'word'?` (the suggestion only when one is close)."""
    choices = tuple(choices)
    message = f"{value!r} is not one of {', '.join(choices)}"
    guess = suggest(value, choices) if isinstance(value, str) else None
    return f"{message}; did you mean {guess!r}?" if guess is not None else message


def unknown_field(mapping: Mapping[Any, Any], known: Iterable[str]) -> tuple[str, str] | None:
    """(key, message) for the first key of `mapping` not in `known`, or None when every key is known.

    The message reads `unknown field; did you mean 'latency_unit'?`, or lists the known fields when nothing is close.
    A field the mapping lacks is suggested before one it has (`taks:` beside `tracks:` means `task`).
    """
    found = unknown_fields(mapping, known)
    return found[0] if found else None


def unknown_fields(mapping: Mapping[Any, Any], known: Iterable[str]) -> list[tuple[str, str]]:
    """(key, message) of every key of `mapping` not in `known`, in its order (each as `unknown_field` words it)."""
    known = tuple(known)
    absent = [k for k in known if k not in mapping]
    found = []
    for key in mapping:
        if key in known:
            continue
        name = str(key)
        guess = suggest(name, absent) or suggest(name, known)
        found.append((name, f"unknown field; did you mean {guess!r}?" if guess is not None
                      else f"unknown field (known: {', '.join(known)})"))
    return found


def name_hint(name: str, known: Iterable[str]) -> str:
    """`; did you mean 'dev'?` when `name` is close to one of `known`, else ` (has: dev, test)`: the end of a
    message about a name that is not there (`--dataset devv`)."""
    known = list(dict.fromkeys(known))
    guess = suggest(name, known)
    return f"; did you mean {guess!r}?" if guess is not None else f" (has: {', '.join(known)})"
