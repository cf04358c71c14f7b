"""`harness export RUN_DIR --to omnisteval|simulstream --output DIR`: a long-form run as the peers' inputs."""

from __future__ import annotations

import argparse
from pathlib import Path

HELP = "write a long-form run as OmniSTEval's inputs or as a SimulStream metrics log (for their scorers)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", metavar="RUN_DIR_OR_LOG", help="a long-form run directory or its instances.log")
    parser.add_argument("--to", choices=("omnisteval", "simulstream"), required=True, help="which tool's format")
    parser.add_argument("--output", required=True, help="folder to write into (created; one that holds files is "
                                                         "refused unless --overwrite)")
    parser.add_argument("--overwrite", action="store_true",
                        help="write into an --output folder that holds files (the files export writes are replaced)")


def run(args: argparse.Namespace) -> int:
    from harness.errors import HarnessError
    from harness.longform import interop
    from harness.longform.scoring import is_longform_log
    from harness.runlog import read_instances

    log = read_instances(args.path, allow_torn=True)
    if not is_longform_log(log.records):
        raise HarnessError(f"{log.path}: not a long-form run (its records carry no reference segmentation)")
    output = Path(args.output)
    if output.exists() and not output.is_dir():
        raise HarnessError(f"{output}: --output is a file, not a folder")
    if output.is_dir() and any(output.iterdir()) and not args.overwrite:
        raise HarnessError(f"{output}: output folder is not empty; pass --overwrite to replace the files export "
                           "writes there, or choose another --output")
    write = interop.write_omnisteval_inputs if args.to == "omnisteval" else interop.write_simulstream_log
    paths = write(log.records, output)
    for key, path in paths.items():
        print(f"{key}: {path}")
    return 0
