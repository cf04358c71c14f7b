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
    from harness.commands.leaderboard import leaderboard_module

    return int(leaderboard_module("live").serve_view(args.path, args.host, args.port))
