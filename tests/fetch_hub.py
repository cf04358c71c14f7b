"""A stand-in model hub for the fetch tests (standard library only; run with `python3 -c` in the base image).

Every request needs `Authorization: Bearer $HUB_TOKEN` (else 401). It serves `/big.bin`: `$BIG_MB` MiB made on
the fly (block i of 1 MiB is byte i % 251 repeated, so its sha256 is known without storing it), and the files
under `/models` by path, as a hub serves a repository (`/ORG/NAME/resolve/main/FILE` → `/models/ORG/NAME/FILE`).
It prints `hub listening` once it accepts connections.
"""

from __future__ import annotations

import http.server
import os
import shutil

MIB = 1 << 20


def block(i: int) -> bytes:
    return bytes([i % 251]) * MIB


class Hub(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def _deny(self, code: int) -> None:
        self.send_response(code)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        if self.headers.get("Authorization") != f"Bearer {os.environ['HUB_TOKEN']}":
            return self._deny(401)
        if self.path == "/big.bin":
            n = int(os.environ.get("BIG_MB", "300"))
            self.send_response(200)
            self.send_header("Content-Length", str(n * MIB))
            self.end_headers()
            for i in range(n):
                self.wfile.write(block(i))
            return None
        parts = self.path.split("?")[0].strip("/").split("/")
        if len(parts) >= 5 and parts[2] == "resolve":
            path = os.path.join("/models", parts[0], parts[1], *parts[4:])
            if ".." not in parts and os.path.isfile(path):
                self.send_response(200)
                self.send_header("Content-Length", str(os.path.getsize(path)))
                self.end_headers()
                with open(path, "rb") as f:
                    shutil.copyfileobj(f, self.wfile, MIB)
                return None
        return self._deny(404)

    def log_message(self, *args: object) -> None:
        pass


server = http.server.ThreadingHTTPServer(("0.0.0.0", 8000), Hub)
print("hub listening", flush=True)
server.serve_forever()
