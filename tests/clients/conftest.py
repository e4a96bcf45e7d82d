"""Fixtures for driving Helm with real clients: a signed-in Captain and a
member on the server scripts/client-tests started, channels (one private),
and the model's fixed answer."""

import json
import os
import time
import urllib.request
import uuid

import httpx
import pytest

ANSWER = "The launch plan: beta in May, GA in June."


def _wait_up(base: str) -> None:
    for _ in range(600):
        try:
            if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"helm-http did not come up at {base}")


def model_fails_next(message: str) -> None:
    """The mock model's next answer is an HTTP 400 with `message` (a model
    that refuses the request: not retried, the turn fails)."""
    body = json.dumps({"error": {"status": 400, "message": message}}).encode()
    request = urllib.request.Request(
        os.environ["HELM_MODEL_CONTROL"] + "/push",
        data=body,
        method="POST",
        headers={"content-type": "application/json"},
    )
    urllib.request.urlopen(request).read()


@pytest.fixture(scope="session")
def base() -> str:
    url = os.environ["HELM_URL"]
    _wait_up(url)
    return url


@pytest.fixture(scope="session")
def workspace(base: str) -> dict:
    """The Captain's and a member's tokens, with #launch (public) and
    #vault (private to the Captain) on a mock model."""
    browser = httpx.Client(base_url=base, headers={"origin": base}, timeout=30)
    browser.post(
        "/api/setup",
        json={
            "name": "ada",
            "password": "correct horse battery staple",
            "setup_code": os.environ["HELM_SETUP_CODE"],
        },
    ).raise_for_status()
    captain = browser.post("/api/tokens", json={"name": "clients"}).json()["secret"]
    api = httpx.Client(
        base_url=base, headers={"authorization": f"Bearer {captain}"}, timeout=30
    )
    api.post(
        "/api/providers",
        json={
            "name": "mock",
            "kind": "openai",
            "base_url": os.environ["HELM_MODEL_URL"],
            "default_model": "mock-model",
            "make_default": True,
        },
    ).raise_for_status()
    api.post(
        "/api/channels", json={"name": "launch", "purpose": "Planning the product launch."}
    ).raise_for_status()
    api.post(
        "/api/channels",
        json={"name": "vault", "purpose": "Only the Captain's.", "visibility": "private"},
    ).raise_for_status()
    api.put(
        "/api/channels/launch/files",
        json={"path": "plan.md", "content": "# Plan\nBeta in May.\n"},
    ).raise_for_status()
    password = "member password " + uuid.uuid4().hex
    api.post(
        "/api/users", json={"name": "mia", "role": "member", "password": password}
    ).raise_for_status()
    member_browser = httpx.Client(base_url=base, headers={"origin": base}, timeout=30)
    member_browser.post(
        "/api/auth/login", json={"name": "mia", "password": password}
    ).raise_for_status()
    member = member_browser.post("/api/tokens", json={"name": "clients"}).json()["secret"]
    return {"captain": captain, "member": member, "api": api}
