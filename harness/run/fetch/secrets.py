"""The organizer's secrets (`secrets:` of the task config): read from the harness's environment for the fetch
step only, and masked in everything the harness writes about that step (its log, its reason)."""

from __future__ import annotations

import os

from harness.config import TaskConfig

MASK = "***"


def missing_secrets(config: TaskConfig) -> list[str]:
    """The names of `secrets:` that the harness's environment does not set (or sets empty)."""
    return [name for name in config.secrets if not os.environ.get(name)]


def secret_values(config: TaskConfig) -> dict[str, str]:
    """{name: value} of the config's secrets that are set."""
    return {name: os.environ[name] for name in config.secrets if os.environ.get(name)}


def mask(text: str, values: dict[str, str] | list[str]) -> str:
    """`text` with every secret value replaced by `***` (longest first, so one value inside another goes too)."""
    for value in sorted(values.values() if isinstance(values, dict) else values, key=len, reverse=True):
        if value:
            text = text.replace(value, MASK)
    return text


def mask_bytes(data: bytes, values: dict[str, str]) -> bytes:
    """`data` with every secret value (UTF-8) replaced by `***`."""
    for value in sorted(values.values(), key=len, reverse=True):
        if value:
            data = data.replace(value.encode("utf-8"), MASK.encode())
    return data
