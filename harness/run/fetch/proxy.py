"""The fetch step's allow-listing proxy: the only way out of a fetch container (standard library only).

    python3 proxy.py --port 3128 --allow hub.example.org --allow '*.hf.co' --allow 10.0.0.5:8080

It answers `CONNECT HOST:PORT` (HTTPS and any TLS: the tunnel is opened only to an allowed host) and plain HTTP
requests in absolute form (`GET http://HOST[:PORT]/PATH`, forwarded with `Connection: close`). An entry allows a
host on every port (`hub`), on one port (`hub:8080`), or every subdomain (`*.hf.co`); names are compared without
case, and an address is allowed only when it is listed. Everything else gets `403` and a `refused` line.

It writes one JSON line per event to stdout: `listening` (its port), `allowed` and `refused` (method, host,
port; refused lines say why), `done` (bytes each way) and `error`. It never writes a request's path, query or
headers: those can carry the organizer's token. The harness runs this file's source with `python3 -c` in a
container of its base image, so it imports nothing of the harness and works with whichever version that image has.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

HEAD_LIMIT = 65536
CONNECT_TIMEOUT_S = 30.0
CHUNK = 1 << 16


def log(event: str, **fields: object) -> None:
    """One JSON line on stdout."""
    sys.stdout.write(json.dumps({"event": event, **fields}) + "\n")
    sys.stdout.flush()


def allowed(host: str, port: int, allow: list[str]) -> bool:
    """Whether `host:port` matches an allow entry (`host`, `host:port`, `*.domain`, `*.domain:port`)."""
    host = host.lower().rstrip(".")
    for entry in allow:
        name, _, want = entry.partition(":")
        if want and int(want) != port:
            continue
        if name.startswith("*."):
            if host.endswith(name[1:]) and host != name[2:]:
                return True
        elif host == name:
            return True
    return False


def split_host(target: str, default_port: int) -> tuple[str, int]:
    """(host, port) of `host`, `host:port` or `[v6]:port`; ValueError when malformed."""
    if target.startswith("["):
        host, _, rest = target[1:].partition("]")
        port = int(rest[1:]) if rest.startswith(":") else default_port
    else:
        host, sep, p = target.rpartition(":")
        host, port = (host, int(p)) if sep else (target, default_port)
    if not host or not 0 < port < 65536:
        raise ValueError(target)
    return host, port


async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, count: list[int]) -> None:
    """Copy until end of stream, counting bytes; closes the writer's side."""
    try:
        while chunk := await reader.read(CHUNK):
            writer.write(chunk)
            count[0] += len(chunk)
            await writer.drain()
    except (ConnectionError, asyncio.IncompleteReadError, OSError):
        pass
    finally:
        try:
            writer.close()
        except OSError:
            pass


async def refuse(writer: asyncio.StreamWriter, code: str, message: str) -> None:
    body = f"harness fetch proxy: {message}\n".encode()
    writer.write(f"HTTP/1.1 {code}\r\nContent-Type: text/plain\r\nContent-Length: {len(body)}\r\n"
                 f"Connection: close\r\nX-Harness-Proxy: refused\r\n\r\n".encode() + body)
    try:
        await writer.drain()
    finally:
        writer.close()


def origin_request(method: str, url: str, version: str, headers: list[bytes]) -> tuple[str, int, bytes]:
    """(host, port, the request head rewritten for the origin server) of an absolute-form HTTP request."""
    if not url.lower().startswith("http://"):
        raise ValueError("only http:// URLs are forwarded; use CONNECT for https")
    rest = url[7:]
    authority, slash, path = rest.partition("/")
    host, port = split_host(authority.rpartition("@")[2], 80)
    kept = [h for h in headers if not h.lower().startswith((b"proxy-", b"connection:", b"keep-alive:"))]
    head = f"{method} /{path if slash else ''} {version}\r\n".encode() + b"".join(kept)
    return host, port, head + b"Connection: close\r\n\r\n"


class Proxy:
    def __init__(self, allow: list[str]) -> None:
        self.allow = [a.lower() for a in allow]

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await self._handle(reader, writer)
        except Exception as exc:  # noqa: BLE001 - one bad client never stops the proxy
            log("error", why=f"{type(exc).__name__}: {exc}"[:200])
            writer.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            first = (await reader.readuntil(b"\r\n")).decode("latin-1").split()
            headers: list[bytes] = []
            size = 0
            while (line := await reader.readuntil(b"\r\n")) != b"\r\n":
                size += len(line)
                if size > HEAD_LIMIT:
                    raise ValueError("request head too large")
                headers.append(line)
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
            return await refuse(writer, "400 Bad Request", "malformed request")
        if len(first) != 3:
            return await refuse(writer, "400 Bad Request", "malformed request line")
        method, target, version = first
        try:
            if method.upper() == "CONNECT":
                host, port = split_host(target, 443)
                head = None
            else:
                host, port, head = origin_request(method, target, version, headers)
        except ValueError as exc:
            log("refused", method=method, why=str(exc)[:200])
            return await refuse(writer, "400 Bad Request", str(exc))
        if not allowed(host, port, self.allow):
            log("refused", method=method, host=host, port=port, why="not in fetch.allow")
            return await refuse(writer, "403 Forbidden", f"{host}:{port} is not in fetch.allow")
        try:
            up_reader, up_writer = await asyncio.wait_for(asyncio.open_connection(host, port), CONNECT_TIMEOUT_S)
        except (OSError, asyncio.TimeoutError) as exc:
            log("error", method=method, host=host, port=port, why=f"cannot connect: {exc}"[:200])
            return await refuse(writer, "502 Bad Gateway", f"cannot connect to {host}:{port}")
        log("allowed", method=method, host=host, port=port)
        if head is None:
            writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        else:
            up_writer.write(head)
        sent, received = [0], [0]
        await asyncio.gather(pipe(reader, up_writer, sent), pipe(up_reader, writer, received))
        log("done", host=host, port=port, bytes_sent=sent[0], bytes_received=received[0])


async def serve(port: int, allow: list[str]) -> None:
    server = await asyncio.start_server(Proxy(allow).handle, "0.0.0.0", port, limit=HEAD_LIMIT)
    log("listening", port=server.sockets[0].getsockname()[1], allow=allow)
    async with server:
        await server.serve_forever()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="allow-listing HTTP(S) proxy of the fetch step")
    parser.add_argument("--port", type=int, default=3128)
    parser.add_argument("--allow", action="append", default=[])
    args = parser.parse_args(argv)
    try:
        asyncio.run(serve(args.port, args.allow))
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
