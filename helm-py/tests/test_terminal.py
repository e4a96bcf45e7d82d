"""A terminal in a channel's computer, held open by a context manager: the
shell starts in /workspace, what it writes is in the channel's files, and
leaving the block closes it."""

from __future__ import annotations

from pathlib import Path

import pytest

import onehelm


def test_a_terminal_runs_in_the_workspace_and_closes_with_the_block(data: Path) -> None:
    with onehelm.Helm.open(data) as helm:
        ops = helm.create_channel("ops", "Keeps the lights on.")
        with ops.terminal(rows=30, cols=100) as term:
            assert term.running
            term.write("echo made-by-$((6*7)) > made.txt; cat made.txt\n")
            assert "made-by-42" in term.expect("made-by-42")
            term.resize(40, 120)
        assert not term.running
        assert ops.files.read("made.txt") == "made-by-42\n"
        with pytest.raises(onehelm.Unavailable):
            with ops.terminal() as term:
                term.expect("never printed", timeout=0.3)
        assert not term.running


async def test_a_terminal_runs_in_the_workspace_async(data: Path) -> None:
    async with onehelm.AsyncHelm.open(data) as helm:
        ops = await helm.create_channel("ops", "Keeps the lights on.")
        term = await ops.terminal()
        async with term:
            await term.write("pwd; echo done-$((1+1))\n")
            seen = await term.expect("done-2")
            assert "/workspace" in seen or "workspace" in seen
        assert not term.running


