"""A run waits for the server's "listening" line in its output (no probe process): `LogPump.wait_for_line` sees a
line beginning with it however the stream is cut, answers False at once when the stream ends without it, and the
real `harness server` writes that line once it answers."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from harness.protocol import LISTENING_LINE
from harness.run.watch import LogPump
from tests.templates_util import listening_url

CONFIG = Path(__file__).resolve().parent / "evaluate_data" / "config.yaml"


def _pump(chunks: Iterator[bytes], path: Path) -> LogPump:
    pump = LogPump(lambda: chunks, path, 1 << 20, watch_for=LISTENING_LINE)
    pump.start()
    return pump


def test_the_line_is_seen_across_chunks_and_only_at_a_line_start(tmp_path: Path) -> None:
    text = (b"a warning\nsays harness server: listening on, not at a line start\n"
            + LISTENING_LINE.encode() + b"http://0.0.0.0:8000 (t/dev, 3 pending)\n")
    release = threading.Event()

    def chunks() -> Iterator[bytes]:
        for i in range(0, len(text), 7):  # cut everywhere, the line included
            yield text[i:i + 7]
        release.wait(30)  # the server goes on running

    pump = _pump(chunks(), tmp_path / "server.log")
    try:
        assert pump.wait_for_line(30) is True
        assert pump.ended is False
    finally:
        release.set()
        pump.join(30)
    assert (tmp_path / "server.log").read_bytes() == text


def test_a_stream_that_ends_without_the_line_answers_false_at_once(tmp_path: Path) -> None:
    said = b"Traceback (most recent call last):\n  harness server: listening on is not this line's start\n"
    pump = _pump(iter([said]), tmp_path / "server.log")
    assert pump.wait_for_line(600) is False  # the stream's end answers; the 600 s are never waited
    assert pump.ended is True


def test_without_the_line_in_time_the_answer_is_false(tmp_path: Path) -> None:
    release = threading.Event()

    def chunks() -> Iterator[bytes]:
        yield b"still loading\n"
        release.wait(30)

    pump = _pump(chunks(), tmp_path / "server.log")
    try:
        assert pump.wait_for_line(0.05) is False
    finally:
        release.set()
        pump.join(30)


def test_the_server_writes_the_line_once_it_answers(tmp_path: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "harness", "server", "--config", str(CONFIG), "--track",
                             "text-en-es", "--dataset", "dev", "--port", "0", "--output", str(tmp_path / "run"),
                             "--no-score"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        assert proc.stderr is not None
        pump = LogPump(lambda: iter(lambda: proc.stderr.read1(65536), b""), tmp_path / "server.log", 1 << 20,
                       drain=True, watch_for=LISTENING_LINE)
        pump.start()
        assert pump.wait_for_line(120) is True
        line = next(ln for ln in (tmp_path / "server.log").read_text().splitlines() if ln.startswith(LISTENING_LINE))
        url = listening_url(line).replace("0.0.0.0", "127.0.0.1")
        with urllib.request.urlopen(f"{url}/health", timeout=30) as answer:  # listening means answering
            assert json.loads(answer.read())["status"] == "ok"
    finally:
        proc.terminate()
        proc.wait(30)
