"""A new participant's journey through the real commands (issue 26, items 1-6): only the files of the dataset run
are checked, a server-side failure's reason reaches the person, validate suggests only its own flags, the bundled
agent-server templates validate without Docker, `run --resume` refuses another system, and `--metrics` reads what
it prints."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from tests.evaluate_data.support import CONFIG, make_submission

REPO = Path(__file__).resolve().parents[1]
ECHO = REPO / "tests" / "agents" / "echo_text.py"


def harness(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", *args], capture_output=True, text=True, timeout=300,
                          cwd=cwd)


def partial_config(root: Path) -> Path:
    """The tests' text task whose test split and a whole speech track point at files this participant lacks."""
    for name in ("dev.en", "dev.es"):
        shutil.copy2(CONFIG.parent / name, root / name)
    cfg = root / "task.yaml"
    cfg.write_text("""task: t
tracks:
  - name: text-en-es
    modality: text
    source_lang: en
    target_lang: es
    datasets:
      dev: {source: dev.en, references: {orig: dev.es}}
      test: {source: hidden/test.en, references: {orig: hidden/test.es}}
  - name: speech-en-es
    modality: speech
    source_lang: en
    target_lang: es
    datasets:
      dev: {source: speech/dev.list, references: {orig: dev.es}}
limits: {instance_timeout_s: 30, idle_timeout_s: 20, total_timeout_s: 120}
""", encoding="utf-8")
    return cfg


def test_run_checks_only_the_files_of_its_track_and_dataset(tmp_path: Path) -> None:
    cfg = partial_config(tmp_path)
    ok = harness("run", "--config", str(cfg), "--track", "text-en-es", "--dataset", "dev", "--agent", str(ECHO),
                 "--output", str(tmp_path / "run"))
    assert ok.returncode == 0, ok.stderr
    missing = harness("run", "--config", str(cfg), "--track", "text-en-es", "--dataset", "test", "--agent",
                      str(ECHO), "--output", str(tmp_path / "run-test"))
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1, missing.stderr
    assert "tracks[0].datasets.test.source: file not found" in missing.stderr, missing.stderr


def test_validate_on_dev_ignores_the_test_files_it_does_not_run(tmp_path: Path) -> None:
    cfg = partial_config(tmp_path)
    folder = make_submission(tmp_path / "subs", "fine", "python3 probe_agent.py copy")
    proc = harness("validate", str(folder), "--config", str(cfg), "--output", str(tmp_path / "out"), "--no-docker")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "status       ok" in proc.stdout, proc.stdout


NEVER_WRITES = '''from harness.client.agent import ReadAction, TextAgent


class NeverWrites(TextAgent):
    def policy(self, states):
        return ReadAction()
'''


def test_run_and_validate_show_the_servers_reason_for_failed_instances(tmp_path: Path) -> None:
    (tmp_path / "never.py").write_text(NEVER_WRITES, encoding="utf-8")
    ran = harness("run", "--config", str(CONFIG), "--dataset", "dev", "--agent", str(tmp_path / "never.py"),
                  "--output", str(tmp_path / "run"))
    assert ran.returncode == 1, ran.stderr
    status = next(line for line in ran.stderr.splitlines() if line.startswith("harness run: status"))
    folder = make_submission(tmp_path / "subs", "never", ["python3", "-m", "harness", "client", "--agent",
                                                         "never.py"])
    shutil.copy2(tmp_path / "never.py", folder / "never.py")
    validated = harness("validate", str(folder), "--config", str(CONFIG), "--output", str(tmp_path / "out"),
                        "--no-docker")
    assert validated.returncode == 1, validated.stdout + validated.stderr
    shown = next(line for line in validated.stdout.splitlines() if line.startswith("status"))
    reason = "instance 0: protocol_violation: more than 10000 reads after the end of the source"
    for line in (status, shown):
        assert "protocol_violation: 3 of 3 instances broke the protocol" in line and reason in line, line
    assert status.partition("status ")[2] == shown.partition("status       ")[2]  # the same case, the same words


def test_validate_suggests_only_flags_it_has(tmp_path: Path) -> None:
    folder = make_submission(tmp_path / "subs", "fine", "python3 probe_agent.py copy")
    out = tmp_path / "out"
    out.mkdir()
    (out / "something").write_text("x\n", encoding="utf-8")
    refused = harness("validate", str(folder), "--config", str(CONFIG), "--output", str(out), "--no-docker")
    assert refused.returncode == 2, refused.stdout + refused.stderr
    import re

    suggested = set(re.findall(r"--[a-z][a-z-]+", refused.stderr))
    assert "--overwrite" in suggested and "--resume" not in suggested, refused.stderr
    usage = harness("validate", "--help").stdout
    assert all(flag in usage for flag in suggested), (suggested, usage)
