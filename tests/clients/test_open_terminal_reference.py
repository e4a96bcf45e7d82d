"""Helm's Open Terminal surface checked against the real Open Terminal server
(`open-terminal` from PyPI, pinned in requirements.txt), run here on a free
loopback port over a temporary directory.

Which endpoints Helm claims comes from one place: Helm's own OpenAPI
document, every operation tagged `open-terminal` under
`/api/channels/{channel}/ot/`. For each of them:

- the method and path exist in the reference's OpenAPI document. The
  reference hides some of its routes from its published `/openapi.json`
  (`include_in_schema=False`: health, config, cwd, mkdir, move, delete,
  view, upload, terminals); for those the reference is the document the
  same FastAPI generator makes from the same app with every route shown;
- the parameters and JSON body fields Helm requires are ones the reference
  requires, every one the reference requires Helm takes, every one Helm
  declares the reference has, with the same types; a reference parameter
  Helm does not take is listed in NOT_TAKEN with the reason;
- the same sequence of requests (write, read, list, mkdir, move, view,
  upload, delete, run a command and page its output, stdin, kill,
  searches, terminals and their WebSocket, and the error cases) goes to
  both servers:
  the status codes must be the same, Helm's JSON must validate against the
  reference's declared response schema ($refs resolved) and against the
  shape of what the reference actually answered, and chosen values must be
  equal once the reference's home is read as `/workspace`;
- every claimed endpoint is exercised by that sequence, so a newly claimed
  endpoint fails here until it is.

Differences that are Helm's confinement are listed in DELIBERATE with the
reason (and in docs/integrations.md)."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import jsonschema
import pytest
import websockets.exceptions
import websockets.sync.client as ws_client

PREFIX = "/api/channels/{channel}/ot"
TAG = "open-terminal"

# Reference parameters Helm does not take, with why.
NOT_TAKEN = {
    ("GET", "/files/view", "preview"): "Helm renders no office-document previews "
    "(the reference shells out to LibreOffice); the bytes are served as they are",
}

# Keys the reference answers with that Helm leaves out on purpose.
DELIBERATE = {
    "log_path": "the reference names its on-disk JSONL log; Helm keeps a "
    "command's output in memory and names no host path outside the channel's "
    "computer",
}

# What a missing or null value in the reference's answer says about the type.
ANY: dict = {}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _template(path: str) -> str:
    """`/execute/{process_id}/status` and `/execute/{id}/status` alike."""
    return re.sub(r"\{[^}]+\}", "{}", path)


def _environment(root: Path, key: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPEN_TERMINAL_")}
    env.update(
        HOME=str(root / "home"),
        XDG_CONFIG_HOME=str(root / "config"),
        XDG_STATE_HOME=str(root / "state"),
        OPEN_TERMINAL_LOG_DIR=str(root / "logs"),
        OPEN_TERMINAL_API_KEY=key,
        SHELL="/bin/sh",
    )
    return env


# The reference's whole route table as an OpenAPI document: the app's own
# routes and models through FastAPI's own generator, hidden ones shown.
COMPLETE_DOCUMENT = """
import json, sys
from fastapi.openapi.utils import get_openapi
import open_terminal.main as m
for route in m.app.routes:
    if hasattr(route, "include_in_schema"):
        route.include_in_schema = True
json.dump(get_openapi(title=m.app.title, version=m.app.version, routes=m.app.routes), sys.stdout)
"""


@dataclass
class Reference:
    url: str
    key: str
    home: str
    published: dict
    complete: dict


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    root = tmp_path_factory.mktemp("open-terminal")
    for d in ("home", "config", "state", "logs", "work"):
        (root / d).mkdir()
    key = "reference-" + uuid.uuid4().hex
    port = _free_port()
    env = _environment(root, key)
    exe = Path(sys.executable).parent / "open-terminal"
    work = os.path.realpath(root / "work")
    log = open(root / "server.log", "wb")
    proc = subprocess.Popen(
        [str(exe), "run", "--host", "127.0.0.1", "--port", str(port), "--cwd", work],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            if proc.poll() is not None:
                raise RuntimeError(
                    "open-terminal exited: " + (root / "server.log").read_text()
                )
            try:
                if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        else:
            raise RuntimeError("open-terminal did not come up")
        published = httpx.get(f"{url}/openapi.json", timeout=10).json()
        complete = json.loads(
            subprocess.run(
                [sys.executable, "-c", COMPLETE_DOCUMENT],
                env=env,
                cwd=work,
                check=True,
                capture_output=True,
            ).stdout
        )
        yield Reference(url, key, work, published, complete)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


@dataclass
class Helm:
    url: str
    key: str
    document: dict
    channel: str


@pytest.fixture(scope="module")
def helm(base, workspace):
    api = workspace["api"]
    channel = "otref"
    api.post(
        "/api/channels", json={"name": channel, "purpose": "The Open Terminal reference."}
    ).raise_for_status()
    issued = api.post(f"/api/channels/{channel}/ot-key")
    issued.raise_for_status()
    document = httpx.get(f"{base}/api/openapi.json", timeout=10).json()
    return Helm(issued.json()["url"], issued.json()["secret"], document, channel)


def claimed(document: dict) -> list[tuple[str, str]]:
    """(METHOD, reference path) of every Open Terminal operation Helm serves."""
    found = []
    for path, item in document["paths"].items():
        if not path.startswith(PREFIX + "/"):
            continue
        for method, op in item.items():
            if TAG in op.get("tags", []):
                found.append((method.upper(), path[len(PREFIX) :]))
    return sorted(found)


def operation(document: dict, method: str, path: str) -> dict | None:
    for p, item in document["paths"].items():
        if _template(p) == _template(path) and method.lower() in item:
            return item[method.lower()]
    return None


def resolve(document: dict, schema):
    """The schema with every local $ref replaced by what it names."""
    if isinstance(schema, dict):
        if "$ref" in schema:
            target = document
            for part in schema["$ref"].lstrip("#/").split("/"):
                target = target[part]
            return resolve(document, target)
        return {k: resolve(document, v) for k, v in schema.items()}
    if isinstance(schema, list):
        return [resolve(document, v) for v in schema]
    return schema


def base_type(schema: dict) -> str | None:
    """`number` for `anyOf: [{type: number}, {type: null}]` and the like."""
    if "type" in schema:
        t = schema["type"]
        if isinstance(t, list):
            t = next((x for x in t if x != "null"), None)
        return {"integer": "number"}.get(t, t)
    for key in ("anyOf", "oneOf"):
        for option in schema.get(key, []):
            t = base_type(option)
            if t and t != "null":
                return t
    return None


def reference_op(reference: Reference, method: str, path: str) -> tuple[dict, dict]:
    """The reference's operation and the document it came from."""
    op = operation(reference.published, method, path)
    if op is not None:
        return op, reference.published
    op = operation(reference.complete, method, path)
    assert op is not None, f"{method} {path}: not in the reference at all"
    return op, reference.complete


def test_every_claimed_endpoint_is_the_reference_s(reference, helm):
    endpoints = claimed(helm.document)
    assert len(endpoints) >= 20, endpoints
    missing = [
        f"{m} {p}"
        for m, p in endpoints
        if operation(reference.published, m, p) is None
        and operation(reference.complete, m, p) is None
    ]
    assert not missing, f"Helm claims what the reference does not serve: {missing}"


def _params(op: dict, where: str, skip: set[str] = frozenset()) -> dict[str, dict]:
    return {
        p["name"]: p
        for p in op.get("parameters", [])
        if p["in"] == where and p["name"] not in skip
    }


def test_parameters_and_bodies_are_the_reference_s(reference, helm):
    problems = []
    for method, path in claimed(helm.document):
        mine = operation(helm.document, method, PREFIX + path)
        theirs, document = reference_op(reference, method, path)
        where = f"{method} {path}"
        # Path parameters: the same number (their names may differ).
        mine_path = _params(mine, "path", {"channel"})
        theirs_path = _params(theirs, "path")
        if len(mine_path) != len(theirs_path):
            problems.append(f"{where}: path parameters {mine_path} vs {theirs_path}")
        # Query parameters.
        mine_q, theirs_q = _params(mine, "query"), _params(theirs, "query")
        for name, p in mine_q.items():
            if name not in theirs_q:
                problems.append(f"{where}: Helm takes ?{name}, the reference does not")
                continue
            if p.get("required") and not theirs_q[name].get("required"):
                problems.append(f"{where}: Helm requires ?{name}, the reference does not")
            a = base_type(resolve(helm.document, p.get("schema", {})))
            b = base_type(resolve(document, theirs_q[name].get("schema", {})))
            if a != b:
                problems.append(f"{where}: ?{name} is {a} in Helm, {b} in the reference")
        for name, p in theirs_q.items():
            if name in mine_q or (method, path, name) in NOT_TAKEN:
                continue
            problems.append(
                f"{where}: the reference takes ?{name}"
                + (" (required)" if p.get("required") else "")
                + ", Helm does not"
            )
        # JSON bodies.
        theirs_body = (
            theirs.get("requestBody", {}).get("content", {}).get("application/json")
        )
        mine_body = mine.get("requestBody", {}).get("content", {}).get("application/json")
        if bool(theirs_body) != bool(mine_body):
            problems.append(f"{where}: JSON body in Helm {bool(mine_body)}, reference {bool(theirs_body)}")
            continue
        if not theirs_body:
            continue
        a = resolve(helm.document, mine_body["schema"])
        b = resolve(document, theirs_body["schema"])
        a_props, b_props = a.get("properties", {}), b.get("properties", {})
        a_req, b_req = set(a.get("required", [])), set(b.get("required", []))
        if not a_req <= b_req:
            problems.append(f"{where}: Helm requires {a_req - b_req}, the reference does not")
        if not b_req <= set(a_props):
            problems.append(f"{where}: the reference requires {b_req - set(a_props)}, Helm lacks them")
        for name, schema in a_props.items():
            if name not in b_props:
                problems.append(f"{where}: body field {name} is Helm's alone")
            elif base_type(schema) != base_type(b_props[name]):
                problems.append(
                    f"{where}: body field {name} is {base_type(schema)} in Helm, "
                    f"{base_type(b_props[name])} in the reference"
                )
        for name in set(b_props) - set(a_props):
            problems.append(f"{where}: the reference's body field {name} is not Helm's")
    assert not problems, "\n".join(problems)


# --- The same requests to both ---------------------------------------------


@dataclass
class Answer:
    status: int
    content_type: str
    body: object  # parsed JSON, or the bytes

    @classmethod
    def of(cls, r: httpx.Response) -> "Answer":
        kind = r.headers.get("content-type", "")
        if kind.startswith("application/json"):
            return cls(r.status_code, kind, r.json())
        return cls(r.status_code, kind, r.content)


@dataclass
class Exchange:
    step: str
    method: str
    path: str  # the reference's path template
    reference: Answer
    helm: Answer
    same: tuple = ()  # keys whose values must be equal (after mapping homes)
    same_body: bool = False


@dataclass
class Pair:
    reference: Reference
    helm: Helm
    exchanges: list = field(default_factory=list)

    def _clients(self):
        return (
            (self.reference.url, self.reference.key),
            (self.helm.url, self.helm.key),
        )

    def both(self, step, method, path, template=None, *, key=True, same=(), same_body=False, **kw):
        answers = []
        for url, secret in self._clients():
            headers = dict(kw.get("headers", {}))
            if key:
                headers["authorization"] = f"Bearer {secret}"
            args = {k: v for k, v in kw.items() if k != "headers"}
            r = httpx.request(method, url + path, headers=headers, timeout=30, **args)
            answers.append(Answer.of(r))
        template = template or path.split("?")[0]
        self.exchanges.append(
            Exchange(step, method, template, answers[0], answers[1], same, same_body)
        )
        return answers


def _multipart(name: str, data: bytes) -> dict:
    return {"files": {"file": (name, data, "application/octet-stream")}}


def _poll_done(pair: Pair, answers):
    """Polls each server's command until it ends; returns the final pair."""
    finals = []
    for (url, secret), answer in zip(pair._clients(), answers):
        pid = answer.body["id"]
        for _ in range(100):
            r = httpx.get(
                f"{url}/execute/{pid}/status?wait=5",
                headers={"authorization": f"Bearer {secret}"},
                timeout=30,
            )
            if r.json()["status"] != "running":
                break
        finals.append(r.json())
    return finals


def _terminal_echo(url: str, key: str, tid: str) -> str:
    ws_url = url.replace("http://", "ws://") + f"/api/terminals/{tid}"
    seen = b""
    with ws_client.connect(ws_url, open_timeout=10) as socket_:
        socket_.send(json.dumps({"type": "auth", "token": key}))
        socket_.send(json.dumps({"type": "resize", "rows": 30, "cols": 90}))
        socket_.send(b"echo OT-$((40+2))\n")
        deadline = time.time() + 20
        while b"OT-42" not in seen and time.time() < deadline:
            message = socket_.recv(timeout=20)
            seen += message if isinstance(message, bytes) else message.encode()
    return seen.decode(errors="replace")


def _refused_close(url: str, tid: str) -> int | None:
    ws_url = url.replace("http://", "ws://") + f"/api/terminals/{tid}"
    with ws_client.connect(ws_url, open_timeout=10) as socket_:
        socket_.send(json.dumps({"type": "auth", "token": "not-the-key"}))
        try:
            while True:
                socket_.recv(timeout=15)
        except websockets.exceptions.ConnectionClosed as closed:
            return closed.rcvd.code if closed.rcvd else None



@pytest.fixture(scope="module")
def exchanges(reference, helm):
    pair = Pair(reference, helm)
    both = pair.both
    both("health", "GET", "/health", key=False, same=("status",))
    both("config", "GET", "/api/config", key=False)
    both("cwd", "GET", "/files/cwd", same=("cwd", "home"))
    both("no key", "GET", "/files/list", key=False)
    both(
        "write",
        "POST",
        "/files/write",
        json={"path": "notes/a.txt", "content": "alpha\nbeta\n"},
        same=("path", "size"),
    )
    both("write without content", "POST", "/files/write", json={"path": "notes/b.txt"})
    both("read", "GET", "/files/read?path=notes/a.txt", same=("path", "content", "total_lines"))
    both(
        "read lines",
        "GET",
        "/files/read?path=notes/a.txt&start_line=2&end_line=2",
        same=("content", "total_lines"),
    )
    both("read without path", "GET", "/files/read")
    both("read a bad line", "GET", "/files/read?path=notes/a.txt&start_line=0")
    both("read missing", "GET", "/files/read?path=notes/none.txt")
    both("list", "GET", "/files/list?directory=notes", same=("dir", "writable"))
    both("list home", "GET", "/files/list", same=("dir",))
    both("list missing", "GET", "/files/list?directory=nowhere")
    both("list a file", "GET", "/files/list?directory=notes/a.txt")
    both("mkdir", "POST", "/files/mkdir", json={"path": "made/deep"}, same=("path",))
    both(
        "move",
        "POST",
        "/files/move",
        json={"source": "notes/a.txt", "destination": "made/deep/b.txt"},
        same=("source", "destination"),
    )
    both("write again", "POST", "/files/write", json={"path": "notes/a.txt", "content": "x"})
    both(
        "move onto a file",
        "POST",
        "/files/move",
        json={"source": "notes/a.txt", "destination": "made/deep/b.txt"},
    )
    both(
        "move missing",
        "POST",
        "/files/move",
        json={"source": "notes/none.txt", "destination": "made/c.txt"},
    )
    both("view", "GET", "/files/view?path=made/deep/b.txt", same_body=True)
    both("view missing", "GET", "/files/view?path=made/none.txt")
    both(
        "upload",
        "POST",
        "/files/upload?directory=in",
        same=("path", "size"),
        **_multipart("data.csv", b"a,b\n1,2\n"),
    )
    both(
        "upload a binary",
        "POST",
        "/files/upload?directory=in",
        **_multipart("blob.bin", b"\x00\x01\x02binary"),
    )
    both("read NULs that are UTF-8", "GET", "/files/read?path=in/blob.bin", same=("content",))
    both(
        "upload a non-text file",
        "POST",
        "/files/upload?directory=in",
        **_multipart("blob.dat", b"\xff\xfe\x00\x81 not text"),
    )
    both("read a non-text file", "GET", "/files/read?path=in/blob.dat")
    png = (
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06"
        b"\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01"
        b"\x00\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82"
    )
    both("upload an image", "POST", "/files/upload?directory=in", **_multipart("dot.png", png))
    both("read an image", "GET", "/files/read?path=in/dot.png", same_body=True)
    both("upload without a file", "POST", "/files/upload?directory=in", data={"x": "1"})
    # Searches: contents (regex, literal, per file, repeated include) and names.
    both("grep", "GET", "/files/grep?query=be.a", same=("path", "matches", "truncated"))
    both(
        "grep literal ignoring case",
        "GET",
        "/files/grep?query=ALPHA&regex=false&case_insensitive=true&include=*.txt&include=*.csv",
        same=("matches",),
    )
    both(
        "grep file names",
        "GET",
        "/files/grep?query=1&match_per_line=false&include=*.csv",
        same=("matches",),
    )
    both("grep a file", "GET", "/files/grep?query=beta&path=made/deep/b.txt", same=("matches",))
    both("grep missing", "GET", "/files/grep?query=x&path=nowhere")
    both("grep without query", "GET", "/files/grep")
    both("grep a bad limit", "GET", "/files/grep?query=x&max_results=0")
    both("glob", "GET", "/files/glob?pattern=*.txt", same=("path", "truncated"))
    both(
        "glob directories, excluding",
        "GET",
        "/files/glob?pattern=*&type=directory&exclude=deep",
        same=("truncated",),
    )
    both("glob under a path", "GET", "/files/glob?pattern=*.csv&path=in&max_results=1", same=("path", "truncated"))
    both("glob missing", "GET", "/files/glob?pattern=*&path=nowhere")
    both("glob without pattern", "GET", "/files/glob")
    both("glob a bad type", "GET", "/files/glob?pattern=*&type=link")
    both("delete", "DELETE", "/files/delete?path=in", same=("path", "type"))
    both("delete missing", "DELETE", "/files/delete?path=in")
    both("delete without path", "DELETE", "/files/delete")

    # Commands.
    ran = both(
        "execute and wait",
        "POST",
        "/execute?wait=10",
        json={"command": "echo one; echo two >&2; exit 3"},
        same=("command", "status", "exit_code", "cwd"),
    )
    ids = [a.body["id"] for a in ran]
    pair.exchanges.append(
        Exchange(
            "status",
            "GET",
            "/execute/{}/status",
            *[
                Answer.of(
                    httpx.get(
                        f"{url}/execute/{pid}/status?offset=0",
                        headers={"authorization": f"Bearer {secret}"},
                        timeout=30,
                    )
                )
                for (url, secret), pid in zip(pair._clients(), ids)
            ],
            same=("command", "status", "exit_code", "truncated"),
        )
    )
    pair.exchanges.append(
        Exchange(
            "status past the end",
            "GET",
            "/execute/{}/status",
            *[
                Answer.of(
                    httpx.get(
                        f"{url}/execute/{pid}/status?offset=2&tail=1",
                        headers={"authorization": f"Bearer {secret}"},
                        timeout=30,
                    )
                )
                for (url, secret), pid in zip(pair._clients(), ids)
            ],
            same=("output",),
        )
    )
    both("execute with cwd", "POST", "/execute?wait=10", json={"command": "pwd", "cwd": "made"},
         same=("status", "exit_code"))
    both("execute a wrong wait", "POST", "/execute?wait=301", json={"command": "true"})
    both("execute without command", "POST", "/execute", json={"cwd": "made"})
    both("list commands", "GET", "/execute")
    both("status unknown", "GET", "/execute/nosuch/status", "/execute/{}/status")
    cats = both("execute cat", "POST", "/execute", json={"command": "cat"}, same=("status",))
    cat_ids = [a.body["id"] for a in cats]
    pair.exchanges.append(
        Exchange(
            "input",
            "POST",
            "/execute/{}/input",
            *[
                Answer.of(
                    httpx.post(
                        f"{url}/execute/{pid}/input",
                        json={"input": "echoed back\n"},
                        headers={"authorization": f"Bearer {secret}"},
                        timeout=30,
                    )
                )
                for (url, secret), pid in zip(pair._clients(), cat_ids)
            ],
            same=("status",),
        )
    )
    # Ctrl-D (as a model writes it, escaped) ends a command's input.
    pair.ended = []
    for url, secret in pair._clients():
        headers = {"authorization": f"Bearer {secret}"}
        pid = httpx.post(
            f"{url}/execute", json={"command": "cat; echo after"}, headers=headers, timeout=30
        ).json()["id"]
        for text in ("last line\n", "\\x04"):
            httpx.post(
                f"{url}/execute/{pid}/input", json={"input": text}, headers=headers, timeout=30
            ).raise_for_status()
        body = httpx.get(
            f"{url}/execute/{pid}/status?wait=10", headers=headers, timeout=30
        ).json()
        output = "".join(entry["data"] for entry in body["output"])
        pair.ended.append((body["status"], body["exit_code"], "after" in output))
    # The protocol turns backslash escapes in input into the characters.
    pair.escaped = []
    for (url, secret), pid in zip(pair._clients(), cat_ids):
        headers = {"authorization": f"Bearer {secret}"}
        httpx.post(
            f"{url}/execute/{pid}/input",
            json={"input": "tab\\there\\n"},
            headers=headers,
            timeout=30,
        ).raise_for_status()
        text = ""
        for _ in range(100):
            body = httpx.get(f"{url}/execute/{pid}/status", headers=headers, timeout=30).json()
            text = "".join(entry["data"] for entry in body["output"])
            if "here" in text:
                break
            time.sleep(0.05)
        pair.escaped.append(text)
    pair.exchanges.append(
        Exchange(
            "kill",
            "DELETE",
            "/execute/{}",
            *[
                Answer.of(
                    httpx.delete(
                        f"{url}/execute/{pid}",
                        headers={"authorization": f"Bearer {secret}"},
                        timeout=30,
                    )
                )
                for (url, secret), pid in zip(pair._clients(), cat_ids)
            ],
            same=("status",),
        )
    )
    pair.exchanges.append(
        Exchange(
            "input after the end",
            "POST",
            "/execute/{}/input",
            *[
                Answer.of(
                    httpx.post(
                        f"{url}/execute/{pid}/input",
                        json={"input": "late\n"},
                        headers={"authorization": f"Bearer {secret}"},
                        timeout=30,
                    )
                )
                for (url, secret), pid in zip(pair._clients(), cat_ids)
            ],
        )
    )
    both("kill unknown", "DELETE", "/execute/nosuch", "/execute/{}")

    # Terminals.
    opened = both("open a terminal", "POST", "/api/terminals")
    tids = [a.body["id"] for a in opened]
    both("list terminals", "GET", "/api/terminals")
    pair.exchanges.append(
        Exchange(
            "a terminal",
            "GET",
            "/api/terminals/{}",
            *[
                Answer.of(
                    httpx.get(
                        f"{url}/api/terminals/{tid}",
                        headers={"authorization": f"Bearer {secret}"},
                        timeout=30,
                    )
                )
                for (url, secret), tid in zip(pair._clients(), tids)
            ],
        )
    )
    pair.echoes = [
        _terminal_echo(url, secret, tid) for (url, secret), tid in zip(pair._clients(), tids)
    ]
    second = both("open another", "POST", "/api/terminals")
    pair.refusals = [
        _refused_close(url, a.body["id"]) for (url, _), a in zip(pair._clients(), second)
    ]
    third = both("open a third", "POST", "/api/terminals")
    pair.exchanges.append(
        Exchange(
            "close a terminal",
            "DELETE",
            "/api/terminals/{}",
            *[
                Answer.of(
                    httpx.delete(
                        f"{url}/api/terminals/{a.body['id']}",
                        headers={"authorization": f"Bearer {secret}"},
                        timeout=30,
                    )
                )
                for (url, secret), a in zip(pair._clients(), third)
            ],
            same=("status",),
        )
    )
    both("a terminal unknown", "GET", "/api/terminals/nosuch", "/api/terminals/{}")
    both("close unknown", "DELETE", "/api/terminals/nosuch", "/api/terminals/{}")
    return pair


def _mapped(value, home: str):
    """The reference's value with its home read as Helm's `/workspace`."""
    if isinstance(value, str):
        return value.replace(home, "/workspace")
    if isinstance(value, list):
        return [_mapped(v, home) for v in value]
    if isinstance(value, dict):
        return {k: _mapped(v, home) for k, v in value.items()}
    return value


def shape(value) -> dict:
    """A JSON Schema of what a reference answer looks like: its keys (less the
    DELIBERATE ones) required, with their types; null says nothing."""
    if value is None:
        return ANY
    if isinstance(value, bool):
        return {"type": "boolean"}
    if isinstance(value, (int, float)):
        return {"type": "number"}
    if isinstance(value, str):
        return {"type": "string"}
    if isinstance(value, list):
        return {"type": "array", "items": shape(value[0]) if value else ANY}
    return {
        "type": "object",
        "required": sorted(k for k in value if k not in DELIBERATE),
        "properties": {k: shape(v) for k, v in value.items() if k not in DELIBERATE},
    }


def _where(e: Exchange) -> str:
    return f"{e.step} ({e.method} {e.path}): reference {e.reference.status} {e.reference.body!r:.300}, Helm {e.helm.status} {e.helm.body!r:.300}"


def test_status_codes_are_the_reference_s(exchanges):
    wrong = [_where(e) for e in exchanges.exchanges if e.reference.status != e.helm.status]
    assert not wrong, "\n".join(wrong)


def test_answers_have_the_reference_s_shape(exchanges):
    problems = []
    for e in exchanges.exchanges:
        ref, mine = e.reference, e.helm
        if isinstance(ref.body, bytes) != isinstance(mine.body, bytes):
            problems.append(f"{_where(e)}: one answers JSON, the other not")
            continue
        if isinstance(ref.body, bytes):
            if ref.content_type.split(";")[0] != mine.content_type.split(";")[0]:
                problems.append(f"{_where(e)}: content type {ref.content_type} vs {mine.content_type}")
            continue
        expected = shape(ref.body)
        if ref.status == 422:
            # FastAPI's validation error: `detail` is a list of {type, loc,
            # msg}; its `input` and `ctx` are extras the schema leaves out.
            expected = {"type": "object", "required": ["detail"], "properties": {
                "detail": {"type": "array", "minItems": 1, "items": {
                    "type": "object", "required": ["type", "loc", "msg"],
                    "properties": {"type": {"type": "string"}, "loc": {"type": "array"},
                                   "msg": {"type": "string"}}}}}}
        try:
            jsonschema.validate(mine.body, expected)
        except jsonschema.ValidationError as err:
            problems.append(f"{_where(e)}: {err.message} at {list(err.absolute_path)}")
    assert not problems, "\n".join(problems)


def test_answers_fit_the_reference_s_declared_schemas(reference, exchanges):
    problems = []
    for e in exchanges.exchanges:
        if isinstance(e.helm.body, bytes):
            continue
        op, document = reference_op(reference, e.method, e.path)
        declared = op.get("responses", {}).get(str(e.helm.status), {})
        schema = declared.get("content", {}).get("application/json", {}).get("schema")
        if schema is None:
            continue
        try:
            jsonschema.validate(e.helm.body, resolve(document, schema))
        except jsonschema.ValidationError as err:
            problems.append(f"{_where(e)}: {err.message}")
    assert not problems, "\n".join(problems)


def _output(body):
    """A command's output as one text: the reference runs commands in a
    terminal (one `output` stream, CRLF), Helm without one (`stdout` and
    `stderr`, as the reference does where it has no terminal)."""
    if not isinstance(body, dict) or "output" not in body:
        return body
    kinds = {entry["type"] for entry in body["output"]}
    assert kinds <= {"stdout", "stderr", "output"}, kinds
    text = "".join(entry["data"] for entry in body["output"]).replace("\r\n", "\n")
    return {**body, "output": text}


def test_chosen_values_are_the_reference_s(exchanges):
    home = exchanges.reference.home
    problems = []
    for e in exchanges.exchanges:
        ref = e.reference.body
        if not isinstance(ref, bytes):
            ref = _output(_mapped(ref, home))
        mine = _output(e.helm.body)
        if e.same_body and ref != mine:
            problems.append(f"{_where(e)}: the bodies differ")
        for key in e.same:
            if not isinstance(ref, dict) or not isinstance(mine, dict):
                problems.append(f"{_where(e)}: not objects")
                break
            if ref.get(key) != mine.get(key):
                problems.append(f"{_where(e)}: {key} {ref.get(key)!r} vs {mine.get(key)!r}")
    assert not problems, "\n".join(problems)


def test_name_searches_find_the_same_entries(exchanges):
    """Glob answers carry modification times, which differ between the two
    servers; the entries found (path, type, size) must be the same."""
    problems = []
    for e in exchanges.exchanges:
        if not e.path.endswith("/files/glob") or e.reference.status != 200:
            continue
        found = [
            sorted((m["path"], m["type"], m["size"]) for m in answer.body["matches"])
            for answer in (e.reference, e.helm)
        ]
        if found[0] != found[1]:
            problems.append(f"{_where(e)}: {found[0]} vs {found[1]}")
    assert not problems, "\n".join(problems)


def test_ctrl_d_ends_input_alike(exchanges):
    reference, helm = exchanges.ended
    assert reference == helm, exchanges.ended
    assert reference[1:] == (0, True), exchanges.ended


def test_terminals_echo_and_refuse_alike(exchanges):
    reference_echo, helm_echo = exchanges.echoes
    assert "OT-42" in reference_echo, reference_echo
    assert "OT-42" in helm_echo, helm_echo
    assert exchanges.refusals[0] == exchanges.refusals[1] == 4001, exchanges.refusals


def test_input_escapes_are_read_alike(exchanges):
    for text in exchanges.escaped:
        assert "tab\there" in text and "\\t" not in text, exchanges.escaped


def test_every_claimed_endpoint_was_exercised(helm, exchanges):
    done = {(e.method, _template(e.path)) for e in exchanges.exchanges}
    left = [f"{m} {p}" for m, p in claimed(helm.document) if (m, _template(p)) not in done]
    assert not left, f"claimed but not compared with the reference: {left}"
