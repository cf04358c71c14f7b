"""`harness validate` (local backend, real server and processes): messages a person can act on (issue 9, items 5,
8, 9, 11, 12): a command that does not exist is a crash saying so, the end of the command's output is printed with a
failed run, a bad --output is one line, a results folder is not silently reused, and a terminal gets progress."""

from __future__ import annotations

import errno
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from tests import harness_cli
from tests.evaluate_data import support
from tests.evaluate_data.support import CONFIG, make_submission
from tests.harness_cli import read_terminal


def validate(folder: Path, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return support.validate(folder, out, "--no-docker", *extra)


def test_list_command_that_does_not_exist_is_a_crash_saying_so(tmp_path: Path) -> None:
    folder = make_submission(tmp_path / "subs", "nobin", ["nosuchbinary"])
    proc = validate(folder, tmp_path / "out")
    assert proc.returncode == 1, proc.stderr
    assert "status       crash: executable file not found: nosuchbinary" in proc.stdout, proc.stdout
    assert "infra_error" not in proc.stdout and "Traceback" not in proc.stderr


def test_shell_command_not_found_names_it_and_shows_the_output(tmp_path: Path) -> None:
    folder = make_submission(tmp_path / "subs", "typo", "harnes --model m")
    proc = validate(folder, tmp_path / "out")
    assert proc.returncode == 1
    status = next(line for line in proc.stdout.splitlines() if line.startswith("status"))
    assert "crash: executable file not found: harnes (exit code 127 after 0/3 instances)" in status, proc.stdout
    assert any(line.startswith("    | ") and "harnes: not found" in line for line in proc.stdout.splitlines())


def test_failed_run_prints_the_last_lines_of_its_output_escaped(tmp_path: Path) -> None:
    script = "import sys; print('a\\x1b[31mred'); [print('line', i) for i in range(20)]; import simuleval_nope"
    folder = make_submission(tmp_path / "subs", "nomodule", ["python3", "-c", script])
    proc = validate(folder, tmp_path / "out")
    assert proc.returncode == 1
    tail = [line for line in proc.stdout.splitlines() if line.startswith("    | ")]
    assert len(tail) == 5 and "No module named 'simuleval_nope'" in tail[-1], proc.stdout
    assert "\x1b" not in proc.stdout


def test_ok_run_prints_no_output_tail(tmp_path: Path) -> None:
    folder = make_submission(tmp_path / "subs", "fine", "python3 probe_agent.py copy")
    proc = validate(folder, tmp_path / "out")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "client.log" not in proc.stdout and "    | " not in proc.stdout


def one_line_error(proc: subprocess.CompletedProcess[str], path: Path) -> None:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert str(path) in proc.stderr, proc.stderr


def test_output_that_is_a_file_is_one_line(tmp_path: Path) -> None:
    folder = make_submission(tmp_path / "subs", "fine", "python3 probe_agent.py copy")
    target = tmp_path / "a-file"
    target.write_text("keep me\n", encoding="utf-8")
    one_line_error(validate(folder, target), target)
    one_line_error(validate(folder, target / "below"), target / "below")
    assert target.read_text(encoding="utf-8") == "keep me\n"


def test_output_that_cannot_be_written_is_one_line(tmp_path: Path) -> None:
    folder = make_submission(tmp_path / "subs", "fine", "python3 probe_agent.py copy")
    if os.geteuid() == 0:  # root writes through permission bits; sysfs refuses new folders even to root
        target = Path("/sys/harness-validate-test-output")
        with pytest.raises(OSError) as exc:
            target.mkdir()
        assert exc.value.errno in (errno.EPERM, errno.EACCES, errno.EROFS)
    else:
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o555)
        target = locked / "out"
    one_line_error(validate(folder, target), target)


@pytest.mark.slow
def test_output_with_results_needs_overwrite(tmp_path: Path) -> None:
    folder = make_submission(tmp_path / "subs", "fine", "python3 probe_agent.py copy")
    out = tmp_path / "out"
    assert validate(folder, out).returncode == 0
    log = out / "fine" / "dev" / "instances.log"
    before = log.read_bytes()
    refused = validate(folder, out)
    one_line_error(refused, out)
    assert "--overwrite" in refused.stderr and log.read_bytes() == before
    assert validate(folder, out, "--overwrite").returncode == 0


def test_validate_shows_progress_on_a_terminal(tmp_path: Path) -> None:
    folder = make_submission(tmp_path / "subs", "fine", "python3 probe_agent.py copy")
    master, slave = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    proc = subprocess.Popen([sys.executable, "-m", "harness", "validate", str(folder), "--config", str(CONFIG),
                             "--output", str(tmp_path / "out"), "--no-docker"], stdout=subprocess.PIPE,
                            stderr=slave, stdin=subprocess.DEVNULL, env=env)
    os.close(slave)
    shown = read_terminal(master)
    os.close(master)
    assert proc.wait(timeout=120) == 0
    text = shown.decode("utf-8", "replace")
    assert "\x1b[2K" in text and "3/3" in text and "fine" in text, text


#: a command that reads the weights its `fetch:` step downloads, as a participant's command does
READS_WEIGHTS = ("python3 -c \"import os; open(os.environ.get('HARNESS_FETCH_DIR', '') + '/weights.bin').read()\" "
                 "&& python3 probe_agent.py copy")


def test_a_fetch_step_without_harness_fetch_dir_is_one_line_saying_what_to_do(tmp_path: Path) -> None:
    """`--no-docker` runs no fetch step: with HARNESS_FETCH_DIR unset (or empty) nothing would hold the weights, so
    validate stops before the run with one line naming the submission's fetch:, the variable and both ways out."""
    folder = make_submission(tmp_path / "subs", "fetchy", READS_WEIGHTS, extra_yaml="fetch: python3 fetch.py\n")
    proc = harness_cli.validate(folder, CONFIG, tmp_path / "out", "--no-docker", env={"HARNESS_FETCH_DIR": ""})
    assert proc.returncode == 2, proc.stdout + proc.stderr
    err = proc.stderr
    assert err.count("\n") == 1 and "Traceback" not in err, err
    for said in (str(folder / "submission.yaml"), "fetch", "--no-docker", "HARNESS_FETCH_DIR is unset",
                 "set HARNESS_FETCH_DIR to a folder", "validate with Docker"):
        assert said in err, err
    assert not (tmp_path / "out").exists()


def test_a_fetch_step_with_harness_fetch_dir_runs_on_that_folder(tmp_path: Path) -> None:
    """HARNESS_FETCH_DIR names the folder the fetch step would have filled (relative to where validate runs): the
    command reads its weights there; a folder that does not exist is one line naming it."""
    folder = make_submission(tmp_path / "subs", "fetchy", READS_WEIGHTS, extra_yaml="fetch: python3 fetch.py\n")
    (tmp_path / "fetched").mkdir()
    (tmp_path / "fetched" / "weights.bin").write_bytes(b"\0" * 16)
    done = harness_cli.run_harness("validate", str(folder), "--config", str(CONFIG), "--output", str(tmp_path / "out"),
                                   "--no-docker", cwd=tmp_path, env={"HARNESS_FETCH_DIR": "fetched"})
    assert done.returncode == 0, done.stdout + done.stderr
    assert "status       ok" in done.stdout, done.stdout
    missing = harness_cli.validate(folder, CONFIG, tmp_path / "out2", "--no-docker",
                                   env={"HARNESS_FETCH_DIR": str(tmp_path / "nowhere")})
    one_line_error(missing, tmp_path / "nowhere")
    assert "HARNESS_FETCH_DIR" in missing.stderr
