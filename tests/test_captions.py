"""`harness export --to webvtt|srt`: a speech run's output as timed captions, read back with a WebVTT parser
(webvtt-py, which also reads SubRip).

Real runs: the long-form oracle and the re-translating system of tests/replay_support.py on the bundled 7-minute
talk (`harness run`), and a short-form espeak-ng recording by an agent whose words need escaping. A long-form
run's captions follow its reference sentences as scoring resegmented them (instance_scores.jsonl): each
sentence's caption grows word by word, each word showing from the millisecond it was written (its delay, or its
elapsed time in the computation-aware file) and the caption lasting until the next one's first word (at most the
hold after its own last word). Output without reference sentences gets fixed-length cues.
"""

from __future__ import annotations

import html
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
import webvtt  # the test extra's WebVTT/SubRip reader (docs/design/dependencies.md)

from harness.cli import main
from tests import replay_support as rs
from tests.speech_agent_source import every_two_reads
from tests.speech_task import make_task

pytestmark = [pytest.mark.espeak, pytest.mark.slow]

HOLD_MS = 5000
TRICKY = ["uno", "a<b", "c&d", "-->", "<i>dos</i>", "&amp;", "fin"]
AGENT = every_two_reads(TRICKY)


def _ms(stamp: str) -> int:
    h, m, s = stamp.replace(",", ".").split(":")
    return round((int(h) * 3600 + int(m) * 60 + float(s)) * 1000)


def _read(path: Path) -> list[tuple[int, int, str]]:
    captions = webvtt.read(str(path)) if path.suffix == ".vtt" else webvtt.from_srt(str(path))
    return [(_ms(c.start), _ms(c.end), html.unescape(c.raw_text) if path.suffix == ".vtt" else c.raw_text)
            for c in captions]


def _export(run: Path, out: Path, fmt: str, *extra: str) -> int:
    return main(["export", str(run), "--to", fmt, "--output", str(out), *extra])


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("captions")
    out = {"oracle": rs.harness_run(root / "oracle", "dev", rs.ORACLE),
           "revising": rs.harness_run(root / "revising", "dev", rs.revising_agent(root))}
    config = make_task(root / "short")
    (root / "tricky.py").write_text(AGENT, encoding="utf-8")
    subprocess.run([sys.executable, "-m", "harness", "run", "--config", str(config), "--dataset", "dev", "--agent",
                    str(root / "tricky.py"), "--output", str(root / "tricky")], check=True, capture_output=True,
                   timeout=180)
    out["tricky"] = root / "tricky"
    return out


def _growing(groups: list[tuple[list[str], list[float]]], hold_ms: float) -> list[tuple[int, int, str]]:
    """What captions of `groups` (each: words, their times in ms) show: per group a cue from each moment one of its
    words was written (rounded up to the ms) with its words written by then, until the next such moment; the last
    until the next group's first word written after it, at most `hold_ms` after its own last word."""
    rounded = [(words, [math.ceil(t - 1e-9) for t in times]) for words, times in groups]
    starts = [min(t) for _, t in rounded if t]
    cues = []
    for words, times in rounded:
        if not words:
            continue
        moments = sorted(set(times))
        end = min([max(times) + hold_ms] + [s for s in starts if s > max(times)][:1])
        for k, at in enumerate(moments):
            shown = [w for w, t in zip(words, times, strict=True) if t <= at]
            cues.append((at, moments[k + 1] if k + 1 < len(moments) else end, " ".join(shown)))
    return sorted(cues)


def _expected(run: Path, clock: str) -> list[tuple[int, int, str]]:
    """The captions the scorer's resegmentation implies: its sentences (instance_scores.jsonl: their words and
    delays from the sentence's offset) as the groups."""
    row = json.loads((run / "instance_scores.jsonl").read_text(encoding="utf-8").splitlines()[0])
    rec = rs.records(run)[0]
    groups = []
    for s in row["sentences"]:
        words = s["prediction"].split()
        rel = s["delays"] if clock == "delays" else _relative_elapsed(rec, s, words)
        groups.append((words, [s["offset_ms"] + d for d in rel]))
    return _growing(groups, HOLD_MS)


def _windows(words: list[str], times: list[float], size_ms: float) -> list[tuple[list[str], list[float]]]:
    """The words written in each window of `size_ms` of the clock, in order."""
    out: dict[int, tuple[list[str], list[float]]] = {}
    for w, t in zip(words, times, strict=True):
        out.setdefault(int(t // size_ms), ([], []))
        out[int(t // size_ms)][0].append(w)
        out[int(t // size_ms)][1].append(t)
    return [out[k] for k in sorted(out)]


def _relative_elapsed(rec: dict, sentence: dict, words: list[str]) -> list[float]:
    """A sentence's words' elapsed times: the scorer keeps delays per sentence; each word of the stream carries
    its elapsed time next to its delay, so match the sentence's words in stream order by (word, delay)."""
    stream = list(zip(rec["prediction"].split(), rec["delays"], rec["elapsed"], strict=True))
    out, i = [], 0
    for w, d in zip(words, sentence["delays"], strict=True):
        while not (stream[i][0] == w and math.isclose(stream[i][1], d + sentence["offset_ms"], abs_tol=1e-6)):
            i += 1
        out.append(stream[i][2] - sentence["offset_ms"])
        i += 1
    return out


@pytest.mark.parametrize("name", ["oracle", "revising"])
def test_captions_follow_the_resegmented_sentences_word_by_word(runs, tmp_path: Path, name: str) -> None:
    out = tmp_path / "vtt"
    assert _export(runs[name], out, "webvtt") == 0
    assert sorted(p.name for p in out.iterdir()) == ["udhr-talk.ca.vtt", "udhr-talk.vtt"]
    for path, clock in ((out / "udhr-talk.vtt", "delays"), (out / "udhr-talk.ca.vtt", "elapsed")):
        cues = _read(path)
        assert sorted(cues) == _expected(runs[name], clock)
        assert len(cues) >= 40  # every sentence of the talk has words
    rec = rs.records(runs[name])[0]
    if name == "revising":  # the first half of a sentence stays from its draft; the wrong word never shows
        assert all(rs.DRAFT not in text for _, _, text in _read(out / "udhr-talk.vtt"))
        assert _read(out / "udhr-talk.vtt")[0][0] == math.ceil(rec["revisions"][0]["delay"])


def test_a_player_at_any_time_shows_only_words_already_written(runs, tmp_path: Path) -> None:
    rec = rs.records(runs["revising"])[0]
    assert _export(runs["revising"], tmp_path / "vtt", "webvtt") == 0
    cues = _read(tmp_path / "vtt" / "udhr-talk.vtt")
    written = sorted(rec["delays"])
    for start, end, text in cues:
        assert start < end
        assert len(text.split()) <= sum(1 for d in written if d <= start + 1e-9)  # shown by start: all written
    shown_last = {w for _, _, text in cues for w in text.split()}
    assert shown_last == set(rec["prediction"].split())


def test_srt_holds_the_same_cues_as_webvtt(runs, tmp_path: Path) -> None:
    assert _export(runs["revising"], tmp_path / "srt", "srt") == 0
    assert _export(runs["revising"], tmp_path / "vtt", "webvtt") == 0
    for name in ("udhr-talk", "udhr-talk.ca"):
        assert _read(tmp_path / "srt" / f"{name}.srt") == _read(tmp_path / "vtt" / f"{name}.vtt")
        lines = (tmp_path / "srt" / f"{name}.srt").read_text(encoding="utf-8").splitlines()
        assert lines[0] == "1" and "," in lines[1] and lines[1].count(" --> ") == 1


def test_fixed_length_cues_cut_the_clock_into_windows(runs, tmp_path: Path) -> None:
    rec = rs.records(runs["oracle"])[0]
    words = rec["prediction"].split()
    assert _export(runs["oracle"], tmp_path / "vtt", "webvtt", "--cue-seconds", "20", "--hold-seconds", "3") == 0
    for path, times in ((tmp_path / "vtt" / "udhr-talk.vtt", rec["delays"]),
                        (tmp_path / "vtt" / "udhr-talk.ca.vtt", rec["elapsed"])):
        cues = _read(path)
        assert sorted(cues) == _growing(_windows(words, times, 20000), 3000)
        assert len(cues) >= len(_windows(words, times, 20000)) > 10


def test_short_form_output_needs_escaping_and_round_trips(runs, tmp_path: Path) -> None:
    """Without reference sentences (a short-form instance), fixed cues: 5 s by default, or --cue-seconds."""
    recs = rs.records(runs["tricky"])
    assert [r["prediction"].split() for r in recs] == [TRICKY] * 2 and all(not r.get("longform") for r in recs)
    for fmt, ext, extra, size in (("webvtt", ".vtt", [], 5000), ("srt", ".srt", ["--cue-seconds", "1"], 1000)):
        out = tmp_path / fmt
        assert _export(runs["tricky"], out, fmt, *extra) == 0
        assert sorted(p.name for p in out.iterdir()) == sorted(f"{i}{ca}{ext}" for i in range(2) for ca in ("", ".ca"))
        text = (out / f"0{ext}").read_text(encoding="utf-8")
        assert ("a&lt;b" in text and "<i>" not in text) if fmt == "webvtt" else "--\u200b>" in text
        for rec in recs:
            for suffix, clock in (("", "delays"), (".ca", "elapsed")):
                cues = _read(out / f"{rec['index']}{suffix}{ext}")
                if fmt == "srt":  # an arrow in a SubRip cue has a zero-width space: no reader takes it for timing
                    cues = [(a, b, t.replace("--\u200b>", "-->")) for a, b, t in cues]
                assert cues == _growing(_windows(TRICKY, rec[clock], size), HOLD_MS)
                assert len(cues) >= (2 if size == 1000 else 1)


def test_bad_requests_fail_with_one_line(runs, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text_run = tmp_path / "text"
    subprocess.run([sys.executable, "-m", "harness", "run", "--config", str(rs.ROOT / "configs" / "demo.yaml"),
                    "--track", "text-en-es", "--dataset", "dev", "--agent", str(rs.ROOT / "tests" / "agents" /
                                                                                "echo_text.py"),
                    "--output", str(text_run)], check=True, capture_output=True, timeout=180)
    assert _export(text_run, tmp_path / "out", "webvtt") != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "captions need a speech run" in err[0]
    with pytest.raises(SystemExit):
        _export(runs["oracle"], tmp_path / "out2", "webvtt", "--cue-seconds", "0")
    assert "must be a positive number of seconds" in capsys.readouterr().err


def test_another_tools_long_form_log_gives_the_same_captions(runs, tmp_path: Path) -> None:
    """The run as OmniSTEval's JSONL (`harness export --to omnisteval`), read back with its segmentation and
    references as `harness score` reads it, is captioned as the run itself."""
    assert _export(runs["revising"], tmp_path / "omni", "omnisteval") == 0
    assert _export(tmp_path / "omni" / "hypotheses.jsonl", tmp_path / "theirs", "webvtt", "--segmentation",
                   str(rs.DATA / "dev.yaml"), "--references", str(rs.DATA / "dev.es")) == 0
    assert _export(runs["revising"], tmp_path / "ours", "webvtt") == 0
    for name in ("udhr-talk.vtt", "udhr-talk.ca.vtt"):
        assert _read(tmp_path / "theirs" / name) == _read(tmp_path / "ours" / name)
