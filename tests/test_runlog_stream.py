"""The strict reader reads the log as a stream: bounded memory on garbage, and garbage is "not a JSON line"."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.errors import LogFormatError
from harness.runlog import reader
from harness.runlog.reader import read_instances

NUL_MB = 300
PEAK_LIMIT_MB = 120


def _record(i: int) -> str:
    return json.dumps({"index": i, "prediction": "a b", "delays": [1, 2], "source_length": 2, "reference": "a b"})


def test_nul_file_scored_in_bounded_memory_and_called_not_a_json_line(tmp_path: Path) -> None:
    log = tmp_path / "instances.log"
    with open(log, "wb") as f:
        f.truncate(NUL_MB << 20)  # a file of NUL bytes (sparse: cheap to make)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    # A small launcher starts `harness score` and reports that child's own peak RSS (wait4): a child forked
    # straight from pytest would count pytest's memory as its own high-water mark.
    launcher = ("import os, subprocess, sys\n"
                "p = subprocess.Popen([sys.executable, '-m', 'harness', 'score', sys.argv[1]],"
                " stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)\n"
                "err = p.stderr.read().decode()\n"
                "_, status, usage = os.wait4(p.pid, 0)\n"
                "print(os.waitstatus_to_exitcode(status), usage.ru_maxrss)\n"
                "sys.stdout.write(err)\n")
    out = subprocess.run([sys.executable, "-c", launcher, str(log)], capture_output=True, text=True, env=env,
                         timeout=600).stdout
    first, stderr = out.split("\n", 1)
    code, maxrss_kb = map(int, first.split())
    peak_mb = maxrss_kb / 1024
    proc = subprocess.CompletedProcess([], code)
    assert proc.returncode != 0
    assert f"{log}:1: not a JSON line" in stderr, stderr
    assert "torn" not in stderr and "half-written" not in stderr
    assert peak_mb < PEAK_LIMIT_MB, f"harness score peaked at {peak_mb:.0f} MB on a {NUL_MB} MB NUL file"


def test_records_split_across_chunks_read_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Chunk borders in the middle of a line change nothing; a duplicate index across chunks is still found."""
    log = tmp_path / "instances.log"
    log.write_text("".join(_record(i) + "\n" for i in range(50)), encoding="utf-8")
    monkeypatch.setattr(reader, "CHUNK_BYTES", 37)
    assert [r["index"] for r in read_instances(log).records] == list(range(50))
    log.write_text("".join(_record(i % 30) + "\n" for i in range(50)), encoding="utf-8")
    with pytest.raises(LogFormatError, match=":31: index 0 already on line 1"):
        read_instances(log)


def test_overlong_line_is_reported_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "instances.log"
    log.write_bytes((_record(0) + "\n").encode() + b"{" + b"x" * 5000 + b"\n")
    monkeypatch.setattr(reader, "MAX_LINE_BYTES", 1000)
    monkeypatch.setattr(reader, "CHUNK_BYTES", 512)
    with pytest.raises(LogFormatError, match=":2: line longer than"):
        read_instances(log)
