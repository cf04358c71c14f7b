"""Which submissions a batch evaluates, and under which id.

Each command-line entry is one of:
- a submission folder (it holds `submission.yaml`): id = the folder's name;
- `ID=FOLDER`: that submission folder under the id `ID` (ids are what results and the leaderboard show);
- a folder of submissions: every non-hidden sub-folder, sorted by name (at least one holding `submission.yaml`);
- a text file listing entries of the two first kinds, one a line (`#` comments and blank lines skipped; relative
  paths are relative to the file).
Ids must be unique across the batch. An id is made safe (`harness.text.safe_name`: control characters replaced)
before it names anything: the results folder, the image's tag.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.errors import HarnessError
from harness.intake.submission import SUBMISSION_FILE
from harness.text import safe_name


@dataclass(frozen=True)
class SubmissionRef:
    """One submission of a batch: its id (results folder name) and its folder."""

    id: str
    path: Path


def _one(entry: str, base: Path | None, where: str) -> SubmissionRef:
    name, sep, folder = entry.partition("=")
    if not sep:
        name, folder = "", entry
    path = Path(folder)
    if base is not None and not path.is_absolute():
        path = base / path
    if not (path / SUBMISSION_FILE).is_file():
        raise HarnessError(f"{where}: {path}: no {SUBMISSION_FILE} in this folder")
    if sep and (not name or "/" in name or name.startswith(".")):
        raise HarnessError(f"{where}: {entry!r}: the id before '=' must be a plain folder name")
    return SubmissionRef(safe_name(name or path.resolve().name), path)


def _folder_of_submissions(folder: Path) -> list[SubmissionRef]:
    """Every non-hidden sub-folder of `folder`; a HarnessError naming the folder and the missing submission.yaml
    when none of them holds one (a submission folder without it, or the wrong folder: nothing to evaluate). Among
    submissions, a folder without it stays: its run reports the missing file as that submission's failure."""
    subs = sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith((".", "_")))
    if not any((p / SUBMISSION_FILE).is_file() for p in subs):
        raise HarnessError(f"{folder}: no {SUBMISSION_FILE} in this folder nor in any folder inside it (a submission "
                           f"folder holds {SUBMISSION_FILE})")
    return [SubmissionRef(safe_name(p.name), p) for p in subs]


def _list_file(path: Path) -> list[SubmissionRef]:
    refs = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = line.strip()
        if line and not line.startswith("#"):
            refs.append(_one(line, path.parent, f"{path}:{n}"))
    if not refs:
        raise HarnessError(f"{path}: lists no submission folders")
    return refs


def discover(entries: Sequence[str | Path]) -> list[SubmissionRef]:
    """The submissions named by `entries` (see the module docstring), in order; HarnessError naming the entry at
    fault for a path that is none of the kinds, or an id used twice."""
    refs: list[SubmissionRef] = []
    for entry in map(str, entries):
        path = Path(entry)
        if "=" in entry and not path.exists():
            refs.append(_one(entry, None, "argument"))
        elif (path / SUBMISSION_FILE).is_file():
            refs.append(_one(entry, None, "argument"))
        elif path.is_dir():
            refs.extend(_folder_of_submissions(path))
        elif path.is_file():
            refs.extend(_list_file(path))
        else:
            raise HarnessError(f"{path}: not a submission folder, a folder of submissions or a list file")
    seen: dict[str, Path] = {}
    for ref in refs:
        if ref.id in seen:
            raise HarnessError(f"submission id {ref.id!r} is used twice ({seen[ref.id]} and {ref.path}); "
                               f"name one with ID=FOLDER")
        seen[ref.id] = ref.path
    return refs
