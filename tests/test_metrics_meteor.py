"""METEOR: nltk's meteor_score over Debian's wordnet-base, sentence scores averaged, with a bootstrap interval and a
signature; computed only when a track or `--metrics` asks for it; exact matching only for non-English targets."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from harness.cli import main
from harness.errors import HarnessError
from harness.metrics import meteor
from harness.scoring import score_path
from harness.scoring.options import ScoringOptions

ROOT = Path(__file__).resolve().parent.parent
RUN = ROOT / "examples" / "runs" / "udhr-dev-waitk3" / "instances.log"


def _nltk_meteor(refs: list[list[str]], hyp: list[str], **how: object) -> float:
    """nltk's own sentence METEOR (imported here: nltk takes seconds to import, in every test worker that collects
    this module)."""
    from nltk.translate.meteor_score import meteor_score

    return float(meteor_score(refs, hyp, **how))


def _records() -> list[dict]:
    return [json.loads(line) for line in RUN.read_text(encoding="utf-8").splitlines()]


def test_corpus_meteor_is_the_mean_of_nltk_sentence_scores_on_the_same_tokens() -> None:
    recs = _records()
    scores = score_path(RUN, ScoringOptions(metrics=["METEOR"], target_lang="es", bootstrap=200))
    tokens = meteor._tokens
    hyps = tokens([r["prediction"] for r in recs])
    refs = tokens([r["reference"] for r in recs])
    direct = [_nltk_meteor([ref], hyp, stemmer=meteor._NoStem(), wordnet=meteor._NoSynonyms())
              for hyp, ref in zip(hyps, refs, strict=True)]
    assert math.isclose(scores["METEOR"]["score"], math.fsum(direct) / len(direct), rel_tol=1e-9, abs_tol=1e-9)
    lo, hi = scores["METEOR"]["ci95"]
    assert lo < scores["METEOR"]["score"] < hi
    sig = scores["METEOR"]["signature"]
    assert "modules:exact|" in sig and "lang:es" in sig and "nltk:" in sig and "alpha:0.9" in sig
    assert scores["METEOR"]["kind"] == "quality" and scores["METEOR"]["direction"] == "higher"


def test_english_targets_match_stems_and_wordnet_synonyms() -> None:
    hyp, ref = ["the hound was barking loudly"], [["the dog barked loudly"]]
    english = meteor.meteor_sentence_scores(hyp, ref, "en")[0]
    exact = meteor.meteor_sentence_scores(hyp, ref, "es")[0]
    wn = meteor.wordnet()
    from nltk.stem.porter import PorterStemmer

    direct = _nltk_meteor([ref[0][0].split()], hyp[0].split(), stemmer=PorterStemmer(), wordnet=wn)
    assert math.isclose(english, direct, rel_tol=1e-12) and english > exact  # hound~dog, barking~barked
    assert "modules:exact+stem+synonym" in meteor.meteor_signature(1, "en")


def test_meteor_is_optional_and_a_track_can_ask_for_it(tmp_path: Path, capsys) -> None:
    assert "METEOR" not in score_path(RUN, ScoringOptions(bootstrap=1))
    assert main(["score", str(RUN), "--metrics", "BLEU", "METEOR", "--target-lang", "es", "--format", "json",
                 "--no-write", "--bootstrap", "1"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(k for k in out if k not in ("counts", "info")) == {"BLEU", "METEOR"}
    also = ScoringOptions(also=["METEOR"], target_lang="es", bootstrap=1)
    assert score_path(RUN, also)["METEOR"]["score"] == out["METEOR"]["score"]


def test_without_wordnet_english_meteor_fails_in_one_line(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(meteor, "WORDNET_DIR", tmp_path / "nowhere")
    monkeypatch.setattr(meteor, "_cache_root", lambda: tmp_path / "cache")
    meteor.wordnet.cache_clear()
    try:
        with pytest.raises(HarnessError, match=r"METEOR needs WordNet: .*nowhere has no database "
                                               r"\(apt-get install wordnet-base\)"):
            meteor.meteor_sentence_scores(["a b"], [["a b"]], "en")
    finally:
        meteor.wordnet.cache_clear()
