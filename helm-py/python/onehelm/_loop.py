"""The package's own asyncio loop, for ``async def`` tools and provider
methods given to a blocking ``Helm``: such a script runs no loop of its own,
and one it does run (a notebook's) is blocked for as long as a blocking call
waits, so the coroutine could never run there. Not public API.

One loop on one daemon thread, started at the first use: a coroutine keeps
what it opened (a client session) for the next call, as it would on a
script's own loop.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable
from typing import Any, TypeVar

T = TypeVar("T")

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None


def _own_loop() -> asyncio.AbstractEventLoop:
    global _loop
    with _lock:
        if _loop is None:
            loop = asyncio.new_event_loop()
            threading.Thread(
                target=loop.run_forever, name="onehelm-async-tools", daemon=True
            ).start()
            _loop = loop
        return _loop


async def _awaited(awaitable: Awaitable[T]) -> T:
    return await awaitable


def run(awaitable: Awaitable[Any]) -> Any:
    """Awaits ``awaitable`` on the package's loop and returns its result (or
    raises what it raised). Called from a runtime thread, never from the
    loop's own; waiting releases the GIL."""
    return asyncio.run_coroutine_threadsafe(_awaited(awaitable), _own_loop()).result()
