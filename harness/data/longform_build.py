"""Long-form talks built from the bundled speech (run by `harness.data.prepare`; idempotent).

* `udhr-talk` (dev, ~7.5 min): the 40 UDHR dev sentences read by espeak-ng (`data/speech/dev/*.wav`), one after
  the other with pauses of 0.4–1.2 s;
* `udhr-long` (test, ~22 min): the same sentences read three times over with other pauses — a talk past the
  20-minute mark;
* `librivox` (asr, ~30 s): the real LibriVox clips of pocketsphinx-testdata joined into one recording, with their
  transcripts as references (an ASR track: target = source language).

The reference segmentation is exact because the talk is assembled from the sentence files: each entry's offset is
where its sentence's samples start. Files land in `data/longform/`: `talks/*.wav`, and per split `SPLIT.list`,
`SPLIT.yaml` (`{wav, offset, duration}` in seconds), `SPLIT.es` / `SPLIT.en` (references) and `SPLIT.src.en`
(transcripts). Audio is written block by block; memory does not grow with the talk.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import soundfile
import yaml

from harness.jsonio import atomic_path

SAMPLE_RATE = 16000
STAMP_VERSION = 1
LEAD_S = 0.5


def _silence(seconds: float) -> np.ndarray:
    return np.zeros(int(round(seconds * SAMPLE_RATE)), dtype=np.int16)


def assemble(wavs: Sequence[Path], out: Path, seed: int) -> list[tuple[float, float]]:
    """Concatenate `wavs` (16 kHz mono) into `out` with seeded pauses; the (offset, duration) of each, in s."""
    rng = random.Random(seed)
    out.parent.mkdir(parents=True, exist_ok=True)
    spans: list[tuple[float, float]] = []
    position = 0
    with atomic_path(out) as tmp, soundfile.SoundFile(str(tmp), "w", SAMPLE_RATE, 1, subtype="PCM_16",
                                                      format="WAV") as f:
        lead = _silence(LEAD_S)
        f.write(lead)
        position += lead.size
        for wav in wavs:
            samples, rate = soundfile.read(str(wav), dtype="int16")
            if rate != SAMPLE_RATE or samples.ndim != 1:
                raise ValueError(f"{wav}: expected 16 kHz mono audio")
            spans.append((round(position / SAMPLE_RATE, 4), round(samples.size / SAMPLE_RATE, 4)))
            f.write(samples)
            position += samples.size
            pause = _silence(rng.uniform(0.4, 1.2))
            f.write(pause)
            position += pause.size
    return spans


def _write_split(folder: Path, split: str, wav: Path, spans: Sequence[tuple[float, float]],
                 texts: dict[str, Sequence[str]]) -> None:
    (folder / f"{split}.list").write_text(f"talks/{wav.name}\n", encoding="utf-8")
    seg = [{"wav": wav.name, "offset": off, "duration": dur} for off, dur in spans]
    (folder / f"{split}.yaml").write_text(yaml.safe_dump(seg, sort_keys=False), encoding="utf-8")
    for suffix, lines in texts.items():
        (folder / f"{split}.{suffix}").write_text("".join(t + "\n" for t in lines), encoding="utf-8")


def build(data: Path, force: bool = False) -> bool:
    """Build `data/longform/` from `data/speech` and `data/udhr`; True if anything was (re)written."""
    speech, udhr, out = data / "speech", data / "udhr", data / "longform"
    dev_wavs = [speech / line.strip() for line in (speech / "dev.list").read_text().splitlines() if line.strip()]
    es = (udhr / "dev.es").read_text(encoding="utf-8").splitlines()
    en = (udhr / "dev.en").read_text(encoding="utf-8").splitlines()
    lv_list = speech / "librivox.list"
    lv_wavs = [speech / line.strip() for line in lv_list.read_text().splitlines() if line.strip()] \
        if lv_list.is_file() else []
    lv_text = (speech / "librivox.en").read_text(encoding="utf-8").splitlines() if lv_wavs else []
    digest = hashlib.sha256()
    for p in [*dev_wavs, *lv_wavs, udhr / "dev.es", udhr / "dev.en"]:
        digest.update(p.name.encode() + str(p.stat().st_size).encode())
    stamp = json.dumps({"version": STAMP_VERSION, "inputs": digest.hexdigest()})
    stamp_file = out / "build.json"
    expected = [out / "talks" / "udhr-talk.wav", out / "talks" / "udhr-long.wav", out / "dev.yaml", out / "test.yaml"]
    if not force and stamp_file.is_file() and stamp_file.read_text() == stamp and all(p.is_file() for p in expected):
        return False
    spans = assemble(dev_wavs, out / "talks" / "udhr-talk.wav", seed=1)
    _write_split(out, "dev", out / "talks" / "udhr-talk.wav", spans, {"es": es, "src.en": en})
    long_spans = assemble(dev_wavs * 3, out / "talks" / "udhr-long.wav", seed=2)
    _write_split(out, "test", out / "talks" / "udhr-long.wav", long_spans, {"es": es * 3, "src.en": en * 3})
    if lv_wavs:
        lv_spans = assemble(lv_wavs, out / "talks" / "librivox.wav", seed=3)
        _write_split(out, "asr", out / "talks" / "librivox.wav", lv_spans, {"en": lv_text, "src.en": lv_text})
    stamp_file.write_text(stamp, encoding="utf-8")
    return True
