"""Bundled data: the UDHR files, their build script's parsing, the prepared speech, and the demo config."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import soundfile

from harness.config import load_config
from harness.data import prepare, udhr_build

ROOT = Path(__file__).resolve().parents[1]
UDHR = ROOT / "data" / "udhr"


def test_udhr_splits_are_aligned_and_match_build_json() -> None:
    meta = json.loads((UDHR / "build.json").read_text())
    for split in ("dev", "test"):
        en, es, sec = ((UDHR / f"{split}.{x}").read_text(encoding="utf-8").splitlines() for x in ("en", "es",
                                                                                                  "sections"))
        assert len(en) == len(es) == len(sec) == meta[split] and all(x.strip() for x in en + es)
    assert meta["dev"] + meta["test"] == meta["pairs"] >= 50
    assert (UDHR / "LICENSE").read_text().startswith("(The MIT License)") and (UDHR / "PROVENANCE.md").is_file()
    assert "Todos los seres humanos nacen libres" in (UDHR / "dev.es").read_text(encoding="utf-8")


def test_build_parses_sections_and_drops_misaligned_ones(tmp_path: Path) -> None:
    pkg = tmp_path / "udhr"
    (pkg / "declaration").mkdir(parents=True)
    page = ("<html><body><h1>T</h1><header><h2>P</h2><p>{a}</p><p>{b}</p></header>"
            "<article data-number=\"1\"><h2>A1</h2><p>{c}</p></article>"
            "<article data-number=\"2\"><h2>A2</h2><ol><li><p>{d}</p></li>{extra}</ol></article></body></html>")
    (pkg / "declaration" / "eng.html").write_text(page.format(a="One &amp; two", b="Three\n four", c="Five",
                                                              d="Six", extra="<li><p>Seven</p></li>"))
    (pkg / "declaration" / "spa.html").write_text(page.format(a="Uno y dos", b="Tres cuatro", c="Cinco",
                                                              d="Seis", extra=""))
    (pkg / "license").write_text("(The MIT License)\n")
    (pkg / "package.json").write_text('{"version": "6.0.0"}')
    counts = udhr_build.build(pkg, tmp_path / "out")
    assert counts == {"dev": 2, "test": 1}  # article 2 differs in paragraph count: left out
    assert (tmp_path / "out" / "dev.en").read_text() == "One & two\nThree four\n"
    assert (tmp_path / "out" / "test.es").read_text() == "Cinco\n"


@pytest.mark.espeak
def test_prepare_synthesizes_16k_mono_and_is_idempotent(tmp_path: Path) -> None:
    data = tmp_path / "data"
    (data / "udhr").mkdir(parents=True)
    lines = (UDHR / "dev.en").read_text(encoding="utf-8").splitlines()[:2]
    (data / "udhr" / "dev.en").write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert prepare.prepare_dev_speech(data) is True
    listing = (data / "speech" / "dev.list").read_text().splitlines()
    assert listing == ["dev/000.wav", "dev/001.wav"]
    info = soundfile.info(str(data / "speech" / listing[0]))
    assert (info.samplerate, info.channels, info.subtype) == (16000, 1, "PCM_16") and info.duration > 2
    mtime = (data / "speech" / listing[0]).stat().st_mtime_ns
    assert prepare.prepare_dev_speech(data) is False
    assert (data / "speech" / listing[0]).stat().st_mtime_ns == mtime


def test_resample_keeps_a_tone() -> None:
    import numpy as np

    t = np.arange(22050) / 22050
    out = prepare.resample(np.sin(2 * np.pi * 440 * t), 22050, 16000)
    assert out.size == 16000
    peak = np.argmax(np.abs(np.fft.rfft(out)))
    assert peak == 440


@pytest.mark.librivox
def test_librivox_clips_are_listed_with_transcripts(tmp_path: Path) -> None:
    assert prepare.prepare_librivox(tmp_path)
    names = (tmp_path / "speech" / "librivox.list").read_text().splitlines()
    texts = (tmp_path / "speech" / "librivox.en").read_text().splitlines()
    assert len(names) == len(texts) == 5
    assert texts[1] == "he was not an ill disposed young man"
    assert soundfile.info(str(tmp_path / "speech" / names[0])).samplerate == 16000


def test_demo_config_loads_with_its_tracks() -> None:
    if not (ROOT / "data" / "speech" / "dev.list").is_file():
        pytest.skip("data/speech not prepared (python3 -m harness.data.prepare)")
    cfg = load_config(ROOT / "configs" / "demo.yaml")
    assert [t.name for t in cfg.tracks] == ["text-en-es", "speech-en-es", "speech-en-asr"]
    text, speech = cfg.track("text-en-es"), cfg.track("speech-en-es")
    assert text.dataset("dev").source == UDHR / "dev.en" and speech.segment_size == 320
    assert len(speech.dataset("dev").source.read_text().splitlines()) == len((UDHR / "dev.en").read_text().splitlines())
