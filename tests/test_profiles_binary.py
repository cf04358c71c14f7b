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
from tests.profile_talks import write_talks

pytestmark = [pytest.mark.mwersegmenter, pytest.mark.slow]
ls = pytest.importorskip("simuleval.evaluator.scorers.latency_scorer")
qs = pytest.importorskip("simuleval.evaluator.scorers.quality_scorer")


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
    paths = write_talks(lang, tmp_path / "talks", [11, 12, 13])
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
    paths = write_talks("zh", tmp_path / "zh", [21, 22])
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
    # an empty reference line (the binary crashes on it too): an empty piece, the others aligned without it
    with_empty = mwerbinary.segment(["a b", "", "c d"], "a b x c d")
    assert with_empty[1] == "" and with_empty[::2] == mwerbinary.segment(["a b", "c d"], "a b x c d")
