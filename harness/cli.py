"""`harness` command line: a routing table from subcommand to a module in `harness.commands`.

Each command module exposes `HELP: str`, `add_arguments(parser)` and `run(args) -> int`; this file holds no
logic of its own beyond turning `HarnessError` into one line on stderr.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from harness import __version__
from harness.errors import HarnessError

COMMANDS: tuple[str, ...] = (
    "evaluate",
    "leaderboard",
    "validate",
    "check",
    "server",
    "client",
    "run",
    "score",
    "image",
)


def build_parser() -> argparse.ArgumentParser:
    """The full parser with one subparser per command module."""
    parser = argparse.ArgumentParser(
        prog="harness",
        description="Evaluation harness for simultaneous speech and text translation.",
    )
    parser.add_argument("--version", action="version", version=f"harness {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in COMMANDS:
        try:
            module = importlib.import_module(f"harness.commands.{name}")
        except ModuleNotFoundError as exc:  # a command whose module is not installed is left out
            if exc.name != f"harness.commands.{name}":
                raise
            continue
        sp = sub.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(sp)
        sp.set_defaults(_run=module.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `harness` console script."""
    args = build_parser().parse_args(argv)
    try:
        return int(args._run(args) or 0)
    except HarnessError as exc:
        print(f"harness {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"harness {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
