"""Streaming a turn with asyncio.

``channel.stream(text)`` yields the turn's typed events as they happen:
``TextDelta`` (the reply, as it is written), ``ToolCall``/``ToolResult``
(every tool the agent runs, journaled in the thread), ``ApprovalRequested``,
``SkipperCalled`` and ``TurnEnded``. Here the model is an async Python
provider that streams its answer word by word.

Run it: ``python examples/python/stream_async.py [DATA_DIR]``
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

import onehelm


class SlowTypist:
    """An async provider: lists the workspace first, then streams words."""

    async def stream(self, request: onehelm.ModelRequest) -> AsyncIterator[str | onehelm.ModelToolCall]:
        if request.messages[-1]["role"] != "tool":
            yield onehelm.ModelToolCall("list_files", {"path": "/workspace"})
            return
        for word in "Your workspace is ready for the launch plan.".split():
            await asyncio.sleep(0.01)
            yield word + " "


async def main(data: Path) -> None:
    async with onehelm.AsyncHelm.open(data) as helm:
        helm.providers.register("typist", SlowTypist())
        launch = await helm.create_channel("launch", "This channel owns planning the product launch.")
        await launch.set_model("typist")
        await launch.files.write("brief.md", "# Brief\n")
        stream = launch.stream("What is in my workspace?")
        async for event in stream:
            match event:
                case onehelm.TextDelta(text=text):
                    print(text, end="", flush=True)
                case onehelm.ToolCall(tool=tool, input=summary):
                    print(f"[{tool}] {summary}")
                case onehelm.ToolResult(status=status):
                    print(f"[done: {status}]")
                case onehelm.AsyncApprovalRequested():
                    await event.deny("not in this example")
                case onehelm.TurnEnded(state=state):
                    print(f"\n(turn {state})")
                case _:
                    pass
        assert stream.reply is not None
        print(f"thread {stream.reply.thread_id}: {stream.reply.thread.title!r}")


if __name__ == "__main__":
    if len(sys.argv) > 1:
        asyncio.run(main(Path(sys.argv[1])))
    else:
        with tempfile.TemporaryDirectory() as tmp:
            asyncio.run(main(Path(tmp) / "data"))
