"""Fixtures of the onehelm suite: a data directory, a scripted Python
provider, and a real helm-http server (with the OpenAI-compatible mock model
from helm-tests) for the connect() tests."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import onehelm


class Script:
    """A Python provider that answers each model call with the next step:
    a list of items (``str`` text, ``onehelm.ModelToolCall``), or a callable
    of the request returning one. Records every request it got."""

    def __init__(self, *steps: Any) -> None:
        self.steps = list(steps)
        self.requests: list[onehelm.ModelRequest] = []
        self.lock = threading.Lock()

    def stream(self, request: onehelm.ModelRequest) -> Iterator[Any]:
        with self.lock:
            self.requests.append(request)
            step = self.steps.pop(0) if self.steps else ["done"]
        if callable(step):
            step = step(request)
        if isinstance(step, (str, onehelm.ModelToolCall)):
            step = [step]
        yield from step


class AsyncScript(Script):
    """The same, with an async generator (run on the registering loop under
    AsyncHelm, on the package's own under a blocking Helm)."""

    async def stream(self, request: onehelm.ModelRequest) -> Any:  # type: ignore[override]
        for item in Script.stream(self, request):
            yield item


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return tmp_path / "data"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _request(url: str, body: Any = None, headers: dict[str, str] | None = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, headers={"content-type": "application/json", **(headers or {})})
    with urllib.request.urlopen(req, timeout=10) as response:
        return json.loads(response.read() or b"null"), response.headers


SETUP_CODE = "pytest-setup-code"


class Server:
    """helm-http on a temporary data dir and a free loopback port, with the
    Captain signed up and an API token; the mock model runs beside it."""

    def __init__(self, tmp: Path, script: list[str]) -> None:
        binary = os.environ.get("HELM_HTTP_BIN")
        mock = os.environ.get("HELM_MOCK_MODEL_BIN")
        if not binary or not mock:
            pytest.skip("HELM_HTTP_BIN and HELM_MOCK_MODEL_BIN name the server and mock model (scripts/test-python sets them)")
        self.mock = subprocess.Popen([mock, *script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.mock.stdout is not None
        self.model_url = json.loads(self.mock.stdout.readline())["model_url"]
        port = _free_port()
        self.url = f"http://127.0.0.1:{port}"
        # The server's one-time setup code, preset so the test can sign up.
        env = {**os.environ, "HELM_LOG": "warn", "HELM_SETUP_CODE": SETUP_CODE}
        self.process = subprocess.Popen(
            [binary, "--data", str(tmp / "server-data"), "--listen", f"127.0.0.1:{port}"], env=env
        )
        for _ in range(300):
            try:
                urllib.request.urlopen(f"{self.url}/healthz", timeout=1)
                break
            except OSError:
                time.sleep(0.1)
        origin = {"origin": self.url}
        _, headers = _request(
            f"{self.url}/api/setup",
            {"name": "ada", "password": "correct horse battery staple", "setup_code": SETUP_CODE},
            origin,
        )
        cookie = headers["set-cookie"].split(";")[0]
        token, _ = _request(f"{self.url}/api/tokens", {"name": "pytest"}, {**origin, "cookie": cookie})
        self.token: str = token["secret"]

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=20)
        if self.mock.stdin:
            self.mock.stdin.close()
        self.mock.wait(timeout=10)


@pytest.fixture
def server_factory(tmp_path: Path) -> Iterator[Any]:
    started: list[Server] = []

    def start(*script: str) -> Server:
        server = Server(tmp_path, list(script))
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()
