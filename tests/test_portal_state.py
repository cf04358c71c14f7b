"""The portal's state without a server: the database's migrations and lifecycle, what a submission is charged
to, the queue's fairness, the phases' one-line errors, tokens and the failed-sign-in guard."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import pytest

from harness.errors import ConfigError, HarnessError
from harness.portal.app import SignInGuard
from harness.portal.fairness import pick_fair
from harness.portal.lifecycle import JobState
from harness.portal.migrations import MIGRATIONS
from harness.portal.phases import load_portal_settings, next_reset
from harness.portal.store import Store
from harness.portal.teams import Team
from harness.portal.tokens import bearer, token_hash

TEAMS = (Team("alpha", "Alpha"), Team("beta", "Beta"), Team("gamma", "Gamma"))


@pytest.fixture
def store(tmp_path: Path) -> Store:
    s = Store(tmp_path / "portal.sqlite3")
    s.sync_teams(TEAMS)
    return s


def test_a_new_database_has_every_migration_and_reopening_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "p.sqlite3"
    first = Store(path)
    assert first.schema_version() == len(MIGRATIONS)
    first.sync_teams(TEAMS)
    first.close()
    again = Store(path)
    assert again.schema_version() == len(MIGRATIONS) and again.team_ids() == ["alpha", "beta", "gamma"]
    assert sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_database_of_a_newer_harness_is_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "p.sqlite3"
    Store(path).close()
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 1}")
    db.close()
    with pytest.raises(HarnessError, match=rf"schema version {len(MIGRATIONS) + 1} is newer than this harness"):
        Store(path)


def test_an_old_database_is_migrated_in_place(tmp_path: Path) -> None:
    """A database at version 0 (an empty file) gets every step; a half-applied step is rolled back whole."""
    path = tmp_path / "p.sqlite3"
    sqlite3.connect(path).close()
    store = Store(path)
    assert store.schema_version() == len(MIGRATIONS)
    tables = {r[0] for r in sqlite3.connect(path).execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"teams", "tokens", "submissions", "jobs", "uploads", "audit"} <= tables


def test_tokens_are_kept_hashed_and_refused_with_their_reason(store: Store, tmp_path: Path) -> None:
    token = store.issue_token("alpha")
    raw = (tmp_path / "portal.sqlite3").read_bytes() + (tmp_path / "portal.sqlite3-wal").read_bytes()
    assert token.encode() not in raw and token_hash(token).encode() in raw
    assert store.check_token(token).owner == "alpha"
    rotated = store.issue_token("alpha", rotate=True)
    assert store.check_token(token).refused == "revoked" and store.check_token(rotated).owner == "alpha"
    assert store.check_token(store.issue_token("beta", ttl_s=0)).refused == "expired"
    assert store.check_token("hpt_nothing").refused == "unknown"
    with pytest.raises(HarnessError, match="no team 'delta' in the portal"):
        store.issue_token("delta")
    assert bearer("Bearer  abc ") == "abc" and bearer("Basic abc") is None and bearer(None) is None


def test_a_job_moves_only_as_the_lifecycle_allows_and_restarts_queue_what_ran(store: Store) -> None:
    sub = store.add_submission("alpha", "dev", "t", "s", "/x", "0" * 64, ("dev", "test"))
    dev, test = store.jobs(sub.id)
    assert (dev.state, test.state) == (JobState.QUEUED, JobState.QUEUED) and dev.seq < test.seq
    store.move(dev.id, JobState.BUILDING)
    store.move(dev.id, JobState.RUNNING)
    with pytest.raises(HarnessError, match="is running and cannot become building"):
        store.move(dev.id, JobState.BUILDING)
    assert store.requeue_interrupted() == [dev.id]
    again = store.job(dev.id)
    assert again is not None and again.state == JobState.QUEUED and again.seq == dev.seq and again.attempts == 1
    assert ("portal", "job.requeue") in [(who, what) for _, who, what, _ in store.audit_log()]


def _finish(store: Store, job_id: str, state: JobState, failure: str | None = None) -> None:
    store.move(job_id, JobState.BUILDING)
    store.move(job_id, state, failure=failure, reason=failure)


def test_only_the_teams_own_failures_count_and_against_their_own_cap(store: Store) -> None:
    outcomes = [(JobState.SCORED, None), (JobState.FAILED, "crash"), (JobState.FAILED, "infra_error"),
                (JobState.CANCELLED, None)]
    for state, failure in outcomes:
        sub = store.add_submission("alpha", "dev", "t", "s", "/x", "0" * 64, ("dev",))
        job = store.jobs(sub.id)[0]
        if state == JobState.CANCELLED:
            store.move(job.id, JobState.CANCELLED, who="alpha")
        else:
            _finish(store, job.id, state, failure)
    store.add_submission("alpha", "dev", "t", "s", "/x", "0" * 64, ("dev",))  # still queued: counts
    store.add_submission("alpha", "test", "t", "s", "/x", "0" * 64, ("test",))  # another phase
    assert sorted(c for _, c in store.charges("alpha", "dev")) == ["failure", "quota", "quota"]


@dataclass(frozen=True)
class Q:
    id: str
    team: str
    submission: str
    seq: int


def test_fairness_round_robin_across_teams_fifo_within_and_a_cap_per_team() -> None:
    burst = [Q(f"a{i}", "alpha", f"sa{i}", i) for i in range(50)]  # one team's burst first
    late = [Q("b0", "beta", "sb0", 100), Q("c0", "gamma", "sc0", 101), Q("b1", "beta", "sb1", 102)]
    chosen = pick_fair(burst + late, {}, set(), per_team=2, slots=5, served={})
    assert [q.id for q in chosen] == ["a0", "b0", "c0", "a1", "b1"]  # the burst does not block the others
    served = {"alpha": 3, "beta": 1, "gamma": 2}  # beta waited longest
    assert [q.id for q in pick_fair(burst + late, {}, set(), 2, 3, served)] == ["b0", "c0", "a0"]
    assert [q.id for q in pick_fair(burst + late, {"alpha": 2}, set(), 2, 3, {})] == ["b0", "c0", "b1"]
    two_of_one = [Q("x", "alpha", "same", 1), Q("y", "alpha", "same", 2), Q("z", "alpha", "other", 3)]
    assert [q.id for q in pick_fair(two_of_one, {}, set(), 5, 5, {})] == ["x", "z"]  # one job of a submission
    assert pick_fair(two_of_one, {}, {"same", "other"}, 5, 5, {}) == []


def _config(tmp_path: Path, portal: str) -> Path:
    path = tmp_path / "task.yaml"
    path.write_text("task: t\ntracks: []\n" + portal, encoding="utf-8")
    return path


@pytest.mark.parametrize(("portal", "line"), [
    ("", "portal: the task config needs a `portal:` section with its phases for `harness portal`"),
    ("portal: {phases: []}\n", "portal.phases: a list of phases is required"),
    ("portal: {phases: [{name: dev, datasets: [nope], opens: 2026-01-01T00:00:00Z, closes: 2026-02-01T00:00:00Z}]}\n",
     "portal.phases[0].datasets: no track has a dataset 'nope' (datasets: dev, test)"),
    ("portal: {phases: [{name: dev, datasets: [dev], opens: '2026-01-01T00:00:00+02:00', "
     "closes: 2026-02-01T00:00:00Z}]}\n",
     "portal.phases[0].opens: 2026-01-01T00:00:00+02:00 must be in UTC (end it with Z)"),
    ("portal: {phases: [{name: dev, datasets: [dev], opens: 2026-02-01T00:00:00Z, closes: 2026-01-01T00:00:00Z}]}\n",
     "portal.phases[0].closes: must be after opens"),
    ("portal: {phases: [{name: dev, datasets: [dev], opens: 2026-01-01T00:00:00Z, closes: 2026-02-01T00:00:00Z, "
     "results: secret}]}\n", "portal.phases[0].results: 'secret' is not one of team, public, hidden"),
    ("portal: {phases: [{name: dev, datasets: [dev], opens: 2026-01-01T00:00:00Z, closes: 2026-02-01T00:00:00Z, "
     "limits: {per_dya: 3}}]}\n", "portal.phases[0].limits.per_dya: unknown field (known: at_once, failures, "
                                 "per_day, total)"),
    ("portal: {phases: [{name: dev, datasets: [dev], opens: 2026-01-01T00:00:00Z, closes: 2026-02-01T00:00:00Z, "
     "limits: {total: -1}}]}\n", "portal.phases[0].limits.total: a whole number of 0 or more, got -1"),
])
def test_a_wrong_portal_section_is_one_line_naming_the_field(tmp_path: Path, portal: str, line: str) -> None:
    path = _config(tmp_path, portal)
    with pytest.raises(ConfigError) as err:
        load_portal_settings(path, {"dev", "test"})
    assert str(err.value) == f"{path}: {line}"


def test_a_day_resets_at_midnight_utc() -> None:
    now = datetime(2026, 11, 29, 23, 59, tzinfo=timezone.utc)
    assert next_reset(now) == datetime(2026, 11, 30, tzinfo=timezone.utc)


def test_a_thousand_wrong_tokens_are_slowed_down_and_the_wait_ends() -> None:
    clock = [0.0]
    guard = SignInGuard(limit=20, window_s=60.0, clock=lambda: clock[0])
    waits = []
    for _ in range(1000):
        wait = guard.wait_s("203.0.113.9")
        waits.append(wait)
        if wait == 0:
            guard.failed("203.0.113.9")
    assert waits[:20] == [0.0] * 20 and all(w > 0 for w in waits[20:])
    assert guard.wait_s("198.51.100.1") == 0  # another address is not held up
    clock[0] = 61.0
    assert guard.wait_s("203.0.113.9") == 0


def test_the_guides_example_phases_and_teams_load(tmp_path: Path) -> None:
    """docs/portal.md's examples: the demo config with examples/portal/portal-section.yaml, and its teams.yaml."""
    from harness.config import load_config
    from harness.portal.teams import load_teams

    root = Path(__file__).resolve().parent.parent
    config = tmp_path / "task.yaml"
    demo = (root / "configs" / "demo.yaml").read_text(encoding="utf-8").replace("../data/", f"{root}/data/")
    config.write_text(demo + (root / "examples" / "portal" / "portal-section.yaml").read_text(encoding="utf-8"),
                      encoding="utf-8")
    task = load_config(config)
    settings = load_portal_settings(config, {d for t in task.tracks for d in t.datasets})
    assert [(p.name, p.datasets, p.results) for p in settings.phases] == [("dev", ("dev",), "team"),
                                                                          ("test", ("test",), "hidden")]
    teams = load_teams(root / "examples" / "portal" / "teams.yaml")
    assert [(t.id, t.baseline) for t in teams] == [("alpha", False), ("beta", False), ("organizers", True)]
