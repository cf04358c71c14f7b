"""`harness export RUN_DIR_OR_LOG --to omnisteval|simulstream --output DIR`: a long-form run as the peers' inputs.

A log of another tool (SimulEval/OmniSTEval JSONL or a SimulStream metrics log) is read as `harness score` reads it,
with `--segmentation` and `--references`."""

from __future__ import annotations

import argparse
from pathlib import Path

HELP = "write a long-form run as OmniSTEval's inputs or as a SimulStream metrics log (for their scorers)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from harness.commands.score import add_foreign_arguments

    parser.add_argument("path", metavar="RUN_DIR_OR_LOG", help="a long-form run directory or its instances.log")
    parser.add_argument("--to", choices=("omnisteval", "simulstream"), required=True, help="which tool's format")
    parser.add_argument("--output", required=True, help="folder to write into (created; one that holds files is "
                                                         "refused unless --overwrite)")
    parser.add_argument("--overwrite", action="store_true",
                        help="write into an --output folder that holds files (the files export writes are replaced)")
    add_foreign_arguments(parser, resegmentation=False)


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
        if not is_longform_log(records):
            raise HarnessError(f"{log_path}: not a long-form run: its records carry no reference segmentation "
                               f"({hint})")
    write = interop.write_omnisteval_inputs if args.to == "omnisteval" else interop.write_simulstream_log
    paths = write(records, output)
    for key, path in paths.items():
        print(f"{key}: {path}")
    return 0
