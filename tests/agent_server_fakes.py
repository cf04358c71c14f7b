"""Scriptable agent servers for the driver tests (not a test module; imported as `tests.agent_server_fakes`).

`FakeAgentServer` listens on a loopback port and speaks raw HTTP over sockets, so a test can make it misbehave in
ways a framework would not let it: answer garbage, a 10 MB body, half an answer and then close, or nothing at all.
By default it plays a well-behaved participant of one interface:

* `simuleval`: SimulEval 1.1.4's agent service around a wait-1 copy agent (each `GET /output` after a pushed word
  writes that word; after the last word it writes nothing more and says `finished`);
* `simulstream`: SimulStream 1.0.0's HTTP speech-processor server (HTTP/1.0, close-delimited bodies, no answer at
  all on an unknown endpoint) around a processor that writes the word `wN` per chunk as two SentencePiece pieces
  whose string has no leading space (as a Hugging Face detokenizer gives it); with `revise`, each chunk also
  replaces the last piece of the word before (`w1` becomes `w1r`).

`hostile` maps an endpoint (`"GET /output"`) to an `Act` used instead of the normal answer from its `after`-th call
on (0: the first). Every wait of an act is on an event the test controls (`release`), never on a clock.

With `pool`, the SimulStream server has that many speech processors, as the real one does: any request but
`POST /clear` of a new session takes one, `POST /clear` gives it back, and a request that finds none left gets
no answer at all (the real server's `Queue.get_nowait` raises in the handler). `calls.raw` keeps every request as
it arrived (request line, header lines, body bytes), for comparing with what SimulStream's own client sends.
"""

from __future__ import annotations

import json
import socket
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BIG_BODY = 10_000_000


@dataclass
class Act:
    """What the server does instead of answering normally: `kind` is one of garbage, huge, half, hang, trickle
    (a byte at a time until `release`), status, nothing (close without an answer), wait (wait for `release`,
    then answer normally), deep (a JSON array nested 100,000 deep) or bigint (a 5,000-digit JSON number); with
    `keep`, the request still takes a SimulStream processor for its session (the real server takes it first)."""

    kind: str
    after: int = 0
    status: int = 500
    times: int | None = None  # how many calls it applies to (None: every call from the `after`-th on)
    keep: bool = False


@dataclass
class Calls:
    """What the server saw: every request as (method, path, JSON body or None), in order."""

    seen: list[tuple[str, str, Any]] = field(default_factory=list)
    raw: list[tuple[str, list[str], bytes]] = field(default_factory=list)

    def count(self, endpoint: str) -> int:
        return sum(1 for m, p, _ in self.seen if f"{m} {p}" == endpoint)


class FakeAgentServer:
    """An agent server on 127.0.0.1 (see the module docstring); use as a context manager."""

    def __init__(self, protocol: str = "simuleval", hostile: dict[str, Act] | None = None,
                 chunk_s: float = 0.5, revise: bool = False, pool: int | None = None) -> None:
        self.protocol, self.hostile, self.chunk_s, self.revise = protocol, hostile or {}, chunk_s, revise
        self.pool = pool
        self.sessions: set[str] = set()
        self.release = threading.Event()  # ends every `hang` and `wait` act
        self.waiting = threading.Event()  # set when a `wait` act begins
        self.calls = Calls()
        self.lock = threading.Lock()
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.pushed: list[str] = []
        self.written = 0
        self.finished_input = False
        self.chunks = 0
        self.threads: list[threading.Thread] = []
        self.connections = 0

    # -- life cycle -----------------------------------------------------------------------------------------
    def __enter__(self) -> FakeAgentServer:
        self.sock.listen(16)
        t = threading.Thread(target=self._accept, daemon=True)
        t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        self.sock.close()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            t = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            t.start()
            self.threads.append(t)

    # -- HTTP -----------------------------------------------------------------------------------------------
    def _serve(self, conn: socket.socket) -> None:
        reader = conn.makefile("rb")
        try:
            while True:
                line = reader.readline()
                if not line:
                    return
                method, path, _ = line.decode("latin-1").split(" ", 2)
                length, headers = 0, []
                while True:
                    header = reader.readline().decode("latin-1").strip()
                    if not header:
                        break
                    headers.append(header)
                    name, _, value = header.partition(":")
                    if name.lower() == "content-length":
                        length = int(value)
                raw = reader.read(length) if length else b""
                body = json.loads(raw) if raw.strip() else None
                endpoint = f"{method} {path}"
                with self.lock:
                    n = self.calls.count(endpoint)
                    self.calls.seen.append((method, path, body))
                    self.calls.raw.append((line.decode("latin-1").rstrip("\r\n"), headers, raw))
                act = self.hostile.get(endpoint)
                if act is not None and n >= act.after and (act.times is None or n < act.after + act.times):
                    if act.keep and not self._take(endpoint, body):
                        return
                    then = self._misbehave(conn, act)
                    if then == "close":
                        return
                    if then == "next":
                        continue
                if not self._answer(conn, endpoint, body):
                    return
        except OSError:
            return
        finally:
            reader.close()
            conn.close()

    def _misbehave(self, conn: socket.socket, act: Act) -> str:
        """Carry out `act`; then "close" the connection, take the "next" request, or "answer" normally."""
        if act.kind == "garbage":
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 9\r\n\r\n{not json")
        elif act.kind == "huge":
            head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {BIG_BODY}\r\n\r\n"
            conn.sendall(head.encode())
            try:
                conn.sendall(b"[" + b"1," * (BIG_BODY // 2 - 1) + b"1]")
            except OSError:
                pass  # the driver hung up after its cap: that is the point
        elif act.kind == "half":
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"conte")
        elif act.kind == "trickle":  # one byte of a 1000-byte body every 0.1 s: each read is quick, the whole never
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n")
            while not self.release.wait(0.1):
                conn.sendall(b" ")
        elif act.kind == "hang":
            self.release.wait()
        elif act.kind == "status":
            conn.sendall(f"HTTP/1.1 {act.status} Oops\r\nContent-Length: 0\r\n\r\n".encode())
            return "next"
        elif act.kind in ("deep", "bigint"):
            data = b"[" * 100_000 if act.kind == "deep" else b"1" * 5000
            conn.sendall(f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(data)}\r\n"
                         f"\r\n".encode() + data)
            return "next"
        elif act.kind == "wait":
            self.waiting.set()
            self.release.wait()
            return "answer"
        return "close"  # "nothing" and the rest: close without (more of) an answer

    def _answer(self, conn: socket.socket, endpoint: str, body: Any) -> bool:
        """The normal answer; False when the connection is closed after it (SimulStream's HTTP/1.0)."""
        if self.protocol == "simulstream":
            return self._simulstream(conn, endpoint, body)
        status, out = self._simuleval(endpoint, body)
        data = b"" if out is None else json.dumps(out).encode()
        conn.sendall(f"HTTP/1.1 {status} OK\r\nContent-Type: application/json\r\nContent-Length: {len(data)}\r\n"
                     f"\r\n".encode() + data)
        return True

    # -- the two interfaces ---------------------------------------------------------------------------------
    def _simuleval(self, endpoint: str, body: Any) -> tuple[int, Any]:
        if endpoint == "GET /":
            return 200, {"info": "FakeCopyAgent[text -> text]"}
        if endpoint == "POST /reset":
            self.pushed, self.written, self.finished_input = [], 0, False
            return 200, None
        if endpoint == "PUT /input":
            if not body.get("is_empty"):
                self.pushed.append(body["content"])
            self.finished_input = self.finished_input or bool(body.get("finished"))
            return 200, None
        if endpoint == "GET /output":
            if self.written < len(self.pushed):
                word = self.pushed[self.written]
                self.written += 1
                done = self.finished_input and self.written == len(self.pushed)
                return 200, {"index": 0, "content": word, "finished": done, "is_empty": False, "data_type": "text",
                             "tgt_lang": "es", "config": {}}
            return 200, {"index": 0, "content": [], "finished": self.finished_input, "is_empty": True,
                         "data_type": None, "tgt_lang": None, "config": {}}
        return 404, None

    def _take(self, endpoint: str, body: Any) -> bool:
        """SimulStream's session manager: whether the request's session has (or now takes) a processor."""
        if self.pool is None or not isinstance(body, dict):
            return True
        session = body.get("session_id")
        with self.lock:
            if endpoint == "POST /clear":
                self.sessions.discard(session)
                return True
            if session not in self.sessions:
                if len(self.sessions) >= self.pool:
                    return False
                self.sessions.add(session)
            return True

    def _simulstream(self, conn: socket.socket, endpoint: str, body: Any) -> bool:
        out: Any
        if not self._take(endpoint, body):
            return False  # no processor left: the real server raises in the handler and answers nothing
        if endpoint == "GET /speech_chunk_size":
            out = {"speech_chunk_size": self.chunk_s}
        elif endpoint in ("PUT /source_language", "PUT /target_language", "POST /clear"):
            out = None
        elif endpoint == "POST /process_chunk":
            self.chunks += 1
            n, deleted = self.chunks, []
            new = ["\u2581w", str(n)]  # SentencePiece pieces of "w<n>"; their string has no leading space
            if self.revise and n > 1:  # re-translation: the previous word's last piece is replaced
                deleted, new = [str(n - 1)], [f"{n - 1}r", *new]
            out = {"new_tokens": new, "new_string": detokenize(new), "deleted_tokens": deleted,
                   "deleted_string": detokenize(deleted)}
        elif endpoint == "GET /tokens_to_string":
            out = {"tokens_as_string": detokenize(body["tokens"])}
        elif endpoint == "POST /end_of_stream":
            self.chunks = 0
            out = {"new_tokens": [], "new_string": "", "deleted_tokens": [], "deleted_string": ""}
        else:  # SimulStream's server raises on an unknown endpoint: no HTTP answer at all
            return False
        status = 204 if out is None else 200
        head = f"HTTP/1.0 {status} OK\r\nServer: fake\r\nContent-type: application/json; charset=utf-8\r\n\r\n"
        conn.sendall(head.encode() + (b"" if out is None else json.dumps(out).encode()))
        return False  # HTTP/1.0: the body ends with the connection


def detokenize(pieces: list[str]) -> str:
    """SentencePiece pieces as a Hugging Face tokenizer's `convert_tokens_to_string` joins them (stripped)."""
    return "".join(pieces).replace("\u2581", " ").strip()


def speech_task(root: Path, seconds: list[float], segment_ms: int = 500, limits: str = "") -> Path:
    """A speech task of `len(seconds)` recordings of noise at 16 kHz (track `speech-en-es`, dataset `dev`)."""
    import numpy as np
    import soundfile

    rng = np.random.default_rng(0)
    names = []
    for i, d in enumerate(seconds):
        soundfile.write(root / f"a{i}.wav", rng.uniform(-0.5, 0.5, int(16000 * d)).astype(np.float32), 16000,
                        subtype="PCM_16")
        names.append(f"a{i}.wav")
    (root / "wav.lst").write_text("\n".join(names) + "\n", encoding="utf-8")
    (root / "ref.es").write_text("\n".join(f"w1 w2 frase {i}" for i in range(len(seconds))) + "\n", encoding="utf-8")
    cfg = root / "speech.yaml"
    cfg.write_text(f"""task: t
tracks:
  - name: speech-en-es
    modality: speech
    source_lang: en
    target_lang: es
    segment_size: {segment_ms}
    datasets:
      dev: {{source: wav.lst, references: {{orig: ref.es}}}}
{limits}""", encoding="utf-8")
    return cfg
