"""Starting the portal: its state folder, the database, the queue, the web server; and the token actions."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
import time
from dataclasses import asdict
from pathlib import Path

import tornado.ioloop

from harness.config import load_config
from harness.errors import HarnessError
from harness.portal import admin_pages, notify, organizer, pages, registry_endpoint
from harness.portal.app import Portal, cookie_secret, make_app
from harness.portal.intake import Campaign
from harness.portal.phases import PortalSettings, load_portal_settings
from harness.portal.queue import Queue
from harness.portal.store import Store, is_database_url
from harness.portal.teams import ORGANIZER, load_teams
from leaderboard.hostpaths import site_host_paths

DATABASE = "portal.sqlite3"


def open_store(state: Path, teams: Path | None, db: str | None = None) -> Store:
    """The portal's database, with the teams of `teams` (when given) brought in: the state folder's SQLite file, or
    the PostgreSQL database `db` names (`postgresql://USER@HOST:PORT/DB`)."""
    state.mkdir(parents=True, exist_ok=True)
    if db is not None and not is_database_url(db):
        raise HarnessError(f"--db {db!r}: not a PostgreSQL URL (postgresql://USER@HOST:PORT/DB); leave --db out for "
                           f"SQLite in {state / DATABASE}")
    store = Store(state / DATABASE if db is None else db)
    if teams is not None:
        store.sync_teams(load_teams(teams))
    return store


def build(config: Path, teams: Path, state: Path, workers: int, db: str | None = None) -> Portal:
    """The portal of a campaign (not yet serving)."""
    task = load_config(config, check_files=False)
    datasets = {name for track in task.tracks for name in track.datasets}
    settings = load_portal_settings(config, datasets)
    store = open_store(state, teams, db)
    baseline_teams = frozenset(t.id for t in load_teams(teams) if t.baseline)
    for sub in ("uploads", "submissions", "results"):
        (state / sub).mkdir(exist_ok=True)
    audit_limit_changes(store, settings)
    campaign = Campaign(store, state, task, settings, baseline_teams)
    queue = Queue(store, state, task.path, per_team=settings.runs_per_team, workers=workers,
                  registry=settings.registry)
    portal = Portal(campaign, queue, hosts=site_host_paths(state, task, []))
    queue.after_batch = lambda dataset: organizer.refresh_public_board(portal, dataset)
    return portal


def audit_limit_changes(store: Store, settings: PortalSettings) -> None:
    """A phase's limits changed since the portal last started, after the phase had opened: one audit entry."""
    now = time.time()
    for phase in settings.phases:
        limits = json.dumps(asdict(phase.limits), sort_keys=True)
        before = store.remember(f"limits:{phase.name}", limits)
        if before is not None and before != limits and phase.opens.timestamp() <= now:
            store.audit("organizer", "limits.changed", f"phase {phase.name} (open since {phase.opens:%Y-%m-%d %H:%M} "
                                                       f"UTC): {before} -> {limits}")


#: how often expired unfinished uploads are removed from the staging folder
SWEEP_S = 600


def serve(config: Path, teams: Path, state: Path, listen: str, workers: int, proxy_headers: bool = False,
          db: str | None = None) -> int:
    """Serve until SIGINT or SIGTERM; the queue's evaluation is stopped and what it ran is queued again.
    `proxy_headers`: take the client's address from X-Real-IP / X-Forwarded-For (only behind a proxy that sets
    them: otherwise a client could name any address and slip past the failed-sign-in guard)."""
    host, _, port_text = listen.rpartition(":")
    if not host or not port_text.isdigit():
        raise HarnessError(f"--listen: {listen!r} is not HOST:PORT")
    portal = build(config, teams, state, workers, db)
    notifier = notify.attach(portal, teams)  # None without portal.notify: nothing is mailed
    app = make_app(portal, cookie_secret(state),
                   [*organizer.routes(portal), *pages.routes(portal), *admin_pages.routes(portal),
                    *registry_endpoint.routes(portal), *notify.routes(portal, notifier)])

    async def main() -> None:
        try:
            server = app.listen(int(port_text), address=host, max_body_size=portal.campaign.settings.max_upload_bytes,
                                max_buffer_size=64 * 1024**2, xheaders=proxy_headers)
        except OSError as exc:
            raise HarnessError(f"--listen {listen}: {exc.strerror}") from None
        portal.queue.start()
        sweeper = tornado.ioloop.PeriodicCallback(app.settings["upload_settings"].sweep, SWEEP_S * 1000)
        app.settings["upload_settings"].sweep()
        sweeper.start()
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        bound = next(iter(server._sockets.values())).getsockname()
        if notifier is not None:
            notifier.start(f"http://{bound[0]}:{bound[1]}")
        print(f"harness portal: listening on http://{bound[0]}:{bound[1]}", flush=True)
        await stop.wait()
        sweeper.stop()
        server.stop()

    try:
        asyncio.run(main())
    finally:
        if notifier is not None:
            notifier.stop()
        portal.queue.stop()
        portal.store.close()
    print("harness portal: stopped", file=sys.stderr)
    return 0


def issue(state: Path, teams: Path | None, owner: str, ttl_s: float | None, rotate: bool,
          db: str | None = None) -> str:
    """A new token for a team (or the organizer), shown once."""
    store = open_store(state, teams, db)
    try:
        return store.issue_token(owner if owner != ORGANIZER else ORGANIZER, ttl_s, rotate)
    finally:
        store.close()


def revoke(state: Path, teams: Path | None, owner: str, db: str | None = None) -> int:
    store = open_store(state, teams, db)
    try:
        return store.revoke_tokens(owner)
    finally:
        store.close()
