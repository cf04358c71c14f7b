"""The `iwslt2025` profiles against the 2025 organizers' tool, differentially, on generated talks: de, cs→en, zh and
ja, with case changes, words written before their sentence began, SimulEval's cumulative elapsed times, repeated
words at sentence boundaries (ties of equal edit cost) and degenerate output ("啊啊啊…", "ja ja ja …").

The oracle is the tool's steps as FBK's `stream_laal.py` (2.0 and 1.0.0) takes them, written out here: the original
mwerSegmenter binary run directly (`-usecase 1`, in a temporary folder, its `__segments` file read back),
SimulEval 1.1.4's own `LAALScorer` (plain and computation-aware) and `SacreBLEUScorer`. `harness score --profile`
must give every value to 1e-9. The segmenter itself is checked line by line against the binary on random alignments,
case-sensitive and not, word and character tokens.
"""

from __future__ import annotations

import io
import json
import random
import re
import subprocess
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml

from harness.cli import main
from harness.metrics import mwerbinary

pytestmark = [pytest.mark.mwersegmenter, pytest.mark.slow]
ls = pytest.importorskip("simuleval.evaluator.scorers.latency_scorer")
qs = pytest.importorskip("simuleval.evaluator.scorers.quality_scorer")

ROOT = Path(__file__).resolve().parent.parent

GERMAN = [
    "Guten Morgen und herzlich willkommen zu unserem Vortrag über maschinelle Übersetzung.",
    "Heute zeigen wir Ihnen, wie ein System gesprochene Sprache simultan übersetzt.",
    "Das Modell hört zu, wartet auf genug Kontext und schreibt dann die ersten Wörter.",
    "Die Latenz misst, wie lange die Zuhörer auf die Übersetzung warten müssen.",
    "Wir haben drei Systeme verglichen: eine Kaskade, einen festen und einen VAD-Segmentierer.",
    "Die Kaskade erkennt zuerst die Sprache und übersetzt danach den Text.",
    "Ein fester Segmentierer schneidet das Audio alle zwei Sekunden.",
    "Der VAD-Segmentierer schneidet dort, wo der Sprecher eine Pause macht.",
    "Die Ergebnisse zeigen, dass die Qualität mit der Latenz steigt.",
    "Vielen Dank für Ihre Aufmerksamkeit, wir freuen uns auf Ihre Fragen.",
]
JAPANESE = [
    "皆さん、こんにちは。今日は同時通訳システムについて話します。",
    "このモデルはGPUで動き、音声を聞きながら翻訳を書きます。",
    "遅延とは、聞き手が翻訳を待つ時間のことです。",
    "私たちは三つのシステムを比べました。",
    "カスケードはまず音声を認識し、それから text を翻訳します。",
    "固定セグメンターは二秒ごとに音声を切ります。",
    "結果は、品質が遅延とともに上がることを示しています。",
    "ご清聴ありがとうございました。",
]
DEGENERATE = {"de": "ja", "en": "uh", "zh": "啊", "ja": "あ"}


def _sentences(lang: str) -> list[str]:
    if lang == "de":
        return GERMAN
    if lang == "ja":
        return JAPANESE
    name = ROOT / ("tests/evaluate_data/udhr.zh" if lang == "zh" else "data/udhr/dev.en")
    return [x.strip() for x in name.read_text(encoding="utf-8").splitlines() if x.strip()][:14]


def _edit(tokens: list[str], rng: random.Random, lang: str, first: bool) -> list[str]:
    """A system's tokens for one sentence: dropped, repeated (ties at boundaries), case changed, inserted, and once
    per talk a degenerate run."""
    out: list[str] = []
    for t in tokens:
        r = rng.random()
        if r < 0.06:
            continue
        if r < 0.12:
            out += [t, t]  # a repeated token: equal edit costs on either side of a boundary
        elif r < 0.18 and t.isalpha() and lang in ("de", "en"):
            out.append(t.swapcase() if rng.random() < 0.5 else t.lower())
        elif r < 0.21:
            out.append(rng.choice(tokens))
        else:
            out.append(t)
    if first or rng.random() < 0.15:
        out += [DEGENERATE[lang]] * rng.choice([3, 40, 150])
    return out


def _tokens(text: str, char_level: bool) -> list[str]:
    return [c for c in text if not c.isspace()] if char_level else text.split()


def _talk(lang: str, name: str, seed: int) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """(segmentation entries, the SimulEval long-form log line) of one generated talk."""
    rng = random.Random(seed)
    char_level = lang in ("zh", "ja")
    seg, units, delays, elapsed = [], [], [], []
    t = 1200.0
    compute = 0.0
    sentences = _sentences(lang)
    for n, text in enumerate(rng.sample(sentences, min(len(sentences), 9))):
        size = len(text) / 3.0 if char_level else len(text.split())
        dur = round(size / 2.5 * 1000.0 + rng.uniform(-100, 400), 3)
        seg.append({"wav": f"{name}.wav", "offset": round(t / 1000.0, 4), "duration": round(dur / 1000.0, 4),
                    "text": text})
        out = _edit(_tokens(text, char_level), rng, lang, n == 0)
        i = 0
        while i < len(out):
            k = rng.randint(1, 6)
            at = t + dur * min(1.0, (i + k) / len(out)) + rng.choice([-1500, 0, 300, 900, 2500])
            at = round(max(at, delays[-1] if delays else 0.0, 0.0), 3)
            step_compute = 0.0
            for tok in out[i:i + k]:
                step_compute += rng.choice([0.0, rng.uniform(5, 80)])  # 0: an equal elapsed time (same write)
                compute += step_compute
                units.append(tok)
                delays.append(at)
                elapsed.append(round(at + compute, 3))
            i += k
        t = round(t + dur + rng.uniform(100, 1500), 3)
    prediction = "".join(units) if char_level else " ".join(units)
    line = {"index": 0, "source": [f"{name}.wav"], "prediction": prediction, "delays": delays, "elapsed": elapsed,
            "source_length": t + 3000.0}
    return seg, line


def _write(lang: str, folder: Path, seeds: list[int]) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    seg: list[dict[str, Any]] = []
    lines = []
    for k, seed in enumerate(seeds):
        s, line = _talk(lang, f"{lang}_talk{k}", seed)
        seg += s
        lines.append({**line, "index": k})
    paths = {"segmentation": folder / "seg.yaml", "references": folder / "ref.txt", "log": folder / "instances.log"}
    paths["segmentation"].write_text(yaml.safe_dump([{k: v for k, v in e.items() if k != "text"} for e in seg]),
                                     encoding="utf-8")
    paths["references"].write_text("".join(e["text"] + "\n" for e in seg), encoding="utf-8")
    paths["log"].write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8")
    return paths


# ---------------------------------------------------------------------------------------------------- the oracle
def _binary_lines(refs: list[str], hyp: str, folder: Path) -> list[str]:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "ref").write_text("".join(r + "\n" for r in refs), encoding="utf-8")
    (folder / "hyp").write_text(hyp, encoding="utf-8")
    subprocess.run([str(mwerbinary.check_binary()), "-mref", "ref", "-hypfile", "hyp", "-usecase", "1"],
                   cwd=folder, check=True, capture_output=True)
    return (folder / "__segments").read_text(encoding="utf-8").splitlines()


def _oracle(paths: dict[str, Path], unit: str, tokenizer: str, version: str, work: Path) -> dict[str, float]:
    """BLEU, StreamLAAL and StreamLAAL_CA as stream_laal.py `version` computes them."""
    seg = yaml.safe_load(paths["segmentation"].read_text(encoding="utf-8"))
    refs = paths["references"].read_text(encoding="utf-8").splitlines()
    logs = {json.loads(x)["source"][0]: json.loads(x) for x in paths["log"].read_text(encoding="utf-8").splitlines()}
    by_wav: dict[str, list[tuple[str, float, float]]] = {}
    for e, r in zip(seg, refs, strict=True):
        by_wav.setdefault(e["wav"], []).append((r.strip(), e["offset"], e["duration"]))
    split = unit == "char" and version == "2.0"
    instances = []
    for k, (wav, sents) in enumerate(by_wav.items()):
        log = logs[wav]
        pred, texts = log["prediction"], [s[0] for s in sents]
        if split:
            pred, texts = " ".join(pred), [" ".join(x) for x in texts]
        lines = _binary_lines(texts, pred, work / str(k))
        pieces = [(re.sub(r"(.)\s", r"\1", x) if split else x).strip() for x in lines]
        at, prev = 0, None
        for (ref, off, dur), piece in zip(sents, pieces, strict=True):
            d_out: list[float] = []
            e_out: list[float] = []
            if piece.strip():
                n = len(piece.strip()) if unit == "char" else len(piece.strip().split(" "))
                for d, e in zip(log["delays"][at:at + n], log["elapsed"][at:at + n], strict=True):
                    se = e if prev is None else (prev[3] - prev[2] + d if e == prev[1] else e - prev[1] + prev[0])
                    sd, se = d - off * 1000, se - off * 1000
                    if version == "2.0":
                        sd, se = max(0.0, sd), max(0.0, se)
                    d_out.append(sd)
                    e_out.append(se)
                    prev = (d, e, sd, se)
                at += n
            length = len(ref.strip()) if unit == "char" else len(ref.split(" "))
            instances.append(SimpleNamespace(reference=ref, prediction=piece, delays=d_out, elapsed=e_out,
                                             source_length=dur * 1000, reference_length=length, metrics={}))
    table = dict(enumerate(instances))
    return {"BLEU": qs.SacreBLEUScorer(tokenizer)(table), "StreamLAAL": ls.LAALScorer()(table),
            "StreamLAAL_CA": ls.LAALScorer(computation_aware=True)(table)}


def _harness(paths: dict[str, Path], lang: str, unit: str, tokenizer: str, profile: str) -> dict[str, Any]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        rc = main(["score", str(paths["log"]), "--segmentation", str(paths["segmentation"]), "--references",
                   str(paths["references"]), "--target-lang", lang, "--latency-unit", unit, "--tokenizer", tokenizer,
                   "--profile", profile, "--format", "json", "--no-write", "--bootstrap", "1"])
    assert rc == 0, err.getvalue()
    return json.loads(out.getvalue())


CASES = [("de", "word", "13a"), ("en", "word", "13a"), ("zh", "char", "zh"), ("ja", "char", "char")]


@pytest.mark.parametrize(("lang", "unit", "tokenizer"), CASES)
@pytest.mark.parametrize(("profile", "version"), [("iwslt2025", "2.0"), ("iwslt2025-v1", "1.0.0")])
def test_profile_equals_the_2025_tool_on_generated_talks(tmp_path: Path, lang: str, unit: str, tokenizer: str,
                                                         profile: str, version: str) -> None:
    paths = _write(lang, tmp_path / "talks", [11, 12, 13])
    expected = _oracle(paths, unit, tokenizer, version, tmp_path / "oracle")
    ours = _harness(paths, lang, unit, tokenizer, profile)
    assert set(ours) >= set(expected) and "LongYAAL" not in ours  # the profile's metric set
    for name, value in expected.items():
        assert ours[name]["score"] == pytest.approx(value, abs=1e-9), name
    assert ours["info"]["profile"] == profile
    assert f"|profile:{profile}" in ours["BLEU"]["signature"] and "mwersegmenter-binary+case" in ours["BLEU"][
        "signature"]
    assert ours["StreamLAAL"]["profile"] == profile


def test_the_profiles_differ_where_the_2025_tool_versions_did(tmp_path: Path) -> None:
    """The negative-delay cap (2.0) and the character split (2.0, zh/ja) move the numbers; iwslt2026 gives others."""
    paths = _write("zh", tmp_path / "zh", [21, 22])
    v2 = _harness(paths, "zh", "char", "zh", "iwslt2025")
    v1 = _harness(paths, "zh", "char", "zh", "iwslt2025-v1")
    today = _harness(paths, "zh", "char", "zh", "iwslt2026")
    assert v2["StreamLAAL"]["score"] != pytest.approx(v1["StreamLAAL"]["score"], abs=1e-6)
    assert today["StreamLAAL"]["score"] != pytest.approx(v2["StreamLAAL"]["score"], abs=1e-6)
    assert "LongYAAL" in today and today["info"]["profile"] == "iwslt2026"


def _random_alignment(rng: random.Random, char_level: bool) -> tuple[list[str], str]:
    vocab = list("啊的是在和人权利自由") if char_level else ["the", "The", "a", "A", "rights", "Rights", "of", "all"]
    refs = ["".join(rng.choice(vocab) for _ in range(rng.randint(1, 6))) if char_level
            else " ".join(rng.choice(vocab) for _ in range(rng.randint(1, 6))) for _ in range(rng.randint(1, 5))]
    hyp_tokens = [rng.choice(vocab) for _ in range(rng.randint(1, 20))]
    return refs, ("".join(hyp_tokens) if char_level else " ".join(hyp_tokens))


@pytest.mark.parametrize("case_sensitive", [True, False])
@pytest.mark.parametrize("char_level", [False, True])
def test_segment_equals_the_binary_run_directly(tmp_path: Path, case_sensitive: bool, char_level: bool) -> None:
    rng = random.Random(5 + case_sensitive + 2 * char_level)
    jobs = []
    for _ in range(150):
        refs, hyp = _random_alignment(rng, char_level)
        if char_level:
            refs, hyp = [" ".join(r) for r in refs], " ".join(hyp)
        jobs.append((refs, hyp))
    ours = mwerbinary.segment_many(jobs, case_sensitive=case_sensitive)
    for k, ((refs, hyp), got) in enumerate(zip(jobs, ours, strict=True)):
        folder = tmp_path / str(k)
        folder.mkdir()
        (folder / "ref").write_text("".join(r + "\n" for r in refs), encoding="utf-8")
        (folder / "hyp").write_text(hyp, encoding="utf-8")
        subprocess.run([str(mwerbinary.check_binary()), "-mref", "ref", "-hypfile", "hyp", "-usecase",
                        "1" if case_sensitive else "0"], cwd=folder, check=True, capture_output=True)
        assert got == (folder / "__segments").read_text(encoding="utf-8").split("\n")[:len(refs)]
    # no token at all: empty lines (the binary itself crashes on an empty hypothesis)
    assert mwerbinary.segment(["a b", "c"], "  ") == ["", ""]
