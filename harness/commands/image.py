"""`harness image build [--air-gapped] [--tag T]`: build the harness base image (Dockerfile.base)."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

HELP = "build the harness base image (air-gapped: from Debian packages, without a registry)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="image_command", metavar="ACTION")
    sub.required = True
    build = sub.add_parser("build", help="build the base image (a no-op when it is up to date)")
    mode = build.add_mutually_exclusive_group()
    mode.add_argument("--air-gapped", dest="air_gapped", action="store_true", default=None,
                      help="root filesystem from debootstrap + docker import, no registry "
                           "(default: automatic when no registry answers)")
    mode.add_argument("--registry", dest="air_gapped", action="store_false",
                      help="FROM python:3.11-slim-bookworm pulled from a registry")
    build.add_argument("--tag", default=None, help="image tag (default harness-base:latest)")
    build.add_argument("--rebuild", action="store_true", help="build even if the image is up to date")
    build.add_argument("--log", type=Path, default=None, help="build log (default ~/.cache/harness/logs/)")


def run(args: argparse.Namespace) -> int:
    from harness.images import base as images

    tag = args.tag or images.DEFAULT_TAG
    started = time.monotonic()
    images.ensure_base_image(air_gapped=args.air_gapped, rebuild=args.rebuild, tag=tag, log=args.log)
    info = images.image_info(tag)
    labels = images.image_labels(tag)
    print(f"{tag}: {info.id[:19]} {info.architecture} {info.size / 1e6:.0f} MB, "
          f"{labels.get(images.LABEL_MODE, '?')} build, harness {labels.get(images.LABEL_VERSION, '?')} "
          f"({time.monotonic() - started:.1f} s)")
    return 0
