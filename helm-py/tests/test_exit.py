"""A program that ends right after its last await exits cleanly.

Each awaitable's result is handed to asyncio from a thread of the Rust
runtime, which lets go of the GIL for a moment on the way. A program whose
``asyncio.run`` returned in that moment used to finalize the interpreter
under that thread and abort ("Fatal Python error: PyGILState_Release"); on
this machine about one exit in six did, with a few programs running side by
side. The module now lets every hand-over finish at exit."""

from __future__ import annotations

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

SCRIPT = r"""
import asyncio, sys, onehelm

async def main(path):
    async with onehelm.AsyncHelm.open(path) as helm:
        await helm.create_channel("quick", "Opens and closes.")
        for _ in range(20):
            await helm.channels()

asyncio.run(main(sys.argv[1]))
print("ok")
"""

RUNS = 60
SIDE_BY_SIDE = 3


def run_once(data: Path) -> tuple[int, str]:
    child = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(data)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    return child.returncode, child.stdout.strip() + child.stderr[-400:]


def test_programs_that_end_after_their_last_await_exit_cleanly(tmp_path: Path) -> None:
    with ThreadPoolExecutor(SIDE_BY_SIDE) as pool:
        outcomes = list(pool.map(run_once, (tmp_path / f"data-{i}" for i in range(RUNS))))
    failed = [(code, said) for code, said in outcomes if code != 0 or said != "ok"]
    assert not failed, f"{len(failed)} of {RUNS} exits failed; the first: {failed[0]}"
