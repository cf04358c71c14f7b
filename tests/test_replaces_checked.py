"""`replaces: OLD-ID` names an earlier submission of the same team and track, or it is an error naming the id and
why (unknown id, another team, another track), wherever the set of submissions is known: `harness check-config
CONFIG SUBMISSION...`, `harness evaluate` (before any run, exit 2) and `harness leaderboard` (summary.json).
`harness check` of one folder alone cannot know the other ids and says nothing about them."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from harness.errors import EXIT_FAILED, EXIT_OK, EXIT_USAGE
from tests.board_support import TRACK, harness, text_config, text_submission

OTHER_TRACK = "text-en-es-2"


def _config(root: Path) -> Path:
    """The board tests' text track, and a copy of it under another name."""
    path = text_config(root)
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    doc["tracks"].append({**doc["tracks"][0], "name": OTHER_TRACK})
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def _batch(root: Path) -> list[Path]:
    """a, b (two teams), c; and three new versions whose `replaces:` is wrong: a misspelt id, another team's
    submission, a submission of another track."""
    a = text_submission(root / "a", team="ateam")
    b = text_submission(root / "b", team="bteam")
    c = text_submission(root / "c", team="cteam")
    typo = text_submission(root / "a2", team="ateam", extra="replaces: aa\n")
    theirs = text_submission(root / "b2", team="bteam", extra="replaces: a\n")
    elsewhere = text_submission(root / "c2", team="cteam", extra="replaces: c\n")
    yml = elsewhere / "submission.yaml"
    yml.write_text(yml.read_text(encoding="utf-8").replace(f"track: {TRACK}\n", f"track: {OTHER_TRACK}\n"),
                   encoding="utf-8")
    return [a, b, c, typo, theirs, elsewhere]


def _lines(root: Path) -> list[str]:
    """What is wrong with the `replaces:` of `_batch`'s three new versions, one line each (the start of it)."""
    return [f"{root / 'a2' / 'submission.yaml'}: replaces: unknown id 'aa': no submission has it; did you mean 'a'?",
            f"{root / 'b2' / 'submission.yaml'}: replaces: 'a' is another team's submission (team 'ateam', not "
            "'bteam')",
            f"{root / 'c2' / 'submission.yaml'}: replaces: 'c' is a submission of another track ({TRACK!r}, not "
            f"{OTHER_TRACK!r})"]


def test_check_config_names_every_wrong_replaces(tmp_path: Path) -> None:
    config = _config(tmp_path)
    subs = _batch(tmp_path / "subs")
    done = harness("check-config", str(config), *map(str, subs))
    assert done.returncode == EXIT_FAILED, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    for text in _lines(tmp_path / "subs"):
        assert sum(line.startswith(text) for line in lines) == 1, (text, done.stdout)
    assert lines[-1] == f"{config}: 3 problems", done.stdout


def test_check_config_accepts_a_new_version_of_the_teams_own_submission(tmp_path: Path) -> None:
    config = _config(tmp_path)
    old = text_submission(tmp_path / "subs" / "a", team="ateam")
    new = text_submission(tmp_path / "subs" / "a2", team="ateam", extra="replaces: a\n")
    done = harness("check-config", str(config), str(old), str(new))
    assert done.returncode == EXIT_OK, done.stdout + done.stderr


def test_check_of_one_folder_says_nothing_of_an_id_it_cannot_know(tmp_path: Path) -> None:
    config = _config(tmp_path)
    sub = text_submission(tmp_path / "subs" / "a2", team="ateam", extra="replaces: aa\n")
    done = harness("check", str(sub), "--config", str(config))
    assert done.returncode == EXIT_OK, done.stdout + done.stderr
    assert "replaces" not in done.stdout + done.stderr


def test_evaluate_refuses_a_wrong_replaces_before_any_run(tmp_path: Path) -> None:
    config = _config(tmp_path)
    subs = _batch(tmp_path / "subs")
    results = tmp_path / "results"
    done = harness("evaluate", *map(str, subs), "--config", str(config), "--output", str(results), "--dataset",
                   "test")
    assert done.returncode == EXIT_USAGE, done.stdout + done.stderr
    first = _lines(tmp_path / "subs")[0]
    assert done.stderr.startswith(f"harness evaluate: error: {first}") and done.stderr.count("\n") == 1, done.stderr
    assert "(and 2 more: `harness check-config" in done.stderr, done.stderr
    assert not results.exists() or not any(results.iterdir()), sorted(results.rglob("*"))


def test_evaluate_knows_the_ids_of_the_results_folder_it_resumes(tmp_path: Path) -> None:
    """A new version evaluated into the results folder of the old one (not named again): the old id is known there,
    and a misspelt one is still refused."""
    config = _config(tmp_path)
    results = tmp_path / "results"
    old = text_submission(tmp_path / "subs" / "a", team="ateam")
    first = harness("evaluate", str(old), "--config", str(config), "--output", str(results), "--dataset", "test")
    assert first.returncode == EXIT_OK, first.stdout + first.stderr
    typo = text_submission(tmp_path / "later" / "a3", team="ateam", extra="replaces: aa\n")
    refused = harness("evaluate", str(typo), "--config", str(config), "--output", str(results), "--dataset", "test",
                      "--resume")
    assert refused.returncode == EXIT_USAGE and "replaces: unknown id 'aa'" in refused.stderr, refused.stderr
    assert not (results / "a3").exists()
    new = text_submission(tmp_path / "later" / "a2", team="ateam", extra="replaces: a\n")
    done = harness("evaluate", str(new), "--config", str(config), "--output", str(results), "--dataset", "test",
                   "--resume")
    assert done.returncode == EXIT_OK, done.stdout + done.stderr


def test_leaderboard_refuses_a_results_folder_with_a_wrong_replaces(tmp_path: Path) -> None:
    """A results folder whose summary.json holds a claim no check saw (written by hand, or by an older harness)."""
    results = tmp_path / "results"
    results.mkdir()
    line = {"track": TRACK, "system": "sys", "kind": "primary", "dataset": "test", "status": "ok", "partial": False,
            "reason": None, "scores": {"BLEU": {"score": 40.0}, "AL": {"score": 2.0}}}
    runs = [{**line, "submission": "a", "team": "ateam"},
            {**line, "submission": "a2", "team": "ateam", "replaces": "aa"},
            {**line, "submission": "b2", "team": "bteam", "replaces": "a"}]
    summary = results / "summary.json"
    summary.write_text(json.dumps({"task": "t", "harness_version": "0", "config_sha256": "", "runs": runs,
                                   "generated_at": "2025-01-01T00:00:00+00:00"}), encoding="utf-8")
    done = harness("leaderboard", str(results), "--output", str(tmp_path / "site"))
    assert done.returncode == EXIT_USAGE, done.stdout + done.stderr
    assert done.stderr == (f"harness leaderboard: error: {summary}: runs[1].replaces: unknown id 'aa': no "
                           "submission has it; did you mean 'a'? (and 1 more)\n"), done.stderr
    assert not (tmp_path / "site" / "index.html").exists()
