"""Long-form resegmentation and metrics against the peers on the same inputs: OmniSTEval 0.1.10 (SoftSegmenter,
LongYAAL and the Long* family, short-form degeneracy diagnostics) and simulstream 1.0.0 (StreamLAAL over
mwerSegmenter). Every shared value must agree to 1e-9."""

from __future__ import annotations

import argparse
import json
import math
import statistics
from pathlib import Path

import omnisteval.io as omni_io
import omnisteval.scoring as omni_scoring
import pytest
from omnisteval.resegment import resegment as omni_resegment

from harness.metrics.longform_latency import SOFT_METRICS, sentence_values
from harness.metrics.resegment import resegment
from harness.metrics.softsegmenter import align_stream
from harness.recordings import RefSentence
from harness.scoring.corpus import score_path
from harness.scoring.options import ScoringOptions
from tests.longform_support import Talk, make_talk, udhr_talks, write_peer_inputs

OMNI_KEYS = {"LongYAAL": "long_yaal", "LongAL": "long_al", "LongLAAL": "long_laal", "LongAP": "long_ap",
             "LongDAL": "long_dal"}


def join_units(units: list[str], char_level: bool) -> str:
    return "".join(units) if char_level else " ".join(units)


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


def _omni(paths: dict[str, Path], *, char_level: bool = False, lang: str | None = None):
    ref_words, hyp_words, seg, refs = omni_io.load_resegmentation_inputs(
        str(paths["segmentation"]), None, str(paths["references"]), str(paths["jsonl"]), char_level=char_level)
    return omni_resegment(ref_words, hyp_words, seg, refs, char_level=char_level, lang=lang)


def _ours(talks: list[Talk], method: str, **kwargs):
    return [resegment(t.sentences, t.units, t.delays, t.elapsed, reference_set="orig", method=method, **kwargs)
            for t in talks]


@pytest.fixture(scope="module")
def talks() -> list[Talk]:
    return udhr_talks(count=2, per_talk=20)


@pytest.fixture(scope="module")
def peer_files(talks, tmp_path_factory) -> dict[str, Path]:
    return write_peer_inputs(talks, tmp_path_factory.mktemp("peers"))


@pytest.mark.slow
def test_softsegmenter_gives_omnisteval_sentences_and_times(talks, peer_files):
    instances, dicts = _omni(peer_files)
    ours = [o for outs in _ours(talks, "softsegmenter") for o in outs]
    assert len(ours) == len(dicts) == 40
    assert any(d["prediction"] for d in dicts)
    for d, o in zip(dicts, ours, strict=True):
        assert join_units(o.units, False) == d["prediction"], d["index"]
        assert o.delays == d.get("emission_cu", []), d["index"]
        assert o.elapsed == d.get("emission_ca", []), d["index"]


@pytest.mark.slow
def test_long_metrics_equal_omnisteval_cu_and_ca(talks, peer_files):
    instances, _ = _omni(peer_files)
    scores, _, _ = omni_scoring.evaluate_instances(instances, is_longform=True, compute_quality=False)
    rows = [r for outs in _ours(talks, "softsegmenter") for r in sentence_values(outs, "orig", method="softsegmenter")]
    compared = 0
    for name in SOFT_METRICS:
        for suffix, prefix in (("", ""), ("_CA", "ca_")):
            ours = statistics.mean(r[name + suffix] for r in rows if r[name + suffix] is not None)
            peer = scores[prefix + OMNI_KEYS[name]]
            assert _close(ours, peer), (name + suffix, ours, peer)
            compared += 1
    assert compared == 10
    # the CA values really differ from the non-CA ones (elapsed times carry computation)
    assert scores["ca_long_yaal"] > scores["long_yaal"] + 100


def test_the_moses_splitter_is_shared_and_asks_perl_once_per_word(monkeypatch) -> None:
    """One tokenizer per language and process, each distinct word sent to Perl once, the same tokens as a fresh
    tokenizer gives; a forked child (another pid) gets its own."""
    from mosestokenizer import MosesTokenizer

    from harness.metrics import softsegmenter

    words = "¿Dónde está l'homme, (el) \"niño\"? 3.5% self-evident don't ... U.S.A. l'homme, niño".split()
    fresh = MosesTokenizer(lang="es", no_escape=True)
    expected = [list(fresh(softsegmenter.normalise(w))) for w in words]
    asked: list[str] = []
    real = MosesTokenizer.__call__
    monkeypatch.setattr(MosesTokenizer, "__call__", lambda self, text: asked.append(text) or real(self, text))
    monkeypatch.setattr(softsegmenter, "_SPLITTERS", {})
    split = softsegmenter._moses("es")
    assert softsegmenter._moses("es") is split and softsegmenter._moses("en") is not split
    assert [split(softsegmenter.normalise(w)) for w in words] == expected
    assert sorted(asked) == sorted({softsegmenter.normalise(w) for w in words})  # each distinct word once
    monkeypatch.setattr(softsegmenter.os, "getpid", lambda: -1)
    assert softsegmenter._moses("es") is not split


@pytest.mark.slow
def test_softsegmenter_moses_tokens_and_characters_equal_omnisteval(talks, tmp_path):
    small = udhr_talks(count=1, per_talk=8, seed=3)
    paths = write_peer_inputs(small, tmp_path)
    _, dicts = _omni(paths, lang="es")
    ours = _ours(small, "softsegmenter", lang="es")[0]
    assert [join_units(o.units, False) for o in ours] == [d["prediction"] for d in dicts]
    # character level: every character (spaces included) carries its word's times
    t = small[0]
    chars, delays, elapsed = [], [], []
    for w, word in enumerate(t.units):
        n = len(word) + (1 if w < len(t.units) - 1 else 0)
        chars.extend(word + (" " if w < len(t.units) - 1 else ""))
        delays.extend([t.delays[w]] * n)
        elapsed.extend([t.elapsed[w]] * n)
    paths["jsonl"].write_text(json.dumps({"source": [f"wavs/{t.name}.wav"], "prediction": "".join(chars),
                                          "delays": delays, "elapsed": elapsed}) + "\n", encoding="utf-8")
    _, dicts = _omni(paths, char_level=True)
    ours = resegment(t.sentences, chars, delays, elapsed, reference_set="orig", char_level=True)
    assert [join_units(o.units, True) for o in ours] == [d["prediction"] for d in dicts]
    assert [o.delays for o in ours] == [d.get("emission_cu", []) for d in dicts]


def test_stream_laal_equals_simulstream_on_its_own_log(talks, peer_files):
    import simulstream.metrics.readers as readers
    from simulstream.config import yaml_config
    from simulstream.metrics.scorers.latency import LatencyScoringSample
    from simulstream.metrics.scorers.latency.stream_laal import StreamLaal

    log = readers.LogReader(yaml_config(str(peer_files["simulstream_config"])), str(peer_files["simulstream_log"]))
    refs = readers.YamlReferenceReader(str(peer_files["segmentation"]), str(peer_files["references"])).references
    outputs = log.final_outputs_and_latencies()
    peer = StreamLaal(argparse.Namespace(latency_unit="word")).score(
        [LatencyScoringSample(name, outputs[name], refs[name]) for name in refs])
    rows = [r for outs in _ours(talks, "mwersegmenter") for r in sentence_values(outs, "orig", method="mwersegmenter")]
    ideal = statistics.mean(r["StreamLAAL"] for r in rows if r["StreamLAAL"] is not None)
    aware = statistics.mean(r["StreamLAAL_CA"] for r in rows if r["StreamLAAL_CA"] is not None)
    # simulstream works in seconds, the harness in milliseconds
    assert _close(ideal / 1000.0, peer.ideal_latency), (ideal, peer.ideal_latency)
    assert _close(aware / 1000.0, peer.computational_aware_latency), (aware, peer.computational_aware_latency)
    assert aware > ideal


def test_resegmentation_keeps_every_unit_once_in_mwer_and_at_most_once_in_soft(talks):
    for method in ("mwersegmenter", "softsegmenter"):
        for t, outs in zip(talks, _ours(talks, method), strict=True):
            got = [u for o in outs for u in o.units]
            if method == "mwersegmenter":
                assert got == t.units  # contiguous pieces, in order
            else:
                assert len(got) <= len(t.units) and set(got) <= set(t.units)


def test_empty_stream_gives_empty_sentences_and_no_latency():
    sentences = [RefSentence("r", 0.0, 1000.0, {"orig": "hola mundo"}), RefSentence("r", 1500, 800, {"orig": "adiós"})]
    for method in ("softsegmenter", "mwersegmenter"):
        outs = resegment(sentences, [], [], None, reference_set="orig", method=method)
        assert [o.units for o in outs] == [[], []]
        rows = sentence_values(outs, "orig", method=method)
        assert all(v is None for r in rows for v in r.values())


def test_leading_punctuation_is_dropped_as_omnisteval_does(tmp_path):
    """OmniSTEval 0.1.10 attaches an unmatched output word to a neighbouring reference word; punctuation before the
    first matched word has none it may join (punctuation never matches a word), so it belongs to no sentence."""
    talk = make_talk("p", ["hola mundo .", "adiós amigos ."], 1)
    talk.units[:0] = [","]
    talk.delays[:0] = [talk.delays[0]]
    talk.elapsed[:0] = [talk.elapsed[0]]
    owner = align_stream(["hola mundo .", "adiós amigos ."], talk.units)
    paths = write_peer_inputs([talk], tmp_path)
    _, dicts = _omni(paths)
    assert owner[0] is None
    assert [d["prediction"] for d in dicts] == [
        " ".join(w for w, s in zip(talk.units, owner, strict=True) if s == k) for k in range(2)]


@pytest.mark.parametrize("run", ["examples/runs/udhr-dev-waitk3"])
def test_shortform_degeneracy_equals_omnisteval(run):
    root = Path(__file__).resolve().parent.parent
    log = root / run / "instances.log"
    instances = omni_io.load_shortform_instances(str(log), None, "delays", "elapsed")
    peer, _, _ = omni_scoring.evaluate_instances(instances, is_longform=False, compute_quality=False)
    ours = score_path(log, ScoringOptions(bootstrap=1))
    for name, key in (("SWF", "swf"), ("EFSW", "efsw"), ("DSPTV", "dsptv"), ("DegeneratePolicy", "degenerate_policy"),
                      ("YAAL", "yaal")):
        assert _close(ours[name]["score"], peer[key]), (name, ours[name]["score"], peer[key])


def test_a_degenerate_policy_is_flagged_like_omnisteval(tmp_path):
    """A policy that writes one word at once and the rest after the source ended: YAAL looks tiny, SWF is low."""
    lines = []
    for i in range(12):
        ref = "uno dos tres cuatro cinco seis siete ocho"
        words = ref.split()
        delays = [1] + [10] * (len(words) - 1)
        lines.append({"index": i, "prediction": ref, "delays": delays, "elapsed": [0] * len(words),
                      "source_length": 10, "reference": ref, "source": "x"})
    log = tmp_path / "instances.log"
    log.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    instances = omni_io.load_shortform_instances(str(log), None, "delays", "elapsed")
    peer, _, _ = omni_scoring.evaluate_instances(instances, is_longform=False, compute_quality=False)
    ours = score_path(log, ScoringOptions(bootstrap=1))
    assert peer["degenerate_policy"] == 1.0
    assert ours["DegeneratePolicy"]["score"] == 1.0
    assert _close(ours["DSPTV"]["score"], peer["dsptv"])
