"""A small BLEURT checkpoint built offline (random weights): for tests and trials, never for reported scores.

bleurt-pytorch's real checkpoints (`lucadiliello/BLEURT-20-D12`, ...) are downloads; this builds a tiny
`BleurtConfig` model (2 layers of width 32) and a WordPiece vocabulary from the words of `texts`, and saves both
with `save_pretrained`, the layout a downloaded checkpoint has.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

__all__ = ["build_toy_bleurt"]

SPECIAL = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")


def build_toy_bleurt(folder: Path, texts: Iterable[str], seed: int = 0) -> Path:
    """Save a random-initialised BLEURT model and tokenizer for the words (lower-cased) of `texts` in `folder`."""
    import torch
    from bleurt_pytorch import BleurtConfig, BleurtForSequenceClassification
    from bleurt_pytorch.bleurt.tokenization_bleurt_fast import BleurtTokenizerFast

    folder.mkdir(parents=True, exist_ok=True)
    words = sorted({w for t in texts for w in t.lower().split()})
    chars = sorted({c for w in words for c in w})
    vocab = [*SPECIAL, *chars, *(f"##{c}" for c in chars), *(w for w in words if w not in chars)]
    vocab_file = folder / "vocab.txt"
    vocab_file.write_text("\n".join(vocab) + "\n", encoding="utf-8")
    BleurtTokenizerFast(vocab_file=str(vocab_file), do_lower_case=True).save_pretrained(str(folder))
    torch.manual_seed(seed)
    config = BleurtConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                          intermediate_size=64, max_position_embeddings=512,
                          initializer_range=0.5)  # wide: the scores of different pairs differ visibly
    BleurtForSequenceClassification(config).eval().save_pretrained(str(folder))
    return folder
