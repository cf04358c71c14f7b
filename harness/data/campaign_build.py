"""The data of the IWSLT 2026 mini-campaign (`configs/iwslt2026.yaml`), built from the bundled speech by
`harness.data.prepare` (idempotent).

Short talks, so that the whole campaign evaluates in minutes on a laptop, shaped as IWSLT 2026 ships them:

* dev: `talk-dev.wav`, UDHR dev sentences 1–3 read by espeak-ng (~35 s);
* test: `talk-test-1.mp4` (sentences 4–6, AAC in an MP4 container, as IWSLT ships ACL talks) and `talk-test-2.wav`
  (sentences 8–9), ~27 s each;
* extra context: per talk its "paper" (`papers/<talk>.pdf`: a title, an abstract made of the talk's sentences and
  its key terms), listed one path a line in `SPLIT.context`, as IWSLT hands out the ACL papers.

Per split, as `harness.data.longform_build` writes them: `SPLIT.list`, `SPLIT.yaml` (`{wav, offset, duration}`),
`SPLIT.es` (references) and `SPLIT.src.en` (transcripts). Files land in `data/iwslt2026/`.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import soundfile
import yaml

from harness.data.longform_build import SAMPLE_RATE, assemble
from harness.data.pdf import write_pdf
from harness.jsonio import atomic_path

STAMP_VERSION = 1
#: talk name → (split, 0-based sentence numbers of the UDHR dev set, container suffix)
TALKS: tuple[tuple[str, str, tuple[int, ...], str], ...] = (
    ("talk-dev", "dev", (0, 1, 2), ".wav"),
    ("talk-test-1", "test", (3, 4, 5), ".mp4"),
    ("talk-test-2", "test", (7, 8), ".wav"),
)
#: the key terms each talk's paper spells out (names as the paper writes them)
TERMS = {
    "talk-dev": ["Universal Declaration of Human Rights (UDHR)", "United Nations", "Eleanor Roosevelt"],
    "talk-test-1": ["United Nations Charter", "UN General Assembly", "Universal Declaration"],
    "talk-test-2": ["UDHR Article 1", "Article 2", "René Cassin"],
}
AAC_BIT_RATE = 64000


def encode_mp4(samples: np.ndarray, rate: int, out: Path, codec: str = "aac", bit_rate: int = AAC_BIT_RATE) -> None:
    """Write mono int16 `samples` as the audio track of an MP4 (PyAV, the `media` extra), atomically."""
    import av

    with atomic_path(out) as tmp:
        with av.open(str(tmp), "w", format="mp4") as container:
            stream: Any = container.add_stream(codec, rate=rate)
            stream.layout = "mono"
            stream.bit_rate = bit_rate
            for start in range(0, len(samples), 4096):
                frame = av.AudioFrame.from_ndarray(samples[start:start + 4096].reshape(1, -1), format="s16",
                                                   layout="mono")
                frame.sample_rate = rate
                for packet in stream.encode(frame):
                    container.mux(packet)
            for packet in stream.encode(None):
                container.mux(packet)


def _talk(wavs: Sequence[Path], out: Path, seed: int) -> list[tuple[float, float]]:
    """Assemble the talk (WAV, or MP4 through a temporary WAV); the (offset, duration) of each sentence."""
    if out.suffix == ".wav":
        return assemble(wavs, out, seed)
    with tempfile.TemporaryDirectory(prefix="harness-talk-") as tmp:
        wav = Path(tmp) / "talk.wav"
        spans = assemble(wavs, wav, seed)
        samples, rate = soundfile.read(str(wav), dtype="int16")
        encode_mp4(samples, rate, out)
    return spans


def _paper(name: str, sentences: Sequence[str]) -> tuple[str, list[str]]:
    terms = TERMS[name]
    title = f"{terms[0]}: reading the preamble aloud ({name})"
    return title, ["Abstract. " + " ".join(sentences), "Key terms: " + "; ".join(terms) + "."]


def _stamp(inputs: Sequence[Path]) -> str:
    digest = hashlib.sha256()
    for p in inputs:
        digest.update(p.name.encode() + str(p.stat().st_size).encode())
    return json.dumps({"version": STAMP_VERSION, "talks": [t[:3] for t in TALKS], "inputs": digest.hexdigest()})


def build(data: Path, force: bool = False) -> bool:
    """Build `data/iwslt2026/` from `data/speech` and `data/udhr`; True if anything was (re)written. Needs PyAV
    (the `media` extra) for the MP4 talk."""
    speech, udhr, out = data / "speech", data / "udhr", data / "iwslt2026"
    dev_wavs = [speech / line.strip() for line in (speech / "dev.list").read_text().splitlines() if line.strip()]
    es = (udhr / "dev.es").read_text(encoding="utf-8").splitlines()
    en = (udhr / "dev.en").read_text(encoding="utf-8").splitlines()
    stamp = _stamp([*dev_wavs, udhr / "dev.es", udhr / "dev.en"])
    stamp_file = out / "build.json"
    expected = [out / "talks" / f"{name}{suffix}" for name, _, _, suffix in TALKS]
    if not force and stamp_file.is_file() and stamp_file.read_text() == stamp and all(p.is_file() for p in expected):
        return False
    (out / "talks").mkdir(parents=True, exist_ok=True)
    (out / "papers").mkdir(parents=True, exist_ok=True)
    splits: dict[str, dict[str, list]] = {}
    for seed, (name, split, numbers, suffix) in enumerate(TALKS, start=11):
        talk = out / "talks" / f"{name}{suffix}"
        spans = _talk([dev_wavs[n] for n in numbers], talk, seed)
        title, paragraphs = _paper(name, [en[n] for n in numbers])
        write_pdf(out / "papers" / f"{name}.pdf", title, paragraphs)
        s = splits.setdefault(split, {"list": [], "seg": [], "es": [], "en": [], "context": []})
        s["list"].append(f"talks/{talk.name}")
        s["seg"] += [{"wav": talk.name, "offset": off, "duration": dur} for off, dur in spans]
        s["es"] += [es[n] for n in numbers]
        s["en"] += [en[n] for n in numbers]
        s["context"].append(f"papers/{name}.pdf")
    for split, s in splits.items():
        (out / f"{split}.list").write_text("".join(p + "\n" for p in s["list"]), encoding="utf-8")
        (out / f"{split}.yaml").write_text(yaml.safe_dump(s["seg"], sort_keys=False), encoding="utf-8")
        (out / f"{split}.es").write_text("".join(t + "\n" for t in s["es"]), encoding="utf-8")
        (out / f"{split}.src.en").write_text("".join(t + "\n" for t in s["en"]), encoding="utf-8")
        (out / f"{split}.context").write_text("".join(p + "\n" for p in s["context"]), encoding="utf-8")
    stamp_file.write_text(stamp, encoding="utf-8")
    return True


__all__ = ["SAMPLE_RATE", "TALKS", "build", "encode_mp4"]
