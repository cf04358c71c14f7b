"""The portal's state in one database behind one small interface (`Store`): SQLite in `STATE/portal.sqlite3`
(WAL, so readers never wait for the queue's writes) by default, or PostgreSQL (`--db postgresql://...`). Every
change is one transaction, and one change is written at a time (SQLite's `BEGIN IMMEDIATE`; in PostgreSQL a
transaction-level advisory lock, so that two portals on one database cannot both take a read-then-write, such as
the queue's next place, at once); the schema is migrated on open (harness/portal/migrations.py), one step at a
time under that same lock. The two databases differ only in `SQLiteDatabase` and `PostgreSQLDatabase`."""

from __future__ import annotations

import json
import re
import secrets
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from harness.errors import HarnessError
from harness.portal.lifecycle import FINAL, OUR_FAULT, JobState, can_move
from harness.portal.migrations import MIGRATIONS, statements
from harness.portal.teams import ORGANIZER, Team
from harness.portal.tokens import new_token, token_hash

#: the URL schemes that name a PostgreSQL database (libpq's)
POSTGRESQL_SCHEMES = ("postgresql://", "postgres://")


class Database(Protocol):
    """One connection to the portal's database, in the words the store needs (`?` placeholders in SQL)."""

    dialect: str  # a key of migrations.TERMS
    where: str  # the database as a message names it (never a password)

    def execute(self, sql: str, args: Sequence[object] = ()) -> Any: ...

    def begin(self) -> None: ...

    def commit(self) -> None: ...

    def rollback(self) -> None: ...

    def schema_version(self) -> int: ...

    def set_schema_version(self, number: int) -> None: ...

    def close(self) -> None: ...


class SQLiteDatabase:
    """A SQLite file: WAL, foreign keys enforced; the schema version is `PRAGMA user_version`."""

    dialect = "sqlite"

    def __init__(self, path: Path) -> None:
        self.where = str(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False, timeout=30)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA foreign_keys=ON")
        self._db.execute("PRAGMA synchronous=NORMAL")

    def execute(self, sql: str, args: Sequence[object] = ()) -> sqlite3.Cursor:
        return self._db.execute(sql, args)

    def begin(self) -> None:
        self._db.execute("BEGIN IMMEDIATE")  # the write lock now, not at the first write: no deadlock on upgrade

    def commit(self) -> None:
        self._db.execute("COMMIT")

    def rollback(self) -> None:
        self._db.execute("ROLLBACK")

    def schema_version(self) -> int:
        return int(self._db.execute("PRAGMA user_version").fetchone()[0])

    def set_schema_version(self, number: int) -> None:
        self._db.execute(f"PRAGMA user_version = {int(number)}")

    def close(self) -> None:
        self._db.close()


#: the advisory lock every change of the portal's PostgreSQL database takes (per database: "harness" in ASCII)
WRITER_LOCK = 0x68_61_72_6E_65_73_73


class PostgreSQLDatabase:
    """A PostgreSQL database through psycopg 3 (autocommit; the store begins and ends its transactions). The
    schema version is the one row of a `schema_version` table. A connection lost between transactions (the
    server restarted) is opened again at the next statement; one lost inside a transaction fails that change."""

    dialect = "postgresql"

    def __init__(self, url: str) -> None:
        self.where = re.sub(r"^(\w+://[^:/@]*):[^@/]*@", r"\1:***@", url)
        self._url = url
        self._in_tx = False
        self._db = self._connect()

    def _connect(self) -> Any:
        try:
            import psycopg
        except ImportError:
            raise HarnessError(f"--db {self.where}: PostgreSQL needs psycopg 3: pip install 'harness[portal]' "
                               "(or psycopg[binary])") from None
        try:
            return psycopg.connect(self._url, autocommit=True, connect_timeout=30)
        except psycopg.Error as exc:
            reason = " ".join(str(exc).split()) or type(exc).__name__
            raise HarnessError(f"--db {self.where}: cannot connect: {reason}") from None

    def execute(self, sql: str, args: Sequence[object] = ()) -> Any:
        if self._db.broken or self._db.closed:
            if self._in_tx:
                raise HarnessError(f"{self.where}: the connection was lost inside a transaction")
            self._db = self._connect()
        # psycopg's placeholder is %s (and a literal % is %%); args are always passed, so both are read
        return self._db.execute(sql.replace("%", "%%").replace("?", "%s"), tuple(args))

    def begin(self) -> None:
        self.execute("BEGIN")
        self._in_tx = True
        try:
            self.execute("SELECT pg_advisory_xact_lock(?)", (WRITER_LOCK,))  # let go at COMMIT or ROLLBACK
        except BaseException:
            self.rollback()
            raise

    def commit(self) -> None:
        self.execute("COMMIT")
        self._in_tx = False

    def rollback(self) -> None:
        self._in_tx = False
        if not (self._db.broken or self._db.closed):
            self._db.execute("ROLLBACK")

    def schema_version(self) -> int:
        # pg_class read as a table (this statement's snapshot), not through to_regclass: the catalog cache is not
        # refreshed by taking an advisory lock, and would miss the table another portal just made
        if self.execute("SELECT count(*) FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n "
                        "ON n.oid = c.relnamespace WHERE c.relname = 'schema_version' "
                        "AND n.nspname = current_schema()").fetchone()[0] == 0:
            return 0
        row = self.execute("SELECT version FROM schema_version").fetchone()
        return int(row[0]) if row else 0

    def set_schema_version(self, number: int) -> None:
        self.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
        self.execute("DELETE FROM schema_version")
        self.execute("INSERT INTO schema_version (version) VALUES (?)", (number,))

    def close(self) -> None:
        self._db.close()


def is_database_url(text: str) -> bool:
    """Whether `text` names a PostgreSQL database (postgresql://USER@HOST:PORT/DB) rather than a SQLite file."""
    return text.startswith(POSTGRESQL_SCHEMES)


def open_database(where: Path | str) -> Database:
    """A SQLite file's path, or a PostgreSQL URL, as a connection."""
    if isinstance(where, str) and is_database_url(where):
        return PostgreSQLDatabase(where)
    return SQLiteDatabase(Path(where))


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
    """The portal's database. Safe to share between threads: one connection, one lock. `where` is a SQLite file's
    path (the default) or a PostgreSQL URL (`postgresql://USER@HOST:PORT/DB`)."""

    def __init__(self, where: Path | str) -> None:
        self._db = open_database(where)
        self.path = Path(self._db.where) if isinstance(self._db, SQLiteDatabase) else None
        self._lock = threading.RLock()
        self.migrate()

    # ------------------------------------------------------------------------------------------- schema

    def schema_version(self) -> int:
        """The number of migrations applied."""
        with self._lock:
            return self._db.schema_version()

    def migrate(self) -> None:
        """Apply the migrations this database lacks, each in its own transaction; each step is read again under
        the write lock, so that two portals starting at once apply it once."""
        with self._lock:
            have = self.schema_version()
            if have > len(MIGRATIONS):
                raise HarnessError(f"{self._db.where}: schema version {have} is newer than this harness knows "
                                   f"({len(MIGRATIONS)}): upgrade the harness")
            for number in range(have + 1, len(MIGRATIONS) + 1):
                with self._tx() as db:
                    if db.schema_version() >= number:  # another portal applied it meanwhile
                        continue
                    for statement in statements(MIGRATIONS[number - 1], db.dialect):
                        db.execute(statement)
                    db.set_schema_version(number)

    @contextmanager
    def _tx(self) -> Iterator[Database]:
        with self._lock:
            self._db.begin()
            try:
                yield self._db
            except BaseException:
                self._db.rollback()
                raise
            self._db.commit()

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
        return self.check_token_hash(token_hash(token))

    def check_token_hash(self, digest: str) -> TokenCheck:
        """Who the token of SHA-256 `digest` belongs to, or why not (a page's session holds the digest, so a token
        revoked or expired ends its sessions too)."""
        with self._lock:
            row = self._db.execute("SELECT owner, expires_at, revoked_at FROM tokens WHERE hash = ?",
                                   (digest,)).fetchone()
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

    def _queue(self, db: Database, submission: str, dataset: str, now: float) -> str:
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
    def _audit(db: Database, who: str, action: str, detail: str) -> None:
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
