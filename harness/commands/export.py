"""`harness export RUN_DIR_OR_LOG --to omnisteval|simulstream|webvtt|srt --output DIR`: a long-form run as the peers'
inputs, or a speech run's output as timed captions (`harness.captions`).

A log of another tool (SimulEval/OmniSTEval JSONL or a SimulStream metrics log) is read as `harness score` reads it,
with `--segmentation` and `--references`."""

from __future__ import annotations

import argparse
from pathlib import Path

HELP = ("write a long-form run as OmniSTEval's inputs or as a SimulStream metrics log (for their scorers), or a "
        "speech run's output as WebVTT/SRT captions")
CAPTIONS = ("webvtt", "srt")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from harness.commands.score import add_foreign_arguments

    parser.add_argument("path", metavar="RUN_DIR_OR_LOG", help="a long-form run directory or its instances.log")
    parser.add_argument("--to", choices=("omnisteval", "simulstream", *CAPTIONS), required=True,
                        help="which tool's format; webvtt and srt: timed captions of each recording (NAME.vtt not "
                             "computation-aware, NAME.ca.vtt computation-aware)")
    parser.add_argument("--output", required=True, help="folder to write into (created; one that holds files is "
                                                         "refused unless --overwrite)")
    parser.add_argument("--overwrite", action="store_true",
                        help="write into an --output folder that holds files (the files export writes are replaced)")
    cap = parser.add_argument_group("captions (--to webvtt|srt)")
    cap.add_argument("--cue-seconds", type=_positive, default=None, metavar="S",
                     help="fixed-length cues of S seconds (default: one caption per reference sentence of a long-form "
                          "run, after resegmentation; 5 s windows for output without reference sentences)")
    cap.add_argument("--hold-seconds", type=_positive, default=5.0, metavar="S",
                     help="how long a caption stays after its last word when the next one comes later (default 5)")
    cap.add_argument("--unit", choices=("word", "char"), default=None,
                     help="the output's units (default: char for a zh or ja target, else word)")
    add_foreign_arguments(parser, resegmentation=False)


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds: {text!r}")
    return value


def run(args: argparse.Namespace) -> int:
    from harness import interop
    from harness.errors import HarnessError
    from harness.runlog import read_instances
    from harness.scoring.longform import is_longform_log

    output = Path(args.output)
    if output.exists() and not output.is_dir():
        raise HarnessError(f"{output}: --output is a file, not a folder")
    if output.is_dir() and any(output.iterdir()) and not args.overwrite:
        raise HarnessError(f"{output}: output folder is not empty; pass --overwrite to replace the files export "
                           "writes there, or choose another --output")
    if args.segmentation:
        from harness.commands.score import foreign_longform_records

        args.resegmentation = None
        log_path, records = foreign_longform_records(args.path, args)
    else:
        hint = "another tool's long-form log is read with --segmentation and --references"
        try:
            log = read_instances(args.path, allow_torn=True)
        except HarnessError as exc:
            raise HarnessError(f"{exc} ({hint})") from None
        log_path, records = log.path, log.records
        if args.to in CAPTIONS:
            return _captions(records, output, args)
        if not is_longform_log(records):
            raise HarnessError(f"{log_path}: not a long-form run: its records carry no reference segmentation "
                               f"({hint})")
    if args.to in CAPTIONS:
        return _captions(records, output, args)
    write = interop.write_omnisteval_inputs if args.to == "omnisteval" else interop.write_simulstream_log
    paths = write(records, output)
    for key, path in paths.items():
        print(f"{key}: {path}")
    return 0


def _captions(records: list[dict], output: Path, args: argparse.Namespace) -> int:
    from harness.captions import write_captions

    unit = args.unit
    if unit is None:
        langs = {str((r.get("longform") or {}).get("target_lang") or "") for r in records}
        unit = "char" if langs and langs <= {"zh", "ja"} else "word"
    paths = write_captions(records, output, args.to, unit,
                           cue_ms=None if args.cue_seconds is None else args.cue_seconds * 1000,
                           hold_ms=args.hold_seconds * 1000)
    for key, path in paths.items():
        print(f"{key}: {path}")
    return 0
