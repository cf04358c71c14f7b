"""`harness check SUBMISSION_DIR`: static checks of a submission, one line per finding."""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any

HELP = "check a submission folder statically (schema, files, build context, image architecture and size)"


def _size(text: str) -> int:
    """`500m`, `4g`, `4GiB`, `1000000` → bytes."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*", text.lower())
    if not m:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (e.g. 500m, 4g)")
    return int(float(m.group(1)) * 1024 ** " kmgt".index(m.group(2) or " "))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("submission", type=Path, nargs="?",
                        help="the submission folder (holding submission.yaml); without one, --config is checked "
                             "alone, as `harness check-config` does")
    parser.add_argument("--config", type=Path, help="task config: also check that the track exists")
    parser.add_argument("--max-context-size", type=_size, default=None, metavar="SIZE",
                        help="cap on the build context or image.tar (default 4g)")
    parser.add_argument("--max-image-size", type=_size, default=None, metavar="SIZE",
                        help="cap on the built image (default 10g)")
    parser.add_argument("--no-docker", action="store_true", help="skip the checks that ask the Docker engine")
    parser.add_argument("--quiet", "-q", action="store_true", help="print only warnings and errors")


def run(args: argparse.Namespace) -> int:
    from harness.config import load_config
    from harness.images.checks import DEFAULT_MAX_IMAGE_BYTES, OK, check_submission
    from harness.text import printable

    if args.submission is None:
        if args.config is None:
            from harness.errors import HarnessError

            raise HarnessError("name a submission folder, or --config CONFIG to check a task config alone")
        from harness.commands.check_config import report as config_report

        return config_report(args.config, None)
    if not args.submission.exists():  # nothing to check: a usage error, as in `harness validate`
        from harness.errors import HarnessError

        raise HarnessError(f"{args.submission}: submission folder not found")
    config = load_config(args.config, check_files=False) if args.config else None
    report = check_submission(args.submission, config=config, max_context_bytes=args.max_context_size,
                              max_image_bytes=args.max_image_size or DEFAULT_MAX_IMAGE_BYTES,
                              use_docker=not args.no_docker)
    if config is not None and report.submission is not None and report.submission.is_log:
        _check_logs(report, config)
    for finding in report.findings:
        if not (args.quiet and finding.level == OK):
            print(printable(finding))  # folder names and submission.yaml values are the participant's
    n = len(report.errors)
    print(f"{printable(args.submission)}: {'passed' if report.ok else f'{n} problem' + ('s' if n != 1 else '')}")
    return 0 if report.ok else 1


def _check_logs(report: Any, config: Any) -> None:
    """A log submission's logs, each converted against its dataset as `harness evaluate` will (one line each)."""
    from harness.batch.logcheck import LogProblems
    from harness.batch.logsub import log_format, log_records, unknown_dataset
    from harness.errors import HarnessError
    from harness.images.checks import ERROR, OK, WARNING

    sub = report.submission
    if sub.track not in [t.name for t in config.tracks]:
        return
    track = config.track(sub.track)
    if track.regime_from is not None and track.regime_from not in sub.logs:
        report.add(WARNING, f"{sub.yaml_path}: logs: no {track.regime_from} log: its regime cannot be decided and "
                            f"it is not ranked (track {track.name!r} decides regimes by the {track.primary_latency} "
                            f"of the {track.regime_from} run)")
    for name, log in sub.logs.items():
        where = f"{sub.yaml_path}: logs.{name}"
        if (problem := unknown_dataset(name, track)) is not None:
            report.add(ERROR, f"{where}: {problem}")
            continue
        try:
            records = log_records(log, track, track.dataset(name), where, config=sub.log_configs.get(name),
                                  tokenizer=sub.log_tokenizers.get(name))
        except LogProblems as exc:  # every problem of its delays and times, one line each
            for line in exc.problems:
                report.add(ERROR, line)
        except HarnessError as exc:
            report.add(ERROR, str(exc))
        else:
            unit = "recording" if track.is_longform else "instance"
            report.add(OK, f"{where}: {log_format(log, track)} log, {len(records)} {unit}(s) of dataset {name!r}")
            if name == (track.regime_from or "dev"):
                closed = "; built on closed models (models: closed): shown apart, never ranked" \
                    if sub.models == "closed" else ""
                report.add(OK, f"{where}: {_regime_line(records, track, name)}{closed}")


def _regime_line(records: list[dict[str, Any]], track: Any, name: str) -> str:
    """The log's primary latency on `name` and the regime it competes in (as `harness evaluate` will score it)."""
    from harness.scoring import score_records
    from harness.scoring.options import track_scoring_options

    options = track_scoring_options(track, metrics=(track.primary_latency,), bootstrap=0)
    unit = "ms" if track.is_speech and not track.is_longform else track.latency_unit  # the records' delay unit
    record = score_records(records, options, latency_unit=unit, speech=track.is_speech).get(track.primary_latency) or {}
    latency = record.get("score")
    if not isinstance(latency, (int, float)):
        return f"{track.primary_latency} could not be computed on {name}: its regime is not known"
    measured = f"{track.primary_latency} {latency:.2f} {record.get('unit') or ''}".rstrip() + f" on {name}"
    decides = f" (decides its regime on every dataset: regime_from: {name})" if track.regime_from else ""
    if not track.regimes:
        return f"{measured}; track {track.name!r} has no latency regimes"
    regime = track.regime_for(float(latency))
    if regime is None:
        top = max(g.max_latency for g in track.regimes)
        where = f"above every regime (the highest ends at {top:g})" if latency > top else "outside every regime"
        return f"{measured}: {where}{decides}"
    low = f"{regime.min_latency:g} < " if regime.min_latency is not None else ""
    return f"{measured}: competes in regime {regime.name!r} ({low}{track.primary_latency} <= " \
           f"{regime.max_latency:g}){decides}"
