#!/usr/bin/env python3
"""What it costs to use a channel's computer through a node that does not
hold it: two release helm-http nodes on one throwaway PostgreSQL cluster,
a channel made on A (so A holds its computer), then `exec true`, a file
read, opening a terminal and a keystroke's echo in it, 60 times each
(after 5 to warm up), through A and through B (which passes terminal
requests and the terminal's WebSocket on to A).

    cargo build --release -p helm-http
    python3 helm-http/benches/node_routing.py

Prints p50 and p95 per call and path. Standard library only; needs Debian's
postgresql (scripts/postgres-cluster) and bubblewrap.
"""
import base64
import http.client
import json
import os
import socket
import statistics
import subprocess
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BINARY = os.path.join(ROOT, "target", "release", "helm-http")
PORTS = (7811, 7812)
ROUNDS, WARMUP = 60, 5


def wait_healthy(port):
    for _ in range(300):
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
            conn.request("GET", "/healthz")
            if conn.getresponse().status == 200:
                return
        except OSError:
            pass
        time.sleep(0.1)
    raise SystemExit(f"helm-http on {port} did not come up")


def call(port, method, path, body=None, headers=None):
    conn = http.client.HTTPConnection("127.0.0.1", port)
    sent = {"content-type": "application/json", "origin": f"http://127.0.0.1:{port}"}
    sent.update(headers or {})
    conn.request(method, path, None if body is None else json.dumps(body), sent)
    response = conn.getresponse()
    data = response.read()
    if response.status >= 300:
        raise SystemExit(f"{method} {path}: {response.status} {data[:200]!r}")
    return response, data


def timed(port, token, method, path, body):
    conn = http.client.HTTPConnection("127.0.0.1", port)
    headers = {"content-type": "application/json", "authorization": f"Bearer {token}"}
    times = []
    for i in range(ROUNDS + WARMUP):
        start = time.perf_counter()
        conn.request(method, path, None if body is None else json.dumps(body), headers)
        response = conn.getresponse()
        response.read()
        if response.status != 200:
            raise SystemExit(f"{method} {path}: {response.status}")
        if i >= WARMUP:
            times.append((time.perf_counter() - start) * 1000)
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.95) - 1]


def ws_connect(port, path, token):
    """A WebSocket to `path`, with the bearer `token` (a minimal client: the
    bench needs no packages)."""
    sock = socket.create_connection(("127.0.0.1", port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall((
        f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
        f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
        f"Authorization: Bearer {token}\r\n\r\n"
    ).encode())
    buf = b""
    while b"\r\n\r\n" not in buf:
        buf += sock.recv(4096)
    head, rest = buf.split(b"\r\n\r\n", 1)
    if b" 101 " not in head.split(b"\r\n")[0]:
        raise SystemExit(f"WebSocket {path}: {head[:200]!r}")
    return sock, rest


def ws_send(sock, data):
    """One masked binary frame (client frames must be masked)."""
    mask = os.urandom(4)
    header = bytes([0x82, 0x80 | len(data)])  # short frames only
    sock.sendall(header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))


def ws_frames(sock, buf):
    """Server frames as they arrive: (opcode, payload), and what is left."""
    while True:
        while len(buf) < 2:
            buf += sock.recv(65536)
        opcode, n, at = buf[0] & 0x0F, buf[1] & 0x7F, 2
        if n == 126:
            while len(buf) < 4:
                buf += sock.recv(65536)
            n, at = int.from_bytes(buf[2:4], "big"), 4
        elif n == 127:
            while len(buf) < 10:
                buf += sock.recv(65536)
            n, at = int.from_bytes(buf[2:10], "big"), 10
        while len(buf) < at + n:
            buf += sock.recv(65536)
        yield opcode, buf[at:at + n]
        buf = buf[at + n:]


def echo_times(port, token, terminal):
    """A keystroke's round trip: sent on the terminal's WebSocket, seen
    echoed back by the shell."""
    sock, rest = ws_connect(port, f"/api/terminals/{terminal}/ws", token)
    frames = ws_frames(sock, rest)
    sock.settimeout(0.5)
    try:  # the scrollback and the prompt
        for _ in frames:
            pass
    except socket.timeout:
        pass
    sock.settimeout(10)
    frames = ws_frames(sock, b"")
    times = []
    for i in range(ROUNDS + WARMUP):
        start = time.perf_counter()
        ws_send(sock, b"x")
        for opcode, payload in frames:
            if b"x" in payload:
                break
        if i >= WARMUP:
            times.append((time.perf_counter() - start) * 1000)
    ws_send(sock, b"\x15")  # clear the line
    sock.close()
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.95) - 1]


def opened(port, token):
    """Opening (and closing) a terminal, timed."""
    times = []
    auth = {"authorization": f"Bearer {token}"}
    for i in range(ROUNDS + WARMUP):
        start = time.perf_counter()
        _, data = call(port, "POST", "/api/channels/lab/terminals", {}, auth)
        if i >= WARMUP:
            times.append((time.perf_counter() - start) * 1000)
        call(port, "DELETE", f"/api/terminals/{json.loads(data)['id']}", None, auth)
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.95) - 1]


def main():
    if not os.path.exists(BINARY):
        raise SystemExit("build it first: cargo build --release -p helm-http")
    work = tempfile.mkdtemp(prefix="helm-node-routing-")
    os.chmod(work, 0o755)  # the cluster runs as the postgres user
    cluster = os.path.join(work, "pg")
    store = subprocess.run(
        [os.path.join(ROOT, "scripts", "postgres-cluster"), "start", cluster],
        check=True, capture_output=True, text=True,
    ).stdout.strip().splitlines()[-1]
    nodes = []
    try:
        env = dict(os.environ, HELM_STORE=store, HELM_LOG="warn")
        for name, port in zip("ab", PORTS):
            data = os.path.join(work, name)
            log = open(os.path.join(work, f"{name}.log"), "w")
            nodes.append(subprocess.Popen(
                [BINARY, "--data", data, "--listen", f"127.0.0.1:{port}"],
                env=env, stdout=subprocess.DEVNULL, stderr=log,
            ))
            wait_healthy(port)
        a = PORTS[0]
        code = open(os.path.join(work, "a", "setup-code")).read().strip()
        response, _ = call(a, "POST", "/api/setup",
                           {"name": "ada", "password": "correct horse battery", "setup_code": code})
        cookie = response.getheader("set-cookie").split(";")[0]
        _, data = call(a, "POST", "/api/tokens", {"name": "bench"}, {"cookie": cookie})
        token = json.loads(data)["secret"]
        auth = {"authorization": f"Bearer {token}"}
        call(a, "POST", "/api/channels", {"name": "lab", "purpose": "The bench."}, auth)
        call(a, "PUT", "/api/channels/lab/files", {"path": "f.txt", "content": "x" * 1000}, auth)
        for what, method, path, body in (
            ("exec `true`", "POST", "/api/channels/lab/exec", {"command": "true"}),
            ("read a file", "GET", "/api/channels/lab/files/read?path=f.txt", None),
        ):
            for label, port in (("the holder (A)", PORTS[0]), ("the other node (B)", PORTS[1])):
                p50, p95 = timed(port, token, method, path, body)
                print(f"{what:16} through {label:19} p50 {p50:6.2f} ms  p95 {p95:6.2f} ms")
        for label, port in (("the holder (A)", PORTS[0]), ("the other node (B)", PORTS[1])):
            p50, p95 = opened(port, token)
            print(f"{'open a terminal':16} through {label:19} p50 {p50:6.2f} ms  p95 {p95:6.2f} ms")
        _, data = call(a, "POST", "/api/channels/lab/terminals", {}, auth)
        terminal = json.loads(data)["id"]
        for label, port in (("the holder (A)", PORTS[0]), ("the other node (B)", PORTS[1])):
            p50, p95 = echo_times(port, token, terminal)
            print(f"{'keystroke echo':16} through {label:19} p50 {p50:6.2f} ms  p95 {p95:6.2f} ms")
    finally:
        for node in nodes:
            node.terminate()
        for node in nodes:
            node.wait()
        subprocess.run([os.path.join(ROOT, "scripts", "postgres-cluster"), "stop", cluster],
                       capture_output=True)


if __name__ == "__main__":
    main()
