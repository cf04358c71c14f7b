"""The neural metrics' shared base (harness.metrics.neural) without torch: the score cache's keys, the cached batch
step, the remembered checkpoint hash and the signature. COMET, XCOMET and BLEURT through it: test_comet.py,
test_bleurt.py."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

from harness.errors import MetricSetupError
from harness.metrics.neural.cache import CachedScorer, ScoreCache, batch_digest, cache_path, item_digest
from harness.metrics.neural.checkpoint import hash_files, remembered_hash
from harness.metrics.neural.runtime import package_version, require_extra
from harness.metrics.neural.values import NeuralValues, metric_signature


def test_cache_keys_keep_their_format_and_one_folder_a_family(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("HARNESS_CACHE", str(tmp_path / "c"))
    assert cache_path() == tmp_path / "c" / "comet" / "scores.sqlite3"
    assert cache_path("bleurt") == tmp_path / "c" / "bleurt" / "scores.sqlite3"
    item = item_digest("src", "mt", "ref")
    assert item == hashlib.sha256(b"src\0mt\0ref").hexdigest()
    assert batch_digest([item, item]) == hashlib.sha256((item + item).encode("ascii")).hexdigest()


def test_a_batch_is_computed_once_and_then_read_from_the_cache(tmp_path: Path) -> None:
    calls: list[list[str]] = []

    def compute(texts: list[str]) -> list[float]:
        calls.append(texts)
        return [float(len(t)) for t in texts]

    scorer = CachedScorer("digest|fp32|cpu|2", 2, "m", ScoreCache(tmp_path / "s.sqlite3"), "model:x")
    items = [item_digest("", t, "r") for t in ("a", "bbb")]
    assert scorer.cached_batch(items, compute, ["a", "bbb"]) == [1.0, 3.0] and scorer.computed == 2
    again = CachedScorer("digest|fp32|cpu|2", 2, "m", ScoreCache(tmp_path / "s.sqlite3"))  # another process
    assert again.cached_batch(items, compute, ["a", "bbb"]) == [1.0, 3.0] and again.computed == 0
    other = CachedScorer("digest|fp32|cpu|4", 4, "m", ScoreCache(tmp_path / "s.sqlite3"))  # another batch size
    assert other.cached_batch(items, compute, ["a", "bbb"]) == [1.0, 3.0] and other.computed == 2
    assert len(calls) == 2
    uncached = CachedScorer("k", 2, "m", None)
    assert uncached.cached_batch(items, compute, ["a", "bbb"]) == [1.0, 3.0] and len(calls) == 3


def test_a_checkpoint_hash_is_remembered_by_its_files_key(tmp_path: Path) -> None:
    files = [tmp_path / "b.bin", tmp_path / "a.json"]
    files[0].write_bytes(b"weights")
    files[1].write_text("{}")
    cache = ScoreCache(tmp_path / "s.sqlite3")
    key = (str(tmp_path), 9, 1)
    digest = remembered_hash(cache, lambda known: hash_files(files, key, known, names=True))
    assert digest == hashlib.sha256(b"b.bin\0weights" + b"a.json\0{}").hexdigest()
    assert cache.hashes() == {key: digest}
    assert hash_files(files, key) == hashlib.sha256(b"weights{}").hexdigest()  # without names
    files[0].write_bytes(b"changed")  # same key: the remembered hash, not the files, answers
    assert remembered_hash(cache, lambda known: hash_files(files, key, known, names=True)) == digest


def test_signature_record_interval_and_a_missing_extra() -> None:
    class Toy(NeuralValues):
        def tool(self) -> str:
            return "toy:1.0"

    result = Toy([0.0, 1.0, 0.5, 0.5], 0.5, "model:m|sha256:ab|precision:fp32|batch:2|device:cpu")
    assert result.signature == "model:m|sha256:ab|precision:fp32|batch:2|device:cpu|nrefs:1|toy:1.0"
    assert metric_signature("m", "t:2", 1, 1000, 7) == "m|nrefs:1|bs:1000|seed:7|t:2"
    assert result.record() == {"score": 0.5, "ci95": None, "signature": result.signature}
    counts = np.array([[1, 1, 1, 1], [2, 0, 2, 0], [0, 2, 0, 2], [4, 0, 0, 0]] * 10, dtype=np.float64)
    rec = result.record(counts, 7)
    assert rec["signature"].endswith("|nrefs:1|bs:40|seed:7|toy:1.0")
    assert rec["ci95"][0] <= 0.5 <= rec["ci95"][1]
    with pytest.raises(MetricSetupError, match=r"^the extra$"):
        require_extra(("json", "no_such_module_here"), "the extra")
    with pytest.raises(MetricSetupError, match=r"^the extra$"):
        package_version("no-such-distribution-here", "the extra")
