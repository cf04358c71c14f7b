"""Long-form test cases from real text: talks made of UDHR sentences, with a system output stream that drops,
substitutes, inserts and delays words, and the files each peer reads (OmniSTEval, simulstream)."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path

import yaml

from harness.recordings import RefSentence

ROOT = Path(__file__).resolve().parent.parent
UDHR_ES = ROOT / "data" / "udhr" / "dev.es"


@dataclass
class Talk:
    """One recording: sentences with offsets, and an output stream with per-word delays and elapsed times (ms)."""

    name: str
    sentences: list[RefSentence]
    units: list[str]
    delays: list[float]
    elapsed: list[float]
    emissions: list[tuple[float, float, list[str]]]  # (audio processed ms, elapsed ms, words) per write

    @property
    def duration_ms(self) -> float:
        return max(self.sentences[-1].end_ms + 500.0, self.delays[-1] if self.delays else 0.0)


def make_talk(name: str, sentences: list[str], seed: int, *, words_per_s: float = 2.5) -> Talk:
    """A talk of `sentences` read at `words_per_s` with pauses, and a noisy streaming translation of it."""
    rng = random.Random(seed)
    refs: list[RefSentence] = []
    t = 300.0
    for text in sentences:
        dur = round(len(text.split()) / words_per_s * 1000.0 + rng.uniform(-200, 400), 3)
        refs.append(RefSentence(name, t, dur, {"orig": text}))
        t = round(t + dur + rng.uniform(150, 900), 3)
    vocab = sorted({w for s in sentences for w in s.split()})
    units: list[str] = []
    delays: list[float] = []
    elapsed: list[float] = []
    emissions: list[tuple[float, float, list[str]]] = []
    compute = 0.0
    for ref in refs:
        words = ref.references["orig"].split()
        out: list[str] = []
        for w in words:
            r = rng.random()
            if r < 0.08:
                continue  # dropped
            if r < 0.18:
                out.append(rng.choice(vocab))  # substituted
            elif r < 0.22:
                out.extend([w, rng.choice(vocab)])  # inserted after
            elif r < 0.25:
                out.append(w.upper())  # case differs
            else:
                out.append(w)
        # write in chunks: some words lag behind the sentence, a few spill into the next one
        i = 0
        while i < len(out):
            k = rng.randint(1, 4)
            chunk = out[i:i + k]
            progress = (i + k) / max(1, len(out))
            at = ref.offset_ms + ref.duration_ms * min(1.0, progress) + rng.choice([0, 200, 600, 1500, 4000])
            at = round(max(at, delays[-1] if delays else 0.0), 3)
            compute += round(rng.uniform(5, 120), 3)
            ca = round(at + compute, 3)
            emissions.append((at, ca, chunk))
            units.extend(chunk)
            delays.extend([at] * len(chunk))
            elapsed.extend([ca] * len(chunk))
            i += k
    return Talk(name, refs, units, delays, elapsed, emissions)


def udhr_talks(count: int = 2, per_talk: int = 20, seed: int = 7) -> list[Talk]:
    lines = [line.strip() for line in UDHR_ES.read_text(encoding="utf-8").splitlines() if line.strip()]
    talks = []
    for k in range(count):
        chunk = [lines[(k * per_talk + i) % len(lines)] for i in range(per_talk)]
        talks.append(make_talk(f"talk{k}", chunk, seed + k))
    return talks


def write_peer_inputs(talks: list[Talk], folder: Path) -> dict[str, Path]:
    """Segmentation YAML (seconds), reference lines, OmniSTEval's JSONL hypothesis and a simulstream log + config."""
    folder.mkdir(parents=True, exist_ok=True)
    seg = [{"wav": f"wavs/{t.name}.wav", "offset": s.offset_ms / 1000.0, "duration": s.duration_ms / 1000.0}
           for t in talks for s in t.sentences]
    paths = {
        "segmentation": folder / "segments.yaml",
        "references": folder / "ref.txt",
        "jsonl": folder / "instances.log",
        "simulstream_log": folder / "metrics.jsonl",
        "simulstream_config": folder / "eval.yaml",
    }
    paths["segmentation"].write_text(yaml.safe_dump(seg), encoding="utf-8")
    paths["references"].write_text(
        "".join(s.references["orig"] + "\n" for t in talks for s in t.sentences), encoding="utf-8")
    with paths["jsonl"].open("w", encoding="utf-8") as f:
        for i, t in enumerate(talks):
            f.write(json.dumps({"index": i, "source": [f"wavs/{t.name}.wav"], "prediction": " ".join(t.units),
                                "delays": t.delays, "elapsed": t.elapsed, "source_length": t.duration_ms},
                               ensure_ascii=False) + "\n")
    with paths["simulstream_log"].open("w", encoding="utf-8") as f:
        for i, t in enumerate(talks):
            f.write(json.dumps({"id": i, "metadata": {"wav_name": f"wavs/{t.name}.wav"}}) + "\n")
            for at, elapsed, words in t.emissions:
                # simulstream's reader: CA time = audio processed + this line's computation time
                f.write(json.dumps({"id": i, "total_audio_processed": at / 1000.0,
                                    "computation_time": (elapsed - at) / 1000.0,
                                    "generated_tokens": words, "deleted_tokens": []}, ensure_ascii=False) + "\n")
    paths["simulstream_config"].write_text("detokenizer_type: simuleval\nlatency_unit: word\n", encoding="utf-8")
    return paths


SPANISH_FUNCTION_WORDS = ("de", "la", "que", "el", "en", "y", "a", "los", "se", "del", "las", "un", "por", "con")
CHINESE_FUNCTION_CHARS = ("的", "了", "是", "在", "和", "也", "就", "都")


def _edit_words(words: list[str], rng: random.Random) -> list[str]:
    """A system's words for one sentence: function words inserted, words dropped, punctuation moved on and off."""
    out: list[str] = []
    for w in words:
        r = rng.random()
        if r < 0.07:
            continue  # dropped
        if r < 0.17:
            out.append(rng.choice(SPANISH_FUNCTION_WORDS))  # a function word before the word
            out.append(w)
        elif r < 0.22 and w[-1:] in ",.;:":
            out.append(w[:-1])  # punctuation left off
        elif r < 0.27 and w[-1:].isalpha():
            out.append(w + rng.choice([".", ","]))  # punctuation attached where the reference has none
        elif r < 0.30 and w[-1:] in ",.;:":
            out.extend([w[:-1], w[-1]])  # punctuation as a separate token
        else:
            out.append(w)
    return out


def _edit_chars(text: str, rng: random.Random) -> list[str]:
    out: list[str] = []
    for ch in text:
        r = rng.random()
        if r < 0.06:
            continue
        if r < 0.14:
            out.extend([rng.choice(CHINESE_FUNCTION_CHARS), ch])
        elif r < 0.18 and ch in "，。；、":
            continue
        elif r < 0.21:
            out.extend([ch, "，"])
        else:
            out.append(ch)
    return out


def edited_talk(name: str, sentences: list[str], seed: int, *, char_level: bool = False, trailing_ms: float = 9000.0
                ) -> Talk:
    """A long talk whose output differs from its references as a real system's does: function words inserted,
    words dropped, punctuation attached and detached, words written late, some during the audio that follows the
    last sentence (`trailing_ms` of it). Character units (each with its own time) for `char_level` targets."""
    rng = random.Random(seed)
    refs: list[RefSentence] = []
    t = 400.0
    for text in sentences:
        size = len(text) / 4.0 if char_level else len(text.split())
        dur = round(size / 2.4 * 1000.0 + rng.uniform(-150, 500), 3)
        refs.append(RefSentence(name, t, dur, {"orig": text}))
        t = round(t + dur + rng.uniform(100, 1200), 3)
    units: list[str] = []
    delays: list[float] = []
    elapsed: list[float] = []
    emissions: list[tuple[float, float, list[str]]] = []
    compute = 0.0
    audio_end = refs[-1].end_ms + trailing_ms
    for n, ref in enumerate(refs):
        text = ref.references["orig"]
        out = _edit_chars(text, rng) if char_level else _edit_words(text.split(), rng)
        i = 0
        while i < len(out):
            k = rng.randint(1, 6 if char_level else 4)
            chunk = out[i:i + k]
            progress = (i + k) / max(1, len(out))
            lag = rng.choice([0, 250, 700, 1600, 3500])
            if n == len(refs) - 1 and i + k >= len(out) - 2:
                lag = rng.uniform(1500, trailing_ms - 500)  # the end of the talk, written during trailing audio
            at = round(min(audio_end, max(ref.offset_ms + ref.duration_ms * min(1.0, progress) + lag,
                                          delays[-1] if delays else 0.0)), 3)
            compute += round(rng.uniform(5, 90), 3)
            ca = round(at + compute, 3)
            emissions.append((at, ca, chunk))
            units.extend(chunk)
            delays.extend([at] * len(chunk))
            elapsed.extend([ca] * len(chunk))
            i += k
    return Talk(name, refs, units, delays, elapsed, emissions)


def write_talk_log(talks: list[Talk], folder: Path, *, char_level: bool = False, audio_ms: list[float] | None = None
                   ) -> dict[str, Path]:
    """A SimulEval-style long-form JSONL (one line per recording, `source_length` the audio's length), the
    segmentation YAML (seconds) and the reference lines: the inputs of `omnisteval longform` and `harness score`."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = {"segmentation": folder / "segments.yaml", "references": folder / "ref.txt",
             "jsonl": folder / "instances.log"}
    seg = [{"wav": f"wavs/{t.name}.wav", "offset": s.offset_ms / 1000.0, "duration": s.duration_ms / 1000.0}
           for t in talks for s in t.sentences]
    paths["segmentation"].write_text(yaml.safe_dump(seg), encoding="utf-8")
    paths["references"].write_text("".join(s.references["orig"] + "\n" for t in talks for s in t.sentences),
                                   encoding="utf-8")
    with paths["jsonl"].open("w", encoding="utf-8") as f:
        for i, t in enumerate(talks):
            length = audio_ms[i] if audio_ms else t.sentences[-1].end_ms + 9000.0
            f.write(json.dumps({"index": i, "source": [f"wavs/{t.name}.wav"],
                                "prediction": ("" if char_level else " ").join(t.units), "delays": t.delays,
                                "elapsed": t.elapsed, "source_length": length}, ensure_ascii=False) + "\n")
    return paths
