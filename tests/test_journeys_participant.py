"""A new participant's journey through the real commands (issue 26, items 1-6): only the files of the dataset run
are checked, a server-side failure's reason reaches the person, validate suggests only its own flags, the bundled
agent-server templates validate without Docker, `run --resume` refuses another system, and `--metrics` reads what
it prints."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.evaluate_data.support import CONFIG, generous_config, make_submission
from tests.harness_cli import run_harness as harness

REPO = Path(__file__).resolve().parents[1]
ECHO = REPO / "tests" / "agents" / "echo_text.py"


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


@pytest.mark.slow
def test_run_checks_only_the_files_of_its_track_and_dataset(tmp_path: Path) -> None:
    cfg = partial_config(tmp_path)
    ok = harness("run", "--config", str(cfg), "--track", "text-en-es", "--dataset", "dev", "--agent", str(ECHO),
                 "--output", str(tmp_path / "run"))
    assert ok.returncode == 0, ok.stderr
    missing = harness("run", "--config", str(cfg), "--track", "text-en-es", "--dataset", "test", "--agent",
                      str(ECHO), "--output", str(tmp_path / "run-test"))
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1, missing.stderr
    assert "tracks[0].datasets.test.source: file not found" in missing.stderr, missing.stderr


@pytest.mark.slow
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


@pytest.mark.slow
def test_run_and_validate_show_the_servers_reason_for_failed_instances(tmp_path: Path) -> None:
    (tmp_path / "never.py").write_text(NEVER_WRITES, encoding="utf-8")
    config = generous_config(tmp_path)
    ran = harness("run", "--config", str(config), "--dataset", "dev", "--agent", str(tmp_path / "never.py"),
                  "--output", str(tmp_path / "run"))
    assert ran.returncode == 1, ran.stderr
    status = next(line for line in ran.stderr.splitlines() if line.startswith("harness run: status"))
    folder = make_submission(tmp_path / "subs", "never", ["python3", "-m", "harness", "client", "--agent",
                                                         "never.py"])
    shutil.copy2(tmp_path / "never.py", folder / "never.py")
    validated = harness("validate", str(folder), "--config", str(config), "--output", str(tmp_path / "out"),
                        "--no-docker")
    assert validated.returncode == 1, validated.stdout + validated.stderr
    shown = next(line for line in validated.stdout.splitlines() if line.startswith("status"))
    # the agent never writes: its reads after the end are answered by the client, not by 10000 round trips each
    # (issue 32, item 5), and the reason says what to return
    reason = ("instance 0: error: the agent kept reading after the end of the source (10000 reads) without writing "
              "anything: once states.source_finished is true, return WriteAction(text, finished=True)")
    for line in (status, shown):
        assert "crash: the agent failed in 3 of 3 instances" in line and reason in line, line
        assert "[partial output]" not in line  # there is no output at all
    assert status.partition("status ")[2] == shown.partition("status       ")[2]  # the same case, the same words
    decoded = next(line for line in validated.stdout.splitlines() if "instance(s) decoded" in line)
    actions = int(decoded.rpartition(" actions in ")[0].rpartition(" ")[2])
    assert actions < 100, decoded  # a few reads of the source per instance, and its error: no round trip past it


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


@pytest.mark.slow
def test_validate_no_docker_runs_the_agent_server_template_as_it_is(tmp_path: Path) -> None:
    folder = tmp_path / "simuleval_agent_server"
    shutil.copytree(REPO / "agent_templates" / "simuleval_agent_server", folder)
    proc = harness("validate", str(folder), "--config", str(CONFIG), "--output", str(tmp_path / "out"),
                   "--no-docker")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "status       ok" in proc.stdout and "instances    3/3" in proc.stdout, proc.stdout


@pytest.mark.slow
def test_validate_no_docker_runs_the_simulstream_template_as_it_is(tmp_path: Path) -> None:
    """SimulStream's server from the template's own CMD (Whisper tiny.en, one utterance: the template is what is
    checked; its outputs against the native interface are tests/test_simulstream_http.py's)."""
    pytest.importorskip("simulstream")
    pytest.importorskip("faster_whisper")
    from tests.simulstream_images import speech_task

    folder = tmp_path / "simulstream_http"
    shutil.copytree(REPO / "agent_templates" / "simulstream_http", folder, ignore=shutil.ignore_patterns("wheels"))
    proc = harness("validate", str(folder), "--config", str(speech_task(tmp_path / "task", n=1)), "--output",
                   str(tmp_path / "out"), "--no-docker")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "status       ok" in proc.stdout and "instances    1/1" in proc.stdout, proc.stdout


def test_validate_no_docker_without_a_known_command_is_a_usage_error(tmp_path: Path) -> None:
    folder = tmp_path / "server-image"
    folder.mkdir()
    (folder / "image.tar").write_bytes(b"")
    (folder / "submission.yaml").write_text(
        "team: t\nsystem: s\ncontact: a@b.c\ntrack: text-en-es\nkind: primary\ndescription: d\n"
        "build: {image: image.tar}\ninterface: simuleval-agent-server\n", encoding="utf-8")
    proc = harness("validate", str(folder), "--config", str(CONFIG), "--output", str(tmp_path / "out"),
                   "--no-docker")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.count("\n") == 1 and "submission.yaml: command:" in proc.stderr, proc.stderr
    assert "crash" not in proc.stdout + proc.stderr


LAGGED = '''from harness.client.agent import ReadAction, TextAgent, WriteAction


class Lagged(TextAgent):
    @staticmethod
    def add_args(parser):
        parser.add_argument("--k", type=int, default=1)

    def policy(self, states):
        if not states.source_finished and len(states.source) - len(states.target) < self.args.k:
            return ReadAction()
        if len(states.target) < len(states.source):
            return WriteAction(states.source[len(states.target)])
        return WriteAction("", finished=True)
'''


@pytest.mark.slow
def test_run_resume_refuses_another_system(tmp_path: Path) -> None:
    agent = tmp_path / "lagged.py"
    agent.write_text(LAGGED, encoding="utf-8")
    out = str(tmp_path / "run")

    def run(*extra: str) -> subprocess.CompletedProcess[str]:
        return harness("run", "--config", str(CONFIG), "--dataset", "dev", "--output", out, *extra)

    assert run("--agent", str(agent), "--k", "2", "--instances", "0").returncode == 0
    other_options = run("--resume", "--agent", str(agent), "--k", "3")
    assert other_options.returncode == 2 and "agent options differ: k" in other_options.stderr, other_options.stderr
    shutil.copy2(ECHO, tmp_path / "other.py")
    other_file = run("--resume", "--agent", str(tmp_path / "other.py"))
    assert other_file.returncode == 2 and "the agent file's content differs" in other_file.stderr
    assert other_file.stderr.count("\n") == 1
    same = run("--resume", "--agent", str(agent), "--k=2")
    assert same.returncode == 0, same.stderr
    assert "2 instance(s) decoded" in same.stderr, same.stderr


def test_metrics_take_comma_lists_ca_names_and_never_swallow_the_run(tmp_path: Path) -> None:
    import json

    run = tmp_path / "run"
    shutil.copytree(REPO / "examples" / "runs" / "udhr-dev-waitk3", run)
    for order in (["--metrics", "BLEU,AL_CA", str(run)], [str(run), "--metrics", "BLEU", "AL_CA@orig"]):
        proc = harness("score", *order, "--no-write", "--format", "json", "--bootstrap", "1")
        assert proc.returncode == 0, proc.stderr
        names = set(json.loads(proc.stdout)) - {"counts", "info"}
        assert {n.partition("@")[0] for n in names} == {"BLEU", "AL"}, names
    wrong = harness("score", str(run), "--metrics", "BLUE", "--no-write")
    assert wrong.returncode == 2 and wrong.stderr.count("\n") == 1, wrong.stderr
    assert "unknown metric 'BLUE'; did you mean 'BLEU'?" in wrong.stderr and "valid: BLEU, chrF" in wrong.stderr
