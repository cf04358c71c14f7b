"""The scoring options, in one typed object: built once from a task's track or from the command line, then passed
whole through every stage that scores a run (joint mode, the server, the results stage, `harness score`).

An option that does not exist is an error, never dropped: a misspelt keyword cannot silently change a score.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

from harness.config import LONGFORM_ENDS, ModelMetric, Track
from harness.errors import HarnessError
from harness.metric_registry import OPTIONAL_METRICS
from harness.profiles import DEFAULT_PROFILE, Profile, get_profile

__all__ = ["ScoringOptions", "track_scoring_options", "CHAR_LEVEL_LANGS"]

# targets scored character by character (OmniSTEval's --char_level, sacrebleu's zh/ja-mecab tokenizers)
CHAR_LEVEL_LANGS = ("zh", "ja")


@dataclass(frozen=True)
class ScoringOptions:
    """How a run is scored. `target_lang=None`: not known (METEOR falls back to English modules, SoftSegmenter
    splits no words, as OmniSTEval without `--lang`); `longform_end`: where a recording ends for LongYAAL
    (`reference`: its last reference sentence, as OmniSTEval; `audio`: the end of its audio); `profile`: the campaign
    whose official tool's semantics long-form scoring follows (`harness.profiles`); `target_unit`: the
    long-form target unit (`word`, `char`) given explicitly, which wins over the one `target_lang` implies."""

    tokenizer: str = "13a"
    computation_aware: bool = True
    metrics: tuple[str, ...] | None = None
    also: tuple[str, ...] = ()
    target_lang: str | None = None
    reference_sets: tuple[str, ...] | None = None
    bootstrap: int = 1000
    seed: int = 12345
    resegmentation: str | None = None
    longform_end: str = "reference"
    target_unit: str | None = None
    model_metrics: Mapping[str, ModelMetric] = field(default_factory=dict)
    profile: str = DEFAULT_PROFILE

    def __post_init__(self) -> None:
        if self.target_unit not in (None, "word", "char"):
            raise HarnessError(f"target_unit: {self.target_unit!r} is not one of word, char")
        get_profile(self.profile)
        if self.longform_end not in LONGFORM_ENDS:
            raise HarnessError(f"longform_end: {self.longform_end!r} is not one of {', '.join(LONGFORM_ENDS)}")

    @classmethod
    def of(cls, **values: Any) -> ScoringOptions:
        """Options from keywords; an unknown one is a HarnessError naming it and the known ones."""
        return cls().but(**values)

    def but(self, **changes: Any) -> ScoringOptions:
        """A copy with `changes`; an unknown option is a HarnessError (never dropped)."""
        known = {f.name for f in fields(self)}
        unknown = sorted(set(changes) - known)
        if unknown:
            raise HarnessError(f"unknown scoring option(s): {', '.join(unknown)} (known: {', '.join(sorted(known))})")
        for name in ("metrics", "also", "reference_sets"):
            if changes.get(name) is not None:
                changes[name] = tuple(changes[name])
        if changes.get("model_metrics") is None and "model_metrics" in changes:
            changes["model_metrics"] = {}
        return replace(self, **changes)

    @property
    def language(self) -> str | None:
        """The target's primary language subtag, lower case (`es` of `es-MX`), or None when not known."""
        return self.target_lang.split("-")[0].split("_")[0].lower() if self.target_lang else None

    @property
    def meteor_lang(self) -> str:
        """METEOR's language (English modules when the target language is not known, as before)."""
        return self.target_lang or "en"

    @property
    def campaign(self) -> Profile:
        """The profile's choices."""
        return get_profile(self.profile)

    @property
    def char_level_target(self) -> bool:
        """Whether the target language is written without spaces between words (zh, ja)."""
        return self.language in CHAR_LEVEL_LANGS


def track_scoring_options(track: Track) -> ScoringOptions:
    """The options every stage scores a run of `track` with."""
    return ScoringOptions(
        tokenizer=track.tokenizer,
        computation_aware=track.computation_aware,
        also=tuple([m for m in (*track.quality, *track.latency) if m in OPTIONAL_METRICS]
                   + (["AA"] if track.anticipation else [])),
        target_lang=track.target_lang,
        longform_end=track.longform_end,
        profile=track.profile,
    )
