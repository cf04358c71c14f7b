"""`harness view RESULTS_OR_RUN_DIR [--port 7777]`: a live local viewer (the SimulEval paper's --visual server),
the leaderboard's live mode (`leaderboard.live`)."""

from __future__ import annotations

import argparse
from pathlib import Path

HELP = "serve a results folder's leaderboard or a run folder's timelines locally, following a run in progress"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", type=Path, metavar="RESULTS_OR_RUN_DIR")
    parser.add_argument("--port", type=int, default=7777, help="TCP port (7777, as in the SimulEval paper)")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (127.0.0.1: this machine only)")


def run(args: argparse.Namespace) -> int:
    import errno

    from harness.commands.leaderboard import leaderboard_module
    from harness.errors import HarnessError

    try:
        return int(leaderboard_module("live").serve_view(args.path, args.host, args.port))
    except OSError as exc:
        if exc.errno in (errno.EADDRINUSE, errno.EACCES, errno.EADDRNOTAVAIL):
            raise HarnessError(f"cannot listen on {args.host}:{args.port}: {exc.strerror} (pass another --port, "
                               "or 0 for any free one)") from None
        raise
