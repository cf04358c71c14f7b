"""The text of a model's output pieces, as SimulStream's detokenizers make it (`detokenizer_type` of its eval config).

- `simuleval`: the pieces are words (`latency_unit: word`), characters (`char`) or SentencePiece pieces (`spm`).
- `hf` / `canary`: the model's own tokenizer joins them. Where the organizer provides that tokenizer (a
  `tokenizer.json` file, or a folder of a Hugging Face tokenizer), it is loaded from disk and used as SimulStream
  uses it (`convert_tokens_to_string`). Without it, the piece conventions whose joining is fixed are joined here:
  SentencePiece (`▁` marks a word start; Hugging Face's Metaspace decoder, SentencePiece's `decode_pieces`) and
  byte-level BPE (GPT-2/Whisper: each character stands for one byte; Hugging Face's ByteLevel decoder). Which
  convention a log uses is read from its pieces; a log whose pieces show neither cannot be joined without the
  tokenizer, and says so in one line.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from harness.errors import HarnessError

__all__ = ["SPIECE", "byte_level_join", "load_tokenizer", "piece_convention", "sentencepiece_join",
           "tokenizer_detokenizer"]

#: SentencePiece's word-start mark (U+2581), which Metaspace decoders turn into a space.
SPIECE = "\u2581"

Detokenizer = Callable[[list[str]], str]


def sentencepiece_join(tokens: list[str]) -> str:
    """Hugging Face's Metaspace decoder (the default `prepend_scheme`): every `▁` becomes a space, except in the
    first piece, where it is dropped (the space SentencePiece put before the text)."""
    if not tokens:
        return ""
    return tokens[0].replace(SPIECE, "") + "".join(tokens[1:]).replace(SPIECE, " ")


def _byte_table() -> dict[str, int]:
    """GPT-2's `bytes_to_unicode`, inverted: the character that stands for each byte -> the byte."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("\u00a1"), ord("\u00ac") + 1),
                 *range(ord("\u00ae"), ord("\u00ff") + 1)]
    chars = list(printable)
    extra = 0
    for b in range(256):
        if b not in printable:
            printable.append(b)
            chars.append(256 + extra)
            extra += 1
    return {chr(c): b for b, c in zip(printable, chars, strict=True)}


_BYTES = _byte_table()


def byte_level_join(tokens: list[str]) -> str:
    """Hugging Face's ByteLevel decoder: a piece made of byte characters gives those bytes, any other piece (a
    special token) its own UTF-8; the bytes are decoded as UTF-8 with U+FFFD for what is not."""
    out = bytearray()
    for token in tokens:
        try:
            out.extend(_BYTES[c] for c in token)
        except KeyError:
            out.extend(token.encode("utf-8"))
    return out.decode("utf-8", errors="replace")


#: Characters that only byte-level BPE pieces hold: Ġ (a space), Ċ (a newline), ĉ (a tab).
_BYTE_LEVEL_MARKS = frozenset("\u0120\u010a\u0109")
_BYTE_FALLBACK = re.compile(r"^<0x[0-9A-Fa-f]{2}>$")


def piece_convention(tokens: Iterable[str]) -> str | None:
    """`sentencepiece`, `byte-level` or None (neither shows, or both do) for the pieces of one log."""
    spiece = byte_level = False
    for token in tokens:
        if _BYTE_FALLBACK.match(token):
            return None  # SentencePiece byte fallback: which bytes fuse is the tokenizer's to say
        spiece = spiece or SPIECE in token
        byte_level = byte_level or not _BYTE_LEVEL_MARKS.isdisjoint(token)
    if spiece == byte_level:
        return None
    return "sentencepiece" if spiece else "byte-level"


def _from_tokenizer_json(path: Path) -> Detokenizer:
    try:
        from tokenizers import Tokenizer
    except ImportError:
        raise HarnessError(f"{path}: reading a tokenizer.json needs the `tokenizers` package "
                           "(pip install tokenizers)") from None
    try:
        tokenizer = Tokenizer.from_file(str(path))
    except Exception as exc:  # the Rust side raises its own exception types
        raise HarnessError(f"{path}: not a Hugging Face tokenizer.json ({str(exc).splitlines()[0][:200]})") from None
    decoder = tokenizer.decoder
    if decoder is None:  # PreTrainedTokenizerFast.convert_tokens_to_string without a decoder
        return lambda tokens: " ".join(tokens)
    return lambda tokens: str(decoder.decode(tokens))


def _from_folder(path: Path) -> Detokenizer:
    if (path / "tokenizer.json").is_file():
        return _from_tokenizer_json(path / "tokenizer.json")
    try:
        from transformers import AutoTokenizer
    except ImportError:
        raise HarnessError(f"{path}: a tokenizer folder without tokenizer.json needs the `transformers` package "
                           "(pip install transformers)") from None
    try:
        tokenizer: Any = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
    except Exception as exc:  # transformers raises OSError, ValueError, KeyError ... for a folder it cannot read
        raise HarnessError(f"{path}: not a Hugging Face tokenizer folder "
                           f"({str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__})") from None
    return lambda tokens: str(tokenizer.convert_tokens_to_string(tokens))


def load_tokenizer(path: Path) -> Detokenizer:
    """The `convert_tokens_to_string` of the tokenizer at `path` (a tokenizer.json, or a tokenizer folder), loaded
    from disk only; a HarnessError naming `path` when it cannot be read."""
    path = Path(path)
    if path.is_dir():
        return _from_folder(path)
    if path.is_file():
        return _from_tokenizer_json(path)
    raise HarnessError(f"{path}: no such tokenizer file or folder")


def tokenizer_detokenizer(kind: str, tokens: list[str], tokenizer: Path | None, where: str) -> Detokenizer:
    """The detokenizer of a log written with `detokenizer_type: KIND` (hf, canary), whose pieces are `tokens`:
    the organizer's tokenizer when given, else the fixed joining of the pieces' convention."""
    if tokenizer is not None:
        return load_tokenizer(tokenizer)
    convention = piece_convention(tokens)
    if convention == "sentencepiece":
        return sentencepiece_join
    if convention == "byte-level":
        return byte_level_join
    raise HarnessError(f"{where}: detokenizer_type {kind!r} with pieces that are neither SentencePiece (▁) nor "
                       "byte-level BPE (Ġ): they cannot be joined without the model's tokenizer; pass it with "
                       "--simulstream-tokenizer PATH (a tokenizer.json or a tokenizer folder)")
