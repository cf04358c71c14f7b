"""Audio in FFmpeg containers (MP4, M4A, MKV, WebM, MP3, ...), decoded with PyAV (the `media` extra).

IWSLT hands out ACL talks as MP4. A `ContainerStream` demuxes and decodes one packet at a time and resamples to
`STREAM_RATE` (16 kHz, the rate of the bundled WAV datasets and of SimulStream), so at most one segment plus
one decoded frame is held, however long the talk. Its length comes from the container (the audio stream's
duration), as a WAV's comes from its header; samples past it are dropped and a short decode is padded with silence.
"""

from __future__ import annotations

import math
from collections.abc import Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.errors import HarnessError

if TYPE_CHECKING:
    import numpy as np

STREAM_RATE = 16000
MEDIA_EXTRA = "pip install 'harness[media]' (PyAV)"


def _av() -> Any:
    try:
        import av
    except ImportError:
        return None
    return av


def _open(path: Path) -> tuple[Any, Any]:
    """(container, its first audio stream); one line naming the file when it is not a container or has no audio."""
    av = _av()
    if av is None:
        raise HarnessError(f"{path}: not a WAV/FLAC/OGG file, and reading other containers needs {MEDIA_EXTRA}")
    try:
        container = av.open(str(path))
    except (av.FFmpegError, OSError, ValueError) as exc:
        raise HarnessError(f"{path}: not a readable audio file or media container ({exc})") from None
    if not container.streams.audio:
        kinds = ", ".join(sorted({s.type for s in container.streams})) or "no streams"
        container.close()
        raise HarnessError(f"{path}: no audio track in this container (it has: {kinds})")
    return container, container.streams.audio[0]


def _seconds(container: Any, stream: Any) -> float:
    if stream.duration is not None and stream.time_base is not None:
        return float(stream.duration * stream.time_base)
    if container.duration is not None:
        return container.duration / 1_000_000  # AV_TIME_BASE
    raise HarnessError(f"{container.name}: the container does not state the length of its audio track")


def container_duration_ms(path: Path) -> float:
    """Length (ms) of the first audio track of a media container, as the container states it."""
    container, stream = _open(path)
    try:
        return _seconds(container, stream) * 1000.0
    finally:
        container.close()


class ContainerStream:
    """Reads the first audio track of a media container segment by segment (the `AudioStream` interface)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._container, self._stream = _open(self.path)
        self.sample_rate = STREAM_RATE
        try:
            self.total = round(_seconds(self._container, self._stream) * STREAM_RATE)
        except HarnessError:
            self._container.close()
            raise
        self.position = 0
        self._frames = self._decode()
        self._pending: list[np.ndarray] = []  # decoded (channels, samples) int16 blocks not yet served
        self._offset = 0  # samples of _pending[0] already served
        self.peak_frames = 0  # the most decoded blocks held at once (the memory bound the tests check)
        self.peak_samples = 0

    def _decode(self) -> Generator[np.ndarray, None, None]:
        av = _av()
        resampler = av.AudioResampler(format="s16p", layout=None, rate=STREAM_RATE)  # channels kept, averaged later
        try:
            for packet in self._container.demux(self._stream):
                for frame in packet.decode():
                    for out in resampler.resample(frame):
                        yield out.to_ndarray()
            for out in resampler.resample(None):
                yield out.to_ndarray()
        except av.FFmpegError as exc:
            raise HarnessError(f"{self.path}: cannot decode audio at {self.ms(self.position) / 1000:g} s: "
                               f"{exc}") from None

    @property
    def exhausted(self) -> bool:
        return self.position >= self.total

    def samples_for(self, segment_ms: float) -> int:
        return max(1, math.ceil(segment_ms / 1000 * self.sample_rate))

    def _buffered(self) -> int:
        return sum(b.shape[1] for b in self._pending) - self._offset

    def _take(self, n: int) -> np.ndarray:
        """n samples (channels, n) from the decoded blocks, decoding only as many packets as that needs."""
        import numpy as np  # here, not at import: a text run's server and batch never load it

        while self._buffered() < n:
            block = next(self._frames, None)
            if block is None:
                break
            self._pending.append(block)
            self.peak_frames = max(self.peak_frames, len(self._pending))
            self.peak_samples = max(self.peak_samples, self._buffered())
        parts, need = [], n
        while need and self._pending:
            head = self._pending[0][:, self._offset:self._offset + need]
            parts.append(head)
            need -= head.shape[1]
            self._offset += head.shape[1]
            if self._offset >= self._pending[0].shape[1]:
                self._pending.pop(0)
                self._offset = 0
        channels = self._stream.channels or 1
        if need:  # the decoder gave less than the container states: the rest is silence
            parts.append(np.zeros((parts[0].shape[0] if parts else channels, need), dtype=np.int16))
        return np.concatenate(parts, axis=1)

    def read(self, segment_ms: float, dtype: str = "float32") -> np.ndarray:
        """The next segment (shorter at the end, empty when exhausted), mono, as `float32` or `int16`."""
        import numpy as np  # here, not at import: a text run's server and batch never load it

        n = min(self.samples_for(segment_ms), self.total - self.position)
        if n <= 0:
            return np.zeros(0, dtype=dtype)
        block = self._take(n)
        self.position += n
        if dtype == "int16":
            return block[0] if block.shape[0] == 1 else block.mean(axis=0).astype(np.int16)
        floats = block.astype(np.float32) / np.float32(32768.0)
        return floats[0] if block.shape[0] == 1 else floats.mean(axis=0).astype(np.float32)

    def ms(self, samples: int) -> float:
        return samples * 1000.0 / self.sample_rate

    def close(self) -> None:
        self._frames.close()
        self._container.close()
