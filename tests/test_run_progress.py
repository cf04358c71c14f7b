"""`harness run` shows progress: one line redrawn within the terminal's width on a TTY, a start line elsewhere."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from tests.text_task import TWO_SPLIT_SOURCES as SOURCES
from tests.text_task import make_task

ECHO = '''
from harness.client.agent import TextAgent, ReadAction, WriteAction

class Echo(TextAgent):
    def policy(self, states):
        if not states.source_finished:
            return ReadAction()
        return WriteAction(" ".join(states.source), finished=True)
'''


def _command(tmp_path: Path) -> list[str]:
    cfg = make_task(tmp_path)
    agent = tmp_path / "agent.py"
    agent.write_text(ECHO, encoding="utf-8")
    return [sys.executable, "-m", "harness", "run", "--config", str(cfg), "--dataset", "dev",
            "--output", str(tmp_path / "run"), "--agent", str(agent), "--overwrite"]


def test_progress_on_a_terminal_is_one_line_within_its_width(tmp_path: Path) -> None:
    main, tty = pty.openpty()
    env = {**os.environ, "COLUMNS": "30"}
    proc = subprocess.Popen(_command(tmp_path), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=tty,
                            env=env)
    os.close(tty)
    chunks = []
    while True:
        try:
            data = os.read(main, 65536)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(main)
    assert proc.wait(timeout=120) == 0
    out = b"".join(chunks).decode().replace("\r\n", "\n")  # the terminal turns a newline into CR LF
    first_line = out.split("\n")[0]
    redraws = first_line.split("\r")[1:]
    assert redraws, out
    assert all(len(r.replace("\x1b[K", "")) <= 29 for r in redraws), redraws
    assert redraws[-1].startswith(f"harness run: {len(SOURCES)}/{len(SOURCES)}")


def test_no_terminal_start_and_end_lines_only(tmp_path: Path) -> None:
    proc = subprocess.run(_command(tmp_path), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0
    lines = proc.stderr.splitlines()
    assert lines[0] == f"harness run: decoding {len(SOURCES)} instance(s)"
    assert lines[-1].startswith(f"harness run: {len(SOURCES)} instance(s) decoded") and len(lines) == 2
    assert "\r" not in proc.stderr


def test_the_primary_scores_are_printed(tmp_path: Path) -> None:
    """The echo agent copies the source, and make_task's references are the sources: BLEU 100, and every word is
    written after the whole sentence was read (LAAL = the mean source length, as scores.json says)."""
    proc = subprocess.run(_command(tmp_path), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    scores = json.loads((tmp_path / "run" / "scores.json").read_text(encoding="utf-8"))
    bleu, laal = scores["BLEU"], scores["LAAL"]
    assert bleu["score"] == pytest.approx(100.0) and laal["score"] == pytest.approx(
        sum(len(s.split()) for s in SOURCES) / len(SOURCES))
    assert proc.stdout.splitlines() == [
        f"BLEU   100.00 points  95% CI [{bleu['ci95'][0]:.2f}, {bleu['ci95'][1]:.2f}]",
        f"LAAL   {laal['score']:.2f} word  95% CI [{laal['ci95'][0]:.2f}, {laal['ci95'][1]:.2f}]"]
