"""The campaign portal on PostgreSQL end to end: tokens issued by `harness portal token --db postgresql://...`, a
real `harness portal --db postgresql://...` serving on loopback, a team's log submission sent with `harness submit
--wait` and scored; the state is in PostgreSQL (its rows read there), and no SQLite file is made."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.portal_support import PortalProcess, harness, log_submission, make_campaign

pytestmark = [pytest.mark.slow, pytest.mark.postgresql]


def test_a_portal_on_postgresql_takes_and_scores_a_submission(postgresql_url: str, tmp_path: Path) -> None:
    import psycopg  # here: where it is missing, the marker skips the test instead of failing its collection

    campaign = make_campaign(tmp_path / "campaign")
    token = campaign.token("alpha", "--db", postgresql_url)
    server = PortalProcess(campaign, "--db", postgresql_url)
    try:
        proc = subprocess.run(harness("submit", str(log_submission(tmp_path / "sub")), "--portal", server.url,
                                      "--wait"), capture_output=True, text=True, timeout=900,
                              env={**os.environ, "HARNESS_PORTAL_TOKEN": token})
    finally:
        server.stop()
    assert proc.returncode == 0, proc.stdout + proc.stderr
    sub_id = proc.stdout.splitlines()[0].split()[3]
    assert "dev: BLEU " in proc.stdout
    with psycopg.connect(postgresql_url) as db:
        rows = db.execute("SELECT s.team, s.phase, j.dataset, j.state, j.done, j.total FROM jobs j "
                          "JOIN submissions s ON s.id = j.submission WHERE s.id = %s", (sub_id,)).fetchall()
        assert rows == [("alpha", "dev", "dev", "scored", rows[0][4], rows[0][4])] and rows[0][4] > 0
        actions = {r[0] for r in db.execute("SELECT action FROM audit WHERE who = 'alpha'")}
        assert "submit" in actions
        assert db.execute("SELECT count(*) FROM tokens WHERE owner = 'alpha'").fetchone() == (1,)
    assert not (campaign.state / "portal.sqlite3").exists()
    assert (campaign.state / "submissions" / sub_id).is_dir()  # the files stay in STATE
