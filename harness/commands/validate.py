"""`harness validate SUBMISSION_DIR --config C [--dataset dev] [--no-docker]`: the organizer's pipeline on the
dev set, with a report (status, scores, preflight checks)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from harness.config import TaskConfig, Track

HELP = "run a submission through the organizer's pipeline on the dev set and report status, scores and checks"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("submission", type=Path, help="the submission folder (holding submission.yaml)")
    parser.add_argument("--config", required=True, type=Path, help="task config (YAML)")
    parser.add_argument("--dataset", default="dev", help="dataset to run on (default: dev)")
    parser.add_argument("--output", type=Path, default=None, help="results folder (default: a new temporary one)")
    parser.add_argument("--overwrite", action="store_true",
                        help="reuse an --output folder that holds results (the run validated now is redone)")
    parser.add_argument("--no-docker", action="store_true",
                        help="run the submission's command as a local process against a local server")
    parser.add_argument("--server-image", default=None, help="image of the evaluation server (Docker mode)")
    parser.add_argument("--build-network", default="default", help="network of RUN build steps (default: default)")


def run(args: argparse.Namespace) -> int:
    from harness.batch import validate
    from harness.batch.outdir import check_results_folder
    from harness.batch.progress import Progress
    from harness.config import load_config
    from harness.data.dataset_check import require_dataset
    from harness.errors import HarnessError

    config = load_config(args.config, check_files=False)  # only the files of the dataset validated on matter
    if not any(args.dataset in t.datasets for t in config.tracks):
        from harness.fields import name_hint

        known = [name for t in config.tracks for name in t.datasets]
        raise HarnessError(f"{args.config}: no track has a dataset {args.dataset!r}{name_hint(args.dataset, known)}")
    if not (args.submission / "submission.yaml").is_file() and not args.submission.is_dir():
        raise HarnessError(f"{args.submission}: submission folder not found")
    for track in _tracks_run(config, args.submission, args.dataset):
        require_dataset(config, track, args.dataset)
    if args.no_docker:
        _local_fetch_dir(args.submission)
    if args.output is not None:
        check_results_folder(args.output, resume=False, overwrite=args.overwrite, can_resume=False)
    output = (args.output or validate.default_output()).resolve()
    folder = args.submission.resolve()
    progress = Progress()  # a live table on a terminal; a line per state change in a log, as `harness evaluate`
    if args.no_docker:
        report = validate.validate_local(folder, config, args.dataset, output, progress)
    else:
        from harness.commands.evaluate import install_signal_handlers

        install_signal_handlers()
        report = validate.validate_docker(folder, config, args.dataset, output, args.server_image,
                                          args.build_network, progress)
    track = next((t for t in config.tracks if t.name == report.track), None) or next(
        t for t in config.tracks if args.dataset in t.datasets)
    for line in report.lines([track.primary_quality, track.primary_latency]):
        print(line)
    return 0 if report.ok() else 1


def _local_fetch_dir(folder: Path) -> None:
    """`--no-docker` runs no `fetch:` step: a submission that has one needs HARNESS_FETCH_DIR to name a folder
    holding what the step would download, else one line says so and what to do. The variable is made absolute
    here, since the command runs in the submission folder."""
    import os

    from harness.errors import HarnessError
    from harness.intake.submission import load_submission
    from harness.run.fetch import FETCH_ENV

    try:
        fetch = load_submission(folder).fetch
    except HarnessError:  # the pipeline reports the submission's own mistake as its status
        return
    if not fetch:
        return
    given = os.environ.get(FETCH_ENV, "")
    if not given:
        raise HarnessError(f"{folder / 'submission.yaml'}: fetch: does not run with --no-docker and {FETCH_ENV} is "
                           f"unset: set {FETCH_ENV} to a folder holding what the fetch step downloads (the weights), "
                           f"or validate with Docker (without --no-docker)")
    fetched = Path(given).resolve()
    if not fetched.is_dir():
        raise HarnessError(f"{FETCH_ENV}={given}: no such folder ({fetched}); --no-docker runs no fetch step: name "
                           f"a folder holding what {folder / 'submission.yaml'}'s fetch: downloads")
    os.environ[FETCH_ENV] = str(fetched)


def _tracks_run(config: TaskConfig, folder: Path, dataset: str) -> list[Track]:
    """The tracks whose `dataset` this validation runs: the submission's track, or (when submission.yaml cannot
    name one; the pipeline then reports why) every track with that dataset."""
    from harness.errors import HarnessError
    from harness.intake.submission import load_submission

    try:
        name = load_submission(folder).track
        track = next(t for t in config.tracks if t.name == name and dataset in t.datasets)
    except (HarnessError, StopIteration):
        return [t for t in config.tracks if dataset in t.datasets]
    return [track]
