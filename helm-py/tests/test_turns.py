"""Turns with a Python provider: ask and stream (blocking and asyncio), the
file the agent wrote, approvals decided from code, and a blocking ask that
lets other Python threads run."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

import onehelm
from conftest import AsyncScript, Script

WRITE_PLAN = onehelm.ModelToolCall("write_file", {"path": "plan.md", "content": "# Launch plan\n"})


def setup(helm: onehelm.Helm, provider: Any) -> onehelm.Channel:
    helm.providers.register("py", provider)
    launch = helm.create_channel("launch", "Plans the product launch.")
    model = launch.set_model("py")
    assert model is not None and model.provider == "py"
    return launch


def test_ask_runs_a_tool_and_the_file_is_in_the_workspace(data: Path) -> None:
    script = Script([WRITE_PLAN], ["I wrote ", "plan.md."])
    with onehelm.Helm.open(data) as helm:
        launch = setup(helm, script)
        reply = launch.ask("Draft the launch plan in plan.md")
        assert reply.text == "I wrote plan.md." and str(reply) == reply.text
        assert reply.state == "completed"
        assert reply.model is not None and reply.model.provider == "py"
        # A Python provider reports no token counts: none are made up.
        assert reply.usage is None
        assert [(a.tool, a.status) for a in reply.actions] == [("write_file", "ok")]
        assert launch.files.read("plan.md") == "# Launch plan\n"
        # The provider saw the tool's result on its second call.
        second = script.requests[1]
        assert any(m["role"] == "tool" for m in second.messages)
        assert any(t["name"] == "write_file" for t in second.tools)
        # The thread is durable: it has the question and the answer.
        thread = launch.thread(reply.thread_id)
        texts = [m.text for m in thread.messages()]
        assert texts[0].endswith("Draft the launch plan in plan.md") and texts[-1] == "I wrote plan.md."
        thread.resolve()
        assert thread.status == "resolved"
        assert [t.id for t in launch.threads()] == [reply.thread_id]
        # Continuing the thread reaches the same session.
        follow = launch.ask("Thanks!", thread=reply.thread_id)
        assert follow.thread_id == reply.thread_id


async def test_ask_runs_a_tool_and_the_file_is_in_the_workspace_async(data: Path) -> None:
    script = AsyncScript([WRITE_PLAN], "Done.")
    async with onehelm.AsyncHelm.open(data) as helm:
        helm.providers.register("py", script)
        launch = await helm.create_channel("launch", "Plans the product launch.")
        await launch.set_model("py")
        reply = await launch.ask("Draft the launch plan in plan.md")
        assert reply.text == "Done."
        assert [a.tool for a in reply.actions] == ["write_file"]
        assert await launch.files.read("plan.md") == "# Launch plan\n"
        thread = await launch.thread(reply.thread_id)
        assert len(await thread.messages()) == 2
        await thread.resolve()
        assert thread.status == "resolved"


def test_stream_yields_typed_events_in_order(data: Path) -> None:
    with onehelm.Helm.open(data) as helm:
        launch = setup(helm, Script([WRITE_PLAN], ["Plan ", "written."]))
        stream = launch.stream("Draft the plan")
        events = list(stream)
        kinds = [type(e).__name__ for e in events]
        assert kinds == ["ToolCall", "ToolResult", "TextDelta", "TurnEnded"], kinds
        call, result, delta, ended = events
        assert isinstance(call, onehelm.ToolCall) and call.tool == "write_file"
        assert isinstance(result, onehelm.ToolResult) and result.status == "ok"
        assert isinstance(delta, onehelm.TextDelta) and delta.text == "Plan written."
        assert isinstance(ended, onehelm.TurnEnded) and ended.state == "completed"
        assert stream.reply is not None and stream.reply.text == "Plan written."


async def test_stream_yields_typed_events_in_order_async(data: Path) -> None:
    async with onehelm.AsyncHelm.open(data) as helm:
        helm.providers.register("py", AsyncScript([WRITE_PLAN], "Plan written."))
        launch = await helm.create_channel("launch", "Plans the launch.")
        await launch.set_model("py")
        stream = launch.stream("Draft the plan")
        kinds = [type(e).__name__ async for e in stream]
        assert kinds == ["ToolCall", "ToolResult", "TextDelta", "TurnEnded"], kinds
        assert stream.reply is not None and stream.reply.text == "Plan written."


HOST_CHECK = onehelm.ModelToolCall("host_command", {"command": "echo from-the-host"})


def member_setup(helm: onehelm.Helm, script: Script) -> onehelm.Helm:
    helm.providers.register("py", script)
    helm.create_channel("launch", "Plans the launch.").set_model("py")
    helm.add_user("mia")
    return helm.as_user("mia")


def test_a_tool_call_is_approved_from_code(data: Path) -> None:
    # A member calls Skipper; Skipper's host command needs the Captain.
    script = Script([HOST_CHECK], "The host is fine.")
    with onehelm.Helm.open(data) as captain:
        mia = member_setup(captain, script)
        seen: list[str] = []
        for event in mia.channel("launch").stream("@skipper is the host healthy?"):
            seen.append(type(event).__name__)
            if isinstance(event, onehelm.ApprovalRequested):
                assert event.action == "host_command" and "from-the-host" in event.summary
                # A member cannot decide it; the Captain can.
                with pytest.raises(onehelm.Forbidden):
                    event.approve()
                decided = captain.approve(event.id, "go ahead")
                assert decided.status == "approved"
            if isinstance(event, onehelm.ToolResult):
                assert event.status == "ok", event.result
        assert "SkipperCalled" in seen and "ApprovalRequested" in seen
        assert seen[-1] == "TurnEnded"
        assert captain.approvals() == []
        assert [a.status for a in captain.approvals(pending=False)] == ["approved"]


def test_ask_returns_at_an_approval_and_close_does_not_wait_for_one(data: Path) -> None:
    # A member's ask cannot give the approval it runs into: it returns with
    # the request, and the agent goes on once the Captain gives it.
    script = Script([HOST_CHECK], "The host is fine.")
    captain = onehelm.Helm.open(data)
    mia = member_setup(captain, script)
    reply = mia.channel("launch").ask("@skipper is the host healthy?", timeout=60)
    assert reply.state == "waiting", reply
    assert len(reply.waiting_for) == 1
    captain.approve(reply.waiting_for[0], "go ahead")
    thread = captain.channel("launch").thread(reply.thread_id)
    for _ in range(600):
        if any("The host is fine." in m.text for m in thread.messages()):
            break
        time.sleep(0.1)
    else:
        pytest.fail("the agent did not go on after the approval")

    # Asked again, and left waiting: closing stops that turn instead of
    # waiting for a person (it used to wait out the approval's timeout).
    script.steps = [[HOST_CHECK]]
    again = mia.channel("launch").ask("@skipper and now?", timeout=60)
    assert again.state == "waiting", again
    closer = threading.Thread(target=captain.close)
    closer.start()
    closer.join(120)
    assert not closer.is_alive(), "close() waited for a person"
    # Closed means closed, for every handle of the workspace.
    for call in [lambda: captain.channels(), lambda: mia.channel("launch")]:
        with pytest.raises(onehelm.Unavailable) as raised:
            call()
        assert raised.value.code == "closed"
    # The stopped turn never goes on by itself: its request expired with it
    # (nobody is left waiting for it), so it can no longer be given.
    with onehelm.Helm.open(data) as reopened:
        assert reopened.approvals() == []
        expired = [a for a in reopened.approvals(pending=False) if a.id in again.waiting_for]
        assert [a.status for a in expired] == ["expired"], expired
        with pytest.raises(onehelm.Conflict):
            reopened.approve(again.waiting_for[0])


async def test_a_tool_call_is_denied_from_code_async(data: Path) -> None:
    script = Script([HOST_CHECK], "Understood, I will not.")
    async with onehelm.AsyncHelm.open(data) as captain:
        captain.providers.register("py", script)
        launch = await captain.create_channel("launch", "Plans the launch.")
        await launch.set_model("py")
        await captain.add_user("mia")
        mia = await captain.as_user("mia")
        results: list[str] = []
        async for event in (await mia.channel("launch")).stream("@skipper check the host"):
            if isinstance(event, onehelm.AsyncApprovalRequested):
                await captain.deny(event.id, "not now")
            if isinstance(event, onehelm.ToolResult):
                results.append(event.status)
        assert results == ["denied"]


def test_a_failed_turn_raises_provider_error(data: Path) -> None:
    def boom(request: onehelm.ModelRequest) -> list[str]:
        raise ValueError("the model is down")

    with onehelm.Helm.open(data) as helm:
        launch = setup(helm, Script(boom))
        with pytest.raises(onehelm.ProviderError) as raised:
            launch.ask("hello")
        assert "the model is down" in str(raised.value)
        assert raised.value.code == "turn_failed"


def test_a_failed_turn_runs_again_with_retry(data: Path) -> None:
    def down(request: onehelm.ModelRequest) -> list[str]:
        raise ValueError("the model is down")

    with onehelm.Helm.open(data) as helm:
        launch = setup(helm, Script(down, ["Back up."]))
        with pytest.raises(onehelm.ProviderError):
            launch.ask("hello")
        thread = launch.threads()[0]
        reply = thread.retry()
        assert (reply.text, reply.state, reply.thread_id) == ("Back up.", "completed", thread.id)
        texts = [m.text for m in thread.messages()]
        assert any(t.endswith("asked @launch-agent to try again.") for t in texts), texts
        # The agent answered: nothing failed to run again.
        with pytest.raises(onehelm.Conflict, match="only a failed or interrupted turn"):
            thread.retry()


def test_a_blocking_ask_lets_other_python_threads_run(data: Path) -> None:
    release = threading.Event()

    def slow(request: onehelm.ModelRequest) -> list[str]:
        # The provider runs while the main thread is blocked in ask(); it
        # waits for a Python thread that can only run if the GIL is free.
        assert release.wait(10), "the other thread never ran"
        return ["finally"]

    ticks = 0
    stop = threading.Event()

    def ticker() -> None:
        nonlocal ticks
        while not stop.is_set():
            ticks += 1
            if ticks == 50:
                release.set()
            time.sleep(0.001)

    with onehelm.Helm.open(data) as helm:
        launch = setup(helm, Script(slow))
        worker = threading.Thread(target=ticker)
        worker.start()
        try:
            assert launch.ask("take your time").text == "finally"
        finally:
            stop.set()
            worker.join()
        assert ticks >= 50
