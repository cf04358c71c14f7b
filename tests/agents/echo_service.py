"""A minimal SimulEval-style agent service (wait-0 echo) in plain Python, for the driver's Docker tests.

    python3 echo_service.py PORT [--probe HOST:PORT,...] [--exit CODE] [--listen-after SECONDS] [--hang-on N]

With --probe it first tries to connect to each address and prints what happened (a hostile participant looking for
the evaluation server's other ports); with --exit it exits at once with CODE (a participant that crashes at start);
with --listen-after it loads for SECONDS before it listens (a slow start-up); with --hang-on it never answers the
first `GET /output` of its N-th instance (counted from 1: the N-th `POST /reset`), until it is killed.
"""
import json
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

STATE = {"src": [], "last": False, "resets": 0, "outputs": 0, "hang_on": 0}
NEVER = threading.Event()


class Handler(BaseHTTPRequestHandler):
    def _reply(self, body=b""):
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path == "/output":
            STATE["outputs"] += 1
            if STATE["resets"] == STATE["hang_on"] and STATE["outputs"] == 1:
                NEVER.wait()  # until the process is killed
            word = STATE["src"].pop(0) if STATE["src"] else ""
            done = STATE["last"] and not STATE["src"]
            self._reply(json.dumps({"index": 0, "content": word, "finished": done, "is_empty": not word,
                                    "data_type": "text", "config": {}}).encode())
        else:
            self._reply(b'{"info": "echo"}')

    def do_POST(self):
        STATE["src"], STATE["last"] = [], False
        STATE["resets"] += 1
        STATE["outputs"] = 0
        self._reply()

    def do_PUT(self):
        seg = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        if seg.get("content"):
            STATE["src"].append(seg["content"])
        STATE["last"] = bool(seg.get("finished"))
        self._reply()

    def log_message(self, *args):
        pass


def main():
    port = int(sys.argv[1])
    args = sys.argv[2:]
    if "--exit" in args:
        print("crashing at start", flush=True)
        sys.exit(int(args[args.index("--exit") + 1]))
    if "--probe" in args:
        for target in args[args.index("--probe") + 1].split(","):
            host, _, p = target.rpartition(":")
            try:
                with socket.create_connection((host, int(p)), timeout=3):
                    print(f"probe {target}: CONNECTED", flush=True)
            except OSError as exc:
                print(f"probe {target}: failed ({type(exc).__name__})", flush=True)
    if "--hang-on" in args:
        STATE["hang_on"] = int(args[args.index("--hang-on") + 1])
    if "--listen-after" in args:
        print("loading the model", flush=True)
        time.sleep(float(args[args.index("--listen-after") + 1]))
    ThreadingHTTPServer(("0.0.0.0", port), Handler).serve_forever()


if __name__ == "__main__":
    main()
