"""`harness server`: the evaluation server alone."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.server.evaluation import Evaluation

HELP = "run the evaluation server for one dataset of a task config"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", required=True, help="task config (YAML)")
    parser.add_argument("--dataset", required=True, help="dataset name in the track, e.g. dev or test")
    parser.add_argument("--track", default=None, help="track name (needed when the config has several)")
    parser.add_argument("--port", type=int, default=12321, help="TCP port (0: any free port; default 12321)")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (0.0.0.0 inside a container)")
    parser.add_argument("--output", required=True, help="folder for instances.log and scores.json")
    parser.add_argument("--resume", action="store_true", help="continue an interrupted instances.log")
    parser.add_argument("--overwrite", action="store_true", help="start over even if instances.log exists")
    parser.add_argument("--gate-file", default=None, metavar="PATH",
                        help="keep GET /gate closed (503) until PATH exists: a participant started early waits on it")
    parser.add_argument("--context-root", default=None, metavar="DIR",
                        help="name the dataset's context documents under DIR, where the participant has them "
                             "mounted (default: their paths here)")
    parser.add_argument("--exit-when-done", action="store_true",
                        help="stop once every instance is logged (and, unless --no-score, scores.json written)")
    parser.add_argument("--no-score", action="store_true",
                        help="write no scores.json once every instance is logged: the caller scores the log "
                             "(`harness evaluate` does, on its host; GET /result still scores)")
    drive = parser.add_argument_group("driving an agent-server participant (IWSLT 2023-26 images)")
    drive.add_argument("--drive", choices=("simuleval-agent-server", "simulstream-http"), default=None,
                       help="play the client: feed the participant's server at --participant, then stop")
    drive.add_argument("--participant", default=None, metavar="HOST:PORT", help="the participant's server")
    drive.add_argument("--startup-timeout", type=float, default=None,
                       help="seconds the participant has to start listening (default: limits.startup_timeout_s)")


def run(args: argparse.Namespace) -> int:
    import sys
    from functools import partial

    from harness.server.app import serve
    from harness.server.evaluation import open_evaluation

    evaluation = open_evaluation(args.config, args.dataset, args.output, args.track, args.resume, args.overwrite,
                                 context_root=args.context_root)
    evaluation.scorer = partial(_scores, evaluation)  # GET /result scores the log file
    evaluation.gate_file = args.gate_file

    def score_file() -> None:
        """Once every instance is logged: score the log file (after it is synced) into scores.json, unless the
        caller scores it (--no-score)."""
        logged = f"harness server: all {len(evaluation.dataset)} instances logged"
        if args.no_score:
            print(f"{logged} (scored by the caller)", file=sys.stderr, flush=True)
            return
        try:
            from harness.run.joint import score_evaluation

            evaluation.writer.sync()
            path = score_evaluation(evaluation)
            print(f"{logged}; scores in {path}", file=sys.stderr, flush=True)
        except Exception as exc:  # the run log is the result; a scoring failure is reported, never fatal
            print(f"harness server: scoring failed: {exc}", file=sys.stderr, flush=True)

    evaluation.on_done.append(score_file)
    companion = None
    if args.drive:
        from harness import layout
        from harness.drivers import drive
        from harness.errors import HarnessError

        if not args.participant or ":" not in args.participant:
            raise HarnessError("--drive needs --participant HOST:PORT")
        startup = args.startup_timeout if args.startup_timeout is not None else evaluation.limits.startup_timeout_s

        run_dir = layout.RunDir(evaluation.writer.path.parent)

        def companion(stop):  # noqa: ANN001, ANN202 - called by serve() in its own thread
            report = drive(evaluation, args.drive, args.participant, startup, run_dir)
            print(f"harness server: driver {report.state}: {report.instances} instance(s)"
                  f"{' - ' + report.reason if report.reason else ''}", file=sys.stderr, flush=True)
            stop()

    return serve(evaluation, args.host, args.port, exit_when_done=args.exit_when_done, companion=companion)


def _scores(evaluation: Evaluation, _path: Path) -> dict[str, Any]:
    """The scores of the evaluation's log, per domain too (`harness.run.joint.evaluation_scores`), imported when
    first asked (GET /result): a server whose caller scores never loads the metrics."""
    from harness.run.joint import evaluation_scores

    return evaluation_scores(evaluation)[0]
