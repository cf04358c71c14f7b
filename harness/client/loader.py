"""Load an agent class from a .py file (a participant's agent.py)."""

from __future__ import annotations

import importlib.util
import inspect
import sys
from pathlib import Path
from typing import Any

from harness.client.agent import Agent
from harness.client.tracebacks import agent_traceback, syntax_error_line
from harness.errors import HarnessError


def _is_simuleval_agent(obj: Any) -> bool:
    mro = getattr(obj, "__mro__", ())
    return any(c.__module__.startswith("simuleval.") and c.__name__ == "GenericAgent" for c in mro)


def load_agent_class(path: str | Path, class_name: str | None = None) -> type:
    """The agent class defined in `path`: `class_name`, or the only Agent subclass defined there.

    A SimulEval 1.1.4 agent (a `GenericAgent` subclass) is returned as is; `build_agent` wraps it.
    """
    p = Path(path)
    if not p.is_file():
        raise HarnessError(f"agent file not found: {p}")
    name = f"harness_user_agent_{abs(hash(str(p.resolve())))}"
    spec = importlib.util.spec_from_file_location(name, p)
    if spec is None or spec.loader is None:
        raise HarnessError(f"{p}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    sys.path.insert(0, str(p.parent.resolve()))
    try:
        spec.loader.exec_module(module)
    except HarnessError:
        raise
    except SyntaxError as exc:  # the file and line say it all: no frames of the import machinery
        raise HarnessError(f"importing the agent failed: {syntax_error_line(p, exc)}") from None
    except Exception as exc:
        raise HarnessError(f"{p}: importing the agent failed: {type(exc).__name__}: {exc}\n"
                           f"{agent_traceback(exc).rstrip()}") from None
    if class_name:
        cls = getattr(module, class_name, None)
        if not inspect.isclass(cls):
            raise HarnessError(f"{p}: no class {class_name!r}")
        return cls
    found = [
        obj for obj in vars(module).values()
        if inspect.isclass(obj) and obj.__module__ == name
        and ((issubclass(obj, Agent) and obj.__dict__.get("policy") is not None) or _is_simuleval_agent(obj))
    ]
    if not found:
        raise HarnessError(f"{p}: defines no agent class (a subclass of harness.client.agent.TextAgent/SpeechAgent "
                           "or of a SimulEval agent with a policy)")
    if len(found) > 1:
        names = ", ".join(c.__name__ for c in found)
        raise HarnessError(f"{p}: several agent classes ({names}); pick one with --agent-class")
    return found[0]


def build_agent(cls: type, args: Any) -> Agent:
    """An agent object from its class and parsed options (SimulEval agents go through the adapter)."""
    if _is_simuleval_agent(cls):
        try:
            from harness.client.simuleval_adapter import SimulEvalAgentAdapter
        except ImportError as exc:
            raise HarnessError(f"{cls.__name__} is a SimulEval agent but the adapter is not available: {exc}") from None
        return SimulEvalAgentAdapter.wrap(cls, args)
    if not issubclass(cls, Agent):
        raise HarnessError(f"{cls.__name__} is not an agent (subclass harness.client.agent.TextAgent or SpeechAgent)")
    try:
        return cls.from_args(args)
    except HarnessError:
        raise
    except Exception as exc:
        where = inspect.getsourcefile(cls) or cls.__module__
        raise HarnessError(f"{where}: creating the agent {cls.__name__} failed: {type(exc).__name__}: {exc}\n"
                           f"{agent_traceback(exc).rstrip()}") from None
