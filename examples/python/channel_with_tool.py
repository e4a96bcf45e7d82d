"""A channel whose agent has a Python tool.

``@channel.tool`` gives the channel's resident agent a plain Python function
as a tool: its name, its docstring as the description, and a JSON Schema
read from its type hints. The agent calls it like any tool; it runs here, in
this process, and every call is journaled in the thread. The model here is a
small Python provider, so the example runs offline.

Run it: ``python examples/python/channel_with_tool.py [DATA_DIR]``
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated

import onehelm

STOCK = {"widget": 12, "gadget": 0}


class Clerk:
    """Asks the inventory tool, then answers with what it said."""

    def stream(self, request: onehelm.ModelRequest) -> Iterator[str | onehelm.ModelToolCall]:
        last = request.messages[-1]
        if last["role"] == "tool":
            yield f"Inventory says: {last['content']}"
        else:
            item = "gadget" if "gadget" in request.prompt else "widget"
            yield onehelm.ModelToolCall("in_stock", {"item": item})


def main(data: Path) -> None:
    with onehelm.Helm.open(data) as helm:
        helm.providers.register("clerk", Clerk())
        shop = helm.create_channel("shop", "Answers customers' questions about stock.")
        shop.set_model("clerk")

        @shop.tool
        def in_stock(item: Annotated[str, "The product's name."]) -> str:
            """How many of a product are in the warehouse."""
            count = STOCK.get(item)
            return f"{count} {item}s in stock" if count is not None else f"no product called {item}"

        for question in ("Do you have widgets?", "And gadgets?"):
            reply = shop.ask(question)
            print(f"> {question}\n{shop.agent}: {reply.text}")
        for action in shop.activity():
            print(f"journal: {action.tool} {action.input!r} -> {action.status}: {action.result}")


if __name__ == "__main__":
    if len(sys.argv) > 1:
        main(Path(sys.argv[1]))
    else:
        with tempfile.TemporaryDirectory() as tmp:
            main(Path(tmp) / "data")
