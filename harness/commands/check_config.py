"""`harness check-config CONFIG [SUBMISSION...]`: every problem of a task config, one line each."""

from __future__ import annotations

import argparse
from pathlib import Path

HELP = ("check a task config and report every problem at once (missing or empty data files, every dataset's files "
        "read as a run reads them, duplicate names, language codes, baselines that no submission has, replaces: "
        "that names no earlier submission of the same team and track)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("config", type=Path, metavar="CONFIG", help="task config (YAML)")
    parser.add_argument("submissions", nargs="*", metavar="SUBMISSION",
                        help="the submissions to be evaluated (as `harness evaluate` takes them): check that each "
                             "track's baseline: is one of their ids, and that each replaces: names one of the same "
                             "team and track")


def run(args: argparse.Namespace) -> int:
    return report(args.config, args.submissions)


def report(config_path: Path, submissions: list[str] | None) -> int:
    """Print every problem, then a summary line; 1 when there is any, else 0 (as `harness check`)."""
    from harness.errors import ConfigError
    from harness.intake.config_check import config_problems
    from harness.text import printable

    if not config_path.is_file():  # nothing to check: a usage error (exit 2), as a missing submission folder
        raise ConfigError(f"{config_path}: config file not found")
    config, problems = config_problems(config_path, submissions)
    if config is not None:  # a BLEU tokenizer, or a 2025 profile's binary, that cannot run here
        from harness.metrics.track_tools import track_tool_problems

        problems += [f"{config_path}: track {t.name!r}: {problem}" for t in config.tracks
                     for problem in track_tool_problems(t)]
    for line in problems:
        print(printable(line))
    if problems:
        n = len(problems)
        print(f"{printable(config_path)}: {n} problem{'s' if n != 1 else ''}")
        return 1
    assert config is not None
    for note in config.notes:
        print(f"note: {printable(note)}")
    datasets = sum(len(t.datasets) for t in config.tracks)
    checked = "" if submissions else "; baselines and replaces: not checked (name the submissions after the config)"
    print(f"{printable(config_path)}: ok ({len(config.tracks)} track(s), {datasets} dataset(s){checked})")
    return 0
