"""`harness portal`: the campaign portal (serve), its tokens (`harness portal token TEAM`) and the config of the
organizer's Docker registry (`harness portal registry-config`)."""

from __future__ import annotations

import argparse
from pathlib import Path

HELP = ("the campaign portal: teams submit, follow their runs and read their results (serve); "
        "`harness portal token TEAM` issues, rotates or revokes a token; `harness portal registry-config` writes "
        "the config of the organizer's Docker registry, the portal its token server")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("words", nargs="*", metavar="token TEAM | registry-config",
                        help="`token TEAM` (or `token organizer`): print a new token, shown once; "
                        "`registry-config`: write docker-registry's config (token authentication by the portal)")
    parser.add_argument("--state", type=Path, required=True, help="the portal's folder: database, uploads, "
                        "submissions and results/ (the results folder `harness evaluate` writes)")
    parser.add_argument("--db", default=None, metavar="postgresql://USER@HOST:PORT/DB", help="keep the portal's "
                        "state in this PostgreSQL database (serve; token), not in STATE/portal.sqlite3 (the default); "
                        "give a password through PGPASSWORD or ~/.pgpass, not in the URL")
    parser.add_argument("--config", type=Path, help="the task config, with its `portal:` section (serve)")
    parser.add_argument("--teams", type=Path, help="teams.yaml: the campaign's teams (serve; token)")
    parser.add_argument("--listen", default=None, help="address to listen on (default 127.0.0.1:8700; "
                        "registry-config: the registry's, default 127.0.0.1:5000; put the organizer's HTTPS proxy "
                        "in front)")
    parser.add_argument("--workers", type=int, default=2, help="runs evaluated at once (default 2)")
    parser.add_argument("--proxy-headers", action="store_true", help="take each client's address from the "
                        "proxy's X-Real-IP / X-Forwarded-For (only behind a proxy that sets them)")
    parser.add_argument("--rotate", action="store_true", help="with token: revoke the owner's other tokens")
    parser.add_argument("--revoke", action="store_true", help="with token: revoke every token of the owner")
    parser.add_argument("--ttl-days", type=float, default=None, help="with token: it expires after this many days")
    parser.add_argument("--portal-url", help="with registry-config: the portal's address as Docker clients reach "
                        "it (https://portal.example.org); the registry sends them to its token endpoint")
    parser.add_argument("--storage", type=Path, default=None, help="with registry-config: the registry's image "
                        "folder (default STATE/registry/storage)")


def run(args: argparse.Namespace) -> int:
    from harness.errors import HarnessError
    from harness.portal import service

    if not args.words:
        if args.config is None or args.teams is None:
            raise HarnessError("serving needs --config TASK.yaml and --teams TEAMS.yaml")
        if args.workers < 1:
            raise HarnessError(f"--workers must be at least 1, got {args.workers}")
        return service.serve(args.config, args.teams, args.state, args.listen or "127.0.0.1:8700", args.workers,
                             args.proxy_headers, args.db)
    if args.words == ["registry-config"]:
        return _registry_config(args)
    if args.words[0] != "token" or len(args.words) != 2:
        raise HarnessError(f"unknown action {' '.join(args.words)!r}: `harness portal token TEAM`, `harness "
                           "portal registry-config`, or no action to serve")
    owner = args.words[1]
    if args.revoke:
        n = service.revoke(args.state, args.teams, owner, args.db)
        print(f"harness portal: revoked {n} token(s) of {owner}")
        return 0
    ttl = None if args.ttl_days is None else args.ttl_days * 86400
    print(service.issue(args.state, args.teams, owner, ttl, args.rotate, args.db))
    return 0


def _registry_config(args: argparse.Namespace) -> int:
    from harness.errors import HarnessError
    from harness.portal import registry

    if not args.portal_url:
        raise HarnessError("registry-config needs --portal-url URL: the portal's address as Docker clients reach it")
    path = registry.registry_config(args.state, args.portal_url, args.listen or "127.0.0.1:5000", args.storage)
    print(f"harness portal: wrote the registry's config to {path}")
    print(f"harness portal: start the registry with `docker-registry serve {path}` (token server: "
          f"{args.portal_url.rstrip('/')}{registry.REALM_PATH}; `docker login` with the team id and its token)")
    return 0
