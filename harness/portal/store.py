"""The portal's state in one database behind one small interface (`Store`): SQLite in `STATE/portal.sqlite3`
(WAL, so readers never wait for the queue's writes). Every change is one transaction; the schema is migrated on
open (harness/portal/migrations.py)."""

from __future__ import annotations

import json
import secrets
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from harness.errors import HarnessError
from harness.portal.lifecycle import FINAL, OUR_FAULT, JobState, can_move
from harness.portal.migrations import MIGRATIONS
from harness.portal.teams import ORGANIZER, Team
from harness.portal.tokens import new_token, token_hash


@dataclass(frozen=True)
class SubmissionRecord:
    """One handed-in submission (a folder under STATE/submissions)."""

    id: str
    team: str
    phase: str
    track: str
    system: str
    folder: str
    sha256: str
    created_at: float


@dataclass(frozen=True)
class Job:
    """One submission × one dataset, as the queue and the pages see it."""

    id: str
    submission: str
    team: str
    dataset: str
    seq: int
    state: JobState
    failure: str | None
    reason: str | None
    done: int
    total: int
    queued_at: float
    started_at: float | None
    finished_at: float | None
    attempts: int


@dataclass(frozen=True)
class TokenCheck:
    """Who a token belongs to, or why it is refused (`unknown`, `revoked`, `expired`)."""

    owner: str | None
    refused: str | None = None


_JOB_COLUMNS = ("j.id, j.submission, s.team, j.dataset, j.seq, j.state, j.failure, j.reason, j.done, j.total, "
                "j.queued_at, j.started_at, j.finished_at, j.attempts")


class Store:
    """The portal's database. Safe to share between threads: one connection, one lock."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        self._db = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False, timeout=30)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA foreign_keys=ON")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self.migrate()

    # ------------------------------------------------------------------------------------------- schema

    def schema_version(self) -> int:
        """The number of migrations applied."""
        return int(self._db.execute("PRAGMA user_version").fetchone()[0])

    def migrate(self) -> None:
        """Apply the migrations this database lacks, each in its own transaction."""
        with self._lock:
            have = self.schema_version()
            if have > len(MIGRATIONS):
                raise HarnessError(f"{self.path}: schema version {have} is newer than this harness knows "
                                   f"({len(MIGRATIONS)}): upgrade the harness")
            for number, script in enumerate(MIGRATIONS[have:], start=have + 1):
                self._db.execute("BEGIN IMMEDIATE")
                try:
                    for statement in script.split(";"):
                        if statement.strip():
                            self._db.execute(statement)
                    self._db.execute(f"PRAGMA user_version = {number}")
                    self._db.execute("COMMIT")
                except BaseException:
                    self._db.execute("ROLLBACK")
                    raise

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # ------------------------------------------------------------------------------------ teams, tokens

    def sync_teams(self, teams: tuple[Team, ...]) -> None:
        """Make the teams table what teams.yaml says (a team removed from the file keeps its rows)."""
        with self._tx() as db:
            for t in teams:
                db.execute("INSERT INTO teams (id, name, contacts) VALUES (?, ?, ?) ON CONFLICT (id) DO UPDATE "
                           "SET name = excluded.name, contacts = excluded.contacts",
                           (t.id, t.name, json.dumps(list(t.contacts))))

    def team_name(self, team: str) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT name FROM teams WHERE id = ?", (team,)).fetchone()
        return row[0] if row else None

    def team_ids(self) -> list[str]:
        with self._lock:
            return [r[0] for r in self._db.execute("SELECT id FROM teams ORDER BY id")]

    def issue_token(self, owner: str, ttl_s: float | None = None, rotate: bool = False) -> str:
        """A new token for `owner` (a team id or the organizer), shown once; with `rotate`, the owner's other
        tokens are revoked in the same transaction."""
        if owner != ORGANIZER and owner not in self.team_ids():
            raise HarnessError(f"no team {owner!r} in the portal (teams: {', '.join(self.team_ids())})")
        token, now = new_token(), time.time()
        with self._tx() as db:
            if rotate:
                db.execute("UPDATE tokens SET revoked_at = ? WHERE owner = ? AND revoked_at IS NULL", (now, owner))
            db.execute("INSERT INTO tokens (hash, owner, created_at, expires_at) VALUES (?, ?, ?, ?)",
                       (token_hash(token), owner, now, None if ttl_s is None else now + ttl_s))
            self._audit(db, ORGANIZER, "token.rotate" if rotate else "token.issue", owner)
        return token

    def revoke_tokens(self, owner: str) -> int:
        """Revoke every token of `owner`; how many were live."""
        with self._tx() as db:
            n = db.execute("UPDATE tokens SET revoked_at = ? WHERE owner = ? AND revoked_at IS NULL",
                           (time.time(), owner)).rowcount
            self._audit(db, ORGANIZER, "token.revoke", owner)
        return int(n)

    def check_token(self, token: str) -> TokenCheck:
        """Who `token` belongs to, or why not."""
        with self._lock:
            row = self._db.execute("SELECT owner, expires_at, revoked_at FROM tokens WHERE hash = ?",
                                   (token_hash(token),)).fetchone()
        if row is None:
            return TokenCheck(None, "unknown")
        owner, expires_at, revoked_at = row
        if revoked_at is not None:
            return TokenCheck(None, "revoked")
        if expires_at is not None and expires_at <= time.time():
            return TokenCheck(None, "expired")
        return TokenCheck(owner)

    # ------------------------------------------------------------------------------ submissions, jobs

    def add_submission(self, team: str, phase: str, track: str, system: str, folder: str, sha256: str,
                       datasets: tuple[str, ...], submission_id: str | None = None) -> SubmissionRecord:
        """Record a checked submission and queue one job per dataset, in one transaction."""
        now = time.time()
        sub = SubmissionRecord(submission_id or f"{team}-{secrets.token_hex(6)}", team, phase, track, system, folder,
                         sha256, now)
        with self._tx() as db:
            db.execute("INSERT INTO submissions (id, team, phase, track, system, folder, sha256, created_at) "
                       "VALUES (?, ?, ?, ?, ?, ?, ?, ?)", (sub.id, team, phase, track, system, folder, sha256, now))
            for dataset in datasets:
                self._queue(db, sub.id, dataset, now)
            self._audit(db, team, "submit", f"{sub.id} phase {phase} datasets {','.join(datasets)}")
        return sub

    def _queue(self, db: sqlite3.Connection, submission: str, dataset: str, now: float) -> str:
        seq = db.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM jobs").fetchone()[0]
        job_id = "j-" + secrets.token_hex(8)
        db.execute("INSERT INTO jobs (id, submission, dataset, seq, state, queued_at) VALUES (?, ?, ?, ?, ?, ?)",
                   (job_id, submission, dataset, seq, JobState.QUEUED.value, now))
        return job_id

    def link_upload(self, upload_id: str, owner: str, submission: str) -> None:
        """Remember which submission an upload became (the client asks once its upload is complete)."""
        with self._tx() as db:
            db.execute("INSERT INTO uploads (id, owner, submission) VALUES (?, ?, ?)", (upload_id, owner, submission))

    def upload_submission(self, upload_id: str, owner: str) -> str | None:
        """The submission the owner's upload became, or None."""
        with self._lock:
            row = self._db.execute("SELECT submission FROM uploads WHERE id = ? AND owner = ?",
                                   (upload_id, owner)).fetchone()
        return row[0] if row else None

    def submission(self, submission_id: str) -> SubmissionRecord | None:
        with self._lock:
            row = self._db.execute("SELECT id, team, phase, track, system, folder, sha256, created_at "
                                   "FROM submissions WHERE id = ?", (submission_id,)).fetchone()
        return SubmissionRecord(*row) if row else None

    def submissions(self, team: str | None = None) -> list[SubmissionRecord]:
        """Every submission (of `team`), newest first."""
        query = "SELECT id, team, phase, track, system, folder, sha256, created_at FROM submissions"
        with self._lock:
            rows = (self._db.execute(query + " WHERE team = ? ORDER BY created_at DESC", (team,)) if team
                    else self._db.execute(query + " ORDER BY created_at DESC")).fetchall()
        return [SubmissionRecord(*r) for r in rows]

    def jobs(self, submission: str | None = None, states: tuple[JobState, ...] = ()) -> list[Job]:
        """Jobs (of one submission; in `states`), in queue order."""
        where, args = [], []
        if submission is not None:
            where.append("j.submission = ?")
            args.append(submission)
        if states:
            where.append(f"j.state IN ({', '.join('?' * len(states))})")
            args.extend(s.value for s in states)
        query = (f"SELECT {_JOB_COLUMNS} FROM jobs j JOIN submissions s ON s.id = j.submission"
                 + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY j.seq")
        with self._lock:
            rows = self._db.execute(query, args).fetchall()
        return [_job(r) for r in rows]

    def job(self, job_id: str) -> Job | None:
        with self._lock:
            row = self._db.execute(f"SELECT {_JOB_COLUMNS} FROM jobs j JOIN submissions s ON s.id = j.submission "
                                   "WHERE j.id = ?", (job_id,)).fetchone()
        return _job(row) if row else None

    def move(self, job_id: str, new: JobState, *, who: str = "queue", failure: str | None = None,
             reason: str | None = None) -> Job:
        """Move a job to `new` (refused unless the lifecycle allows it); final states get their end time."""
        now = time.time()
        with self._tx() as db:
            row = db.execute("SELECT state FROM jobs WHERE id = ?", (job_id,)).fetchone()
            if row is None:
                raise HarnessError(f"no job {job_id}")
            old = JobState(row[0])
            if old != new and not can_move(old, new):
                raise HarnessError(f"job {job_id} is {old} and cannot become {new}")
            starting = new == JobState.BUILDING and old == JobState.QUEUED
            db.execute("UPDATE jobs SET state = ?, failure = ?, reason = ?, finished_at = ?, "
                       "started_at = CASE WHEN ? THEN ? ELSE started_at END, attempts = attempts + ? WHERE id = ?",
                       (new.value, failure, reason, now if new in FINAL else None, starting, now, int(starting),
                        job_id))
            if who != "queue":
                self._audit(db, who, f"job.{new.value}", f"{job_id}" + (f": {reason}" if reason else ""))
        job = self.job(job_id)
        assert job is not None
        return job

    def progress(self, job_id: str, done: int, total: int) -> None:
        """Instances done out of all, as the running evaluation reports them."""
        with self._tx() as db:
            db.execute("UPDATE jobs SET done = ?, total = ? WHERE id = ?", (done, total, job_id))

    def requeue_interrupted(self) -> list[str]:
        """Jobs left building, running or scoring by a portal that stopped: queued again (their place kept)."""
        with self._tx() as db:
            ids = [r[0] for r in db.execute("SELECT id FROM jobs WHERE state IN (?, ?, ?)",
                                            (JobState.BUILDING.value, JobState.RUNNING.value,
                                             JobState.SCORING.value))]
            for job_id in ids:
                db.execute("UPDATE jobs SET state = ?, started_at = NULL, done = 0 WHERE id = ?",
                           (JobState.QUEUED.value, job_id))
                self._audit(db, "portal", "job.requeue", f"{job_id}: the portal stopped while it ran")
        return ids

    # ------------------------------------------------------------------------------- organizer's decisions

    def withdraw(self, submission: str, who: str, reason: str, disqualify: bool) -> None:
        """Withdraw (or disqualify) a submission with its reason: its jobs end `withdrawn`; nothing is deleted.
        Jobs at work must be stopped first (the queue's cancel)."""
        with self._tx() as db:
            db.execute("UPDATE submissions SET withdrawn = ?, disqualified = ? WHERE id = ?",
                       (reason, int(disqualify), submission))
            for (job_id, state) in db.execute("SELECT id, state FROM jobs WHERE submission = ?", (submission,)):
                if can_move(JobState(state), JobState.WITHDRAWN):
                    db.execute("UPDATE jobs SET state = ?, reason = ?, finished_at = COALESCE(finished_at, ?) "
                               "WHERE id = ?", (JobState.WITHDRAWN.value, reason, time.time(), job_id))
            self._audit(db, who, "disqualify" if disqualify else "withdraw", f"{submission}: {reason}")

    def withdrawn(self, submission: str) -> tuple[str | None, bool]:
        """(the reason it was withdrawn, whether disqualified), or (None, False)."""
        with self._lock:
            row = self._db.execute("SELECT withdrawn, disqualified FROM submissions WHERE id = ?",
                                   (submission,)).fetchone()
        return (row[0], bool(row[1])) if row else (None, False)

    def add_jobs(self, submission: str, datasets: tuple[str, ...], who: str) -> list[str]:
        """Queue jobs of `datasets` the submission does not have yet (the test phase run on a chosen submission)."""
        now = time.time()
        with self._tx() as db:
            have = {r[0] for r in db.execute("SELECT dataset FROM jobs WHERE submission = ?", (submission,))}
            made = [self._queue(db, submission, d, now) for d in datasets if d not in have]
            if made:
                self._audit(db, who, "queue", f"{submission}: {', '.join(d for d in datasets if d not in have)}")
        return made

    def set_primary(self, team: str, track: str, submission: str, who: str) -> None:
        with self._tx() as db:
            db.execute("INSERT INTO primaries (team, track, submission) VALUES (?, ?, ?) ON CONFLICT (team, track) "
                       "DO UPDATE SET submission = excluded.submission", (team, track, submission))
            self._audit(db, who, "primary", f"{team} {track}: {submission}")

    def primaries(self) -> dict[tuple[str, str], str]:
        with self._lock:
            return {(t, k): s for t, k, s in self._db.execute("SELECT team, track, submission FROM primaries")}

    def mark_phase(self, phase: str, what: str, who: str) -> None:
        """Record that a phase was `frozen` or `revealed` (now)."""
        column = {"frozen": "frozen_at", "revealed": "revealed_at"}[what]
        with self._tx() as db:
            db.execute(f"INSERT INTO phases (name, {column}) VALUES (?, ?) ON CONFLICT (name) DO UPDATE "
                       f"SET {column} = excluded.{column}", (phase, time.time()))
            self._audit(db, who, f"phase.{what}", phase)

    def phase_marks(self, phase: str) -> tuple[float | None, float | None]:
        """(when the phase was frozen, when revealed), each None if not."""
        with self._lock:
            row = self._db.execute("SELECT frozen_at, revealed_at FROM phases WHERE name = ?", (phase,)).fetchone()
        return (row[0], row[1]) if row else (None, None)

    def remember(self, key: str, value: str) -> str | None:
        """Keep `value` under `key`; what was kept before (None the first time)."""
        with self._tx() as db:
            row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
            db.execute("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE "
                       "SET value = excluded.value", (key, value))
        return row[0] if row else None

    # ------------------------------------------------------------------------------------------ counters

    def charges(self, team: str, phase: str) -> list[tuple[float, str]]:
        """Each of the team's submissions in `phase` with what it is charged to: `quota` (it counts against the
        per-day and total limits: scored, or not finished yet), `failure` (it failed through the team's own
        fault: the separate cap), or nothing (cancelled, or failed through ours: refunded). (created_at, charge)."""
        out = []
        for sub in self.submissions(team):
            if sub.phase != phase:
                continue
            jobs = self.jobs(sub.id)
            charge = _charge(jobs)
            if charge:
                out.append((sub.created_at, charge))
        return out

    # ------------------------------------------------------------------------------------------- audit

    def audit(self, who: str, action: str, detail: str) -> None:
        with self._tx() as db:
            self._audit(db, who, action, detail)

    @staticmethod
    def _audit(db: sqlite3.Connection, who: str, action: str, detail: str) -> None:
        db.execute("INSERT INTO audit (at, who, action, detail) VALUES (?, ?, ?, ?)",
                   (time.time(), who, action, detail))

    def audit_log(self) -> list[tuple[float, str, str, str]]:
        with self._lock:
            return [tuple(r) for r in self._db.execute("SELECT at, who, action, detail FROM audit ORDER BY id")]


def _job(row: tuple) -> Job:
    return Job(row[0], row[1], row[2], row[3], row[4], JobState(row[5]), *row[6:])


def _charge(jobs: list[Job]) -> str | None:
    """What a submission is charged to, from its jobs (see `Store.charges`)."""
    if not jobs or all(j.state == JobState.CANCELLED or (j.state == JobState.FAILED and j.failure in OUR_FAULT)
                       for j in jobs):
        return None
    if all(j.state in FINAL for j in jobs) and not any(j.state == JobState.SCORED for j in jobs) and any(
            j.state == JobState.FAILED and j.failure not in OUR_FAULT for j in jobs):
        return "failure"
    return "quota"
