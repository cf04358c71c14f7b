"""`harness portal`: the campaign portal (serve), and its tokens (`harness portal token TEAM`)."""

from __future__ import annotations

import argparse
from pathlib import Path

HELP = ("the campaign portal: teams submit, follow their runs and read their results (serve); "
        "`harness portal token TEAM` issues, rotates or revokes a token")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("words", nargs="*", metavar="token TEAM",
                        help="`token TEAM` (or `token organizer`): print a new token, shown once")
    parser.add_argument("--state", type=Path, required=True, help="the portal's folder: database, uploads, "
                        "submissions and results/ (the results folder `harness evaluate` writes)")
    parser.add_argument("--config", type=Path, help="the task config, with its `portal:` section (serve)")
    parser.add_argument("--teams", type=Path, help="teams.yaml: the campaign's teams (serve; token)")
    parser.add_argument("--listen", default="127.0.0.1:8700", help="address to listen on (default "
                        "127.0.0.1:8700; put the organizer's HTTPS proxy in front)")
    parser.add_argument("--workers", type=int, default=2, help="runs evaluated at once (default 2)")
    parser.add_argument("--proxy-headers", action="store_true", help="take each client's address from the "
                        "proxy's X-Real-IP / X-Forwarded-For (only behind a proxy that sets them)")
    parser.add_argument("--rotate", action="store_true", help="with token: revoke the owner's other tokens")
    parser.add_argument("--revoke", action="store_true", help="with token: revoke every token of the owner")
    parser.add_argument("--ttl-days", type=float, default=None, help="with token: it expires after this many days")


def run(args: argparse.Namespace) -> int:
    from harness.errors import HarnessError
    from harness.portal import service

    if not args.words:
        if args.config is None or args.teams is None:
            raise HarnessError("serving needs --config TASK.yaml and --teams TEAMS.yaml")
        if args.workers < 1:
            raise HarnessError(f"--workers must be at least 1, got {args.workers}")
        return service.serve(args.config, args.teams, args.state, args.listen, args.workers, args.proxy_headers)
    if args.words[0] != "token" or len(args.words) != 2:
        raise HarnessError(f"unknown action {' '.join(args.words)!r}: `harness portal token TEAM`, or no action "
                           "to serve")
    owner = args.words[1]
    if args.revoke:
        n = service.revoke(args.state, args.teams, owner)
        print(f"harness portal: revoked {n} token(s) of {owner}")
        return 0
    ttl = None if args.ttl_days is None else args.ttl_days * 86400
    print(service.issue(args.state, args.teams, owner, ttl, args.rotate))
    return 0
