"""Joint mode: an evaluation and a client in one process — in-process calls, or a loopback server thread."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from harness.client.agent import Agent
from harness.client.connection import Connection, InProcessConnection, connect
from harness.client.options import select_instances
from harness.client.runner import RunSummary, agent_info_check, run_instances
from harness.server.evaluation import Evaluation, open_evaluation


@contextmanager
def loopback_server(evaluation: Evaluation) -> Iterator[str]:
    """Serve `evaluation` on 127.0.0.1 (a free port) from a background thread; yields its URL."""
    import tornado.httpserver
    import tornado.netutil

    from harness.server.app import make_app

    ready = threading.Event()
    state: dict[str, Any] = {}

    def serve() -> None:
        async def main() -> None:
            sockets = tornado.netutil.bind_sockets(0, address="127.0.0.1")
            server = tornado.httpserver.HTTPServer(make_app(evaluation),
                                                   max_body_size=evaluation.limits.max_body_bytes + 1_048_576)
            server.add_sockets(sockets)
            state["port"] = sockets[0].getsockname()[1]
            state["loop"] = asyncio.get_running_loop()
            state["stop"] = asyncio.Event()
            ready.set()
            await state["stop"].wait()
            server.stop()

        asyncio.run(main())

    thread = threading.Thread(target=serve, name="harness-loopback-server", daemon=True)
    thread.start()
    ready.wait(10)
    try:
        yield f"http://127.0.0.1:{state['port']}"
    finally:
        state["loop"].call_soon_threadsafe(state["stop"].set)
        thread.join(5)


def joint_run(config: str | Path, dataset: str, output: str | Path, agent: Agent, track: str | None = None,
              resume: bool = False, overwrite: bool = False, transport: str = "inprocess", num_workers: int = 1,
              instances: str | None = None, progress: bool = False) -> tuple[RunSummary, Path]:
    """Decode every pending instance with `agent`, then write scores.json; (summary, scores path)."""
    from harness.server.app import write_scores

    evaluation = open_evaluation(config, dataset, output, track, resume=resume, overwrite=overwrite)
    try:
        info = evaluation.info()
        agent_info_check(agent, info)
        indices = select_instances(instances, info["pending"])
        if transport == "inprocess":
            summary = run_instances(lambda: InProcessConnection(evaluation), agent, indices, num_workers,
                                    progress=progress)
        else:
            with loopback_server(evaluation) as url:
                def make() -> Connection:
                    return connect(url, transport)

                summary = run_instances(make, agent, indices, num_workers, audio="pcm16", progress=progress)
        scores = write_scores(evaluation)
    finally:
        evaluation.close()
    return summary, scores
