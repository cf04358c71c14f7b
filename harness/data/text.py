"""Text datasets: a source file (one sentence a line) and line-aligned named reference sets."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harness.errors import HarnessError


def read_lines(path: Path) -> list[str]:
    """The lines of a UTF-8 text file, without line ends (a final newline adds no empty line)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise HarnessError(f"{path}: file not found") from None
    except UnicodeDecodeError as exc:
        raise HarnessError(f"{path}: not UTF-8 (byte {exc.start})") from None
    except OSError as exc:
        raise HarnessError(f"{path}: cannot read: {exc.strerror}") from None
    return text.splitlines()


def read_references(references: dict[str, Path], expected: int, source: Path) -> dict[str, list[str]]:
    """Every reference set, checked to have exactly `expected` lines (one per source line)."""
    sets: dict[str, list[str]] = {}
    for name, path in references.items():
        lines = read_lines(path)
        if len(lines) != expected:
            raise HarnessError(f"{path}: reference set {name!r} has {len(lines)} lines but {source} has {expected}")
        sets[name] = [line.strip() for line in lines]
    return sets


@dataclass(frozen=True)
class TextDataset:
    """Line-aligned source sentences and reference sets; the source is served one word at a time."""

    source_path: Path
    sources: tuple[str, ...]
    references: dict[str, tuple[str, ...]]

    modality = "text"

    @classmethod
    def load(cls, source: Path, references: dict[str, Path]) -> TextDataset:
        lines = [line.strip() for line in read_lines(source)]
        if not lines:
            raise HarnessError(f"{source}: the source file is empty")
        refs = read_references(references, len(lines), source)
        return cls(Path(source), tuple(lines), {k: tuple(v) for k, v in refs.items()})

    def __len__(self) -> int:
        return len(self.sources)

    def words(self, index: int) -> list[str]:
        """Source words of instance `index` (split on whitespace)."""
        return self.sources[index].split()

    def source_info(self, index: int) -> str:
        """What instances.log records as `source`."""
        return self.sources[index]

    def reference_texts(self, index: int) -> dict[str, str]:
        return {name: lines[index] for name, lines in self.references.items()}
