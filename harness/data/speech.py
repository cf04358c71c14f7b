"""Speech datasets: a list file of audio paths (one a line) and line-aligned reference sets.

Audio is never loaded whole: `AudioStream` keeps an open soundfile handle and reads one segment of
`segment_ms` at a time, so memory does not grow with the length of a talk. Files libsndfile cannot read (MP4 and
other FFmpeg containers) stream through `harness.data.media.ContainerStream` instead, resampled to 16 kHz.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from harness.data.media import ContainerStream, container_duration_ms
from harness.data.text import read_lines, read_references
from harness.errors import HarnessError

if TYPE_CHECKING:
    import numpy as np


class AudioStream:
    """Reads one audio file block by block from disk, as mono float32 or int16 samples."""

    def __init__(self, path: Path) -> None:
        import soundfile

        try:
            self._file = soundfile.SoundFile(str(path))
        except (RuntimeError, OSError, soundfile.LibsndfileError) as exc:
            raise HarnessError(f"{path}: cannot open audio: {exc}") from None
        self.path = Path(path)
        self.sample_rate = int(self._file.samplerate)
        self.total = int(self._file.frames)  # samples; known to the server only
        self.position = 0

    @property
    def exhausted(self) -> bool:
        return self.position >= self.total

    def samples_for(self, segment_ms: float) -> int:
        """Samples in a segment of `segment_ms` (rounded up, as SimulEval does)."""
        return max(1, math.ceil(segment_ms / 1000 * self.sample_rate))

    def read(self, segment_ms: float, dtype: str = "float32") -> np.ndarray:
        """The next segment (shorter at the end, empty when exhausted), mono, as `float32` or `int16`."""
        import numpy as np  # here, not at import: a text run's server and batch never load it

        n = min(self.samples_for(segment_ms), self.total - self.position)
        if n <= 0:
            return np.zeros(0, dtype=dtype)
        block = self._file.read(n, dtype=dtype, always_2d=True)
        self.position += n
        if block.shape[1] == 1:
            return block[:, 0]
        if dtype == "int16":
            return block.mean(axis=1).astype(np.int16)
        return block.mean(axis=1).astype(np.float32)

    def ms(self, samples: int) -> float:
        return samples * 1000.0 / self.sample_rate

    def close(self) -> None:
        self._file.close()


def _libsndfile_reads(path: Path) -> bool:
    import soundfile

    try:
        soundfile.info(str(path))
    except (RuntimeError, soundfile.LibsndfileError):
        return False
    return True


def open_audio(path: Path) -> AudioStream | ContainerStream:
    """A segment reader for one audio file: soundfile for what libsndfile reads, PyAV for other containers."""
    return AudioStream(path) if _libsndfile_reads(path) else ContainerStream(path)


def audio_duration_ms(path: Path) -> float:
    """Length of an audio file (ms), from its header or its container."""
    import soundfile

    if _libsndfile_reads(path):
        return float(soundfile.info(str(path)).duration) * 1000.0
    return container_duration_ms(path)


def read_audio_list(list_file: Path) -> tuple[Path, ...]:
    """The audio files a list file names (relative to it), each checked to exist and to be readable audio."""
    base = Path(list_file).parent
    paths = []
    for n, line in enumerate(read_lines(list_file), 1):
        if not line.strip():
            raise HarnessError(f"{list_file}: line {n}: empty line (expected an audio file path)")
        p = Path(line.strip())
        p = p if p.is_absolute() else (base / p).resolve()
        if not p.is_file():
            raise HarnessError(f"{list_file}: line {n}: audio file not found: {p}")
        if not _libsndfile_reads(p):
            try:
                container_duration_ms(p)
            except HarnessError as exc:
                raise HarnessError(f"{list_file}: line {n}: {exc}") from None
        paths.append(p)
    if not paths:
        raise HarnessError(f"{list_file}: the list of audio files is empty")
    return tuple(paths)


@dataclass(frozen=True)
class SpeechDataset:
    """Audio files listed in a list file, with reference sets; segments are streamed from disk."""

    list_path: Path
    audio: tuple[Path, ...]
    references: dict[str, tuple[str, ...]]

    modality = "speech"

    @classmethod
    def load(cls, list_file: Path, references: dict[str, Path]) -> SpeechDataset:
        paths = read_audio_list(list_file)
        refs = read_references(references, len(paths), list_file)
        return cls(Path(list_file), paths, {k: tuple(v) for k, v in refs.items()})

    def __len__(self) -> int:
        return len(self.audio)

    def open(self, index: int) -> AudioStream | ContainerStream:
        return open_audio(self.audio[index])

    def source_info(self, index: int) -> list[str]:
        """What instances.log records as `source`: `[audio path]`."""
        return [str(self.audio[index])]

    def reference_texts(self, index: int) -> dict[str, str]:
        return {name: lines[index] for name, lines in self.references.items()}
