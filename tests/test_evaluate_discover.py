"""Which submissions `harness evaluate` runs: folders, ID=FOLDER, folders of submissions, list files; the demo's
baselines come straight from agent_templates/ under the ids the leaderboard shows."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness.config import load_config
from harness.errors import HarnessError
from harness.intake.discover import SubmissionRef, discover
from harness.intake.submission import load_submission
from tests.evaluate_data.support import CONFIG, PROBE
from tests.harness_cli import NO_DOCKER, run_harness

ROOT = Path(__file__).resolve().parents[1]


def make(root: Path, name: str) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "submission.yaml").write_text("team: t\n", encoding="utf-8")
    return folder


def test_each_kind_of_entry(tmp_path):
    a = make(tmp_path / "one", "alpha")
    make(tmp_path / "many", "b2")
    make(tmp_path / "many", "b1")
    (tmp_path / "many" / ".hidden").mkdir()
    c = make(tmp_path / "listed", "gamma")
    listing = tmp_path / "list.txt"
    listing.write_text("# the listed ones\n\nlisted/gamma\nrenamed=listed/gamma\n", encoding="utf-8")
    refs = discover([a, f"first={a}", tmp_path / "many", listing])
    assert refs == [SubmissionRef("alpha", a), SubmissionRef("first", a),
                    SubmissionRef("b1", tmp_path / "many" / "b1"), SubmissionRef("b2", tmp_path / "many" / "b2"),
                    SubmissionRef("gamma", c), SubmissionRef("renamed", c)]


def test_an_id_used_twice_is_an_error(tmp_path):
    a = make(tmp_path / "x", "same")
    b = make(tmp_path / "y", "same")
    with pytest.raises(HarnessError, match="'same' is used twice"):
        discover([a, b])
    assert [r.id for r in discover([a, f"other={b}"])] == ["same", "other"]


@pytest.mark.parametrize("line, message", [("missing", "no submission.yaml"), ("=x", "plain folder name")])
def test_a_bad_list_line_names_file_and_line(tmp_path, line, message):
    make(tmp_path, "x")
    listing = tmp_path / "subs.txt"
    listing.write_text(f"x\n{line}\n", encoding="utf-8")
    with pytest.raises(HarnessError, match=rf"subs.txt:2: .*{message}"):
        discover([listing])


def test_a_path_of_no_kind_is_an_error(tmp_path):
    with pytest.raises(HarnessError, match="not a submission folder"):
        discover([tmp_path / "nowhere"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(HarnessError, match="empty: no submission.yaml in this folder nor in any folder inside it"):
        discover([tmp_path / "empty"])


@pytest.mark.parametrize("inside", [(), ("src",), ("alpha", "beta")], ids=["empty", "a-subfolder", "subfolders"])
def test_evaluate_names_the_missing_submission_yaml(tmp_path: Path, inside: tuple[str, ...]) -> None:
    """A folder without submission.yaml, given directly or as a folder of submissions none of which has one: one
    line naming the folder and the missing file (exit 2), and nothing is run (no results folder)."""
    folder = tmp_path / "mysub"
    folder.mkdir()
    (folder / "agent.py").write_text("print('hi')\n", encoding="utf-8")
    for name in inside:
        (folder / name).mkdir()
        (folder / name / "agent.py").write_text("print('hi')\n", encoding="utf-8")
    out = tmp_path / "results"
    done = run_harness("evaluate", str(folder), "--config", str(CONFIG), "--output", str(out), "--dataset", "dev",
                       env=NO_DOCKER)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.splitlines() == [f"harness evaluate: error: {folder}: no submission.yaml in this folder nor "
                                        "in any folder inside it (a submission folder holds submission.yaml)"]
    assert not out.exists()


def test_a_folder_of_submissions_keeps_the_one_without_submission_yaml_as_its_own_failure(tmp_path: Path) -> None:
    """Among submission folders, one without submission.yaml is that submission's invalid_submission (naming the
    file), not a reason to stop the others."""
    make(tmp_path / "subs", "good")
    (tmp_path / "subs" / "broken").mkdir()
    refs = discover([tmp_path / "subs"])
    assert [r.id for r in refs] == ["broken", "good"]


def test_demo_evaluates_the_templates_under_stable_ids():
    demo = (ROOT / "scripts" / "demo.sh").read_text(encoding="utf-8")
    entries = re.findall(r"\s([\w-]+=agent_templates/\w+)", demo)
    refs = discover([e.replace("agent_templates/", f"{ROOT}/agent_templates/") for e in entries])
    assert [r.id for r in refs] == ["baselines-waitk3", "baselines-local-agreement", "baselines-retranslation"]
    config = load_config(ROOT / "configs" / "demo.yaml", check_files=False)
    for ref in refs:
        sub = load_submission(ref.path)
        assert "test" in config.track(sub.track).datasets and sub.build.dockerfile is not None and sub.command
    baselines = [t.baseline for t in config.tracks if t.baseline]
    assert all(b in {r.id for r in refs} for b in baselines), baselines


def _unsafe(name: str) -> bool:
    """Whether a name holds a control character (ESC, BEL, ...)."""
    return any(not c.isprintable() for c in name)


def test_control_characters_of_a_folder_name_reach_no_folder_name(tmp_path: Path) -> None:
    """A submission folder named with ESC and BEL: `harness evaluate` and `harness validate --no-docker` name their
    results folders, the id and the report by a safe form of it (each control character replaced by `_`)."""
    import json
    import shutil

    import yaml

    subs = tmp_path / "subs"
    folder = subs / "ring\x07\x1b[31mred"
    folder.mkdir(parents=True)
    shutil.copy2(PROBE, folder / "probe_agent.py")
    doc = {"team": "tests", "system": "red", "track": "text-en-es", "build": {"dockerfile": "Dockerfile"},
           "command": "python3 probe_agent.py copy"}
    (folder / "submission.yaml").write_text(yaml.safe_dump(doc), encoding="utf-8")
    (folder / "Dockerfile").write_text("FROM scratch\n", encoding="utf-8")
    validated = tmp_path / "validated"
    done = run_harness("validate", str(folder), "--config", str(CONFIG), "--output", str(validated), "--no-docker",
                       env=NO_DOCKER)
    assert done.returncode == 0, done.stdout + done.stderr
    assert not _unsafe(done.stdout.replace("\n", "")), done.stdout
    assert [p.name for p in validated.iterdir()] == ["ring__[31mred"]
    (folder / "Dockerfile").unlink()  # evaluate reports the submission's own mistake, without Docker
    out = tmp_path / "results"
    done = run_harness("evaluate", str(subs), "--config", str(CONFIG), "--output", str(out), "--dataset", "dev",
                       env=NO_DOCKER)
    assert done.returncode == 0, done.stdout + done.stderr
    assert not [p for p in out.rglob("*") if _unsafe(p.name)]
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert [r["submission"] for r in summary["runs"]] == ["ring__[31mred"]
