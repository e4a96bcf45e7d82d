"""Python functions as tools of a channel's agent (@channel.tool): offered to
the model with their docstring and a schema from their type hints, run in
this process, journaled, and gated by the channel's approval rules."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Annotated, Any, Literal

import pytest

import onehelm
from conftest import AsyncScript, Script


def priced(request: onehelm.ModelRequest) -> str:
    # The second model call sees the tool's result as the last message.
    return f"The price is {request.messages[-1]['content']}."


def test_a_provider_calls_a_python_tool(data: Path) -> None:
    calls: list[tuple[str, int, threading.Thread]] = []
    script = Script([onehelm.ModelToolCall("lookup_price", {"item": "widget", "qty": 3})], priced)
    with onehelm.Helm.open(data) as helm:
        helm.providers.register("py", script)
        shop = helm.create_channel("shop", "Answers questions about prices.")
        shop.set_model("py")

        @shop.tool
        def lookup_price(item: Annotated[str, "What to price."], qty: int = 1) -> str:
            """Look up the price of an item in the catalogue."""
            calls.append((item, qty, threading.current_thread()))
            return f"{qty * 4} EUR"

        assert lookup_price("x") == "4 EUR"  # still a plain function
        calls.clear()
        reply = shop.ask("What do three widgets cost?")
        assert reply.text == "The price is 12 EUR."
        assert calls and calls[0][:2] == ("widget", 3)
        assert calls[0][2] is not threading.main_thread()  # ran while ask() waited
        assert [(a.tool, a.status) for a in reply.actions] == [("lookup_price", "ok")]
        assert [a.tool for a in shop.activity()] == ["lookup_price"]
        offered = {t["name"]: t for t in script.requests[0].tools}
        spec = offered["lookup_price"]
        assert spec["description"] == "Look up the price of an item in the catalogue."
        assert spec["parameters"]["properties"]["item"] == {"type": "string", "description": "What to price."}
        assert spec["parameters"]["properties"]["qty"] == {"type": "integer", "default": 1}
        assert spec["parameters"]["required"] == ["item"]
        assert "write_file" in offered  # the built-in tools are still there
        shop.remove_tool("lookup_price")
        with pytest.raises(onehelm.NotFound):
            shop.remove_tool("lookup_price")


async def test_a_provider_calls_an_async_python_tool(data: Path) -> None:
    script = AsyncScript([onehelm.ModelToolCall("forecast", {"city": "Lisbon", "unit": "c"})], priced)
    async with onehelm.AsyncHelm.open(data) as helm:
        helm.providers.register("py", script)
        travel = await helm.create_channel("travel", "Plans trips.")
        await travel.set_model("py")
        loop = asyncio.get_running_loop()
        ran_on: list[asyncio.AbstractEventLoop] = []

        @travel.tool(name="forecast", approval="none")
        async def weather(city: str, unit: Literal["c", "f"] = "c") -> dict[str, Any]:
            """Tomorrow's weather for a city."""
            ran_on.append(asyncio.get_running_loop())
            await asyncio.sleep(0)
            return {"city": city, "high": 21, "unit": unit}

        reply = await travel.ask("Weather in Lisbon tomorrow?")
        assert reply.text == 'The price is {"city": "Lisbon", "high": 21, "unit": "c"}.'
        assert ran_on == [loop]
        schema = script.requests[0].tools
        forecast = next(t for t in schema if t["name"] == "forecast")
        assert forecast["parameters"]["properties"]["unit"] == {"enum": ["c", "f"], "default": "c"}


def test_async_tools_and_providers_on_a_blocking_helm_run_on_the_packages_loop(data: Path) -> None:
    # As docs/python.md's example does: an `async def` tool (and an async
    # provider) given to the blocking Helm, with no loop running anywhere.
    weather_step = [onehelm.ModelToolCall("forecast", {"city": "Oslo"})]
    script = AsyncScript(weather_step, priced, weather_step, priced)
    ran_on: list[tuple[asyncio.AbstractEventLoop, threading.Thread]] = []
    with onehelm.Helm.open(data) as helm:
        helm.providers.register("py", script)
        shop = helm.create_channel("shop", "A shop.")
        shop.set_model("py")

        @shop.tool(name="forecast", approval="none")
        async def weather(city: str) -> dict[str, Any]:
            """Tomorrow's weather for a city."""
            ran_on.append((asyncio.get_running_loop(), threading.current_thread()))
            await asyncio.sleep(0)
            return {"city": city, "t": 3}

        for _ in range(2):
            reply = shop.ask("Weather in Oslo?")
            assert reply.text == 'The price is {"city": "Oslo", "t": 3}.'
            assert [(a.tool, a.status) for a in reply.actions] == [("forecast", "ok")]
    # One loop, kept between calls (what a tool opened stays usable), off
    # the caller's thread.
    assert len(ran_on) == 2 and ran_on[0] == ran_on[1]
    assert ran_on[0][1] is not threading.main_thread()


def test_an_async_tool_on_a_blocking_helm_runs_while_a_loop_waits_for_it(data: Path) -> None:
    # A notebook runs a loop, and the blocking Helm's ask() holds its thread:
    # the tool may not be sent to that loop, or the turn would never end.
    async def notebook_cell() -> str:
        with onehelm.Helm.open(data) as helm:
            helm.providers.register("py", Script([onehelm.ModelToolCall("forecast", {"city": "Oslo"})], priced))
            shop = helm.create_channel("shop", "A shop.")
            shop.set_model("py")

            @shop.tool(name="forecast", approval="none")
            async def weather(city: str) -> str:
                """Tomorrow's weather for a city."""
                await asyncio.sleep(0)
                return f"mild in {city}"

            return shop.ask("Weather in Oslo?").text

    assert asyncio.run(notebook_cell()) == "The price is mild in Oslo."


def test_a_failing_tool_is_a_tool_error_and_the_turn_goes_on(data: Path) -> None:
    script = Script([onehelm.ModelToolCall("explode", {})], lambda r: r.messages[-1]["content"])
    with onehelm.Helm.open(data) as helm:
        helm.providers.register("py", script)
        lab = helm.create_channel("lab", "Tries things.")
        lab.set_model("py")

        @lab.tool
        def explode() -> None:
            """Always fails."""
            raise ValueError("the flask broke")

        reply = lab.ask("try it")
        assert reply.state == "completed"
        assert reply.text == "error: ValueError: the flask broke"
        assert [(a.tool, a.status) for a in reply.actions] == [("explode", "error")]


def test_a_tool_may_call_the_api_while_the_turn_runs(data: Path) -> None:
    script = Script([onehelm.ModelToolCall("note", {"text": "Ship on Friday."})], "Noted.")
    with onehelm.Helm.open(data) as helm:
        helm.providers.register("py", script)
        ops = helm.create_channel("ops", "Keeps notes.")
        ops.set_model("py")

        @ops.tool
        def note(text: str) -> str:
            """Keep a note in the channel's memory and workspace."""
            ops.memory.add("fact", text)
            ops.files.write("notes.md", text)
            return "kept"

        assert ops.ask("remember: ship on Friday").text == "Noted."
        assert ops.files.read("notes.md") == "Ship on Friday."
        assert [m.text for m in ops.memory.list()] == ["Ship on Friday."]


def test_a_members_call_of_a_python_tool_waits_for_approval(data: Path) -> None:
    script = Script([onehelm.ModelToolCall("refund", {"order": 42})], "Refunded.")
    refunded: list[int] = []
    with onehelm.Helm.open(data) as captain:
        captain.providers.register("py", script)
        shop = captain.create_channel("shop", "Handles orders.")
        shop.set_model("py")

        @shop.tool
        def refund(order: int) -> str:
            """Refund an order."""
            refunded.append(order)
            return f"order {order} refunded"

        captain.add_user("mia")
        mia = captain.as_user("mia")
        kinds = []
        for event in mia.channel("shop").stream("please refund order 42"):
            kinds.append(type(event).__name__)
            if isinstance(event, onehelm.ApprovalRequested):
                assert event.action == "tool_call" and refunded == []
                captain.approve(event.id)
        assert "ApprovalRequested" in kinds
        assert refunded == [42]


def test_tools_are_checked_when_given(data: Path) -> None:
    with onehelm.Helm.open(data) as helm:
        lab = helm.create_channel("lab", "Tries things.")
        with pytest.raises(onehelm.InvalidInput):
            lab.tool(lambda **kw: None)
        with pytest.raises(onehelm.InvalidInput):

            @lab.tool(approval="sometimes")  # type: ignore[arg-type]
            def nope() -> None: ...

        with pytest.raises(onehelm.InvalidInput):

            @lab.tool(name="bad name!")
            def named() -> None: ...

        with pytest.raises(onehelm.InvalidInput):
            lab.tool(schema={"type": "string"})(lambda: None)

        @lab.tool(schema={"type": "object", "properties": {"n": {"type": "number"}}})
        def given(n: float) -> float:
            """Doubles."""
            return n * 2

        with pytest.raises(onehelm.Conflict):
            lab.tool(given)


def test_python_tools_on_a_connected_channel_say_why_not(server_factory: Any) -> None:
    server = server_factory()
    helm = onehelm.Helm.connect(server.url, server.token)
    launch = helm.create_channel("launch", "Plans the launch.")
    with pytest.raises(onehelm.Refused) as raised:

        @launch.tool
        def lookup(item: str) -> str:
            """Look something up."""
            return item

    assert raised.value.code == "python_tool_remote"
    assert "Helm.open" in str(raised.value)
