"""Each kind of core error raises its own class, every one a HelmError with
a stable ``code``; nothing is half-done."""

from __future__ import annotations

import socket
from typing import Any
from pathlib import Path

import pytest

import onehelm

ALL = [
    onehelm.InvalidInput,
    onehelm.NotFound,
    onehelm.Conflict,
    onehelm.Refused,
    onehelm.Forbidden,
    onehelm.Unauthenticated,
    onehelm.Unavailable,
    onehelm.ProviderError,
]


def test_every_class_is_a_helm_error() -> None:
    for cls in ALL:
        assert issubclass(cls, onehelm.HelmError)
    assert len(set(ALL)) == len(ALL)


def test_each_kind_raises_its_class(data: Path, tmp_path: Path) -> None:
    a_file = tmp_path / "a-file"
    a_file.write_text("not a data directory")
    with onehelm.Helm.open(data) as helm:
        helm.create_channel("launch", "Plans the launch.")
        cases: list[tuple[type[onehelm.HelmError], str, object]] = [
            (onehelm.InvalidInput, "invalid", lambda: helm.create_channel("a b/c", "Bad name.")),
            (onehelm.InvalidInput, "missing_purpose", lambda: helm.create_channel("ok", "  ")),
            (onehelm.InvalidInput, "invalid", lambda: helm.create_channel("gpu", "Training.", computer="gpu")),
            (onehelm.InvalidInput, "invalid", lambda: helm.channel("launch").memory.add("gossip", "x")),
            (onehelm.InvalidInput, "invalid", lambda: helm.channel("launch").ask("  ")),
            (onehelm.InvalidInput, "invalid", lambda: helm.channel("launch").memory.recall("x", k=0)),
            (onehelm.InvalidInput, "invalid", lambda: helm.channel("launch").memory.recall("x", k=-1)),
            (onehelm.InvalidInput, "invalid", lambda: onehelm.Helm.open(a_file)),
            (onehelm.NotFound, "not_found", lambda: helm.channel("nowhere")),
            (onehelm.NotFound, "not_found", lambda: helm.channel("launch").files.read("missing.md")),
            (onehelm.Conflict, "conflict", lambda: helm.create_channel("launch", "Again.")),
            (onehelm.Refused, "refused", lambda: helm.channel("main").archive()),
            (onehelm.Unavailable, "not_initialized", lambda: onehelm.Helm.open(tmp_path / "empty", create=False)),
            (onehelm.Unauthenticated, "unauthenticated", lambda: onehelm.Helm.connect("http://127.0.0.1:1", " ")),
            (onehelm.InvalidInput, "invalid", lambda: onehelm.Helm.connect("ftp://example", "t")),
        ]
        helm.add_user("mia")
        mia = helm.as_user("mia")
        cases.append((onehelm.Forbidden, "forbidden", lambda: mia.channel("launch").archive()))
        cases.append((onehelm.Forbidden, "forbidden", lambda: mia.add_user("zed")))
        for cls, code, call in cases:
            with pytest.raises(cls) as raised:
                call()  # type: ignore[operator]
            assert isinstance(raised.value, onehelm.HelmError)
            assert raised.value.code == code, (cls, raised.value)
        # Nothing was half-made by the failures.
        assert [c.name for c in helm.channels()] == ["launch", "main"]
        assert helm.channel("launch").threads() == [], "an empty question posted nothing"


def test_a_server_that_is_not_there_is_unavailable() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    helm = onehelm.Helm.connect(f"http://127.0.0.1:{port}", "token")
    with pytest.raises(onehelm.Unavailable) as raised:
        helm.channels()
    assert raised.value.code == "unreachable"


def test_a_provider_that_is_not_configured_fails_the_turn(data: Path) -> None:
    with onehelm.Helm.open(data) as helm:
        launch = helm.create_channel("launch", "Plans the launch.")
        # A model is checked when it is chosen: an unknown provider is refused.
        with pytest.raises(onehelm.NotFound):
            launch.set_model("nobody")
        # A registered provider whose key is nowhere fails the turn itself.
        helm.providers.add(
            "keyless",
            base_url="http://127.0.0.1:9/v1",
            api_key_env="HELM_TEST_NO_SUCH_KEY",
            default_model="any-model",
            make_default=True,
        )
        # The listing names where the key is kept, never a key.
        (keyless,) = helm.providers.list()
        assert keyless.api_key_env == "HELM_TEST_NO_SUCH_KEY"
        assert keyless.api_key_ref == "env:HELM_TEST_NO_SUCH_KEY"
        with pytest.raises(onehelm.ProviderError):
            launch.ask("hello?")


def test_python_providers_are_refused_over_a_server() -> None:
    helm = onehelm.Helm.connect("http://127.0.0.1:9", "token")

    class Echo:
        def complete(self, request: onehelm.ModelRequest) -> str:
            return request.prompt

    with pytest.raises(onehelm.Refused) as raised:
        helm.providers.register("echo", Echo())
    assert "Helm.open" in str(raised.value)


async def test_errors_in_async_calls_raise_the_same_classes(data: Path) -> None:
    async with onehelm.AsyncHelm.open(data) as helm:
        with pytest.raises(onehelm.NotFound):
            await helm.channel("nowhere")
        await helm.create_channel("launch", "Plans.")
        with pytest.raises(onehelm.Conflict):
            await helm.create_channel("launch", "Again.")


def test_a_directory_a_server_holds_is_busy_and_says_how_to_reach_it(
    server_factory: Any, tmp_path: Path
) -> None:
    server = server_factory()
    with pytest.raises(onehelm.Unavailable) as raised:
        onehelm.Helm.open(tmp_path / "server-data")
    assert raised.value.code == "busy"
    message = str(raised.value)
    assert server.url in message and "onehelm.Helm.connect(url, token)" in message
    # Another frontend's syntax is not Python's advice.
    assert "--server" not in message and "1helm" not in message


def test_a_provider_name_taken_is_a_conflict_unless_replaced(data: Path) -> None:
    with onehelm.Helm.open(data) as helm:
        helm.providers.add("local", base_url="http://127.0.0.1:9/v1")
        with pytest.raises(onehelm.Conflict) as raised:
            helm.providers.add("local", base_url="http://127.0.0.1:10/v1")
        assert raised.value.code == "conflict"
        assert "replace" in str(raised.value) and "--replace" not in str(raised.value)
        assert [p.base_url for p in helm.providers.list()] == ["http://127.0.0.1:9/v1"]
        helm.providers.add("local", base_url="http://127.0.0.1:10/v1", replace=True)
        assert [p.base_url for p in helm.providers.list()] == ["http://127.0.0.1:10/v1"]


def test_a_key_reference_reads_back_and_a_bad_one_is_refused(data: Path) -> None:
    with onehelm.Helm.open(data) as helm:
        # The forms the CLI and the server take: a variable, a file, a stored key.
        helm.providers.add("vault", base_url="http://127.0.0.1:9/v1", api_key_env="file:/run/secrets/key")
        helm.providers.add("plain", base_url="http://127.0.0.1:9/v1", api_key_env="env:OPENAI_API_KEY")
        for bad in ["MY KEY", "file:relative/key", "stored:../escape", "1ABC", ""]:
            with pytest.raises(onehelm.InvalidInput) as raised:
                helm.providers.add("bad", base_url="http://127.0.0.1:9/v1", api_key_env=bad)
            assert raised.value.code == "invalid"
            assert "API key reference" in str(raised.value), raised.value
        listed = {p.name: (p.api_key_env, p.api_key_ref) for p in helm.providers.list()}
        assert listed == {
            "plain": ("OPENAI_API_KEY", "env:OPENAI_API_KEY"),
            "vault": (None, "file:/run/secrets/key"),
        }
    # What was stored reads back after reopening, too.
    with onehelm.Helm.open(data) as helm:
        assert sorted(p.name for p in helm.providers.list()) == ["plain", "vault"]


def test_a_run_timeout_out_of_range_is_said_in_pythons_words(server_factory: Any, data: Path) -> None:
    server = server_factory()
    remote = onehelm.Helm.connect(server.url, server.token).create_channel("launch", "Plans the launch.")
    with pytest.raises(onehelm.InvalidInput) as too_long:
        remote.run("true", timeout=99999)
    message = str(too_long.value)
    assert "timeout" in message and "3600" in message, message
    assert "timeout_secs" not in message and "--" not in message, message
    # Below the bound the two paths already agree, word for word.
    with pytest.raises(onehelm.InvalidInput) as remote_negative:
        remote.run("true", timeout=-1)
    with onehelm.Helm.open(data) as helm:
        with pytest.raises(onehelm.InvalidInput) as embedded_negative:
            helm.channel("main").run("true", timeout=-1)
    assert str(remote_negative.value) == str(embedded_negative.value)
