"""The official `mcp` Python SDK against Helm as an MCP server: `/mcp` on
helm-http (streamable HTTP, signed with a member's token) and `1helm mcp`
over stdio on a data dir."""

import json
import os

import anyio
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from conftest import ANSWER, model_fails_next

TOOLS = {
    "list_channels",
    "send_message",
    "retry_thread",
    "read_thread",
    "list_files",
    "read_file",
    "save_note",
    "recall",
}


def http_client(base: str, token: str | None) -> Client:
    headers = {"authorization": f"Bearer {token}"} if token else {}
    http = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(120.0))
    return Client(streamable_http_client(f"{base}/mcp", http_client=http))


def text(result) -> str:
    return "\n".join(block.text for block in result.content if getattr(block, "text", None))


async def conversation(client: Client) -> None:
    """What every client does: list, talk (with progress), continue, read."""
    listed = await client.list_tools()
    assert TOOLS <= {t.name for t in listed.tools}
    schema = next(t for t in listed.tools if t.name == "send_message").input_schema
    assert schema["required"] == ["channel", "text"]

    progress = []

    async def on_progress(value, total, message):
        progress.append(message)

    sent = await client.call_tool(
        "send_message",
        {"channel": "launch", "text": "What is the plan?"},
        progress_callback=on_progress,
    )
    assert not sent.is_error, text(sent)
    assert ANSWER in text(sent)
    thread = sent.structured_content["thread"]
    assert any(m and "launch" in m.lower() for m in progress), progress
    # The mock model reports 10 prompt and 5 completion tokens per call.
    assert sent.structured_content["usage"] == {"input_tokens": 10, "output_tokens": 5}

    again = await client.call_tool(
        "send_message", {"channel": "launch", "text": "And then?", "thread": thread}
    )
    assert again.structured_content["thread"] == thread
    read = await client.call_tool("read_thread", {"thread": thread})
    assert "What is the plan?" in text(read) and "And then?" in text(read)
    recalled = await client.call_tool("recall", {"channel": "launch", "query": "plan"})
    assert not recalled.is_error, text(recalled)
    hits = recalled.structured_content["hits"]
    assert hits and {"kind", "id", "score", "content", "thread", "author"} <= set(hits[0]), hits[0]
    assert any(h["thread"] and h["thread"]["id"] == thread for h in hits), hits
    too_many = await client.call_tool("recall", {"channel": "launch", "query": "plan", "limit": 500})
    assert too_many.is_error and "1 to 50" in text(too_many), text(too_many)


def test_a_member_over_http_sees_only_their_channels_and_talks_to_an_agent(base, workspace):
    async def run():
        async with http_client(base, workspace["member"]) as client:
            channels = await client.call_tool("list_channels", {})
            names = {c["name"] for c in channels.structured_content["channels"]}
            assert {"main", "launch"} <= names, names
            assert "vault" not in names
            hidden = await client.call_tool("list_files", {"channel": "vault"})
            assert hidden.is_error and "not found" in text(hidden)
            files = await client.call_tool("list_files", {"channel": "launch"})
            assert "plan.md" in text(files)
            plan = await client.call_tool("read_file", {"channel": "launch", "path": "plan.md"})
            assert "Beta in May." in text(plan)
            note = await client.call_tool(
                "save_note", {"channel": "launch", "title": "From MCP", "text": "Ask about May."}
            )
            assert not note.is_error, text(note)
            path = note.structured_content["path"]
            assert path.startswith("/workspace/notes/") and path.endswith("-from-mcp.md"), path
            saved = await client.call_tool("read_file", {"channel": "launch", "path": path})
            assert text(saved) == "# From MCP\n\nAsk about May.\n"
            empty = await client.call_tool("save_note", {"channel": "launch", "text": " "})
            assert empty.is_error and "empty" in text(empty), text(empty)
            await conversation(client)

    anyio.run(run)


def test_a_failed_turn_or_an_empty_message_is_a_tool_error(base, workspace):
    async def run():
        async with http_client(base, workspace["captain"]) as client:
            model_fails_next("the model is overloaded")
            failed = await client.call_tool(
                "send_message", {"channel": "launch", "text": "Plan it."}
            )
            assert failed.is_error, text(failed)
            assert failed.structured_content["state"] == "failed"
            assert "the model is overloaded" in failed.structured_content["error"]
            thread = failed.structured_content["thread"]
            assert isinstance(thread, int)
            assert "retry_thread" in text(failed), text(failed)
            empty = await client.call_tool("send_message", {"channel": "launch", "text": "  "})
            assert empty.is_error and "empty" in text(empty), text(empty)

            # The model is back: the failed turn runs again on the same message.
            again = await client.call_tool("retry_thread", {"thread": thread})
            assert not again.is_error, text(again)
            assert ANSWER in text(again)
            assert again.structured_content["state"] == "completed"
            assert again.structured_content["thread"] == thread
            assert "overloaded" not in again.structured_content["reply"]
            read = await client.call_tool("read_thread", {"thread": thread})
            asked = [m for m in read.structured_content["messages"] if m.endswith("Plan it.")]
            assert len(asked) == 1, read.structured_content["messages"]

            # Nothing failed now: there is nothing to run again, said plainly.
            nothing = await client.call_tool("retry_thread", {"thread": thread})
            assert nothing.is_error, text(nothing)

    anyio.run(run)


def test_the_captain_sees_the_private_channel_too(base, workspace):
    async def run():
        async with http_client(base, workspace["captain"]) as client:
            channels = await client.call_tool("list_channels", {})
            names = {c["name"] for c in channels.structured_content["channels"]}
            assert "vault" in names

    anyio.run(run)


def test_an_unsigned_client_is_refused(base, workspace):
    async def run():
        async with http_client(base, None) as client:
            await client.list_tools()

    with pytest.raises(Exception):
        anyio.run(run)
    # What the SDK met: a 401 with a challenge, before anything was served.
    raw = httpx2.post(
        f"{base}/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={"accept": "application/json, text/event-stream"},
    )
    assert raw.status_code == 401
    assert raw.headers["www-authenticate"].startswith("Bearer")


def test_1helm_mcp_over_stdio(base):
    params = StdioServerParameters(
        command=os.environ["HELM_CLI"],
        args=["--data", os.environ["HELM_STDIO_DATA"], "mcp"],
        env={"HELM_LOG": "warn"},
    )

    async def run():
        async with Client(params) as client:
            channels = await client.call_tool("list_channels", {})
            names = {c["name"] for c in channels.structured_content["channels"]}
            assert {"main", "launch"} <= names
            await conversation(client)

    anyio.run(run)
