"""The campaign portal end to end, with real parts: `harness portal` serving on loopback, tokens from `harness
portal token`, `harness submit` uploading a log submission over tus, the queue evaluating it with `harness
evaluate` into STATE/results (a results folder every command reads), and per-object authorization."""

from __future__ import annotations

import io
import json
import os
import subprocess
import tarfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from harness.errors import HarnessError
from harness.portal.upload_client import upload
from tests.portal_support import (
    ROOT,
    Campaign,
    PortalProcess,
    api,
    harness,
    log_submission,
    make_campaign,
    wait_until_ended,
)

pytestmark = [pytest.mark.slow]


@pytest.fixture(scope="module")
def portal(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Campaign, PortalProcess, dict[str, str]]]:
    campaign = make_campaign(tmp_path_factory.mktemp("portal"))
    tokens = {team: campaign.token(team) for team in ("alpha", "beta", "organizer")}
    server = PortalProcess(campaign)
    try:
        yield campaign, server, tokens
    finally:
        server.stop()


def _submit(url: str, token: str, folder: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HARNESS_PORTAL_TOKEN": token}
    return subprocess.run(harness("submit", str(folder), "--portal", url, *extra), capture_output=True, text=True,
                          timeout=900, env=env)


def test_a_team_submits_waits_and_reads_its_scores(portal, tmp_path: Path) -> None:
    campaign, server, tokens = portal
    proc = _submit(server.url, tokens["alpha"], log_submission(tmp_path / "sub"), "--wait")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    first = proc.stdout.splitlines()[0]
    assert first.startswith("harness submit: submission alpha-") and "(phase dev, track text-en-es)" in first
    assert "counts against per day 1 of 2, resets " in proc.stdout and "own failures 0 of 2" in proc.stdout
    bleu = json.loads((ROOT / "examples" / "runs" / "udhr-dev-waitk3" / "scores.json").read_text())["BLEU"]["score"]
    assert f"dev: BLEU {bleu:.2f}" in proc.stdout  # the bundled run's BLEU, as `harness score` gives it
    sub_id = first.split()[3]
    summary = json.loads((campaign.state / "results" / "summary.json").read_text(encoding="utf-8"))
    run = next(r for r in summary["runs"] if r["submission"] == sub_id)
    assert run["status"] == "ok" and run["dataset"] == "dev"
    site = subprocess.run(harness("leaderboard", str(campaign.state / "results"), "--output", str(tmp_path / "site")),
                          capture_output=True, text=True, timeout=600)
    assert site.returncode == 0 and (tmp_path / "site" / "index.html").is_file(), site.stderr


def test_another_teams_submission_is_404_everywhere(portal, tmp_path: Path) -> None:
    campaign, server, tokens = portal
    proc = _submit(server.url, tokens["alpha"], log_submission(tmp_path / "sub", system="private"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    sub_id = proc.stdout.splitlines()[0].split()[3]
    for path, method in ((f"submissions/{sub_id}", "GET"), (f"submissions/{sub_id}/logs", "GET"),
                         (f"submissions/{sub_id}/cancel", "POST")):
        answer = api(server.url, tokens["beta"], path, method)
        assert answer.status_code == 404, (path, answer.text)
        assert answer.json() == {"error": f"no submission {sub_id!r}"}
        assert api(server.url, tokens["alpha"], path, method).status_code in (200, 409)  # its own team's
    assert all(s["team"] == "beta" for s in api(server.url, tokens["beta"], "submissions").json()["submissions"])
    assert api(server.url, tokens["organizer"], f"submissions/{sub_id}").status_code == 200


@pytest.mark.parametrize(("how", "line"), [
    ("unknown", "unknown token: check it, or ask the organizer for one (`harness portal token TEAM`)"),
    ("revoked", "revoked token: the organizer revoked it; ask for a new one"),
    ("expired", "expired token: ask the organizer for a new one (`harness portal token TEAM --rotate`)"),
])
def test_a_refused_token_gets_one_line_saying_which(portal, how: str, line: str) -> None:
    campaign, server, _ = portal
    if how == "unknown":
        token = "hpt_" + "x" * 43
    elif how == "revoked":
        token = campaign.token("beta")
        assert "revoked" in subprocess.run(harness("portal", "token", "beta", "--revoke", "--state",
                                                   str(campaign.state)), capture_output=True, text=True).stdout
    else:
        token = campaign.token("beta", "--ttl-days", "0")
    answer = api(server.url, token, "me")
    assert answer.status_code == 401 and answer.json() == {"error": line}


def _tar(members: list[tuple[str, bytes]]) -> bytes:
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w:gz") as tar:
        for name, body in members:
            info = tarfile.TarInfo(name)
            info.size = len(body)
            tar.addfile(info, io.BytesIO(body))
    return data.getvalue()


def test_a_hostile_archive_is_refused_in_one_line_and_nothing_is_kept(portal, tmp_path: Path) -> None:
    campaign, server, _ = portal
    token = campaign.token("alpha", "--rotate")
    archive = tmp_path / "evil.tar.gz"
    archive.write_bytes(_tar([("submission.yaml", b"team: alpha\n"), ("../escape.txt", b"x")]))
    before = sorted(p.name for p in (campaign.state / "submissions").iterdir())
    with pytest.raises(HarnessError) as refused:
        upload(f"{server.url}/api/v1/uploads", archive, token, {"filename": archive.name})
    assert "(422)" in str(refused.value) and "../escape.txt" in str(refused.value)
    assert str(campaign.state) not in str(refused.value)  # no folder of the organizer's in the team's line
    assert sorted(p.name for p in (campaign.state / "submissions").iterdir()) == before
    assert not (campaign.state / "escape.txt").exists() and not (campaign.state / "submissions" / "escape.txt").exists()


def test_a_phase_that_is_not_open_and_a_reached_limit_are_one_line(tmp_path: Path) -> None:
    campaign = make_campaign(tmp_path / "c")
    config = campaign.config.read_text(encoding="utf-8").replace("per_day: 2", "per_day: 1")
    campaign.config.write_text(config, encoding="utf-8")
    token = campaign.token("alpha")
    server = PortalProcess(campaign)
    try:
        ok = _submit(server.url, token, log_submission(tmp_path / "one"))
        assert ok.returncode == 0, ok.stderr
        again = _submit(server.url, token, log_submission(tmp_path / "two"))
        assert again.returncode == 2
        assert again.stderr.strip() == "harness submit: error: phase dev: limit reached: per day 1 of 1"
        archive = tmp_path / "direct.tar.gz"  # past the command's own check: the portal refuses it as well
        subprocess.run(["tar", "-czf", str(archive), "-C", str(tmp_path / "two"), "."], check=True)
        with pytest.raises(HarnessError) as refused:
            upload(f"{server.url}/api/v1/uploads", archive, token, {"filename": archive.name})
        assert "phase dev: limit reached: per day: 1 of 1, resets " in str(refused.value)
    finally:
        server.stop()


def test_a_baseline_teams_submission_takes_the_tracks_baseline_id(portal, tmp_path: Path) -> None:
    campaign, server, _ = portal
    token = campaign.token("organizers")
    proc = _submit(server.url, token, log_submission(tmp_path / "b", team="organizers", system="waitk3"), "--wait")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[0].startswith("harness submit: submission baselines-waitk3 ")  # configs/demo.yaml
    assert api(server.url, token, "submissions/baselines-waitk3").json()["baseline"] is True
    summary = json.loads((campaign.state / "results" / "summary.json").read_text(encoding="utf-8"))
    assert [r["baseline"] for r in summary["runs"] if r["submission"] == "baselines-waitk3"] == [True]


def test_a_phase_with_public_results_is_on_the_board_after_each_evaluation(tmp_path: Path) -> None:
    campaign = make_campaign(tmp_path / "c")
    campaign.config.write_text(campaign.config.read_text(encoding="utf-8").replace("results: team", "results: public"),
                               encoding="utf-8")
    token = campaign.token("beta")
    server = PortalProcess(campaign)
    try:
        assert requests.get(f"{server.url}/board/", timeout=60).status_code == 404  # nothing published yet
        proc = _submit(server.url, token, log_submission(tmp_path / "s", team="beta", system="public-system"),
                       "--wait")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        for _ in range(600):  # the board is rendered once the evaluation has ended (bounded)
            board = requests.get(f"{server.url}/board/", timeout=60)
            if board.status_code == 200:
                break
            time.sleep(0.2)
        assert board.status_code == 200 and "public-system" in board.text
    finally:
        server.stop()


def test_a_failure_is_its_class_and_reason_without_the_organizers_folders(portal, tmp_path: Path) -> None:
    campaign, server, tokens = portal
    folder = log_submission(tmp_path / "short", team="beta", system="short-log")
    lines = (folder / "dev.log").read_text(encoding="utf-8").splitlines()
    (folder / "dev.log").write_text("\n".join(lines[:-3]) + "\n", encoding="utf-8")  # 37 of 40 instances
    archive = tmp_path / "short.tar.gz"
    subprocess.run(["tar", "-czf", str(archive), "-C", str(folder), "."], check=True)  # past `harness check`
    beta = campaign.token("beta")  # its own: another test revokes beta's tokens
    url = upload(f"{server.url}/api/v1/uploads", archive, beta, {"filename": archive.name})
    sub = api(server.url, beta, f"uploads/{url.rsplit('/', 1)[-1]}/submission").json()
    job = wait_until_ended(server.url, beta, sub["id"])["jobs"][0]
    assert (job["state"], job["failure"]) == ("failed", "invalid_submission")
    assert "37 instances" in job["reason"] and "40" in job["reason"]
    answer = api(server.url, beta, f"submissions/{sub['id']}").text
    assert str(ROOT / "data") not in answer and str(campaign.root) not in answer, answer
    assert str(ROOT / "data") in api(server.url, tokens["organizer"], f"submissions/{sub['id']}").text
