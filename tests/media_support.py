"""Media containers for the MP4 tests, written with PyAV itself from a bundled WAV (nothing downloaded)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import soundfile


def write_audio_container(wav: Path, out: Path, codec: str, *, seconds: float | None = None,
                          bit_rate: int | None = None) -> np.ndarray:
    """Encode (the first `seconds` of) a mono 16-bit WAV into `out` (its suffix picks the container) with `codec`;
    returns the int16 samples that went in."""
    import av

    samples, rate = soundfile.read(str(wav), dtype="int16")
    if seconds is not None:
        samples = samples[: int(seconds * rate)]
    with av.open(str(out), "w") as container:
        stream = container.add_stream(codec, rate=rate)
        stream.layout = "mono"
        if bit_rate:
            stream.bit_rate = bit_rate
        for start in range(0, len(samples), 4096):
            frame = av.AudioFrame.from_ndarray(samples[start:start + 4096].reshape(1, -1), format="s16",
                                               layout="mono")
            frame.sample_rate = rate
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode(None):
            container.mux(packet)
    return samples


def write_video_only(out: Path, frames: int = 10) -> None:
    """A short MP4 with one video track (MPEG-4 part 2) and no audio track."""
    import av

    with av.open(str(out), "w") as container:
        stream = container.add_stream("mpeg4", rate=10)
        stream.width, stream.height, stream.pix_fmt = 64, 48, "yuv420p"
        for n in range(frames):
            image = np.full((48, 64, 3), n * 20 % 256, dtype=np.uint8)
            for packet in stream.encode(av.VideoFrame.from_ndarray(image, format="rgb24")):
                container.mux(packet)
        for packet in stream.encode(None):
            container.mux(packet)
