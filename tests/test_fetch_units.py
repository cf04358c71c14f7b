"""The fetch step's parts that need no Docker: the allow-listing proxy as a real process on loopback (HTTP in
absolute form, CONNECT tunnels, refusals logged without paths or headers), its allow rules, the task config's
`fetch:` / `secrets:` / fetch limits, `fetch:` in submission.yaml, the cache key and the masking of secrets."""

from __future__ import annotations

import http.server
import json
import re
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.config import load_config
from harness.errors import ConfigError, SubmissionError
from harness.intake.submission import load_submission
from harness.run.fetch import cache
from harness.run.fetch.proxy import allowed
from harness.run.fetch.secrets import mask, mask_bytes

PROXY = Path(__file__).resolve().parents[1] / "harness" / "run" / "fetch" / "proxy.py"
TOKEN = "hf_s3cr3t-token-value"


class _Hub(http.server.BaseHTTPRequestHandler):
    """Answers GET /file with 100 kB when the bearer token is right, else 401."""

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        if self.headers.get("Authorization") != f"Bearer {TOKEN}":
            self.send_response(401)
            self.end_headers()
            return
        body = bytes(range(256)) * 400
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture()
def hubs() -> Iterator[tuple[int, int]]:
    """Two hubs on loopback: (allowed port, other port)."""
    servers = [http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Hub) for _ in range(2)]
    for s in servers:
        threading.Thread(target=s.serve_forever, daemon=True).start()
    yield servers[0].server_address[1], servers[1].server_address[1]
    for s in servers:
        s.shutdown()
        s.server_close()


@pytest.fixture()
def proxy(hubs: tuple[int, int]) -> Iterator[tuple[int, subprocess.Popen[str]]]:
    proc = subprocess.Popen([sys.executable, str(PROXY), "--port", "0", "--allow", f"127.0.0.1:{hubs[0]}"],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    first = json.loads(proc.stdout.readline())
    assert first["event"] == "listening"
    yield first["port"], proc
    proc.terminate()
    proc.wait(10)


def _events(proc: subprocess.Popen[str], n: int) -> list[dict]:
    assert proc.stdout is not None
    return [json.loads(proc.stdout.readline()) for _ in range(n)]


def _ask(port: int, request: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(request)
        chunks = []
        while chunk := s.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def test_the_proxy_forwards_an_allowed_host_and_refuses_another_without_logging_paths_or_headers(
        proxy: tuple[int, subprocess.Popen[str]], hubs: tuple[int, int]) -> None:
    port, proc = proxy
    ok = _ask(port, f"GET http://127.0.0.1:{hubs[0]}/file?sig=abc HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    f"Authorization: Bearer {TOKEN}\r\nProxy-Connection: keep-alive\r\n\r\n".encode())
    assert ok.startswith(b"HTTP/1.0 200") and ok.endswith(bytes(range(256)) * 400)
    allowed_event, done = _events(proc, 2)
    assert allowed_event == {"event": "allowed", "method": "GET", "host": "127.0.0.1", "port": hubs[0]}
    assert done["event"] == "done" and done["bytes_received"] > 102400
    no = _ask(port, f"GET http://127.0.0.1:{hubs[1]}/secret/path HTTP/1.1\r\nAuthorization: Bearer {TOKEN}\r\n\r\n"
                    .encode())
    assert no.startswith(b"HTTP/1.1 403") and f"127.0.0.1:{hubs[1]} is not in fetch.allow".encode() in no
    (refused,) = _events(proc, 1)
    assert refused == {"event": "refused", "method": "GET", "host": "127.0.0.1", "port": hubs[1],
                       "why": "not in fetch.allow"}
    assert TOKEN not in json.dumps([allowed_event, done, refused]) and "sig=abc" not in json.dumps(allowed_event)


def test_the_proxy_tunnels_connect_to_an_allowed_host_only(proxy: tuple[int, subprocess.Popen[str]],
                                                            hubs: tuple[int, int]) -> None:
    port, proc = proxy
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(f"CONNECT 127.0.0.1:{hubs[0]} HTTP/1.1\r\n\r\n".encode())
        assert s.recv(1024) == b"HTTP/1.1 200 Connection established\r\n\r\n"
        s.sendall(f"GET /file HTTP/1.0\r\nAuthorization: Bearer {TOKEN}\r\n\r\n".encode())
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    assert data.startswith(b"HTTP/1.0 200") and len(data) > 102400
    assert _events(proc, 1)[0]["method"] == "CONNECT"
    no = _ask(port, f"CONNECT 127.0.0.1:{hubs[1]} HTTP/1.1\r\n\r\n".encode())
    assert no.startswith(b"HTTP/1.1 403")
    assert _events(proc, 2)[1]["event"] == "refused"  # after the first tunnel's `done`
    assert _ask(port, b"NONSENSE\r\n\r\n").startswith(b"HTTP/1.1 400")


def test_allow_rules() -> None:
    rules = ["hub.example.org", "*.hf.co", "10.0.0.5:8080"]
    assert allowed("hub.example.org", 443, rules) and allowed("HUB.example.org.", 80, rules)
    assert allowed("cdn-lfs.hf.co", 443, rules) and not allowed("hf.co", 443, rules)
    assert not allowed("evilhf.co", 443, rules) and not allowed("hub.example.org.evil", 443, rules)
    assert allowed("10.0.0.5", 8080, rules) and not allowed("10.0.0.5", 80, rules)


def _config(tmp_path: Path, extra: str) -> Path:
    (tmp_path / "s.en").write_text("a\n")
    cfg = tmp_path / "task.yaml"
    cfg.write_text("task: t\ntracks:\n  - {name: tr, modality: text, source_lang: en, target_lang: es, datasets: "
                   "{dev: {source: s.en, references: s.en}}}\n" + extra)
    return cfg


def test_the_task_config_reads_fetch_secrets_and_fetch_limits(tmp_path: Path) -> None:
    cfg = load_config(_config(tmp_path, "fetch: {allow: [hub.example.org, '*.hf.co:443'], network: hubnet}\n"
                                        "secrets: [HF_TOKEN]\nlimits: {fetch_timeout_s: 60, fetch_bytes: 2g}\n"))
    assert cfg.fetch.allow == ("hub.example.org", "*.hf.co:443") and cfg.fetch.network == "hubnet"
    assert cfg.secrets == ("HF_TOKEN",)
    assert cfg.limits.fetch_timeout_s == 60.0 and cfg.limits.fetch_bytes == "2g"
    plain = load_config(_config(tmp_path, ""))
    assert plain.fetch.allow == () and plain.fetch.network == "bridge" and plain.secrets == ()
    for bad, where in (("fetch: {allow: ['http://x/']}", "fetch.allow[0]"), ("secrets: [HARNESS_X]", "secrets[0]"),
                       ("secrets: HF_TOKEN", "secrets"), ("limits: {fetch_bytes: lots}", "limits.fetch_bytes"),
                       ("fetch: {proxy: x}", "fetch.proxy")):
        with pytest.raises(ConfigError, match=re.escape(f"task.yaml: {where}")):
            load_config(_config(tmp_path, bad + "\n"))


def _submission(tmp_path: Path, extra: str) -> Path:
    folder = tmp_path / "sub"
    folder.mkdir(exist_ok=True)
    (folder / "Dockerfile").write_text("FROM scratch\n")
    (folder / "submission.yaml").write_text("team: t\nsystem: s\ntrack: tr\nbuild: {dockerfile: Dockerfile}\n"
                                            "command: run\n" + extra)
    return folder


def test_submission_yaml_reads_fetch(tmp_path: Path) -> None:
    assert load_submission(_submission(tmp_path, "fetch: python3 /app/fetch.py\n")).fetch == (
        "/bin/sh", "-c", "python3 /app/fetch.py")
    assert load_submission(_submission(tmp_path, "fetch: [python3, /app/fetch.py]\n")).fetch == (
        "python3", "/app/fetch.py")
    assert load_submission(_submission(tmp_path, "")).fetch == ()
    with pytest.raises(SubmissionError, match=r"submission.yaml: fetch: expected a non-empty string"):
        load_submission(_submission(tmp_path, "fetch: 3\n"))


def test_the_cache_key_names_the_image_and_the_command() -> None:
    a = cache.cache_key("sha256:aa", ("python3", "f.py"))
    assert a == cache.cache_key("sha256:aa", ["python3", "f.py"])
    assert a != cache.cache_key("sha256:ab", ("python3", "f.py")) != cache.cache_key("sha256:aa", ("python3",))
    assert cache.volume_name(a).startswith("harness-fetch-") and len(cache.volume_name(a)) == 38


def test_secrets_are_masked_longest_first() -> None:
    values = {"A": "tok", "B": "tok-longer"}
    assert mask("x tok-longer y tok", values) == "x *** y ***"
    assert mask_bytes(b"Bearer tok-longer", values) == b"Bearer ***"


def test_the_fetch_template_runs_the_whisper_cascade_agent_as_it_is() -> None:
    """agent_templates/whisper_fetch is the whisper_cascade agent, given the fetched model by `--model-path`."""
    templates = Path(__file__).resolve().parent.parent / "agent_templates"
    agent = (templates / "whisper_fetch" / "agent.py").read_bytes()
    assert agent == (templates / "whisper_cascade" / "agent.py").read_bytes()
    command = (templates / "whisper_fetch" / "submission.yaml").read_text(encoding="utf-8")
    assert '--model-path "$HARNESS_FETCH_DIR/faster-whisper-tiny.en"' in command
