"""The one dataset loader: a track's dataset files to the reader of its modality and segmentation."""

from __future__ import annotations

from pathlib import Path

from harness.data.longform import LongformDataset
from harness.data.speech import SpeechDataset
from harness.data.text import TextDataset

__all__ = ["load_dataset"]


def load_dataset(modality: str, source: Path, references: dict[str, Path], segmentation: Path | None = None,
                 transcripts: Path | None = None) -> TextDataset | SpeechDataset:
    """The dataset reader for a track's modality; with a `segmentation`, a long-form dataset of recordings."""
    if segmentation is not None:
        return LongformDataset.load_longform(source, segmentation, references, transcripts)
    if modality == "speech":
        return SpeechDataset.load(source, references)
    return TextDataset.load(source, references)
