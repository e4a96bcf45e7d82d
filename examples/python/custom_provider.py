"""A custom model provider written in Python.

Any object with ``stream(request)`` (or ``complete(request)``) can serve a
channel's turns: a local model, a rules engine, a test double. This one is a
tiny rules engine: asked for a checklist, it has the agent write one to the
channel's workspace with the built-in ``write_file`` tool, then answers.

Run it: ``python examples/python/custom_provider.py [DATA_DIR]``
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import onehelm


class ChecklistModel:
    """Answers with text, and calls a tool when the request asks for it."""

    def stream(self, request: onehelm.ModelRequest) -> Iterator[str | onehelm.ModelToolCall]:
        # After the tool ran, its result is the last message: say what happened.
        last = request.messages[-1]
        if last["role"] == "tool":
            yield "The checklist is in "
            yield "checklist.md."
            return
        if "checklist" in request.prompt.lower():
            items = "\n".join(f"- [ ] {step}" for step in ("venue", "speakers", "press kit"))
            yield onehelm.ModelToolCall(
                "write_file", {"path": "checklist.md", "content": f"# Launch checklist\n{items}\n"}
            )
            return
        yield f"You said: {request.prompt}"


def main(data: Path) -> None:
    with onehelm.Helm.open(data) as helm:
        helm.providers.register("rules", ChecklistModel())
        launch = helm.create_channel("launch", "This channel owns planning the product launch.")
        launch.set_model("rules")
        reply = launch.ask("Write a launch checklist, please.")
        print(f"{launch.agent}: {reply.text}")
        for action in reply.actions:
            print(f"  tool {action.tool}: {action.status}")
        print(launch.files.read("checklist.md"))


if __name__ == "__main__":
    if len(sys.argv) > 1:
        main(Path(sys.argv[1]))
    else:
        with tempfile.TemporaryDirectory() as tmp:
            main(Path(tmp) / "data")
