"""`harness client`: the out-of-box client, running an agent against an evaluation server."""

from __future__ import annotations

import argparse
import os

HELP = "decode the server's instances with an agent (agent options follow --agent)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from harness.client.options import add_agent_arguments

    parser.add_argument("--server", default=os.environ.get("HARNESS_SERVER_URL") or os.environ.get("SERVER_URL"),
                        help="server URL (default: $HARNESS_SERVER_URL)")
    parser.add_argument("--transport", choices=("auto", "ws", "http"), default="auto",
                        help="WebSocket stream (auto, when websocket-client is installed) or HTTP keep-alive")
    parser.add_argument("--audio", choices=("pcm16", "json"), default="pcm16", help="speech encoding on the wire")
    parser.add_argument("--wait", type=float, default=30.0, help="seconds to wait for the server to come up")
    add_agent_arguments(parser)


def run(args: argparse.Namespace) -> int:
    import sys

    from harness.client.connection import connect, wait_for_server
    from harness.client.options import parse_agent, select_instances
    from harness.client.runner import agent_info_check, client_exit_code, run_instances
    from harness.errors import HarnessError

    if not args.server:
        raise HarnessError("no server URL: pass --server or set HARNESS_SERVER_URL")
    agent = parse_agent(args)
    def waiting(reason: str) -> None:
        print(f"harness client: waiting up to {args.wait:g} s for the evaluation server at {args.server} ({reason})",
              file=sys.stderr, flush=True)

    wait_for_server(args.server, args.wait, waiting)
    first = connect(args.server, args.transport)
    try:
        info = first.info()
    finally:
        first.close()
    agent_info_check(agent, info)
    indices = select_instances(args.instances, info["pending"])
    summary = run_instances(lambda: connect(args.server, args.transport), agent, indices, args.num_workers,
                            audio=args.audio, progress=args.progress)
    print(f"harness client: {summary.decoded} instance(s) decoded ({summary.errors} with errors, "
          f"{summary.refused} refused), {summary.actions} actions in {summary.seconds:.2f} s", file=sys.stderr)
    for line in summary.warnings():
        print(f"harness client: {line}", file=sys.stderr)
    return client_exit_code(summary)
