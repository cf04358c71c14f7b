"""Generated long-form talks for the campaign-profile tests: de, cs→en (English), zh and ja, with case changes, words
written before their sentence began, SimulEval's cumulative elapsed times, repeated words at sentence boundaries
(ties of equal edit cost) and degenerate output ("啊啊啊…", "ja ja ja …"), written as a SimulEval long-form log with
its segmentation YAML and reference lines."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent

GERMAN = [
    "Guten Morgen und herzlich willkommen zu unserem Vortrag über maschinelle Übersetzung.",
    "Heute zeigen wir Ihnen, wie ein System gesprochene Sprache simultan übersetzt.",
    "Das Modell hört zu, wartet auf genug Kontext und schreibt dann die ersten Wörter.",
    "Die Latenz misst, wie lange die Zuhörer auf die Übersetzung warten müssen.",
    "Wir haben drei Systeme verglichen: eine Kaskade, einen festen und einen VAD-Segmentierer.",
    "Die Kaskade erkennt zuerst die Sprache und übersetzt danach den Text.",
    "Ein fester Segmentierer schneidet das Audio alle zwei Sekunden.",
    "Der VAD-Segmentierer schneidet dort, wo der Sprecher eine Pause macht.",
    "Die Ergebnisse zeigen, dass die Qualität mit der Latenz steigt.",
    "Vielen Dank für Ihre Aufmerksamkeit, wir freuen uns auf Ihre Fragen.",
]
JAPANESE = [
    "皆さん、こんにちは。今日は同時通訳システムについて話します。",
    "このモデルはGPUで動き、音声を聞きながら翻訳を書きます。",
    "遅延とは、聞き手が翻訳を待つ時間のことです。",
    "私たちは三つのシステムを比べました。",
    "カスケードはまず音声を認識し、それから text を翻訳します。",
    "固定セグメンターは二秒ごとに音声を切ります。",
    "結果は、品質が遅延とともに上がることを示しています。",
    "ご清聴ありがとうございました。",
]
DEGENERATE = {"de": "ja", "en": "uh", "zh": "啊", "ja": "あ"}


def _sentences(lang: str) -> list[str]:
    if lang == "de":
        return GERMAN
    if lang == "ja":
        return JAPANESE
    name = ROOT / ("tests/evaluate_data/udhr.zh" if lang == "zh" else "data/udhr/dev.en")
    return [x.strip() for x in name.read_text(encoding="utf-8").splitlines() if x.strip()][:14]


def _edit(tokens: list[str], rng: random.Random, lang: str, first: bool) -> list[str]:
    """A system's tokens for one sentence: dropped, repeated (ties at boundaries), case changed, inserted, and once
    per talk a degenerate run."""
    out: list[str] = []
    for t in tokens:
        r = rng.random()
        if r < 0.06:
            continue
        if r < 0.12:
            out += [t, t]  # a repeated token: equal edit costs on either side of a boundary
        elif r < 0.18 and t.isalpha() and lang in ("de", "en"):
            out.append(t.swapcase() if rng.random() < 0.5 else t.lower())
        elif r < 0.21:
            out.append(rng.choice(tokens))
        else:
            out.append(t)
    if first or rng.random() < 0.15:
        out += [DEGENERATE[lang]] * rng.choice([3, 40, 150])
    return out


def _tokens(text: str, char_level: bool) -> list[str]:
    return [c for c in text if not c.isspace()] if char_level else text.split()


def _talk(lang: str, name: str, seed: int) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """(segmentation entries, the SimulEval long-form log line) of one generated talk."""
    rng = random.Random(seed)
    char_level = lang in ("zh", "ja")
    seg, units, delays, elapsed = [], [], [], []
    t = 1200.0
    compute = 0.0
    sentences = _sentences(lang)
    for n, text in enumerate(rng.sample(sentences, min(len(sentences), 9))):
        size = len(text) / 3.0 if char_level else len(text.split())
        dur = round(size / 2.5 * 1000.0 + rng.uniform(-100, 400), 3)
        seg.append({"wav": f"{name}.wav", "offset": round(t / 1000.0, 4), "duration": round(dur / 1000.0, 4),
                    "text": text})
        out = _edit(_tokens(text, char_level), rng, lang, n == 0)
        i = 0
        while i < len(out):
            k = rng.randint(1, 6)
            at = t + dur * min(1.0, (i + k) / len(out)) + rng.choice([-1500, 0, 300, 900, 2500])
            at = round(max(at, delays[-1] if delays else 0.0, 0.0), 3)
            step_compute = 0.0
            for tok in out[i:i + k]:
                step_compute += rng.choice([0.0, rng.uniform(5, 80)])  # 0: an equal elapsed time (same write)
                compute += step_compute
                units.append(tok)
                delays.append(at)
                elapsed.append(round(at + compute, 3))
            i += k
        t = round(t + dur + rng.uniform(100, 1500), 3)
    prediction = "".join(units) if char_level else " ".join(units)
    line = {"index": 0, "source": [f"{name}.wav"], "prediction": prediction, "delays": delays, "elapsed": elapsed,
            "source_length": t + 3000.0}
    return seg, line


def write_talks(lang: str, folder: Path, seeds: list[int]) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    seg: list[dict[str, Any]] = []
    lines = []
    for k, seed in enumerate(seeds):
        s, line = _talk(lang, f"{lang}_talk{k}", seed)
        seg += s
        lines.append({**line, "index": k})
    paths = {"segmentation": folder / "seg.yaml", "references": folder / "ref.txt", "log": folder / "instances.log"}
    paths["segmentation"].write_text(yaml.safe_dump([{k: v for k, v in e.items() if k != "text"} for e in seg]),
                                     encoding="utf-8")
    paths["references"].write_text("".join(e["text"] + "\n" for e in seg), encoding="utf-8")
    paths["log"].write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8")
    return paths


