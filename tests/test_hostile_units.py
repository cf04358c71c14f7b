"""Hostile strings reaching the organizer's terminal (issue 13 item 6) and a self-declared baseline in
`harness check` (item 8), without Docker: the real CLI in a subprocess and the real progress printer."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import yaml

from harness.batch.progress import Progress
from harness.run import failures
from harness.text import printable, printable_lines
from tests.harness_cli import validate

ESC_COLOUR = "\x1b[31m"
ESC_TITLE = "\x1b]0;TITLE\x07"
HOSTILE = f"team{ESC_COLOUR}red{ESC_TITLE}"
CONFIG = Path(__file__).resolve().parent / "evaluate_data" / "config.yaml"


def raw_controls(text: str) -> list[str]:
    """The raw control characters of `text` other than newline (what a terminal would interpret)."""
    return [c for c in text if (ord(c) < 32 and c != "\n") or 0x7F <= ord(c) < 0xA0]


def test_printable_escapes_controls_and_keeps_text() -> None:
    assert printable(HOSTILE) == "team\\x1b[31mred\\x1b]0;TITLE\\x07"
    assert printable("día ✓ 中文") == "día ✓ 中文"
    assert printable("a\nb\tc\x9bd\u202ee") == "a\\nb\\tc\\x9bd\\u202ee"


def test_multi_line_errors_keep_their_lines_and_escape_the_rest() -> None:
    text = "agent.py: failed\n  File \"\x1b]0;TITLE\x07agent.py\", line 3\nValueError: \x1b[31mred"
    assert printable_lines(text).splitlines() == [
        "agent.py: failed", '  File "\\x1b]0;TITLE\\x07agent.py", line 3', "ValueError: \\x1b[31mred"]


def test_progress_lines_escape_folder_names_and_reasons() -> None:
    out = io.StringIO()
    progress = Progress(stream=out, tty=False)
    progress.add(HOSTILE, "dev")
    progress.update(HOSTILE, state=failures.INVALID_SUBMISSION, note=f"track: {HOSTILE} unknown")
    text = out.getvalue()
    assert "TITLE" in text and "\\x1b[31m" in text
    assert raw_controls(text) == []


def make_folder(root: Path, name: str, **fields: object) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "Dockerfile").write_text("FROM harness-base:latest\n", encoding="utf-8")
    doc = {"team": "tests", "system": "s1", "contact": "x@example.org", "track": "text-en-es",
           "build": {"dockerfile": "Dockerfile"}, "command": "true", **fields}
    (folder / "submission.yaml").write_text(yaml.safe_dump(doc, allow_unicode=True), encoding="utf-8")
    return folder


def check(folder: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", "check", str(folder), "--no-docker", *extra],
                          capture_output=True, text=True, timeout=120, env=os.environ.copy())


def test_check_escapes_folder_name_and_track(tmp_path: Path) -> None:
    folder = make_folder(tmp_path, f"sub{ESC_COLOUR}{ESC_TITLE}", track=HOSTILE)
    proc = check(folder, "--config", str(CONFIG))
    assert proc.returncode == 1  # the track is not in the config
    text = proc.stdout + proc.stderr
    assert "TITLE" in text
    assert raw_controls(text) == [], text


def test_check_warns_that_a_self_declared_baseline_is_ignored(tmp_path: Path) -> None:
    folder = make_folder(tmp_path, "claims-baseline", baseline=True)
    proc = check(folder)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    warnings = [line for line in proc.stdout.splitlines() if line.startswith("warning:") and "baseline" in line]
    assert warnings and "ignored" in warnings[0] and "config" in warnings[0], proc.stdout


KILL_SERVER = '''"""Kill the evaluation server this participant was given (the local process on $SERVER_PORT)."""
import os
import signal

needle = f"--port\\0{os.environ['SERVER_PORT']}\\0".encode()
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            if needle in f.read():
                os.kill(int(pid), signal.SIGKILL)
    except OSError:
        pass
'''


def test_a_participant_that_kills_its_local_server_is_a_protocol_violation(tmp_path: Path) -> None:
    """`harness validate --no-docker` (the local backend of `execute_run`): the server's death is the participant's
    failure, not an infra_error, and the participant is stopped once the server is gone."""
    from tests.evaluate_data.support import make_submission

    folder = make_submission(tmp_path / "subs", "kills-server", "python3 kill_server.py; sleep 1000")
    (folder / "kill_server.py").write_text(KILL_SERVER, encoding="utf-8")
    proc = validate(folder, CONFIG, tmp_path / "out", "--no-docker")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "status       protocol_violation: the evaluation server exited with code -9 while this participant ran" \
        in proc.stdout, proc.stdout
