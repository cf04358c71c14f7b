"""A throwaway PostgreSQL server for the portal's tests (tests/conftest.py's `postgresql_server` fixture): `initdb`
in a temporary folder of its own, the server on 127.0.0.1 at a free port and on a socket in that folder, trust
authentication (loopback only), one new database per test, stopped and removed after. PostgreSQL refuses to run as
root: as root, every server command runs as the `postgres` system user (Debian's `postgresql` package makes it),
who owns the folder."""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

#: where Debian's postgresql package puts the server's programs (one folder per major version)
BINARIES = Path("/usr/lib/postgresql")
SERVER_USER = "postgres"


def bin_folder() -> Path | None:
    """The newest installed server's bin/ folder (with initdb and pg_ctl), or None."""
    found = [p for p in BINARIES.glob("*/bin") if (p / "initdb").is_file() and (p / "pg_ctl").is_file()]
    return max(found, key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0, default=None)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PostgresServer:
    """One server in its own folder; `url(name)` addresses one of its databases."""

    def __init__(self, bindir: Path) -> None:
        self.bindir = bindir
        self.folder = Path(tempfile.mkdtemp(prefix="harness-pg-"))  # in /tmp: the postgres user can reach it
        self.port = 0
        if os.geteuid() == 0:
            shutil.chown(self.folder, SERVER_USER, SERVER_USER)

    def _run(self, *args: str) -> subprocess.CompletedProcess[str]:
        command = [str(self.bindir / args[0]), *args[1:]]
        if os.geteuid() == 0:
            command = ["runuser", "-u", SERVER_USER, "--", *command]
        proc = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=self.folder)
        if proc.returncode != 0:
            log = self.folder / "server.log"
            raise RuntimeError(f"{' '.join(args[:1])} failed: {proc.stdout}{proc.stderr}"
                               + (log.read_text(errors="replace")[-2000:] if log.is_file() else ""))
        return proc

    def start(self) -> PostgresServer:
        self._run("initdb", "-D", str(self.folder / "data"), "-A", "trust", "-U", "postgres", "-E", "UTF8",
                  "--locale=C", "--no-sync")
        for attempt in range(3):  # a free port may be taken before the server binds it: try another
            self.port = _free_port()
            options = (f"-k {self.folder} -p {self.port} -c listen_addresses=127.0.0.1 -c fsync=off "
                       "-c max_connections=50")
            try:
                self._run("pg_ctl", "-D", str(self.folder / "data"), "-l", str(self.folder / "server.log"), "-w",
                          "-t", "60", "-o", options, "start")
                return self
            except RuntimeError:
                if attempt == 2:
                    raise
        return self

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def admin(self, sql: str) -> None:
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as db:
            db.execute(sql)

    def create_database(self) -> str:
        name = f"portal_{secrets.token_hex(6)}"
        self.admin(f"CREATE DATABASE {name}")
        return name

    def drop_database(self, name: str) -> None:
        self.admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    def version(self) -> str:
        import psycopg

        with psycopg.connect(self.url()) as db:
            return str(db.execute("SHOW server_version").fetchone()[0])  # type: ignore[index]

    def stop(self) -> None:
        try:
            if (self.folder / "data" / "postmaster.pid").is_file():
                self._run("pg_ctl", "-D", str(self.folder / "data"), "-m", "fast", "-w", "stop")
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)
