"""The `harness` command line: every command of ARCHITECTURE.md is present."""

import subprocess
import sys

from harness.cli import COMMANDS, build_parser


def test_every_command_is_registered() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    assert set(sub.choices) == set(COMMANDS)


def test_console_help_runs() -> None:
    out = subprocess.run([sys.executable, "-m", "harness", "--help"], capture_output=True, text=True, check=True)
    assert "evaluate" in out.stdout and "score" in out.stdout
