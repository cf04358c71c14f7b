"""`harness evaluate SUBMISSION... --config C --output RESULTS`: every submission, isolated, scored, summarized."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from harness import layout

if TYPE_CHECKING:
    from harness.intake.discover import SubmissionRef

HELP = "build/load every submission, run each against the hidden data in isolation, score, write results"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("submissions", nargs="+", metavar="SUBMISSION",
                        help="a submission folder, ID=FOLDER (the id results show), a folder of submission folders, "
                             "or a text file listing folders (one a line)")
    parser.add_argument("--config", required=True, type=Path, help="task config (YAML)")
    parser.add_argument("--output", required=True, type=Path, help="results folder")
    parser.add_argument("--dataset", default="test",
                        help="dataset(s) to evaluate, comma-separated (default: test)")
    parser.add_argument("--workers", type=int, default=1, help="runs in parallel, each on its own network")
    parser.add_argument("--resume", action="store_true",
                        help="continue a results folder: skip runs already finished with the same image, config "
                             "and data (other runs in it are kept)")
    parser.add_argument("--overwrite", action="store_true",
                        help="redo the runs named now in a results folder that holds results (other runs in it, "
                             "and their lines of summary.json, are kept)")
    parser.add_argument("--refetch", action="store_true",
                        help="run every submission's fetch: step again, even when its volume is cached (same image "
                             "and fetch command)")
    parser.add_argument("--build-network", default="default",
                        help="network of the submissions' RUN build steps ('none' forbids downloads; default: default)")
    parser.add_argument("--backend", choices=("local", "swarm"), default=None,
                        help="where runs happen: local (this Docker engine) or swarm (services on the swarm this "
                             "engine manages); default: the task config's `backend:` (local)")
    parser.add_argument("--registry", default=None, metavar="HOST:PORT",
                        help="swarm: the registry every node pulls submission images from (pushed once, run by "
                             "digest); default: the task config's swarm.registry; none on a single-node swarm")
    parser.add_argument("--build-engine", default=None, metavar="HOST",
                        help="swarm: build images on this Docker engine (a host URL such as "
                             "unix:///var/run/docker.sock, or 'local': the engine docker reaches without "
                             "DOCKER_HOST), then move them to the manager; for nodes that cannot reach the "
                             "internet; default: the task config's swarm.build_engine, else the manager")
    parser.add_argument("--server-image", default=None,
                        help="image of the evaluation server (default: the harness base image, built if missing)")


def install_signal_handlers() -> None:
    """SIGINT, SIGTERM and SIGHUP all behave like Ctrl-C: every run is torn down before the harness exits.

    SIGINT is set explicitly: a process started in the background by a non-interactive shell (`cmd &` in a script,
    a CI step) inherits SIGINT as ignored, and Python then installs no handler of its own, so `kill -INT` did
    nothing and the runs went on (seen when the test suite itself ran in the background)."""
    import signal

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, interrupt)


def refuse_wrong_replaces(submissions: list[SubmissionRef], config: Path, output: Path) -> None:
    """Before any run: a HarnessError (one line, how many more) when a submission's `replaces:` names no earlier
    submission of its team and track, among those named and those of the results folder it continues."""
    from harness.errors import HarnessError
    from harness.intake.replaces import owners_in_summary, replaces_problems, too_many
    from harness.jsonio import read_json_or_none

    summary = read_json_or_none(layout.ResultsDir(output).summary)
    runs = summary.get("runs") if isinstance(summary, dict) else None
    problems = replaces_problems(submissions, owners_in_summary(runs if isinstance(runs, list) else []))
    if problems:
        raise HarnessError(too_many(problems, f": `harness check-config {config} SUBMISSION...` lists every one"))


def run(args: argparse.Namespace) -> int:
    from harness.batch.outdir import check_results_folder
    from harness.batch.report import failed_runs, not_ranked_runs
    from harness.batch.scheduler import evaluate, load_options
    from harness.config import engine_problem
    from harness.errors import HarnessError

    if args.workers < 1:
        raise HarnessError(f"--workers must be at least 1, got {args.workers}")
    if args.build_engine is not None and (problem := engine_problem(args.build_engine)):
        raise HarnessError(f"--build-engine: {problem}")
    datasets = [d.strip() for d in args.dataset.split(",") if d.strip()]
    opts = load_options(args.submissions, args.config, args.output, datasets, args.workers, args.resume,
                        args.overwrite)
    check_results_folder(opts.output, opts.resume, opts.overwrite)
    refuse_wrong_replaces(opts.submissions, opts.config.path, opts.output)
    for note in opts.config.notes:
        print(f"harness evaluate: note: {note}", file=sys.stderr)
    opts.server_image = args.server_image
    opts.build_network = args.build_network
    opts.refetch = args.refetch
    opts.backend, opts.registry, opts.build_engine = args.backend, args.registry, args.build_engine
    install_signal_handlers()
    summary = evaluate(opts)
    named = {ref.id for ref in opts.submissions}
    runs = [r for r in summary["runs"] if r["submission"] in named and r["dataset"] in datasets]
    for line in failed_runs(runs) + not_ranked_runs(runs):
        print(line)
    failed = [r for r in runs if r["status"] not in ("ok", "partial")]
    print(f"harness evaluate: {len(runs)} run(s), {len(failed)} failed; "
          f"summary in {layout.ResultsDir(args.output).summary}")
    return 0
