"""Generate the derived parts of the bundled data (run by scripts/setup.sh; idempotent).

    python3 -m harness.data.prepare [--data data] [--force]

* `data/speech/dev/NNN.wav` + `data/speech/dev.list`: the UDHR dev sentences (data/udhr/dev.en) read by
  espeak-ng, resampled to 16 kHz mono 16-bit — the source of the demo speech track.
* `data/speech/librivox/*.wav` + `librivox.list` + `librivox.en`: the LibriVox clips of Debian's
  pocketsphinx-testdata (real human speech, public domain) with their transcripts, for the ASR path.

* `data/longform/`: long-form talks assembled from those files (`harness.data.longform_build`).
* `data/iwslt2026/`: the short talks (one as MP4) and papers of the IWSLT 2026 mini-campaign
  (`harness.data.campaign_build`, `configs/iwslt2026.yaml`).

A stamp file (`data/speech/prepare.json`) records the inputs (text hash, espeak-ng version, settings); when
it matches and every file is there, nothing is redone.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import soundfile

from harness.errors import HarnessError
from harness.jsonio import write_json

SAMPLE_RATE = 16000
VOICE = "en-us"
WORDS_PER_MINUTE = 160
LIBRIVOX = Path("/usr/share/pocketsphinx/test/data/librivox")
STAMP_VERSION = 1


def resample(samples: np.ndarray, rate_in: int, rate_out: int) -> np.ndarray:
    """Band-limited resampling by the FFT (exact for a whole short utterance; no extra dependency)."""
    if rate_in == rate_out or samples.size == 0:
        return samples.astype(np.float64)
    n_out = int(round(samples.size * rate_out / rate_in))
    spectrum = np.fft.rfft(samples.astype(np.float64))
    keep = min(spectrum.size, n_out // 2 + 1)
    out_spec = np.zeros(n_out // 2 + 1, dtype=complex)
    out_spec[:keep] = spectrum[:keep]
    return np.fft.irfft(out_spec, n_out) * (n_out / samples.size)


def espeak_version() -> str:
    """`espeak-ng --version`, or a HarnessError naming the missing package."""
    if shutil.which("espeak-ng") is None:
        raise HarnessError("espeak-ng is not installed (apt-get install espeak-ng); cannot synthesize data/speech")
    return subprocess.run(["espeak-ng", "--version"], capture_output=True, text=True, check=True).stdout.strip()


def synthesize(text: str, path: Path) -> float:
    """Read `text` with espeak-ng into `path` (16 kHz mono PCM-16); return its duration in seconds."""
    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / "raw.wav"
        subprocess.run(["espeak-ng", "-v", VOICE, "-s", str(WORDS_PER_MINUTE), "-w", str(raw), text],
                       check=True, capture_output=True, timeout=120)
        samples, rate = soundfile.read(str(raw), dtype="float64", always_2d=True)
    mono = resample(samples.mean(axis=1), rate, SAMPLE_RATE)
    soundfile.write(str(path), np.clip(mono, -1.0, 1.0), SAMPLE_RATE, subtype="PCM_16")
    return len(mono) / SAMPLE_RATE


def _stamp(inputs: dict) -> str:
    return json.dumps({"version": STAMP_VERSION, **inputs}, sort_keys=True)


def prepare_dev_speech(data: Path, force: bool = False) -> bool:
    """Synthesize the dev set; returns True if anything was (re)written."""
    text_file = data / "udhr" / "dev.en"
    lines = text_file.read_text(encoding="utf-8").splitlines()
    out = data / "speech"
    wav_dir = out / "dev"
    listing = out / "dev.list"
    names = [f"dev/{i:03d}.wav" for i in range(len(lines))]
    inputs = {"dev_en_sha256": hashlib.sha256(text_file.read_bytes()).hexdigest(), "espeak": espeak_version(),
              "voice": VOICE, "wpm": WORDS_PER_MINUTE, "rate": SAMPLE_RATE}
    stamp_file = out / "prepare.json"
    current = json.loads(stamp_file.read_text()) if stamp_file.is_file() else {}
    if (not force and current.get("dev") == _stamp(inputs) and listing.is_file()
            and all((out / n).is_file() for n in names)):
        return False
    wav_dir.mkdir(parents=True, exist_ok=True)
    seconds = sum(synthesize(line, out / name) for line, name in zip(lines, names, strict=True))
    listing.write_text("".join(n + "\n" for n in names), encoding="utf-8")
    current["dev"] = _stamp(inputs)
    current["dev_seconds"] = round(seconds, 2)
    write_json(stamp_file, current, indent=2)
    return True


def read_librivox_transcripts(folder: Path) -> dict[str, str]:
    """{utterance id: transcript} from the Sphinx `transcription` file (`<s> words </s> (id)`)."""
    result = {}
    for line in (folder / "transcription").read_text(encoding="utf-8").splitlines():
        m = re.match(r"\s*(?:<s>)?(.*?)(?:</s>)?\s*\(([^()]+)\)\s*$", line)
        if m:
            result[m.group(2)] = " ".join(m.group(1).split())
    return result


def prepare_librivox(data: Path, source: Path = LIBRIVOX) -> bool:
    """Copy the LibriVox clips and list them with transcripts; False (with a note) if the package is absent."""
    if not (source / "transcription").is_file():
        print(f"prepare: {source} not found (apt-get install pocketsphinx-testdata); skipping LibriVox clips",
              file=sys.stderr)
        return False
    transcripts = read_librivox_transcripts(source)
    out = data / "speech" / "librivox"
    out.mkdir(parents=True, exist_ok=True)
    names, texts = [], []
    for utt, text in sorted(transcripts.items()):
        wav = source / f"{utt}.wav"
        if not wav.is_file():
            continue
        target = out / wav.name
        if not target.is_file() or target.stat().st_size != wav.stat().st_size:
            shutil.copyfile(wav, target)
        names.append(f"librivox/{wav.name}")
        texts.append(text)
    (data / "speech" / "librivox.list").write_text("".join(n + "\n" for n in names), encoding="utf-8")
    (data / "speech" / "librivox.en").write_text("".join(t + "\n" for t in texts), encoding="utf-8")
    return True


def _build_campaign(data: Path, force: bool) -> bool:
    """`data/iwslt2026/` (configs/iwslt2026.yaml), when PyAV (the `media` extra) can write its MP4 talk."""
    try:
        import av  # noqa: F401
    except ImportError:
        print("prepare: data/iwslt2026 skipped: its MP4 talk needs pip install 'harness[media]'", file=sys.stderr)
        return False
    from harness.data.campaign_build import build

    return build(data, force)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[2] / "data")
    ap.add_argument("--force", action="store_true", help="synthesize again even if up to date")
    args = ap.parse_args(argv)
    try:
        wrote = prepare_dev_speech(args.data, args.force)
        prepare_librivox(args.data)
        from harness.data.longform_build import build as build_longform

        wrote = build_longform(args.data, args.force) or wrote
        wrote = _build_campaign(args.data, args.force) or wrote
    except (HarnessError, subprocess.CalledProcessError, OSError) as exc:
        print(f"prepare: error: {exc}", file=sys.stderr)
        return 2
    state = "synthesized" if wrote else "up to date"
    print(f"prepare: {args.data / 'speech'} {state}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
