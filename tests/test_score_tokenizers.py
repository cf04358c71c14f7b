"""BLEU tokenizers as set up by the README: `ja-mecab` works from scripts/setup.sh's set-up (sacrebleu's `ja` extra,
the harness's `ja` extra), and a tokenizer that cannot run here is one line before any work is done, never a
traceback after resegmentation. `ko-mecab` is a real sacrebleu tokenizer whose modules the set-up does not install
(sacrebleu[ko]): the missing case, for real."""

from __future__ import annotations

import configparser
import json
import math

from harness.cli import main
from harness.metrics.quality import tokenizer_problem
from tests.longform_support import ROOT, edited_talk, write_talk_log

JAPANESE = [
    "すべての人間は、生まれながらにして自由であり、かつ、尊厳と権利とについて平等である。",
    "人間は、理性と良心とを授けられており、互いに同胞の精神をもって行動しなければならない。",
    "すべて人は、人種、皮膚の色、性、言語、宗教による差別をも受けることなく、権利と自由とを享有することができる。",
    "すべて人は、生命、自由及び身体の安全に対する権利を有する。",
    "何人も、奴隷にされ、又は苦役に服することはない。",
    "何人も、拷問又は残虐な、非人道的な若しくは屈辱的な取扱若しくは刑罰を受けることはない。",
    "すべて人は、いかなる場所においても、法の下において、人として認められる権利を有する。",
    "すべての人は、法の下において平等であり、また、いかなる差別もなしに法の平等な保護を受ける権利を有する。",
]


def test_the_set_up_installs_the_ja_extra_and_it_names_sacrebleus() -> None:
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg", encoding="utf-8")
    assert "sacrebleu[ja]" in cfg["options.extras_require"]["ja"]
    setup = (ROOT / "scripts" / "setup.sh").read_text(encoding="utf-8")
    installs = [line for line in setup.splitlines() if "pip install" in line and " -e " in line]
    assert installs and all(",ja," in line or ",ja]" in line or "[ja," in line for line in installs)
    assert tokenizer_problem("ja-mecab") is None


def test_ja_mecab_bleu_of_a_long_form_log_equals_sacrebleu(tmp_path, capsys) -> None:
    from sacrebleu.metrics import BLEU

    paths = write_talk_log([edited_talk("talk-ja", JAPANESE, seed=4, char_level=True)], tmp_path, char_level=True)
    assert main(["score", str(paths["jsonl"]), "--segmentation", str(paths["segmentation"]), "--references",
                 str(paths["references"]), "--target-lang", "ja", "--tokenizer", "ja-mecab", "--metrics", "BLEU",
                 "--format", "json", "--bootstrap", "1"]) == 0
    ours = json.loads(capsys.readouterr().out)
    rows = [json.loads(x) for x in (tmp_path / "instance_scores.jsonl").read_text(encoding="utf-8").splitlines()]
    sentences = [s for r in rows for s in r["sentences"]]
    assert len(sentences) == len(JAPANESE)
    theirs = BLEU(tokenize="ja-mecab").corpus_score([s["prediction"] for s in sentences],
                                                    [[s["references"]["orig"] for s in sentences]])
    assert math.isclose(ours["BLEU"]["score"], theirs.score, rel_tol=1e-9, abs_tol=1e-9)
    assert "tok:ja-mecab" in ours["BLEU"]["signature"] and 0 < theirs.score < 100


def test_a_tokenizer_that_is_not_installed_is_one_line_before_any_work(tmp_path, capsys) -> None:
    """The log named does not even exist: the tokenizer is checked before anything is read or resegmented."""
    absent = tmp_path / "never-read.jsonl"
    cases = [("ko-mecab", "BLEU tokenizer 'ko-mecab' is not installed", "sacrebleu[ko]"),
             ("nope", "BLEU tokenizer 'nope' is not one of sacrebleu's", "ja-mecab")]
    for name, expected, hint in cases:
        assert main(["score", str(absent), "--segmentation", str(tmp_path / "seg.yaml"), "--references",
                     str(tmp_path / "refs.txt"), "--tokenizer", name]) == 2
        err = capsys.readouterr().err
        assert expected in err and hint in err and err.count("\n") == 1, err
        assert "Traceback" not in err
    assert tokenizer_problem("13a") is None
