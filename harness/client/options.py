"""Command-line plumbing shared by `harness client` and `harness run`: agent options and instance subsets."""

from __future__ import annotations

import argparse
from typing import Any

from harness.errors import HarnessError


def accept_agent_options(parser: argparse.ArgumentParser) -> None:
    """Let options the command does not know through to the agent (kept in `args.agent_args`)."""
    parser.allow_abbrev = False
    original = parser.parse_known_args

    def parse_known_args(args: Any = None, namespace: Any = None) -> tuple[argparse.Namespace, list[str]]:
        if args is not None and ("-h" in args or "--help" in args):
            _add_agent_help(parser, list(args))
        ns, extra = original(args, namespace)
        ns.agent_args = list(getattr(ns, "agent_args", None) or []) + list(extra)
        return ns, []

    parser.parse_known_args = parse_known_args  # type: ignore[method-assign,assignment]


def _option_value(args: list[str], name: str) -> str | None:
    """The value of `name` in `args` (`--name value` or `--name=value`), or None."""
    for i, arg in enumerate(args):
        if arg == name and i + 1 < len(args):
            return args[i + 1]
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    return None


def _add_agent_help(parser: argparse.ArgumentParser, args: list[str]) -> None:
    """With `--agent FILE --help`: list the agent's own options (its `add_args`) in a group of the help."""
    path = _option_value(args, "--agent")
    if path is None:
        parser.epilog = "Pass --agent FILE with --help to list the agent's own options."
        return
    from harness.client.loader import load_agent_class

    try:
        cls = load_agent_class(path, _option_value(args, "--agent-class"))
    except HarnessError as exc:
        parser.epilog = f"(cannot list the agent's options: {str(exc).splitlines()[0]})"
        return
    add = getattr(cls, "add_args", None)
    if add is None:
        return
    group = parser.add_argument_group(f"options of the agent {cls.__name__} ({path})")
    try:
        add(group)
    except (argparse.ArgumentError, TypeError, ValueError) as exc:
        parser.epilog = f"(cannot list the agent's options: {exc})"


def add_agent_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--agent", required=True, help="the agent's .py file")
    parser.add_argument("--agent-class", default=None, help="class to use when the file defines several agents")
    parser.add_argument("--num-workers", type=int, default=1, help="instances decoded concurrently (default 1)")
    parser.add_argument("--instances", default=None, help="subset of instances, e.g. 0-9,15 (default: all pending)")
    parser.add_argument("--progress", action="store_true", help="one line per finished instance on stderr")
    accept_agent_options(parser)


def parse_agent(args: argparse.Namespace) -> Any:
    """Load the agent class, parse its own options from `args.agent_args`, build it."""
    from harness.client.loader import build_agent, load_agent_class

    cls = load_agent_class(args.agent, args.agent_class)
    parser = argparse.ArgumentParser(prog=f"agent {cls.__name__}", add_help=False, allow_abbrev=False)
    add = getattr(cls, "add_args", None)
    if add is not None:
        add(parser)
    agent_ns, rest = parser.parse_known_args(getattr(args, "agent_args", []) or [])
    if rest:
        raise HarnessError(f"unknown option(s) for {cls.__name__}: {' '.join(rest)}")
    args.agent_identity = agent_identity(args.agent, cls.__name__, vars(agent_ns))
    for key, value in vars(args).items():  # the agent may read the run's options too (SimulEval style)
        if not hasattr(agent_ns, key) and not key.startswith("_"):
            setattr(agent_ns, key, value)
    if args.num_workers < 1:
        raise HarnessError("--num-workers must be at least 1")
    return build_agent(cls, agent_ns)


def agent_identity(path: str, class_name: str, options: dict[str, Any]) -> dict[str, Any]:
    """What system a run decodes with: the agent file's hash, its class and its own parsed options (so `--k 3`
    and `--k=3` are the same system). `harness run --resume` refuses a folder started by another one."""
    import json

    from harness.digest import sha256_file

    return {"agent_sha256": sha256_file(path), "agent_class": class_name,
            "agent_options": json.loads(json.dumps(options, sort_keys=True, default=str))}


def select_instances(spec: str | None, pending: list[int]) -> list[int]:
    """Pending instances, restricted to `spec` (comma-separated indices and ranges a-b)."""
    if not spec:
        return list(pending)
    wanted: set[int] = set()
    for part in spec.split(","):
        part = part.strip()
        try:
            if "-" in part:
                a, b = part.split("-", 1)
                wanted.update(range(int(a), int(b) + 1))
            elif part:
                wanted.add(int(part))
        except ValueError:
            raise HarnessError(f"--instances: {part!r} is not an index or a range a-b") from None
    return [i for i in pending if i in wanted]
