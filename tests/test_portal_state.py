"""The portal's state without a server: the database's migrations and lifecycle, what a submission is charged
to, the queue's fairness, the phases' one-line errors, tokens and the failed-sign-in guard. The store's tests run
on SQLite and on PostgreSQL (a server of the test session's, tests/conftest.py's `postgresql_server`)."""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
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


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgresql)])
def where(request: pytest.FixtureRequest, tmp_path: Path) -> Path | str:
    """The database a store test runs on: a SQLite file (the default), or a new PostgreSQL database."""
    if request.param == "sqlite":
        return tmp_path / "portal.sqlite3"
    return str(request.getfixturevalue("postgresql_url"))


@pytest.fixture
def store(where: Path | str) -> Iterator[Store]:
    s = Store(where)
    s.sync_teams(TEAMS)
    try:
        yield s
    finally:
        s.close()


def _sql(where: Path | str, statement: str) -> list[tuple]:
    """One statement on the database itself, beside the store (a new connection, committed)."""
    if isinstance(where, Path):
        db = sqlite3.connect(where, isolation_level=None)
        try:
            return db.execute(statement).fetchall()
        finally:
            db.close()
    import psycopg

    with psycopg.connect(where, autocommit=True) as pg:
        cur = pg.execute(statement)
        return cur.fetchall() if cur.description else []


def _tables(where: Path | str) -> set[str]:
    query = ("SELECT name FROM sqlite_master WHERE type = 'table'" if isinstance(where, Path) else
             "SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
    return {r[0] for r in _sql(where, query)}


def test_a_new_database_has_every_migration_and_reopening_changes_nothing(where: Path | str) -> None:
    first = Store(where)
    assert first.schema_version() == len(MIGRATIONS)
    first.sync_teams(TEAMS)
    first.close()
    again = Store(where)
    assert again.schema_version() == len(MIGRATIONS) and again.team_ids() == ["alpha", "beta", "gamma"]
    again.close()
    if isinstance(where, Path):
        assert sqlite3.connect(where).execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    else:  # the version is a table of its own; times are double precision (PostgreSQL's REAL is not)
        assert _sql(where, "SELECT version FROM schema_version") == [(len(MIGRATIONS),)]
        assert _sql(where, "SELECT data_type FROM information_schema.columns WHERE table_name = 'jobs' "
                    "AND column_name = 'queued_at'") == [("double precision",)]


def test_a_database_of_a_newer_harness_is_refused_in_one_line(where: Path | str) -> None:
    Store(where).close()
    newer = len(MIGRATIONS) + 1
    _sql(where, f"PRAGMA user_version = {newer}" if isinstance(where, Path)
         else f"UPDATE schema_version SET version = {newer}")
    with pytest.raises(HarnessError, match=rf"schema version {newer} is newer than this harness"):
        Store(where)


def test_an_old_database_is_migrated_in_place(tmp_path: Path) -> None:
    """A database at version 0 (an empty file) gets every step."""
    path = tmp_path / "p.sqlite3"
    sqlite3.connect(path).close()
    store = Store(path)
    assert store.schema_version() == len(MIGRATIONS)
    assert {"teams", "tokens", "submissions", "jobs", "uploads", "audit"} <= _tables(path)


def test_a_database_at_version_1_is_migrated_to_the_latest_keeping_its_rows(where: Path | str,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    with monkeypatch.context() as m:  # a harness of the first release made it
        m.setattr("harness.portal.store.MIGRATIONS", MIGRATIONS[:1])
        old = Store(where)
        assert old.schema_version() == 1 and "primaries" not in _tables(where)
        old.sync_teams(TEAMS)
        sub = old.add_submission("alpha", "dev", "t", "s", "/x", "0" * 64, ("dev",))
        old.close()
    store = Store(where)
    assert store.schema_version() == len(MIGRATIONS) and {"primaries", "phases", "meta"} <= _tables(where)
    assert store.submission(sub.id) == sub and store.withdrawn(sub.id) == (None, False)
    store.withdraw(sub.id, "organizer", "rule 3", disqualify=True)  # the new columns work on the old rows
    assert store.withdrawn(sub.id) == ("rule 3", True) and store.jobs(sub.id)[0].state == JobState.WITHDRAWN
    store.close()


def test_a_half_applied_step_is_rolled_back_whole(where: Path | str, monkeypatch: pytest.MonkeyPatch) -> None:
    broken = (MIGRATIONS[0], "CREATE TABLE half (x TEXT); CREATE TABLE teams (id TEXT)")  # the 2nd fails
    monkeypatch.setattr("harness.portal.store.MIGRATIONS", broken)
    with pytest.raises(Exception, match="(?i)already exists"):
        Store(where)
    assert "half" not in _tables(where)
    monkeypatch.setattr("harness.portal.store.MIGRATIONS", MIGRATIONS[:1])
    store = Store(where)
    assert store.schema_version() == 1
    store.close()


def test_two_portals_starting_at_once_migrate_once_and_queue_in_distinct_places(where: Path | str) -> None:
    """Two stores on one database (two portals), each opened and then queueing from its own threads at once: every
    step is applied once, and no two jobs share a place in the queue (the read of the next place and the write
    are one change)."""
    with ThreadPoolExecutor(4) as pool:
        stores = list(pool.map(lambda _: Store(where), range(4)))
    try:
        assert {s.schema_version() for s in stores} == {len(MIGRATIONS)}
        stores[0].sync_teams(TEAMS)
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda i: stores[i % 4].add_submission("alpha", "dev", "t", "s", "/x", "0" * 64,
                                                                 ("dev", "test")), range(40)))
        seqs = [j.seq for j in stores[1].jobs()]
        assert len(seqs) == 80 and sorted(seqs) == list(range(1, 81))
    finally:
        for s in stores:
            s.close()


def test_postgresql_without_psycopg_says_how_to_install_it_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)  # as if not installed
    with pytest.raises(HarnessError) as err:
        Store("postgresql://portal:pw@db.example.org:5432/portal")
    assert str(err.value) == ("--db postgresql://portal:***@db.example.org:5432/portal: PostgreSQL needs psycopg 3: "
                              "pip install 'harness[portal]' (or psycopg[binary])")


def test_tokens_are_kept_hashed_and_refused_with_their_reason(store: Store, where: Path | str) -> None:
    token = store.issue_token("alpha")
    if isinstance(where, Path):
        raw = where.read_bytes() + where.with_name(where.name + "-wal").read_bytes()
    else:
        raw = repr(_sql(where, "SELECT * FROM tokens") + _sql(where, "SELECT * FROM audit")).encode()
    assert token.encode() not in raw and token_hash(token).encode() in raw
    assert store.check_token(token).owner == "alpha"
    rotated = store.issue_token("alpha", rotate=True)
    assert store.check_token(token).refused == "revoked" and store.check_token(rotated).owner == "alpha"
    assert store.check_token(store.issue_token("beta", ttl_s=0)).refused == "expired"
    assert store.check_token("hpt_nothing").refused == "unknown"
    with pytest.raises(HarnessError, match="no team 'delta' in the portal"):
        store.issue_token("delta")
    assert bearer("Bearer  abc ") == "abc" and bearer("Basic abc") is None and bearer(None) is None


@pytest.mark.postgresql
def test_a_lost_postgresql_connection_is_opened_again_between_changes(postgresql_url: str) -> None:
    store = Store(postgresql_url)
    try:
        store.sync_teams(TEAMS)
        _sql(postgresql_url, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
             "WHERE datname = current_database() AND pid <> pg_backend_pid()")
        with pytest.raises(Exception):  # noqa: B017 - the statement under way fails: it is not retried
            store.team_ids()
        assert store.team_ids() == ["alpha", "beta", "gamma"]  # the next one reconnects
        sub = store.add_submission("beta", "dev", "t", "s", "/x", "0" * 64, ("dev",))
        assert _sql(postgresql_url, f"SELECT team, phase FROM submissions WHERE id = '{sub.id}'") == [("beta", "dev")]
    finally:
        store.close()


@pytest.mark.postgresql
def test_postgresql_that_cannot_be_reached_or_a_wrong_db_is_one_line(postgresql_server, tmp_path: Path) -> None:
    from harness.portal.service import open_store

    url = f"postgresql://postgres:secret@127.0.0.1:{postgresql_server.port}/no_such_database"
    with pytest.raises(HarnessError) as err:
        Store(url)
    line = str(err.value)
    assert line.startswith("--db postgresql://postgres:***@127.0.0.1:") and "cannot connect" in line
    assert "no_such_database" in line and "secret" not in line and "\n" not in line
    with pytest.raises(HarnessError, match=r"--db 'mysql://x/y': not a PostgreSQL URL"):
        open_store(tmp_path / "state", None, "mysql://x/y")


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
