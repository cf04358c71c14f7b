"""The one registry of metrics: name, kind, direction, unit, definition, modality, CA variant and function.

Every other place reads it: config validation (`harness.config`: which names a track may list), the scorers
(`harness.scoring`: which metrics exist, their units), scores.json (every metric record carries `kind`,
`direction`, `unit` and `definition` from here) and, through those records, the leaderboard's metric table.

It lives outside `harness.metrics` and holds data only (the function is named as `module:attribute`, resolved
by `function_of`), so that `harness.config` — imported by the leaderboard — pulls in no metric code, and the
leaderboard, which imports nothing from `harness.metrics` or `harness.scoring`, learns what a metric means from
the files the scoring stage wrote, not from code run at render time.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

__all__ = [
    "MetricSpec",
    "REGISTRY",
    "QUALITY_METRICS",
    "MODEL_METRICS",
    "SCORED_QUALITY",
    "LATENCY_METRICS",
    "ALL_LATENCY_METRICS",
    "DIAGNOSTIC_METRICS",
    "OPTIONAL_METRICS",
    "LONGFORM_LATENCY_METRICS",
    "names",
    "spec_of",
    "unit_of",
    "describe_key",
    "function_of",
    "interval_floor",
    "computation_aware_applies",
    "PEERS",
]

HIGHER, LOWER = "higher", "lower"
ZERO = "zero"  # closest to 0 is better (a signed test value: far from 0 either way is bad)
#: unit rules: `delay` = the run's delay unit (word, char or ms of source audio); the others are fixed
DELAY_UNIT = "delay"


@dataclass(frozen=True)
class MetricSpec:
    """One metric: what it is called, what it measures and how to compute it."""

    name: str
    kind: str  # quality | latency | stability | norm | diagnostic
    direction: str  # higher | lower | zero (is better; zero: the closer to 0 the better)
    unit: str  # `delay` (the run's delay unit), `proportion`, `token`, `points` (0-100 scale), `ratio`, `model`
    definition: str  # one line, for readers
    modality: str  # text | speech | both: the sources it applies to
    computation_aware: bool  # has a `NAME_CA` variant computed from elapsed times
    function: str  # `module:attribute` of the function computing it
    segmentation: str = "both"  # shortform | longform | both: the tracks it is computed on
    optional: bool = False  # computed only when a track (or --metrics) asks for it: its cost is not small
    model: bool = False  # computed by a neural checkpoint the organizer names (COMET, XCOMET, BLEURT)
    signed: bool = False  # a latency whose value may be below 0 by definition (EndOffset: written before the end)

    @property
    def higher_is_better(self) -> bool:
        return self.direction == HIGHER


def _q(name: str, direction: str, definition: str) -> MetricSpec:
    return MetricSpec(name, "quality", direction, "points", definition, "both", False,
                      "harness.metrics.quality:quality_score")


def _lat(name: str, function: str, definition: str, unit: str = DELAY_UNIT) -> MetricSpec:
    return MetricSpec(name, "latency", LOWER, unit, definition, "both", True, f"harness.metrics.latency:{function}",
                      "shortform")


REGISTRY: dict[str, MetricSpec] = {
    s.name: s
    for s in (
        _q("BLEU", HIGHER, "BLEU (sacrebleu): geometric mean of 1–4-gram precisions with a brevity penalty, 0–100."),
        _q("chrF", HIGHER, "chrF (sacrebleu): character n-gram F-score, 0–100."),
        _q("TER", LOWER, "TER (sacrebleu): edits needed to turn the hypothesis into the reference, per reference "
                         "word."),
        MetricSpec("METEOR", "quality", HIGHER, "proportion",
                   "METEOR (nltk): harmonic mean of unigram precision and recall with a fragmentation penalty, "
                   "matching exact words, stems and WordNet synonyms (English targets; exact words otherwise); "
                   "sentence scores averaged, 0–1.", "both", False, "harness.metrics.meteor:meteor_sentence_scores",
                   optional=True),
        _lat("AL", "average_lagging",
             "Average Lagging: source read before each target word, minus an ideal policy's, averaged up to the "
             "first word written after the whole source was read."),
        _lat("LAAL", "length_adaptive_average_lagging",
             "Length-Adaptive Average Lagging: AL with the ideal rate taken from the longer of hypothesis and "
             "reference, so over-long outputs are not rewarded."),
        _lat("AP", "average_proportion",
             "Average Proportion: the fraction of the source read when each target word was written, summed and "
             "divided by the reference's length (0–1 for an output no longer than its reference; above 1 for a "
             "longer output, and computation-aware for a system slower than the source).",
             unit="proportion"),
        _lat("DAL", "differentiable_average_lagging",
             "Differentiable Average Lagging: AL where each word is at least one source-per-target step after the "
             "previous one."),
        _lat("ATD", "average_token_delay",
             "Average Token Delay: mean time between a source token and the target token that corresponds to it."),
        _lat("StartOffset", "start_offset", "Start offset: source read before the first target word."),
        replace(_lat("EndOffset", "end_offset",
                     "End offset: delay of the last target word minus the source length (0: written at the end)."),
                signed=True),
        _lat("YAAL", "yet_another_average_lagging",
             "Yet Another Average Lagging: LAAL restricted to the words written before the source ended."),
        MetricSpec("CW", "latency", LOWER, DELAY_UNIT,
                   "Continuous Wait length (Gu et al., 2017): the source read between two consecutive writes, "
                   "averaged over the waits of an instance (a wait is the source read since the previous write, "
                   "the first from the start; writes at the same point are one write), then over the instances "
                   "with output.", "both", False, "harness.metrics.latency:continuous_wait", "shortform",
                   optional=True),
        *(MetricSpec(n, "latency", LOWER, "proportion" if n == "LongAP" else DELAY_UNIT, text, "speech", True,
                     "harness.metrics.longform_latency:sentence_values", "longform") for n, text in (
            ("LongYAAL", "LongYAAL (OmniSTEval): YAAL of each reference sentence after SoftSegmenter resegmentation, "
                         "counting the words written before the recording ends — at the end of its last reference "
                         "sentence, as OmniSTEval cuts it (words written during audio after that sentence are left "
                         "out), or at the end of the audio with `longform_end: audio`."),
            ("StreamLAAL", "StreamLAAL (simulstream): LAAL of each reference sentence after mwerSegmenter "
                           "resegmentation of the recording's output stream."),
            ("LongAL", "LongAL (OmniSTEval): Average Lagging of each resegmented reference sentence."),
            ("LongLAAL", "LongLAAL (OmniSTEval): Length-Adaptive Average Lagging of each resegmented sentence."),
            ("LongAP", "LongAP (OmniSTEval): Average Proportion of each resegmented sentence.",),
            ("LongDAL", "LongDAL (OmniSTEval): Differentiable Average Lagging of each resegmented sentence."),
        )),
        *(MetricSpec(n, "diagnostic", d, u, text, "both", False, "harness.metrics.degeneracy:degeneracy", "shortform")
          for n, d, u, text in (
            ("SWF", HIGHER, "percent",
             "Simultaneous Words Fraction (OmniSTEval): percent of output words written before their segment's "
             "source ended."),
            ("EFSW", HIGHER, "percent",
             "Expected Fraction of Simultaneous Words (OmniSTEval): percent of the source lying before each "
             "instance's YAAL."),
            ("DSPTV", ZERO, "points",
             "Degenerate Simultaneous Policy Test Value (OmniSTEval): EFSW minus SWF; far from 0 means YAAL "
             "misdescribes the policy."),
            ("DegeneratePolicy", LOWER, "flag",
             "Likely degenerate simultaneous policy: 1 when |DSPTV| > 20 points (OmniSTEval's test), else 0."),
        )),
        MetricSpec("AA", "diagnostic", LOWER, "token",
                   "Average Anticipation (SiMuST-C): over word-alignment links between the source and the output, "
                   "the mean of max(i − j, 0) for source word i and target word j (0: monotonic).", "text", False,
                   "harness.metrics.anticipation:average_anticipation", optional=True),
        MetricSpec("COMET", "quality", HIGHER, "model",
                   "COMET (unbabel-comet): a neural estimate of each hypothesis's quality given its source and "
                   "reference, averaged over sentences, on the model's own scale (the checkpoint the task names).",
                   "both", False, "harness.metrics.comet.values:comet_values", model=True),
        MetricSpec("XCOMET", "quality", HIGHER, "model",
                   "XCOMET (unbabel-comet): an explainable COMET model's score of each hypothesis given its source "
                   "and reference (0–1), averaged over sentences (the checkpoint the task names, e.g. XCOMET-XL).",
                   "both", False, "harness.metrics.comet.values:comet_values", model=True),
        MetricSpec("BLEURT", "quality", HIGHER, "model",
                   "BLEURT (bleurt-pytorch): a learned score of each hypothesis against its reference (no source), "
                   "averaged over sentences, on the checkpoint's own scale (e.g. BLEURT-20: about 0-1).",
                   "both", False, "harness.metrics.bleurt.values:bleurt_values", model=True),
        MetricSpec("NE", "stability", LOWER, "token",
                   "Normalized Erasure: words erased by re-translation revisions, over the final output length.",
                   "both", False, "harness.metrics.stability:corpus_normalized_erasure"),
        MetricSpec("NormBLEU", "norm", HIGHER, "ratio",
                   "Norm-Score: this system's BLEU divided by the BLEU of the offline baseline on the same "
                   "references.", "both", False, "harness.metrics.quality:norm_score"),
    )
}
_SIMULEVAL = ("SimulEval 1.1.4's latency scorer, to 1e-9, without its known bugs "
              "(tests/test_conformance_simuleval.py)")
_OMNI_LONG = ("OmniSTEval 0.1.10 (`omnisteval longform`), to 1e-9, on the same resegmented sentences "
              "(tests/test_longform_conformance.py, tests/test_longform_conformance_cli.py)")
_OMNI_DEGENERACY = "OmniSTEval 0.1.10's degenerate-policy diagnostics (tests/test_longform_conformance.py)"
#: what each metric's value equals, and the test that holds it to it (docs/reference/metrics.md shows it): the tool
#: and version, or "none" with what stands in for one. Every metric of REGISTRY has an entry
#: (tests/test_docs_reference.py).
PEERS: dict[str, str] = {
    "BLEU": "sacrebleu's `corpus_score` (BLEU), score and signature (tests/test_metrics_quality.py)",
    "chrF": "sacrebleu's `corpus_score` (CHRF), score and signature (tests/test_metrics_quality.py)",
    "TER": "sacrebleu's `corpus_score` (TER), score and signature (tests/test_metrics_quality.py, "
           "tests/test_metrics_native.py)",
    "METEOR": "nltk's `meteor_score` per sentence, averaged as the 2020 IWSLT server did "
              "(tests/test_metrics_meteor.py)",
    "AL": _SIMULEVAL, "LAAL": _SIMULEVAL, "AP": _SIMULEVAL, "DAL": _SIMULEVAL, "StartOffset": _SIMULEVAL,
    "EndOffset": _SIMULEVAL,
    "ATD": "SimulEval 1.1.4's ATD scorer on in-memory instances, to 1e-9 (its reloaded-log ATD treats every log as "
           "speech; tests/test_conformance_simuleval.py)",
    "YAAL": "OmniSTEval 0.1.10's short-form YAAL (tests/test_longform_conformance.py)",
    "CW": "none: Gu et al. (2017)'s definition, on hand-computed vectors (tests/test_metrics_cw.py)",
    "LongYAAL": _OMNI_LONG, "LongAL": _OMNI_LONG, "LongLAAL": _OMNI_LONG, "LongAP": _OMNI_LONG,
    "LongDAL": _OMNI_LONG,
    "StreamLAAL": "simulstream 1.0.0 (`simulstream.metrics.score_latency --scorer stream_laal`), to 1e-9 "
                  "(tests/test_longform_conformance.py, tests/test_longform_interop.py)",
    "SWF": _OMNI_DEGENERACY, "EFSW": _OMNI_DEGENERACY, "DSPTV": _OMNI_DEGENERACY,
    "DegeneratePolicy": _OMNI_DEGENERACY,
    "AA": "none: SiMuST-C §2.2's formula, with eflomal alignments in place of the paper's SimAlign "
          "(tests/test_anticipation.py)",
    "COMET": "unbabel-comet 2.2.7's `comet-score`, float for float (tests/test_comet.py)",
    "XCOMET": "unbabel-comet 2.2.7's `comet-score`, float for float (tests/test_comet.py)",
    "BLEURT": "bleurt-pytorch 0.0.1's own scorer, float for float (tests/test_bleurt.py)",
    "NE": "none: hand-worked revisions and properties (tests/test_metrics_stability.py)",
    "NormBLEU": "none: a ratio of two sacrebleu BLEU scores (tests/test_metrics_quality.py)",
}
#: sources whose runs get `NAME_CA` metrics. Speech only, as in the SimulEval paper: for speech, delays and
#: elapsed times are both milliseconds, so a CA delay is the source audio read plus the computation time. For text,
#: delays are words (or characters) and SimulEval's text `elapsed` adds milliseconds of computation to them, a
#: sum with no unit (an AL_CA of 971 "words" for a 35-word source); text tracks report no CA metrics at all.
CA_MODALITIES = ("speech",)


def computation_aware_applies(speech: bool) -> bool:
    """Whether a run of this modality gets computation-aware (`NAME_CA`) metrics (speech only)."""
    return ("speech" if speech else "text") in CA_MODALITIES


SET_NOTE = {"multi": "all reference sets together (multi-reference)"}
CA_NOTE = (" Computation-aware (speech only): milliseconds of source audio read plus the system's wall-clock "
           "computation time, so slow systems pay for computing.")


def names(kind: str, segmentation: str = "shortform") -> tuple[str, ...]:
    """Names of every metric of one kind computed on one segmentation's tracks, in registry order."""
    return tuple(s.name for s in REGISTRY.values() if s.kind == kind and s.segmentation in (segmentation, "both"))


#: metrics computed only when asked for (a track's `quality:` list or `harness score --metrics`)
OPTIONAL_METRICS = tuple(s.name for s in REGISTRY.values() if s.optional)
#: the string metrics (sacrebleu, and METEOR by nltk), computed from text alone
QUALITY_METRICS = tuple(s.name for s in REGISTRY.values() if s.kind == "quality" and not s.model)
#: the neural metrics, computed by a checkpoint the task config or the command line names
MODEL_METRICS = tuple(s.name for s in REGISTRY.values() if s.model)
#: every quality metric a track may list
SCORED_QUALITY = names("quality")
#: the short-form latency metrics every run gets (`ALL_LATENCY_METRICS` adds the optional ones, e.g. CW)
ALL_LATENCY_METRICS = names("latency")
LATENCY_METRICS = tuple(n for n in ALL_LATENCY_METRICS if not REGISTRY[n].optional)
LONGFORM_LATENCY_METRICS = names("latency", "longform")
DIAGNOSTIC_METRICS = names("diagnostic")


def spec_of(key: str) -> MetricSpec | None:
    """The registry entry of any scores.json key (`NAME`, `NAME@SET`, `NAME_CA`), or None if unknown."""
    base = key.partition("@")[0]
    spec = REGISTRY.get(base)
    if spec is None and base.endswith("_CA"):
        spec = REGISTRY.get(base[:-3])
        return spec if spec is not None and spec.computation_aware else None
    return spec


def unit_of(spec: MetricSpec, delay_unit: str) -> str:
    """The unit a score of `spec` is in, for a run whose delays are in `delay_unit`."""
    return delay_unit if spec.unit == DELAY_UNIT else spec.unit


def describe_key(key: str, delay_unit: str = "word") -> dict[str, Any]:
    """What the scores.json record of `key` says about itself: `kind`, `direction`, `unit`, `definition`.

    Empty for an unknown key.
    """
    spec = spec_of(key)
    if spec is None:
        return {}
    name, _, refset = key.partition("@")
    definition = spec.definition
    if name.endswith("_CA"):
        definition += CA_NOTE
    if refset:
        definition += f" Reference set: {SET_NOTE.get(refset, refset)}."
    return {"kind": spec.kind, "direction": spec.direction, "unit": unit_of(spec, delay_unit),
            "definition": definition}


def interval_floor(key: str) -> float | None:
    """The lowest value a 95% interval of `key` is reported at: 0 for a latency that is not signed by definition
    (a mean lag or proportion below 0 is no system's latency, even where a bootstrap of a skewed sample reaches
    there), None for the rest."""
    spec = spec_of(key)
    return 0.0 if spec is not None and spec.kind == "latency" and not spec.signed else None


def function_of(name: str) -> Callable[..., Any]:
    """The function that computes metric `name` (imports its module)."""
    module, _, attr = REGISTRY[name].function.partition(":")
    return getattr(importlib.import_module(module), attr)
