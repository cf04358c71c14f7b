"""`harness check SUBMISSION_DIR`: static checks of a submission, one line per finding."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

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
    for finding in report.findings:
        if not (args.quiet and finding.level == OK):
            print(printable(finding))  # folder names and submission.yaml values are the participant's
    n = len(report.errors)
    print(f"{printable(args.submission)}: {'passed' if report.ok else f'{n} problem' + ('s' if n != 1 else '')}")
    return 0 if report.ok else 1
