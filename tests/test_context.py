"""Extra context (IWSLT 2026): `context:` datasets, `prepare:` submissions, the agent API's list, and the
context-terms template through `harness run` and `harness validate --no-docker` (no Docker)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.config import load_config, require_dataset_files
from harness.errors import ConfigError, SubmissionError
from harness.intake.submission import load_submission
from tests.context_task import make_context_task
from tests.templates_util import TEMPLATES, harness, records

AGENT = TEMPLATES / "context_terms" / "agent.py"


def _run(cfg: Path, track: str, out: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(harness("run", "--config", str(cfg), "--track", track, "--dataset", "dev", "--agent",
                                  str(AGENT), "--output", str(out)), capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_the_context_changes_the_templates_output_in_harness_run(tmp_path: Path) -> None:
    cfg = make_context_task(tmp_path)
    with_ctx = _run(cfg, "text-en-es-context", tmp_path / "ctx")
    without = _run(cfg, "text-en-es", tmp_path / "plain")
    assert with_ctx.returncode == 0 and without.returncode == 0, with_ctx.stderr + without.stderr
    got, plain = records(tmp_path / "ctx"), records(tmp_path / "plain")
    assert got[0][0] == "We stream with SimulStream today" and got[1][0] == "LongYAAL measures the delay"
    assert plain[0][0] == "we stream with simulstream today"  # no context reaches the track that names none


def test_the_server_info_names_the_documents_only_for_the_track_that_has_them(tmp_path: Path) -> None:
    from harness.server.evaluation import open_evaluation

    cfg = make_context_task(tmp_path)
    ev = open_evaluation(cfg, "dev", tmp_path / "a", "text-en-es-context")
    assert ev.info()["context"] == [str((tmp_path / "papers" / "talk1.pdf").resolve())]
    ev.close()
    mounted = open_evaluation(cfg, "dev", tmp_path / "b", "text-en-es-context", context_root="/context")
    assert mounted.info()["context"] == ["/context/docs/000-talk1.pdf"]
    mounted.close()
    plain = open_evaluation(cfg, "dev", tmp_path / "c", "text-en-es", context_root="/context")
    assert plain.info()["context"] == []
    plain.close()
    doc = json.loads((Path(__file__).parents[1] / "harness" / "openapi.json").read_text(encoding="utf-8"))
    assert "context" in doc["components"]["schemas"]["Info"]["properties"]


def test_context_field_is_strict_and_its_documents_are_checked(tmp_path: Path) -> None:
    cfg = make_context_task(tmp_path)
    text = cfg.read_text(encoding="utf-8")
    cfg.write_text(text.replace("context: context.txt", "contxt: context.txt"), encoding="utf-8")
    with pytest.raises(ConfigError, match=r"datasets\.dev\.contxt: .*did you mean 'context'"):
        load_config(cfg)
    cfg.write_text(text, encoding="utf-8")
    (tmp_path / "context.txt").write_text("papers/talk1.pdf\npapers/missing.pdf\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"tracks\[0\]\.datasets\.dev\.context: context document not found: "
                                          r".*missing\.pdf \(named in .*context\.txt\)"):
        load_config(cfg)
    config = load_config(cfg, check_files=False)
    with pytest.raises(ConfigError, match=r"tracks\[0\]\.datasets\.dev\.context: context document not found"):
        require_dataset_files(config, config.track("text-en-es-context"), "dev")
    check = subprocess.run(harness("check-config", str(cfg)), capture_output=True, text=True, timeout=120)
    assert check.returncode != 0 and "missing.pdf" in check.stdout + check.stderr


def test_prepare_field_and_its_limit_are_strict(tmp_path: Path) -> None:
    folder = tmp_path / "sub"
    folder.mkdir()
    (folder / "Dockerfile").write_text("FROM scratch\n", encoding="utf-8")
    base = "team: t\nsystem: s\ntrack: x\nbuild: {dockerfile: Dockerfile}\ncommand: run\n"
    (folder / "submission.yaml").write_text(base + "prepare: python3 prep.py\n", encoding="utf-8")
    assert load_submission(folder).prepare == ("/bin/sh", "-c", "python3 prep.py")
    (folder / "submission.yaml").write_text(base + "prepare: 3\n", encoding="utf-8")
    with pytest.raises(SubmissionError, match=r"submission\.yaml: prepare: expected a non-empty string"):
        load_submission(folder)
    (folder / "submission.yaml").write_text(base + "prepar: x\n", encoding="utf-8")
    with pytest.raises(SubmissionError, match=r"prepar: .*did you mean 'prepare'"):
        load_submission(folder)
    cfg = make_context_task(tmp_path, "limits: {prepare_timeout_s: 0}\n")
    with pytest.raises(ConfigError, match=r"limits\.prepare_timeout_s: must be a positive number"):
        load_config(cfg)
    assert load_config(make_context_task(tmp_path)).limits.prepare_timeout_s == 1800.0


@pytest.mark.slow
def test_validate_no_docker_runs_prepare_and_hands_its_output_to_the_run(tmp_path: Path) -> None:
    cfg = make_context_task(tmp_path)
    sub = tmp_path / "subs" / "ctx"
    sub.mkdir(parents=True)
    for name in ("agent.py", "terms.py", "prepare.py"):
        (sub / name).write_text((TEMPLATES / "context_terms" / name).read_text(encoding="utf-8"), encoding="utf-8")
    (sub / "Dockerfile").write_text("FROM harness-base:latest\n", encoding="utf-8")
    (sub / "submission.yaml").write_text(
        "team: t\nsystem: ctx\ntrack: text-en-es-context\nbuild: {dockerfile: Dockerfile}\n"
        f"prepare: {sys.executable} prepare.py\ncommand: {sys.executable} -m harness client --agent agent.py\n",
        encoding="utf-8")
    out = tmp_path / "out"
    proc = subprocess.run(harness("validate", str(sub), "--config", str(cfg), "--dataset", "dev", "--no-docker",
                                  "--output", str(out)), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "(before the run; not part of any latency)" in proc.stdout
    assert "4 terms" in (out / "ctx" / "dev" / "prepare.log").read_text(encoding="utf-8")
    assert records(out / "ctx" / "dev")[0][0] == "We stream with SimulStream today"


@pytest.mark.slow
def test_the_documents_are_part_of_the_runs_identity(tmp_path: Path) -> None:
    """A changed paper is another run: `harness run --resume` refuses it, and the batch's resume key changes."""
    from harness.batch.manifest import dataset_hashes
    from tests.context_task import make_pdf

    cfg = make_context_task(tmp_path)
    ds = load_config(cfg).track("text-en-es-context").dataset("dev")
    before = dataset_hashes(ds, "text")
    assert str((tmp_path / "papers" / "talk1.pdf").resolve()) in before
    assert _run(cfg, "text-en-es-context", tmp_path / "run").returncode == 0
    make_pdf(tmp_path / "papers" / "talk1.pdf", "Another paper entirely.")
    assert dataset_hashes(ds, "text") != before
    proc = subprocess.run(harness("run", "--config", str(cfg), "--track", "text-en-es-context", "--dataset", "dev",
                                  "--agent", str(AGENT), "--output", str(tmp_path / "run"), "--resume"),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0 and "the context document talk1.pdf file of dev changed" in proc.stderr, proc.stderr
