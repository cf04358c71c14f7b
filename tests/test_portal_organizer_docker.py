"""The organizer's side of the portal with a Docker submission: every admin URL is 404 to a team; the test phase
runs on each team's primary and its scores stay hidden (API and /board) until the reveal; a re-queued job runs
again on the same image and keeps the earlier run under versions/; a withdrawal keeps everything and its reason;
a frozen phase takes no more submissions."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import requests

from tests.evaluate_data.support import make_submission
from tests.portal_support import PortalProcess, api, harness, make_campaign, wait_until_ended

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def _post(url: str, token: str, path: str, body: dict | None = None) -> requests.Response:
    return requests.post(f"{url}/api/v1/{path}", json=body or {}, headers={"Authorization": f"Bearer {token}"},
                         timeout=3600)


def _submit(url: str, token: str, folder: Path) -> str:
    proc = subprocess.run(harness("submit", str(folder), "--portal", url), capture_output=True, text=True,
                          timeout=900, env={**os.environ, "HARNESS_PORTAL_TOKEN": token})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout.splitlines()[0].split()[3]


def test_the_organizer_runs_the_test_phase_reveals_requeues_withdraws_and_freezes(tmp_path: Path) -> None:
    campaign = make_campaign(tmp_path / "campaign")
    alpha, boss = campaign.token("alpha"), campaign.token("organizer")
    copier = make_submission(tmp_path / "subs", "copier", "python3 /app/probe_agent.py copy", team="alpha")
    portal = PortalProcess(campaign)
    try:
        url = portal.url
        for path in ("admin/audit", "admin/phases/test/run", "admin/primaries"):
            answer = requests.request("GET" if path == "admin/audit" else "POST", f"{url}/api/v1/{path}",
                                      headers={"Authorization": f"Bearer {alpha}"}, timeout=60)
            assert answer.status_code == 404, (path, answer.text)
        sub_id = _submit(url, alpha, copier)
        dev = wait_until_ended(url, alpha, sub_id)["jobs"][0]
        assert dev["state"] == "scored" and dev["scores"]["BLEU"] > 0, dev

        assert _post(url, boss, "admin/primaries", {"submission": sub_id}).json()["primary"] == sub_id
        assert _post(url, boss, "admin/phases/test/run").json()["queued"] == {sub_id: 1}
        jobs = {j["dataset"]: j for j in wait_until_ended(url, alpha, sub_id)["jobs"]}
        assert jobs["test"]["state"] == "scored" and "scores" not in jobs["test"]  # hidden until the reveal
        assert requests.get(f"{url}/board/", timeout=60).status_code == 404
        results = json.loads((campaign.state / "results" / "summary.json").read_text(encoding="utf-8"))
        assert {(r["submission"], r["dataset"], r["status"]) for r in results["runs"]} == {
            (sub_id, "dev", "ok"), (sub_id, "test", "ok")}

        revealed = _post(url, boss, "admin/phases/test/reveal")
        assert revealed.status_code == 200, revealed.text
        board = requests.get(f"{url}/board/", timeout=60)
        assert board.status_code == 200 and "copier" in board.text
        published = {r["dataset"] for f in (campaign.state / "site").rglob("*summary*.json")
                     for r in json.loads(f.read_text(encoding="utf-8")).get("runs", [])}
        assert published == {"test"}  # dev's results are each team's own (results: team): not on the public board
        jobs = {j["dataset"]: j for j in api(url, alpha, f"submissions/{sub_id}").json()["jobs"]}
        assert jobs["test"]["scores"]["BLEU"] > 0

        again = _post(url, boss, f"admin/jobs/{dev['id']}/requeue")
        assert again.status_code == 200, again.text
        redone = next(j for j in wait_until_ended(url, alpha, sub_id)["jobs"] if j["dataset"] == "dev")
        assert redone["state"] == "scored" and redone["attempts"] == 2 and redone["scores"] == dev["scores"]
        versions = json.loads((campaign.state / "results" / sub_id / "versions.json").read_text(encoding="utf-8"))
        assert [v["dataset"] for v in versions] == ["dev"]  # the first run is kept, whole
        manifest = json.loads((campaign.state / "results" / sub_id / "manifest.json").read_text(encoding="utf-8"))
        kept = json.loads((campaign.state / "results" / sub_id / versions[0]["folder"] / "manifest.json")
                          .read_text(encoding="utf-8"))
        assert manifest["runs"]["dev"]["image_digest"] == kept["runs"]["dev"]["image_digest"]  # the same image

        refused = _post(url, boss, f"admin/submissions/{sub_id}/withdraw", {})
        assert refused.status_code == 400 and "needs a reason" in refused.json()["error"]
        gone = _post(url, boss, f"admin/submissions/{sub_id}/withdraw", {"reason": "late rule breach",
                                                                          "disqualify": True}).json()
        assert gone.get("withdrawn") == "late rule breach", gone
        assert gone["withdrawn"] == "late rule breach" and gone["disqualified"] is True
        assert {j["state"] for j in gone["jobs"]} == {"withdrawn"}
        assert (campaign.state / "results" / sub_id / "dev" / "scores.json").is_file()  # nothing deleted
        audit = _get_audit(url, boss)
        assert ("organizer", "disqualify", f"{sub_id}: late rule breach") in audit
        assert ("organizer", "job.queued", f"{dev['id']}: re-queued by the organizer") in audit

        assert _post(url, boss, "admin/phases/dev/freeze").status_code == 200
        frozen = subprocess.run(harness("submit", str(copier), "--portal", url), capture_output=True, text=True,
                                timeout=900, env={**os.environ, "HARNESS_PORTAL_TOKEN": alpha})
        assert frozen.returncode == 2
        assert "phase dev is frozen by the organizer: it takes no more submissions" in frozen.stderr
    finally:
        portal.stop()


def _get_audit(url: str, token: str) -> list[tuple[str, str, str]]:
    entries = api(url, token, "admin/audit").json()["audit"]
    return [(e["who"], e["action"], e["detail"]) for e in entries]
