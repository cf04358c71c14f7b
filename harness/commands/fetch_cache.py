"""`harness fetch-cache list|prune`: the volumes that submissions' `fetch:` steps filled, on this Docker engine."""

from __future__ import annotations

import argparse
import time

HELP = "list or remove the fetch step's cache volumes (one per submission image and fetch command)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="fetch_cache_command", metavar="ACTION")
    sub.required = True
    sub.add_parser("list", help="every fetch volume: its size, fetch time, image and command")
    prune = sub.add_parser("prune", help="remove fetch volumes: those named, all (--all), or else the unfinished "
                                         "ones and those whose image is gone")
    prune.add_argument("volumes", nargs="*", metavar="VOLUME", help="volumes to remove (names from `list`)")
    prune.add_argument("--all", action="store_true", help="remove every fetch volume")


def _size(n: int | None) -> str:
    return "-" if n is None else f"{n / 1e6:.1f} MB"


def run(args: argparse.Namespace) -> int:
    from harness.errors import HarnessError
    from harness.run import failures
    from harness.run.docker_backend import docker_api
    from harness.run.fetch import cache

    try:
        api = docker_api()
    except failures.InfraError as exc:
        raise HarnessError(str(exc)) from None
    if args.fetch_cache_command == "list":
        rows = cache.entries(api)
        for e in rows:
            when = time.strftime("%Y-%m-%d %H:%M", time.gmtime(e.finished_at)) if e.finished_at else "unfinished"
            took = "-" if e.fetch_s is None else f"{e.fetch_s:.1f} s"
            print(f"{e.volume}  {_size(e.bytes)}  {took}  {when}  {e.image[:19]}  {e.command}")
        print(f"harness fetch-cache: {len(rows)} volume(s)")
        return 0
    removed, kept = cache.prune(api, list(args.volumes), args.all)
    for name in removed:
        print(f"removed {name}")
    for line in kept:
        print(f"kept {line}")
    print(f"harness fetch-cache: {len(removed)} removed, {len(kept)} kept")
    return 1 if args.volumes and kept else 0
