"""Campaign profiles: every semantic choice an official scoring tool makes, as one named bundle.

A profile is data, not a branch: the scoring stage reads its fields; metrics stay pure and take the choices as
arguments. `harness score --profile NAME` and a track's `profile:` select one; `iwslt2026` is the default and is
today's behaviour (OmniSTEval 0.1.10 and simulstream 1.0.0 as the IWSLT 2026 page runs them). docs/profiles.md gives,
per profile, the peer command line whose numbers ours equal.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from harness.errors import HarnessError

__all__ = ["DEFAULT_PROFILE", "PROFILES", "Profile", "STREAM_LAAL_VERSIONS", "get_profile"]

DEFAULT_PROFILE = "iwslt2026"


@dataclass(frozen=True)
class Profile:
    """The choices of one campaign's official long-form scoring.

    - `stream_segmenter`: what cuts the stream for StreamLAAL (and for quality when the resegmentation is
      `mwersegmenter`): `mweralign` (the Python port, case-blind, as simulstream) or `mwerbinary` (the original
      RWTH binary, through the 2025 tool's steps, `harness.metrics.stream_laal_fbk`).
    - `case_sensitive`: the binary's `-usecase` (mweralign is always case-blind).
    - `cjk_tokens`: zh/ja tokens before alignment: `mweralign-cj` (mweralign's CJ mode: a run of Latin letters
      stays one token), `chars` (every character its own token, the 2025 tool 2.0) or `none` (the text as it is,
      1.0.0).
    - `delay_cap`: each delay is capped at its sentence's start (`max(0, delay - start)`).
    - `simuleval_ca`: how the cumulative `elapsed` of a SimulEval long-form log is read: `as-is`, or `stream_laal`
      (per-unit compute time `e_i - e_(i-1) + d_(i-1)`, as the 2025 tool).
    - `stream_target_length`: StreamLAAL's reference length: `simulstream` (non-empty words) or `simuleval` (words
      split on single spaces, SimulEval's `reference_length`).
    - `metrics`: the default metric set (None: every metric that is not optional).
    - `tokenizers`: sacrebleu tokenizer by target language when `--tokenizer` is not given (`*`: any other).
    - `quality_resegmentation`: the resegmentation quality is computed on when neither the command line nor the
      log names one (None: the log's, else SoftSegmenter).
    """

    name: str
    title: str
    stream_segmenter: str = "mweralign"
    case_sensitive: bool = False
    cjk_tokens: str = "mweralign-cj"
    delay_cap: bool = False
    simuleval_ca: str = "as-is"
    stream_target_length: str = "simulstream"
    metrics: tuple[str, ...] | None = None
    tokenizers: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({"*": "13a"}))
    quality_resegmentation: str | None = None

    def tokenizer_for(self, language: str | None) -> str:
        """The default sacrebleu tokenizer for a target language."""
        return self.tokenizers.get(language or "", self.tokenizers["*"])

    def describe(self) -> dict[str, object]:
        """The profile's choices as scores.json's `info.profile_choices` records them."""
        return {"stream_segmenter": self.stream_segmenter, "case_sensitive": self.case_sensitive,
                "cjk_tokens": self.cjk_tokens, "delay_cap": self.delay_cap, "simuleval_ca": self.simuleval_ca,
                "stream_target_length": self.stream_target_length}


_2025_TOKENIZERS = MappingProxyType({"zh": "zh", "ja": "ja-mecab", "*": "13a"})

PROFILES: Mapping[str, Profile] = MappingProxyType({p.name: p for p in (
    Profile(
        name="iwslt2026",
        title="IWSLT 2026: OmniSTEval 0.1.10 (LongYAAL on SoftSegmenter) and simulstream 1.0.0 (StreamLAAL on "
              "mweralign)",
    ),
    Profile(
        name="iwslt2025",
        title="IWSLT 2025: FBK stream_laal.py 2.0 (StreamLAAL and BLEU on the original mwerSegmenter)",
        stream_segmenter="mwerbinary", case_sensitive=True, cjk_tokens="chars", delay_cap=True,
        simuleval_ca="stream_laal", stream_target_length="simuleval", metrics=("BLEU", "StreamLAAL"),
        tokenizers=_2025_TOKENIZERS, quality_resegmentation="mwersegmenter",
    ),
    Profile(
        name="iwslt2025-v1",
        title="IWSLT 2025, first runs: FBK stream_laal.py 1.0.0 (no delay cap, no character split)",
        stream_segmenter="mwerbinary", case_sensitive=True, cjk_tokens="none", delay_cap=False,
        simuleval_ca="stream_laal", stream_target_length="simuleval", metrics=("BLEU", "StreamLAAL"),
        tokenizers=_2025_TOKENIZERS, quality_resegmentation="mwersegmenter",
    ),
)})


#: the profile whose numbers equal each version of FBK's stream_laal.py (the version line it prints first)
STREAM_LAAL_VERSIONS: Mapping[str, str] = MappingProxyType({"2.0": "iwslt2025", "1.0.0": "iwslt2025-v1"})


def get_profile(name: str | None) -> Profile:
    """The profile called `name` (None: the default); an unknown name is one line listing the known ones."""
    if name is None:
        return PROFILES[DEFAULT_PROFILE]
    try:
        return PROFILES[name]
    except KeyError:
        raise HarnessError(f"unknown scoring profile {name!r} (known: {', '.join(PROFILES)})") from None
