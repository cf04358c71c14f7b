"""Resubmissions (issue 35, deliverable 5), through `harness evaluate` and `harness leaderboard` on the bundled UDHR
text (log submissions, no Docker engine): a new version replaces the old one on the board, the old results stay
in the results folder, byte for byte, and the submission's page lists its versions with what changed."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.board_support import harness, text_config, text_submission

pytestmark = pytest.mark.slow


def files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def summary_runs(results: Path) -> dict[str, dict[str, Any]]:
    return {r["submission"]: r for r in json.loads((results / "summary.json").read_text(encoding="utf-8"))["runs"]}


def evaluate(subs: list[Path], config: Path, results: Path, *flags: str) -> None:
    run = harness("evaluate", *map(str, subs), "--config", str(config), "--output", str(results), "--dataset",
                  "test", *flags)
    assert run.returncode == 0, run.stdout + run.stderr


def board_teams(site: Path) -> list[str]:
    html = (site / "index.html").read_text(encoding="utf-8")
    return re.findall(r'<td data-value="[^"]*"><a href="runs/[^"]+" class="team">([^<]+)</a>', html.split(
        "Results per domain")[0])


@pytest.fixture(scope="module")
def campaign(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """First batch: a, b and one system at two latency settings (c3, c5); then a's folder gets a new log and is
    evaluated again with c5 unchanged (--resume), b's new version comes as another folder naming it in `replaces`;
    another team's folder that claims to replace c3 is refused before it runs."""
    root = tmp_path_factory.mktemp("versions")
    config = text_config(root)
    subs, later, results = root / "subs", root / "later", root / "results"
    text_submission(subs / "a", team="ateam", k=2, drop_every=5)
    text_submission(subs / "b", team="bteam", k=2, drop_every=6)
    text_submission(subs / "c3", team="cteam", system="waitk", k=3, drop_every=7)
    text_submission(subs / "c5", team="cteam", system="waitk", k=5, drop_every=7)
    evaluate([subs], config, results)
    first = {"a": files(results / "a" / "test"), "b": files(results / "b"), "c5": files(results / "c5" / "test"),
             "a_manifest": (results / "a" / "manifest.json").read_bytes()}
    text_submission(subs / "a", team="ateam", k=2, drop_every=20)  # the new log of a
    text_submission(later / "b2", team="bteam", k=2, drop_every=30, extra="replaces: b\n")
    text_submission(later / "thief", team="other", k=2, drop_every=9, extra="replaces: c3\n")
    thief = harness("evaluate", str(later / "thief"), "--config", str(config), "--output", str(results), "--dataset",
                    "test", "--resume")
    evaluate([subs / "a", subs / "c5", later / "b2"], config, results, "--resume")
    site = root / "site"
    made = harness("leaderboard", str(results), "--config", str(config), "--output", str(site))
    assert made.returncode == 0, made.stderr
    return {"root": root, "config": config, "results": results, "site": site, "first": first, "thief": thief}


def test_a_re_evaluated_folder_keeps_its_earlier_run_byte_for_byte(campaign: dict[str, Any]) -> None:
    results = campaign["results"]
    versions = json.loads((results / "a" / "versions.json").read_text(encoding="utf-8"))
    assert [(v["version"], v["dataset"], v["folder"], v["status"]) for v in versions] == [
        (1, "test", "versions/1-test", "ok")]
    kept = results / "a" / "versions" / "1-test"
    assert files(kept) == {**campaign["first"]["a"], "manifest.json": campaign["first"]["a_manifest"]}
    old_log = json.loads(campaign["first"]["a"]["run.json"])["manifest"]["log"]["sha256"]
    assert versions[0]["log_sha256"] == old_log and versions[0]["finished_at"] <= versions[0]["replaced_at"]
    now = json.loads((results / "a" / "test" / "run.json").read_text(encoding="utf-8"))
    assert now["manifest"]["log"]["sha256"] != old_log and now["finished_at"]
    new_bleu = summary_runs(results)["a"]["scores"]["BLEU"]["score"]
    old_bleu = json.loads(campaign["first"]["a"]["scores.json"])["BLEU"]["score"]
    assert new_bleu > old_bleu  # fewer words dropped


def test_resuming_an_unchanged_folder_keeps_no_new_version(campaign: dict[str, Any]) -> None:
    results = campaign["results"]
    assert not (results / "b" / "versions.json").exists() and not (results / "c5" / "versions.json").exists()
    assert files(results / "c5" / "test") == campaign["first"]["c5"]  # resumed: the same run, not a new version
    assert files(results / "b") == campaign["first"]["b"]  # the replaced submission's folder is untouched


def test_replaces_supersedes_the_same_teams_submission_only(campaign: dict[str, Any]) -> None:
    runs = summary_runs(campaign["results"])
    assert runs["b"]["superseded_by"] == "b2" and runs["b2"]["replaces"] == "b"
    assert "superseded_by" not in runs["c3"] and "thief" not in runs  # another team cannot replace it
    thief = campaign["thief"]
    assert thief.returncode == 2 and "replaces: 'c3' is another team's submission (team 'cteam', not 'other')" \
        in thief.stderr, thief.stderr
    assert not any("superseded_by" in runs[s] for s in ("a", "b2", "c5"))
    sig = json.loads((campaign["results"] / "significance" / "text-en-es" / "test.json").read_text())
    tested = set(sig["runs"]) | {sig["best"]} | {s for t in sig["adjacent"] for s in t["runs"]}
    assert "b" not in tested and {"a", "b2", "c3", "c5"} <= tested


def test_the_board_shows_the_newest_version_and_every_latency_setting(campaign: dict[str, Any]) -> None:
    teams = board_teams(campaign["site"])
    assert sorted(teams) == ["ateam", "bteam", "cteam", "cteam"]  # b is gone, b2 is there, c3 and c5 stay
    assert not (campaign["site"] / "runs" / "b-test").exists() and (campaign["site"] / "runs" / "b2-test").is_dir()


def test_a_submissions_page_lists_its_versions_with_what_changed(campaign: dict[str, Any]) -> None:
    def versions(page: str) -> list[list[str]]:
        html = (campaign["site"] / "runs" / page / "index.html").read_text(encoding="utf-8")
        table = html.split('<section id="versions">', 1)[1].split("</table>", 1)[0]
        rows = re.findall(r"<tr[^>]*>\s*<th scope=\"row\">(.*?)</tr>", table, re.S)
        return [[re.sub(r"<[^>]+>", " ", c).split() for c in re.split(r"</t[hd]>", row)] for row in rows]

    runs = summary_runs(campaign["results"])
    old = json.loads(campaign["first"]["a"]["scores.json"])["BLEU"]["score"]
    a = versions("a-test")
    assert [r[0][0] for r in a] == ["a", "a"] and a[0][0][1] == "v1" and "board)" in a[1][0]
    delta = runs["a"]["scores"]["BLEU"]["score"] - old
    assert " ".join(a[1][6]) .startswith(f"new log, BLEU {delta:+.2f}, AL ")
    assert a[0][2][0] == "log" and a[1][2][0] == "log" and a[0][2][1] != a[1][2][1]
    b2 = versions("b2-test")
    assert [r[0][0] for r in b2] == ["b", "b2"]
    delta = runs["b2"]["scores"]["BLEU"]["score"] - runs["b"]["scores"]["BLEU"]["score"]
    assert " ".join(b2[1][6]).startswith(f"new log, BLEU {delta:+.2f}")
    page = (campaign["site"] / "runs" / "c5-test" / "index.html").read_text(encoding="utf-8")
    assert 'id="versions"' not in page  # a latency setting is no version of another


def test_overwrite_keeps_the_run_it_redoes(tmp_path: Path) -> None:
    config = text_config(tmp_path)
    sub = text_submission(tmp_path / "subs" / "one", team="oneteam", k=3)
    results = tmp_path / "results"
    evaluate([sub], config, results)
    before = files(results / "one" / "test")
    evaluate([sub], config, results, "--overwrite")
    versions = json.loads((results / "one" / "versions.json").read_text(encoding="utf-8"))
    assert len(versions) == 1 and versions[0]["log_sha256"] == json.loads(before["run.json"])["manifest"]["log"][
        "sha256"]
    kept = files(results / "one" / "versions" / "1-test")
    assert {k: v for k, v in kept.items() if k != "manifest.json"} == before


def test_replaces_must_be_a_submission_id(tmp_path: Path) -> None:
    config = text_config(tmp_path)
    sub = text_submission(tmp_path / "subs" / "bad", team="badteam", extra="replaces: ../a\n")
    out = harness("check", str(sub), "--config", str(config))
    assert out.returncode != 0
    assert "submission.yaml: replaces: '../a' must be letters, digits, '.', '_' or '-'" in out.stdout + out.stderr
