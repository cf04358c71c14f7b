"""`harness` command line: a routing table from subcommand to a module in `harness.commands`.

Each command module exposes `HELP: str`, `add_arguments(parser)` and `run(args) -> int`; this file holds no
logic of its own beyond turning `HarnessError` into one line on stderr. Only the chosen command's module is
imported (start-up time matters: `harness score` and `harness client` run often, in scripts and containers).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from harness import __version__
from harness.errors import EXIT_INTERRUPTED, EXIT_PIPE, EXIT_USAGE, HarnessError

COMMANDS: dict[str, str] = {
    "evaluate": "evaluate every submission in isolated containers and write results (organizers)",
    "leaderboard": "render the static HTML leaderboard from a results directory",
    "validate": "run a submission through the organizer's pipeline on the dev set (participants)",
    "check": "check a submission folder statically",
    "check-config": "check a task config: every problem at once, one line each (organizers)",
    "server": "run the evaluation server for one dataset of a task config",
    "client": "decode the server's instances with an agent",
    "run": "evaluate an agent on a dataset in one command (server and client together)",
    "score": "score an instances.log (the harness's or SimulEval's) and write scores.json",
    "export": "write a long-form run in OmniSTEval's or SimulStream's format",
    "rescore": "re-score other tools' long-form logs under the 2025 and 2026 profiles; one page side by side",
    "view": "a live local viewer of a results folder or a run folder (read-only, 127.0.0.1)",
    "human": "human judgments: blind rating sheets out, ratings in, agreement and correlations",
    "image": "build the harness base image (air-gapped: from Debian packages)",
    "fetch-cache": "list or remove the fetch step's cache volumes",
    "portal": "the campaign portal: teams submit and follow their runs; tokens (organizers)",
    "submit": "submit a folder to the campaign portal and follow it (participants)",
}


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser; the arguments of every command, or with `only`, of that command alone ("" for none)."""
    parser = argparse.ArgumentParser(
        prog="harness",
        description="Evaluation harness for simultaneous speech and text translation.",
    )
    parser.add_argument("--version", action="version", version=f"harness {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name, summary in COMMANDS.items():
        sp = sub.add_parser(name, help=summary, description=summary)
        if only is None or only == name:
            module = importlib.import_module(f"harness.commands.{name.replace('-', '_')}")
            sp.description = module.HELP
            module.add_arguments(sp)
            sp.set_defaults(_run=module.run)
    return parser


def _chosen_command(argv: Sequence[str]) -> str:
    """The subcommand named on the command line, or "" when there is none (e.g. `harness --help`)."""
    for arg in argv:
        if not arg.startswith("-"):
            return arg if arg in COMMANDS else ""
    return ""


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `harness` console script."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser(only=_chosen_command(argv)).parse_args(argv)
    try:
        code = int(args._run(args) or 0)
        sys.stdout.flush()  # a closed pipe shows here, inside the handler, not at interpreter exit
        return code
    except HarnessError as exc:
        from harness.text import printable_lines

        print(f"harness {args.command}: error: {printable_lines(exc)}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print(f"harness {args.command}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # `harness score ... | head`: the reader has all it wanted
        _silence_stdout()
        return EXIT_PIPE
    except OSError as exc:  # the system said no (a full disk, no permission): one line, not a traceback
        if os.environ.get("HARNESS_TRACEBACK"):
            raise
        from harness.text import printable

        where = f": {exc.filename}" if exc.filename else ""
        print(f"harness {args.command}: error: {printable(exc.strerror or exc)}{printable(where)} (set "
              f"HARNESS_TRACEBACK=1 for the traceback)", file=sys.stderr)
        return EXIT_USAGE


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so that flushing it at exit raises nothing (Python's advice for SIGPIPE)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


if __name__ == "__main__":
    sys.exit(main())
