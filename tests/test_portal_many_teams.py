"""Twenty teams hand in at once: a real `harness portal` (tokens, a campaign of 20 teams with a portal phase), 20
threads each uploading a log submission through the tus client and asking which submission it became. Every
upload becomes its own team's submission, each team sees only its own, and the queue scores them all."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.portal.service import open_store
from harness.portal.upload_client import pack_folder, upload
from tests.portal_support import Campaign, PortalProcess, api, log_submission, make_campaign

pytestmark = [pytest.mark.slow]

TEAMS = [f"team{i:02d}" for i in range(20)]
ENDED = ("scored", "failed", "cancelled", "withdrawn")


def many_teams(root: Path) -> Campaign:
    """tests/portal_support's campaign with 20 teams, one run of each team at work at once (`runs_per_team`)."""
    campaign = make_campaign(root)
    campaign.teams.write_text("teams:\n" + "".join(f"  - {{id: {t}, name: Team {t}, contacts: [{t}@example.org]}}\n"
                                                   for t in TEAMS), encoding="utf-8")
    campaign.config.write_text(campaign.config.read_text(encoding="utf-8").replace("runs_per_team: 2",
                                                                                   "runs_per_team: 1"),
                               encoding="utf-8")
    return campaign


@pytest.fixture
def portal(tmp_path: Path) -> Iterator[tuple[PortalProcess, dict[str, str]]]:
    campaign = many_teams(tmp_path / "campaign")
    store = open_store(campaign.state, campaign.teams)
    try:
        tokens = {t: store.issue_token(t) for t in [*TEAMS, "organizer"]}
    finally:
        store.close()
    server = PortalProcess(campaign, "--workers", "10")  # two evaluations of ten submissions each
    try:
        yield server, tokens
    finally:
        server.stop()


def test_twenty_teams_submitting_at_once_each_get_their_own_submission_scored(portal, tmp_path: Path) -> None:
    server, tokens = portal
    archives = {t: pack_folder(log_submission(tmp_path / t, team=t), tmp_path / f"{t}.tar.gz") for t in TEAMS}
    together = threading.Barrier(len(TEAMS))
    made: dict[str, dict] = {}
    problems: list[str] = []

    def hand_in(team: str) -> None:
        try:
            together.wait(timeout=60)
            location = upload(f"{server.url}/api/v1/uploads", archives[team], tokens[team],
                              {"filename": archives[team].name})
            answer = api(server.url, tokens[team], f"uploads/{location.rstrip('/').rpartition('/')[2]}/submission")
            assert answer.status_code == 200, answer.text
            made[team] = answer.json()
        except BaseException as exc:  # noqa: BLE001 - reported by the test's own thread
            problems.append(f"{team}: {type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=hand_in, args=(t,)) for t in TEAMS]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    assert problems == []
    assert sorted(made) == TEAMS
    ids = {t: sub["id"] for t, sub in made.items()}
    assert len(set(ids.values())) == len(TEAMS)
    assert all(sub["team"] == t and sub["phase"] == "dev" for t, sub in made.items())

    for team in TEAMS:  # each team sees its own submission, and no other
        seen = api(server.url, tokens[team], "submissions").json()["submissions"]
        assert [s["id"] for s in seen] == [ids[team]], team
        other = ids[TEAMS[(TEAMS.index(team) + 1) % len(TEAMS)]]
        assert api(server.url, tokens[team], f"submissions/{other}").status_code == 404

    deadline = time.monotonic() + 900  # only bounds a hung queue: the loop ends when every job has ended
    while True:
        subs = api(server.url, tokens["organizer"], "submissions").json()["submissions"]
        jobs = [j for s in subs for j in s["jobs"]]
        if len(subs) == len(TEAMS) and all(j["state"] in ENDED for j in jobs):
            break
        assert time.monotonic() < deadline, f"not every job ended: {[j['state'] for j in jobs]}"
        time.sleep(0.5)
    assert sorted(s["id"] for s in subs) == sorted(ids.values())
    assert [(s["team"], j["dataset"], j["state"]) for s in subs for j in s["jobs"] if j["state"] != "scored"] == []
    assert len(jobs) == len(TEAMS) and all(isinstance(j["scores"]["BLEU"], float) for j in jobs)
