"""Stand-in agent servers that misbehave in one way each, for the Docker tests of the drivers (issue 27).

    python3 hostile_agent_server.py PORT MODE

Raw HTTP over sockets (a framework would not let it misbehave so). It first prints a line of terminal control
sequences, then every request to stdout as `request: METHOD PATH` (so a test counts the probes in client.log).

SimulEval modes (an echo agent service, wait-0): `ok`; `deep-output` (GET /output answers JSON nested 100,000
deep); `hang-output` (GET /output never answers); `start-huge` (GET / answers 10 MiB), `start-cut` (every
connection is closed unanswered), `start-garbage` (GET / answers non-JSON), `start-hang` (GET / never answers).
SimulStream modes (HTTP/1.0, close-delimited, one word per chunk): `ss-record` (also prints every request as it
arrived, as a JSON line `raw: {...}`), `ss-firstcut` (a pool of one processor, as SimulStream's server keeps: the
first GET /speech_chunk_size takes it and gets no answer, as when that server's handler raises).
"""
import json
import socket
import sys
import threading

MODE = sys.argv[2]
LOCK = threading.Lock()
STATE = {"src": [], "last": False, "chunks": 0, "sessions": set(), "first_size": True}
FOREVER = threading.Event()


def out(line):
    with LOCK:
        print(line, flush=True)


def read_request(reader):
    line = reader.readline()
    if not line:
        return None
    headers, length = [], 0
    while True:
        header = reader.readline().decode("latin-1").rstrip("\r\n")
        if not header:
            break
        headers.append(header)
        name, _, value = header.partition(":")
        if name.lower() == "content-length":
            length = int(value)
    body = reader.read(length) if length else b""
    return line.decode("latin-1").rstrip("\r\n"), headers, body


def answer11(conn, data, status="200 OK"):
    conn.sendall(f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n"
                 .encode() + data)


def simuleval(conn, method, path, body):
    """False: close the connection now (unanswered or after the answer)."""
    if MODE == "start-cut":
        return False
    if path == "/" and method == "GET":
        if MODE == "start-huge":
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 10485760\r\n\r\n")
            try:
                conn.sendall(b" " * 10485760)
            except OSError:
                pass
            return False
        if MODE == "start-garbage":
            answer11(conn, b"<html>not an agent</html>")
            return True
        if MODE == "start-hang":
            FOREVER.wait()
        answer11(conn, b'{"info": "hostile stand-in"}')
        return True
    if path == "/output":
        if MODE == "deep-output":
            answer11(conn, b"[" * 100_000)
            return True
        if MODE == "hang-output":
            FOREVER.wait()
        with LOCK:
            word = STATE["src"].pop(0) if STATE["src"] else ""
            done = STATE["last"] and not STATE["src"]
        answer11(conn, json.dumps({"index": 0, "content": word, "finished": done, "is_empty": not word,
                                   "data_type": "text", "config": {}}).encode())
        return True
    if path == "/reset":
        with LOCK:
            STATE["src"], STATE["last"] = [], False
    elif path == "/input":
        seg = json.loads(body)
        with LOCK:
            if seg.get("content"):
                STATE["src"].append(seg["content"])
            STATE["last"] = bool(seg.get("finished"))
    answer11(conn, b"")
    return True


def simulstream(conn, method, path, body):
    session = json.loads(body)["session_id"]
    with LOCK:
        if path == "/clear":
            STATE["sessions"].discard(session)
        elif session not in STATE["sessions"]:
            if MODE == "ss-firstcut" and STATE["sessions"]:
                return False  # the pool of one is taken: SimulStream's handler raises, nothing is answered
            STATE["sessions"].add(session)
        if MODE == "ss-firstcut" and path == "/speech_chunk_size" and STATE["first_size"]:
            STATE["first_size"] = False
            return False
    result = None
    if path == "/speech_chunk_size":
        result = {"speech_chunk_size": 0.5}
    elif path == "/process_chunk":
        with LOCK:
            STATE["chunks"] += 1
            word = f"w{STATE['chunks']}"
        result = {"new_tokens": [word], "new_string": word if word == "w1" else " " + word, "deleted_tokens": [],
                  "deleted_string": ""}
    elif path == "/end_of_stream":
        with LOCK:
            STATE["chunks"] = 0
        result = {"new_tokens": [], "new_string": "", "deleted_tokens": [], "deleted_string": ""}
    elif path == "/tokens_to_string":
        result = {"tokens_as_string": " ".join(json.loads(body)["tokens"])}
    status = "200 OK" if result is not None else "204 No Content"
    conn.sendall(f"HTTP/1.0 {status}\r\nContent-type: application/json; charset=utf-8\r\n\r\n".encode()
                 + (json.dumps(result).encode() if result is not None else b""))
    return False


def serve(conn):
    reader = conn.makefile("rb")
    try:
        while True:
            req = read_request(reader)
            if req is None:
                return
            line, headers, body = req
            method, path = line.split(" ")[:2]
            out(f"request: {method} {path}")
            if MODE == "ss-record":
                out("raw: " + json.dumps({"line": line, "headers": headers, "body": body.decode()}))
            keep = (simulstream if MODE.startswith("ss-") else simuleval)(conn, method, path, body)
            if not keep:
                return
    except OSError:
        return
    finally:
        reader.close()
        conn.close()


def main():
    out("\x1b]0;owned title\x07\x1b[31mred\x1b[0m and a bell\x07")  # for the leaderboard, which shows log tails
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("0.0.0.0", int(sys.argv[1])))
    sock.listen(64)
    while True:
        conn, _ = sock.accept()
        threading.Thread(target=serve, args=(conn,), daemon=True).start()


if __name__ == "__main__":
    main()
