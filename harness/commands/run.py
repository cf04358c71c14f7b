"""`harness run`: joint mode — the server and the client in one process, without HTTP by default."""

from __future__ import annotations

import argparse
from pathlib import Path

HELP = "evaluate an agent on a dataset in one command (server and client together); writes instances.log, scores.json"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from harness.client.options import add_agent_arguments

    parser.add_argument("--config", required=True, help="task config (YAML)")
    parser.add_argument("--dataset", required=True, help="dataset name, e.g. dev")
    parser.add_argument("--track", default=None, help="track name (needed when the config has several)")
    parser.add_argument("--output", required=True, help="folder for instances.log and scores.json")
    parser.add_argument("--resume", action="store_true", help="continue an interrupted run in --output")
    parser.add_argument("--overwrite", action="store_true", help="start over even if instances.log exists")
    parser.add_argument("--transport", choices=("inprocess", "ws", "http"), default="inprocess",
                        help="in-process calls (default), or a loopback server with the WebSocket or HTTP client")
    add_agent_arguments(parser)


def run(args: argparse.Namespace) -> int:
    import sys

    from harness.client.options import parse_agent
    from harness.run.compute import process_started_at
    from harness.run.joint import joint_run

    started = process_started_at()  # the start-up time runs from here to the agent's first request
    agent = parse_agent(args)
    summary, scores_path = joint_run(args.config, args.dataset, args.output, agent, track=args.track,
                                     resume=args.resume, overwrite=args.overwrite, transport=args.transport,
                                     num_workers=args.num_workers, instances=args.instances, progress=args.progress,
                                     system=args.agent_identity, started_at=started)
    for line in summary.warnings():
        print(f"harness run: {line}", file=sys.stderr)
    print(f"harness run: {summary.decoded} instance(s) decoded ({summary.errors} with errors), "
          f"{summary.actions} actions in {summary.seconds:.2f} s; scores in {scores_path}", file=sys.stderr)
    for line in primary_score_lines(args.config, args.track, scores_path):
        print(line)
    from harness.commands.score import warnings
    from harness.jsonio import read_json_or_none

    for line in warnings(read_json_or_none(Path(str(scores_path))) or {}):
        print(f"harness run: warning: {line}", file=sys.stderr)
    outcome = summary.outcome
    if outcome.status != "ok":  # worded as `harness validate` and `harness evaluate` word it (run/failures.py)
        partial = "  [partial output]" if outcome.partial else ""
        print(f"harness run: status {outcome.status}: {outcome.reason}{partial}", file=sys.stderr)
        return 1
    return 0


def primary_score_lines(config: str, track: str | None, scores_path: object) -> list[str]:
    """The track's primary quality and latency scores, one line each (`BLEU  21.53  95% CI [..]  points`)."""
    import json
    from pathlib import Path

    from harness.config import load_config

    primary = load_config(config, check_files=False).track(track)
    scores = json.loads(Path(str(scores_path)).read_text(encoding="utf-8"))
    lines = []
    for name in (primary.primary_quality, primary.primary_latency):
        rec = scores.get(name)
        if not isinstance(rec, dict) or rec.get("score") is None:
            continue
        ci = rec.get("ci95")
        interval = f"  95% CI [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else ""
        lines.append(f"{name:<6} {rec['score']:.2f} {rec.get('unit') or ''}{interval}".rstrip())
    return lines
