"""`harness leaderboard RESULTS --output SITE`: render the static leaderboard site from a results directory."""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from harness import layout

HELP = "render the static HTML leaderboard (tables, plots, per-instance views) from a results directory"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("results", type=Path, metavar="RESULTS", help="results directory written by `harness evaluate`")
    parser.add_argument("--output", "-o", type=Path, required=True, metavar="SITE",
                        help="folder for the site (created; a folder that holds anything is refused without "
                             "--overwrite)")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace what SITE holds with the new site: it is rendered beside SITE and swapped in "
                             "once complete, so a failed render leaves the old site as it was")
    parser.add_argument("--config", type=Path, default=None,
                        help="task config (regimes, metric lists, primary metrics); default: RESULTS/config.yaml "
                             "or the path summary.json names, else inferred from the scores")
    parser.add_argument("--no-instance-pages", action="store_true",
                        help="leave out the per-instance pages (they show hidden test sources and references)")
    parser.add_argument("--datasets", default=None, metavar="D1,D2",
                        help="only these datasets' runs are on the site; the others are left out entirely (e.g. a "
                             "board published while the test phase is hidden)")
    parser.add_argument("--with-audio", nargs="?", const="dev", choices=("dev", "all"), default=None,
                        help="copy the source audio of speech recordings into the site for the replay on their "
                             "pages: `dev` (the default when given bare) publishes development datasets' only, "
                             "`all` every dataset's, hidden test audio included; without it the site holds no "
                             "audio and replays run silent")


def leaderboard_module(name: str = "render") -> ModuleType:
    """`leaderboard.<name>`, also when the package is not installed (it sits next to `harness/` in the repo)."""
    try:
        return importlib.import_module(f"leaderboard.{name}")
    except ModuleNotFoundError as exc:
        if exc.name not in ("leaderboard", f"leaderboard.{name}"):
            raise
    root = Path(__file__).resolve().parents[2]
    if not (root / "leaderboard" / f"{name}.py").is_file():
        from harness.errors import HarnessError

        raise HarnessError("the leaderboard package is not installed (expected leaderboard/ next to harness/)")
    sys.path.insert(0, str(root))
    return importlib.import_module(f"leaderboard.{name}")


def _config_path(args: argparse.Namespace) -> Path | None:
    if args.config is not None:
        return args.config
    for name in ("config.yaml", "task.yaml"):
        if (args.results / name).is_file():
            return args.results / name
    import json

    try:
        named = json.loads(layout.ResultsDir(args.results).summary.read_text(encoding="utf-8")).get("config")
    except (OSError, ValueError, AttributeError):
        return None
    if isinstance(named, str) and Path(named).is_file():
        return Path(named)
    for manifest in sorted(args.results.glob("*/manifest.json")):  # `harness evaluate` records the config path
        try:
            named = json.loads(manifest.read_text(encoding="utf-8")).get("config")
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(named, str) and Path(named).is_file():
            return Path(named)
    return None


def _refuse_run_folder(results: Path) -> None:
    """One line pointing to `harness view` when RESULTS is one run's folder (what `harness run` writes), not the
    results folder of `harness evaluate` a leaderboard is made of."""
    from harness.errors import HarnessError

    if layout.ResultsDir(results).summary.is_file():
        return
    if layout.log_path(results).is_file():
        raise HarnessError(f"{results}: a run folder (instances.log), not the results folder of `harness evaluate` "
                           f"(summary.json): see its timelines with `harness view {results}`")


def run(args: argparse.Namespace) -> int:
    from harness.config import load_config

    _refuse_run_folder(args.results)
    cfg_path = _config_path(args)
    config = load_config(cfg_path, check_files=False) if cfg_path else None
    render = leaderboard_module("render")
    audio = leaderboard_module("audio").SiteAudio(args.with_audio) if args.with_audio else None
    datasets = frozenset(d.strip() for d in args.datasets.split(",") if d.strip()) if args.datasets else None
    index, pages = render.render_site(args.results, args.output, config, instance_pages=not args.no_instance_pages,
                                      audio=audio, overwrite=args.overwrite, datasets=datasets)
    if audio is not None:
        print(f"leaderboard: {audio.files} audio file(s) of {'every' if audio.which == 'all' else 'the development'} "
              f"dataset(s) copied into {args.output / 'audio'}")
    print(f"leaderboard: {pages} pages written; open {index.resolve().as_uri()}")
    return 0
