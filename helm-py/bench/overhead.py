"""What a call from Python costs over the same call made in Rust, and how
fast a streamed turn's events reach Python.

    python helm-py/bench/overhead.py          # after installing onehelm

1. ``channel.memory.recall`` and ``channel.files.read`` from Python (blocking
   flavour: GIL released, the future run on the shared runtime, the result
   converted) against the same backend call timed inside Rust
   (``onehelm._onehelm._bench_rust``), on one workspace: medians and ratio.
2. A streamed turn into Python: a provider streaming 20,000 pieces of text
   (the core batches text into a delta every 50 ms or 4 KiB), and one
   making 200 tool calls (20 per model call); events per second and the
   turn's time.

Figures are medians of many calls; build the wheel in release for numbers
that mean anything (``pip install ./helm-py``).
"""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import onehelm
from onehelm import _onehelm

N = 2000


def timed(call: Any, n: int = N) -> list[int]:
    out = []
    for _ in range(n):
        started = time.perf_counter_ns()
        call()
        out.append(time.perf_counter_ns() - started)
    return out


def median_us(times: list[int]) -> float:
    return statistics.median(times) / 1000


def calls(helm: onehelm.Helm, channel: onehelm.Channel) -> None:
    for i in range(200):
        channel.memory.add("fact", f"Fact number {i}: the launch needs item {i * 7 % 97}.")
    channel.memory.add("decision", "The launch date is 12 March.")
    channel.files.write("plan.md", "# Plan\n" + "- a step of the plan\n" * 200)
    key = str(channel.id)
    print(f"{'call':<28}{'python µs':>12}{'rust µs':>12}{'overhead µs':>14}{'ratio':>8}")
    for name, py_call, op, arg in [
        ("memory.recall(q, 5)", lambda: channel.memory.recall("when is the launch date?", 5), "recall", "when is the launch date?"),
        ("files.read(4 KiB)", lambda: channel.files.read("plan.md"), "read", "plan.md"),
    ]:
        timed(py_call, 100)  # warm up
        _onehelm._bench_rust(helm, key, op, arg, 100)
        py = median_us(timed(py_call))
        rust = median_us(_onehelm._bench_rust(helm, key, op, arg, N))
        print(f"{name:<28}{py:>12.1f}{rust:>12.1f}{py - rust:>14.1f}{py / rust:>8.2f}")


class Firehose:
    def __init__(self, pieces: int, tools: int) -> None:
        self.pieces, self.tools = pieces, tools

    def stream(self, request: onehelm.ModelRequest) -> Iterator[Any]:
        done = sum(1 for m in request.messages if m["role"] == "tool")
        if done < self.tools:
            # Many calls per response: a turn takes at most 16 model calls.
            for _ in range(min(20, self.tools - done)):
                yield onehelm.ModelToolCall("list_files", {"path": "/workspace"})
            return
        for i in range(self.pieces):
            yield f"word{i % 10} "


def stream(helm: onehelm.Helm, name: str, pieces: int, tools: int) -> None:
    helm.providers.register(name, Firehose(pieces, tools))
    channel = helm.create_channel(name, "Benchmarks a streamed turn.")
    channel.set_model(name)
    started = time.perf_counter()
    events = 0
    text = 0
    for event in channel.stream("go"):
        events += 1
        if isinstance(event, onehelm.TextDelta):
            text += len(event.text)
    took = time.perf_counter() - started
    print(f"{name:<28}{events:>8} events {took:>8.2f} s {events / took:>10.0f} events/s {text / took / 1e6:>8.2f} MB/s text")


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp, onehelm.Helm.open(Path(tmp) / "data") as helm:
        channel = helm.create_channel("bench", "Benchmarks calls from Python.")
        calls(helm, channel)
        print()
        stream(helm, "text-20000-pieces", 20000, 0)
        stream(helm, "tools-200-calls", 1, 200)


if __name__ == "__main__":
    main()
