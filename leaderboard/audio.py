"""The source audio a site publishes for its replays (`harness leaderboard --with-audio dev|all`).

By default a site holds no audio at all: the hidden test recordings are never published unless the organizer asks
for them (`all`). `dev` publishes the recordings of development datasets only (`is_dev_dataset`). Each audio file
is copied once into SITE/audio/, named by its content's SHA-256 (the organizer's paths and file names stay out of
the site's file names), in a format browsers play; a recording whose audio is missing or in another format gets a
silent replay and one warning line."""

from __future__ import annotations

import hashlib
import re
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

CHOICES = ("dev", "all")
FOLDER = "audio"
#: containers a browser's <audio> element plays (Chromium and Firefox: WAV, FLAC, Ogg/Opus, MP3, MP4/AAC, WebM)
PLAYABLE = (".wav", ".flac", ".ogg", ".oga", ".opus", ".mp3", ".m4a", ".mp4", ".aac", ".webm")


def is_dev_dataset(name: str) -> bool:
    """A development dataset: `dev`, `dev2`, `dev-acl`, `dev_2025`, `development`; never one whose name says
    `test` (`devtest`, as FLORES names its test split)."""
    low = name.lower()
    return re.fullmatch(r"dev(?:[-_.]?[a-z0-9]+)*", low) is not None and "test" not in low


def _digest(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class SiteAudio:
    """Copies the audio of the recordings a site may publish into SITE/audio/ (once per file)."""

    def __init__(self, which: str, warn: Callable[[str], None] | None = None) -> None:
        if which not in CHOICES:
            raise ValueError(f"--with-audio: {which!r} is not one of {', '.join(CHOICES)}")
        self.which = which
        self.warn = warn or (lambda line: print(f"harness leaderboard: warning: {line}", file=sys.stderr))
        self.site: Path | None = None
        self.copied: dict[Path, str | None] = {}  # source file → its path in the site (None: not published)

    def allows(self, dataset: str) -> bool:
        """Whether the audio of `dataset` may be published."""
        return self.which == "all" or is_dev_dataset(dataset)

    @property
    def files(self) -> int:
        """How many audio files the site holds."""
        return len({v for v in self.copied.values() if v})

    def href(self, record: dict[str, Any], dataset: str) -> str | None:
        """The site-relative path of `record`'s audio (copied on first use), or None: not a speech record, a
        dataset whose audio is not published, or a file that is missing or not in a format browsers play."""
        source = record.get("source")
        if self.site is None or not self.allows(dataset) or not isinstance(source, list) or not source:
            return None
        path = Path(str(source[0]))
        if path not in self.copied:
            self.copied[path] = self._copy(path)
        return self.copied[path]

    def _copy(self, path: Path) -> str | None:
        assert self.site is not None
        if path.suffix.lower() not in PLAYABLE:
            self.warn(f"{path}: not a format browsers play ({', '.join(PLAYABLE)}); its replay runs silent")
            return None
        try:
            name = f"{FOLDER}/{_digest(path)[:24]}{path.suffix.lower()}"
            target = self.site / name
            if not target.is_file():
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, target)
        except OSError as exc:
            self.warn(f"{path}: cannot copy the audio into the site ({exc.strerror or exc}); its replay runs silent")
            return None
        return name
