"""A dataset's domains (`domains:` in the task config): which domain each instance of the dataset belongs to.

A domain file names one recording a line, then its domain, separated by a tab or spaces (blank lines and lines
starting with `#` are skipped):

    talks/acl-01.wav    acl
    yodas-17.wav        yodas

A recording is named as the speech list names it: its path as written there, its file name or its stem (the rules
a long-form segmentation's `wav` follows). For a text dataset a "recording" is a source line: its 1-based number,
or a range `FIRST-LAST`. Every recording of the dataset has exactly one domain; a name the dataset does not have,
a recording named twice or left out, and an `optional` domain no recording has are each one line naming the file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harness.config import DOMAIN_NAME, Dataset, Domains, TaskConfig, Track
from harness.data.longform import match_recording
from harness.data.text import read_lines
from harness.errors import ConfigError, HarnessError

__all__ = ["DomainMap", "domain_map", "domain_problems", "require_domains"]

#: problems listed about one domain file before the rest are counted
MAX_PROBLEMS = 10


@dataclass(frozen=True)
class DomainMap:
    """Each instance's domain (`by_index[i]`), the domains in the order they first occur, and the optional ones."""

    by_index: dict[int, str]
    names: tuple[str, ...]
    optional: frozenset[str]

    def indices(self, domain: str) -> set[int]:
        """The instance indices of `domain`."""
        return {i for i, d in self.by_index.items() if d == domain}

    @property
    def main_indices(self) -> set[int] | None:
        """The instances of the main ranking (every domain but the optional ones); None when there is no optional
        domain (all instances)."""
        if not self.optional:
            return None
        return {i for i, d in self.by_index.items() if d not in self.optional}


def _recordings(track: Track, ds: Dataset) -> list[Path] | int:
    """The dataset's recordings (speech: the list's paths, unchecked) or, for text, its number of source lines."""
    lines = read_lines(ds.source)
    if not track.is_speech:
        return len(lines)
    base = ds.source.parent
    return [p if (p := Path(line.strip())).is_absolute() else (base / p).resolve() for line in lines if line.strip()]


def _targets(name: str, recordings: list[Path] | int) -> list[int] | str:
    """The instance indices a domain file's recording names, or why it names none."""
    if isinstance(recordings, int):
        first, dash, last = name.partition("-")
        if not first.isdigit() or (dash and not last.isdigit()):
            return f"{name!r} is not a source line number (N or FIRST-LAST) of this text dataset"
        lo, hi = int(first), int(last) if dash else int(first)
        if not 1 <= lo <= hi <= recordings:
            return f"line {name} is outside the source's {recordings} lines"
        return list(range(lo - 1, hi))
    k = match_recording(name, tuple(recordings))
    return [k] if k is not None else f"{name!r} is no recording of the dataset's list"


def _read(track: Track, ds: Dataset, domains: Domains, problems: list[str]) -> dict[int, str]:
    """{instance index: domain} from the domain file, every problem noted in `problems` (one line each, with its
    line number); the recordings no line names are one more line, whatever else is wrong."""
    path = domains.file
    assert path is not None
    recordings = _recordings(track, ds)
    out: dict[int, str] = {}
    named: set[int] = set()  # the recordings some line names, a wrong line's too (its own problem is reported)
    for n, line in enumerate(read_lines(path), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = line.split()
        targets = _targets(fields[0], recordings)
        if not isinstance(targets, str):
            named.update(targets)
        problem = _line_problem(fields, targets)
        if problem is not None or isinstance(targets, str):
            problems.append(f"{path}: line {n}: {problem or targets}")
            continue
        for i in targets:
            if i in out:
                problems.append(f"{path}: line {n}: {fields[0]} already has a domain ({out[i]})")
                break
            out[i] = fields[1]
    total = recordings if isinstance(recordings, int) else len(recordings)
    missing = [i for i in range(total) if i not in named]
    if missing:
        first = missing[0] + 1 if isinstance(recordings, int) else recordings[missing[0]].name
        problems.append(f"{path}: {len(missing)} recording(s) of the dataset have no domain (first: {first})")
    return out


def _line_problem(fields: list[str], targets: list[int] | str) -> str | None:
    """What is wrong with a domain file's line (its fields, and the instances its recording names or why it names
    none), or None."""
    if len(fields) != 2:
        return f"expected a recording and its domain, got {len(fields)} field(s)"
    if not DOMAIN_NAME.fullmatch(fields[1]):
        return f"{fields[1]!r} is not a domain name (letters, digits, '.', '_', '-')"
    return targets if isinstance(targets, str) else None


def _checked(track: Track, ds: Dataset, problems: list[str]) -> DomainMap | None:
    domains = ds.domains
    if domains is None:
        return None
    if domains.name is not None:
        recordings = _recordings(track, ds)
        total = recordings if isinstance(recordings, int) else len(recordings)
        return DomainMap(dict.fromkeys(range(total), domains.name), (domains.name,), frozenset(domains.optional))
    by_index = _read(track, ds, domains, problems)
    names = tuple(dict.fromkeys(by_index[i] for i in sorted(by_index)))
    for name in domains.optional:
        if name not in names:
            problems.append(f"{domains.file}: no recording has the optional domain {name!r} (domains: "
                            f"{', '.join(names) or 'none'})")
    return DomainMap(by_index, names, frozenset(domains.optional))


def _all_problems(track: Track, ds: Dataset) -> list[str]:
    """Every problem of the dataset's domains, none left out."""
    problems: list[str] = []
    try:
        _checked(track, ds, problems)
    except HarnessError as exc:
        problems.append(str(exc))
    return problems


def domain_problems(track: Track, ds: Dataset) -> list[str]:
    """Every problem of the dataset's domains, one line each naming the file (none when it has no domains)."""
    problems = _all_problems(track, ds)
    if len(problems) > MAX_PROBLEMS:
        problems = problems[:MAX_PROBLEMS] + [f"... and {len(problems) - MAX_PROBLEMS} more problem(s)"]
    return problems


def domain_map(track: Track, ds: Dataset) -> DomainMap | None:
    """The dataset's domains (None when it has none); a HarnessError naming the file for the first problem."""
    problems: list[str] = []
    found = _checked(track, ds, problems)
    if problems:
        raise HarnessError(problems[0])
    return found


def require_domains(config: TaskConfig, track: Track, name: str) -> None:
    """A ConfigError naming the config's field and the domain file for the first problem of dataset `name`'s
    domains (what a command that scores this dataset checks before it runs anything)."""
    ds = track.dataset(name)
    if ds.domains is None:
        return
    where = f"{config.path}: tracks[{config.tracks.index(track)}].datasets.{name}.domains"
    if ds.domains.file is not None and not ds.domains.file.is_file():
        raise ConfigError(f"{where}.file: file not found: {ds.domains.file}")
    problems = _all_problems(track, ds)
    if problems:
        more = f" (and {len(problems) - 1} more: `harness check-config {config.path}` lists every one)" \
            if len(problems) > 1 else ""
        raise ConfigError(f"{where}: {problems[0]}{more}")
