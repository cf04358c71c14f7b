"""What SimulStream 1.0.0's own client sends to a SimulStream server, as it arrives (for comparing the driver's
requests with it)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from tests.agent_server_fakes import FakeAgentServer

__all__ = ["Request", "real_client_requests"]

Request = tuple[str, list[str], bytes]


def real_client_requests() -> list[Request]:
    """One recording's requests as SimulStream's own client sends them (the order of `simulstream.inference`)."""
    from simulstream.server.speech_processors.remote.http_proxy_speech_processor import HttpProxySpeechProcessor

    with FakeAgentServer("simulstream") as fake:
        client = HttpProxySpeechProcessor(SimpleNamespace(hostname="127.0.0.1", port=fake.port))
        assert client.speech_chunk_size == fake.chunk_s
        client.set_source_language("en")
        client.set_target_language("es")
        out = client.process_chunk(np.zeros(8000, dtype=np.float32))
        client.tokens_to_string(out.new_tokens)
        client.end_of_stream()
        client.clear()
        assert fake.connections == len(fake.calls.raw) == 7
        return list(fake.calls.raw)
