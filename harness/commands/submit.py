"""`harness submit FOLDER --portal URL [--wait] [--push-only]`: hand a submission in to the campaign portal."""

from __future__ import annotations

import argparse
from pathlib import Path

HELP = ("submit a folder to the campaign portal: checked here first, uploaded resumably, and with --wait followed "
        "to its dev scores (the token: $HARNESS_PORTAL_TOKEN or ~/.config/harness/portal-token, mode 600)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("folder", type=Path, help="the submission folder (submission.yaml and its files)")
    parser.add_argument("--portal", required=True, help="the portal's URL, e.g. https://portal.example.org")
    parser.add_argument("--wait", action="store_true", help="follow the submission until every dataset has ended")
    parser.add_argument("--push-only", action="store_true",
                        help="an image submission (build: {image: image.tar} or a local tag): push the image to the "
                             "portal's registry and print its reference by digest; upload nothing")


def run(args: argparse.Namespace) -> int:
    from harness.portal.submit import read_token, submit

    return submit(args.folder, args.portal, read_token(), args.wait, push_only=args.push_only)
