"""What each metric key of scores.json means: direction (higher or lower is better), kind and a one-line definition.

Keys follow docs/formats.md: `NAME`, `NAME@refset` (another reference set, `multi` = all together), `NAME_CA`
(computation-aware latency), `NormNAME` (Norm-Score against the offline baseline) and `NE`.
"""

from __future__ import annotations

from dataclasses import dataclass

QUALITY: dict[str, tuple[bool, str]] = {
    "BLEU": (True, "BLEU (sacrebleu): geometric mean of 1–4-gram precisions with a brevity penalty, 0–100."),
    "chrF": (True, "chrF (sacrebleu): character n-gram F-score, 0–100."),
    "TER": (False, "TER (sacrebleu): edits needed to turn the hypothesis into the reference, per reference word."),
}
LATENCY: dict[str, str] = {
    "AL": "Average Lagging: source read before each target word, minus an ideal policy's, averaged up to the "
          "first word written after the whole source was read.",
    "LAAL": "Length-Adaptive Average Lagging: AL with the ideal rate taken from the longer of hypothesis and "
            "reference, so over-long outputs are not rewarded.",
    "AP": "Average Proportion: mean fraction of the source read when each target word was written (0–1).",
    "DAL": "Differentiable Average Lagging: AL where each word is at least one source-per-target step after the "
           "previous one.",
    "ATD": "Average Token Delay: mean time between a source token and the target token that corresponds to it.",
    "StartOffset": "Start offset: source read before the first target word.",
    "EndOffset": "End offset: source length minus the delay of the last target word (negative: written after end).",
    "YAAL": "Yet Another Average Lagging: LAAL restricted to the words written before the source ended.",
}
OTHER: dict[str, tuple[bool, str]] = {
    "NE": (False, "Normalized Erasure: words erased by re-translation revisions, over the final output length."),
}
SET_NOTE = {"multi": "all reference sets together (multi-reference)"}


@dataclass(frozen=True)
class MetricInfo:
    """A metric key explained for a reader."""

    key: str
    base: str
    kind: str  # quality | latency | stability | norm | other
    higher_is_better: bool | None
    definition: str
    reference_set: str | None = None
    computation_aware: bool = False

    @property
    def arrow(self) -> str:
        """↑ when higher is better, ↓ when lower is better, nothing when unknown."""
        if self.higher_is_better is None:
            return ""
        return "↑" if self.higher_is_better else "↓"

    @property
    def tooltip(self) -> str:
        """Definition plus the direction in words, for a `title` attribute."""
        if self.higher_is_better is None:
            return self.definition
        better = "higher" if self.higher_is_better else "lower"
        return f"{self.definition} {self.arrow} {better} is better."


def describe(key: str) -> MetricInfo:
    """The `MetricInfo` of any scores.json metric key."""
    name, _, refset = key.partition("@")
    ca = name.endswith("_CA")
    base = name[:-3] if ca else name
    ref_note = ""
    if refset:
        ref_note = f" Reference set: {SET_NOTE.get(refset, refset)}."
    if base in QUALITY:
        up, text = QUALITY[base]
        return MetricInfo(key, base, "quality", up, text + ref_note, refset or None)
    if base in LATENCY:
        text = LATENCY[base]
        if ca:
            text += " Computation-aware: measured on wall-clock elapsed time, so slow systems pay for computing."
        return MetricInfo(key, base, "latency", False, text + ref_note, refset or None, ca)
    if base in OTHER:
        up, text = OTHER[base]
        return MetricInfo(key, base, "stability", up, text, refset or None)
    if base.startswith("Norm") and base[4:] in QUALITY:
        q = base[4:]
        up = QUALITY[q][0]
        text = f"Norm-Score: this system's {q} divided by the {q} of the offline baseline on the same references."
        return MetricInfo(key, base, "norm", up, text + ref_note, refset or None)
    return MetricInfo(key, base, "other", None, f"{key} (no definition known to the leaderboard).", refset or None)
