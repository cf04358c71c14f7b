"""A newcomer's shell, for the tests that run what the README tells a user to run: only HOME, the system's PATH and
a locale (as `.ci/run`'s `env -i`), plus the harness's own variables that the test run set (`HARNESS_*`,
`DOCKER_HOST`: which engine, cache and base tag the suite uses)."""

from __future__ import annotations

import os

SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def clean_environment(path: str = SYSTEM_PATH) -> dict[str, str]:
    """The environment of a fresh shell, with `path` as its PATH."""
    kept = {k: v for k, v in os.environ.items() if k.startswith("HARNESS_") or k == "DOCKER_HOST"}
    return {"HOME": os.environ.get("HOME", "/root"), "PATH": path, "LANG": "C.UTF-8", **kept}
