"""The portal database's schema, as numbered migrations: version N is the schema after the first N steps. A new
column or table is a new step at the end; a step is never edited once released (a database made by it exists)."""

from __future__ import annotations

MIGRATIONS: tuple[str, ...] = (
    # 1: teams, their tokens, submissions, their jobs (one per dataset), the upload each came from, the audit log
    """
    CREATE TABLE teams (id TEXT PRIMARY KEY, name TEXT NOT NULL, contacts TEXT NOT NULL DEFAULT '[]');
    CREATE TABLE tokens (hash TEXT PRIMARY KEY, owner TEXT NOT NULL, created_at REAL NOT NULL,
                         expires_at REAL, revoked_at REAL);
    CREATE INDEX tokens_owner ON tokens (owner);
    CREATE TABLE submissions (id TEXT PRIMARY KEY, team TEXT NOT NULL, phase TEXT NOT NULL, track TEXT NOT NULL,
                              system TEXT NOT NULL, folder TEXT NOT NULL, sha256 TEXT NOT NULL,
                              created_at REAL NOT NULL);
    CREATE INDEX submissions_team ON submissions (team, created_at);
    CREATE TABLE jobs (id TEXT PRIMARY KEY, submission TEXT NOT NULL REFERENCES submissions (id),
                       dataset TEXT NOT NULL, seq INTEGER NOT NULL, state TEXT NOT NULL, failure TEXT,
                       reason TEXT, done INTEGER NOT NULL DEFAULT 0, total INTEGER NOT NULL DEFAULT 0,
                       queued_at REAL NOT NULL, started_at REAL, finished_at REAL,
                       attempts INTEGER NOT NULL DEFAULT 0);
    CREATE INDEX jobs_state ON jobs (state, seq);
    CREATE INDEX jobs_submission ON jobs (submission);
    CREATE TABLE uploads (id TEXT PRIMARY KEY, owner TEXT NOT NULL, submission TEXT NOT NULL);
    CREATE TABLE audit (id INTEGER PRIMARY KEY AUTOINCREMENT, at REAL NOT NULL, who TEXT NOT NULL,
                        action TEXT NOT NULL, detail TEXT NOT NULL);
    """,
    # 2: the organizer's decisions: a submission withdrawn or disqualified (with its reason; nothing is deleted),
    # each team's primary per track, a phase frozen or revealed, and the settings last seen (to audit changes)
    """
    ALTER TABLE submissions ADD COLUMN withdrawn TEXT;
    ALTER TABLE submissions ADD COLUMN disqualified INTEGER NOT NULL DEFAULT 0;
    CREATE TABLE primaries (team TEXT NOT NULL, track TEXT NOT NULL,
                            submission TEXT NOT NULL REFERENCES submissions (id), PRIMARY KEY (team, track));
    CREATE TABLE phases (name TEXT PRIMARY KEY, frozen_at REAL, revealed_at REAL);
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    """,
)
