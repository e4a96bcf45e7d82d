"""The same script against a running helm-http through connect(): the server
drives the turns with the OpenAI-compatible mock model from helm-tests."""

from __future__ import annotations

from typing import Any

import pytest

import onehelm

PLAN = 'tool:write_file:{"path": "plan.md", "content": "# Plan from the server\\n"}'


def test_the_same_script_through_a_server(server_factory: Any) -> None:
    server = server_factory(PLAN, "text:Wrote plan.md.")
    helm = onehelm.Helm.connect(server.url, server.token)
    assert helm.mode == "connected" and helm.me().name == "ada"
    helm.providers.add("mock", base_url=server.model_url, default_model="mock-model", make_default=True)
    launch = helm.create_channel("launch", "Plans the product launch.")
    assert launch.agent == "@launch-agent"
    reply = launch.ask("Draft the launch plan in plan.md")
    assert reply.text == "Wrote plan.md."
    assert [a.tool for a in reply.actions] == ["write_file"]
    assert reply.model is not None and reply.model.provider == "mock"
    # Two model calls (the tool step and the answer), 10 + 5 tokens each.
    assert reply.usage is not None
    assert (reply.usage.input_tokens, reply.usage.output_tokens) == (20, 10)
    assert reply.usage.total_tokens == 30 and "input_tokens=20" in repr(reply.usage)
    assert launch.files.read("plan.md") == "# Plan from the server\n"
    launch.files.write("notes.md", "kept")
    with pytest.raises(onehelm.Conflict, match="already exists"):
        launch.files.write("notes.md", "lost", create=True)
    with pytest.raises(onehelm.Conflict, match="already exists; nothing was uploaded"):
        launch.files.write("notes.md", b"\xff lost", create=True)
    assert [e.name for e in launch.files.list()] == ["notes.md", "plan.md"]
    note = launch.files.note("Press: Dana at Wired", title="Press")
    assert note.path.endswith("-press.md")
    assert launch.files.read(note.path) == "# Press\n\nPress: Dana at Wired\n"
    assert launch.run("cat notes.md").stdout == "kept"
    decision = launch.memory.add("decision", "The launch date is 12 March.")
    assert launch.memory.pin(decision.id).pinned
    report = launch.import_history(
        b'{"type":"thread","id":"s1","title":"Earlier"}\n'
        b'{"type":"message","thread":"s1","external_id":"m1","author":"Caroline","text":"Venue booked."}\n'
    )
    assert (report.threads, report.messages) == (1, 1)
    # By words and (with the server's local embedder) by meaning: the
    # decision is among the best few, beside the thread's messages.
    assert any("12 March" in hit.text for hit in launch.memory.recall("When is the launch date?", 3))
    thread = launch.thread(reply.thread_id)
    assert len(thread.messages()) == 2
    thread.resolve()
    assert thread.status == "resolved"
    thread.rename("Launch plan")
    assert thread.title == "Launch plan" == launch.thread(thread.id).title
    forgotten = launch.memory.forget(decision.id)
    assert (forgotten.status, forgotten.forgotten_by) == ("forgotten", "ada")
    restored = launch.memory.restore(decision.id)
    assert (restored.status, restored.forgotten_by) == ("current", None)
    with pytest.raises(onehelm.NotFound):
        helm.channel("nowhere")
    with pytest.raises(onehelm.Unauthenticated) as refused:
        onehelm.Helm.connect(server.url, "not-a-token").channels()
    assert "API token is unknown" in str(refused.value), refused.value
    # A URL that is not a Helm server says so, not just "404".
    with pytest.raises(onehelm.HelmError) as stray:
        onehelm.Helm.connect(server.url + "/not-helm", server.token).channels()
    assert "not a Helm server" in str(stray.value), stray.value


async def test_the_same_script_through_a_server_async(server_factory: Any) -> None:
    server = server_factory(PLAN, "text:Wrote plan.md.")
    helm = onehelm.AsyncHelm.connect(server.url, server.token)
    await helm.providers.add("mock", base_url=server.model_url, default_model="mock-model", make_default=True)
    launch = await helm.create_channel("launch", "Plans the product launch.")
    kinds = [type(e).__name__ async for e in launch.stream("Draft the plan")]
    assert kinds == ["ToolCall", "ToolResult", "TextDelta", "TurnEnded"], kinds
    assert await launch.files.read("plan.md") == "# Plan from the server\n"
    await launch.memory.add("fact", "The venue is Lisbon.")
    hits = await launch.memory.recall("Where is the venue?", 3)
    assert any("Lisbon" in hit.text for hit in hits)
