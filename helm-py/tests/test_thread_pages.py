"""A channel's threads a page at a time (``threads(before=…)``), all of them
lazily (``iter_threads``), and archived by hand (``thread.archive()``):
embedded and through a server, blocking and asyncio alike."""

from __future__ import annotations

import urllib.request
from pathlib import Path
from typing import Any

import pytest

import onehelm

# Five sessions, opened a day apart.
HISTORY = b"".join(
    b'{"type":"thread","id":"s%d","title":"Session %d","opened_at":"2026-03-0%dT09:00:00Z"}\n'
    b'{"type":"message","thread":"s%d","external_id":"m%d","author":"Caroline","text":"Note %d.","at":"2026-03-0%dT09:01:00Z"}\n'
    % (n, n, n, n, n, n, n)
    for n in range(1, 6)
)


def pages_and_archive(helm: onehelm.Helm) -> None:
    launch = helm.create_channel("launch", "Plans the launch.")
    ops = helm.create_channel("ops", "Runs things.")
    launch.import_history(HISTORY)
    ops.import_history(HISTORY)
    every = [t.id for t in launch.threads()]
    assert len(every) == 5

    first = launch.threads(limit=2)
    assert [t.id for t in first] == every[:2]
    second = launch.threads(limit=2, before=first[-1])
    assert [t.id for t in second] == every[2:4]
    assert [t.id for t in launch.threads(limit=2, before=second[-1].id)] == every[4:]
    assert launch.threads(before=every[4]) == []

    # A thread object resumes where its page ended, even once that thread
    # was active since (reopened, it heads the list); its id resumes after
    # the thread as it is now.
    launch.thread(first[-1].id).reopen()
    assert [t.id for t in launch.threads(limit=2, before=first[-1])] == every[2:4]
    assert [t.id for t in launch.threads(before=first[-1].id)] == [every[0], *every[2:]]

    with pytest.raises(onehelm.InvalidInput, match="one ranked page"):
        launch.threads(search="note", before=first[-1])
    with pytest.raises(onehelm.InvalidInput, match="another channel"):
        launch.threads(before=ops.threads()[0])
    with pytest.raises(onehelm.InvalidInput, match="another channel"):
        launch.threads(before=ops.threads()[0].id)
    with pytest.raises(onehelm.InvalidInput, match="before is a thread"):
        launch.threads(before="the newest")  # type: ignore[arg-type]
    with pytest.raises(onehelm.NotFound):
        launch.threads(before=9999)

    (oldest,) = launch.threads(before=every[3])
    oldest.archive()
    assert oldest.status == "archived"
    assert [t.id for t in launch.threads(archived=True)] == [oldest.id]
    assert oldest.id not in [t.id for t in launch.threads(archived=False)]
    with pytest.raises(onehelm.Conflict):
        oldest.archive()
    oldest.reopen()
    assert oldest.status == "open"
    assert launch.threads(archived=True) == []


async def pages_and_archive_async(helm: onehelm.AsyncHelm) -> None:
    launch = await helm.create_channel("launch", "Plans the launch.")
    ops = await helm.create_channel("ops", "Runs things.")
    await launch.import_history(HISTORY)
    await ops.import_history(HISTORY)
    every = [t.id for t in await launch.threads()]
    assert len(every) == 5

    first = await launch.threads(limit=2)
    assert [t.id for t in first] == every[:2]
    second = await launch.threads(limit=2, before=first[-1])
    assert [t.id for t in second] == every[2:4]
    assert [t.id for t in await launch.threads(limit=2, before=second[-1].id)] == every[4:]
    assert await launch.threads(before=every[4]) == []
    await (await launch.thread(first[-1].id)).reopen()
    assert [t.id for t in await launch.threads(limit=2, before=first[-1])] == every[2:4]

    with pytest.raises(onehelm.InvalidInput, match="one ranked page"):
        await launch.threads(search="note", before=first[-1])
    with pytest.raises(onehelm.InvalidInput, match="another channel"):
        await launch.threads(before=(await ops.threads())[0])
    with pytest.raises(onehelm.NotFound):
        await launch.threads(before=9999)

    (oldest,) = await launch.threads(before=every[3])
    await oldest.archive()
    assert oldest.status == "archived"
    assert [t.id for t in await launch.threads(archived=True)] == [oldest.id]
    with pytest.raises(onehelm.Conflict):
        await oldest.archive()
    await oldest.reopen()
    assert await launch.threads(archived=True) == []


def test_threads_page_back_and_archive(data: Path) -> None:
    with onehelm.Helm.open(data) as helm:
        pages_and_archive(helm)


async def test_threads_page_back_and_archive_async(data: Path) -> None:
    async with onehelm.AsyncHelm.open(data) as helm:
        await pages_and_archive_async(helm)


def test_threads_page_back_and_archive_through_a_server(server_factory: Any) -> None:
    server = server_factory()
    pages_and_archive(onehelm.Helm.connect(server.url, server.token))


async def test_threads_page_back_and_archive_through_a_server_async(server_factory: Any) -> None:
    server = server_factory()
    await pages_and_archive_async(onehelm.AsyncHelm.connect(server.url, server.token))


def test_a_hidden_thread_is_not_found_by_someone_else(data: Path) -> None:
    with onehelm.Helm.open(data) as helm:
        vault = helm.create_channel("vault", "Secrets.", private=True)
        helm.create_channel("launch", "Plans the launch.")
        vault.import_history(HISTORY)
        hidden = vault.threads()[0]
        helm.add_user("mia")
        mia = helm.as_user("mia")
        with pytest.raises(onehelm.NotFound):
            mia.channel("launch").threads(before=hidden.id)


# Every thread, a page at a time (``iter_threads``).


def walks_every_page(helm: onehelm.Helm) -> None:
    launch = helm.create_channel("launch", "Plans the launch.")
    ops = helm.create_channel("ops", "Runs things.")
    launch.import_history(HISTORY)
    ops.import_history(HISTORY)
    every = [t.id for t in launch.threads()]

    walked = list(launch.iter_threads(page_size=2))
    assert [t.id for t in walked] == every
    assert all(isinstance(t, onehelm.Thread) for t in walked)
    assert [t.id for t in launch.iter_threads(page_size=5)] == every
    assert [t.id for t in launch.iter_threads()] == every
    assert [t.id for t in launch.iter_threads(page_size=2, before=every[0])] == every[1:]
    first = launch.threads(limit=1)[0]
    assert [t.id for t in launch.iter_threads(page_size=3, before=first)] == every[1:]
    assert list(launch.iter_threads(before=every[4])) == []

    # The filters of threads(): archived, and a search as its one ranked page.
    launch.thread(every[4]).archive()
    assert [t.id for t in launch.iter_threads(page_size=2, archived=False)] == every[:4]
    assert [t.id for t in launch.iter_threads(page_size=2, archived=True)] == [every[4]]
    assert len(list(launch.iter_threads(page_size=2, search="note"))) == 2

    # Argument checks raise at the call; the listing's own at the first step.
    with pytest.raises(onehelm.InvalidInput, match="page_size 0 is out of range"):
        launch.iter_threads(page_size=0)
    with pytest.raises(onehelm.InvalidInput, match="before is a thread"):
        launch.iter_threads(before="the newest")  # type: ignore[arg-type]
    unknown = launch.iter_threads(before=9999)
    with pytest.raises(onehelm.NotFound):
        next(unknown)
    with pytest.raises(onehelm.InvalidInput, match="another channel"):
        next(launch.iter_threads(before=ops.threads()[0]))
    with pytest.raises(onehelm.InvalidInput, match="one ranked page"):
        next(launch.iter_threads(search="note", before=first))


async def walks_every_page_async(helm: onehelm.AsyncHelm) -> None:
    launch = await helm.create_channel("launch", "Plans the launch.")
    await launch.import_history(HISTORY)
    every = [t.id for t in await launch.threads()]

    walked = [t async for t in launch.iter_threads(page_size=2)]
    assert [t.id for t in walked] == every
    assert all(isinstance(t, onehelm.AsyncThread) for t in walked)
    first = (await launch.threads(limit=1))[0]
    assert [t.id async for t in launch.iter_threads(page_size=3, before=first)] == every[1:]
    assert [t.id async for t in launch.iter_threads(page_size=2, before=every[2])] == every[3:]

    await (await launch.thread(every[4])).archive()
    assert [t.id async for t in launch.iter_threads(page_size=2, archived=False)] == every[:4]
    assert [t.id async for t in launch.iter_threads(archived=True)] == [every[4]]

    with pytest.raises(onehelm.InvalidInput, match="page_size 1001 is out of range"):
        launch.iter_threads(page_size=1001)
    with pytest.raises(onehelm.NotFound):
        await anext(launch.iter_threads(before=9999))


def test_iter_threads_walks_every_page(data: Path) -> None:
    with onehelm.Helm.open(data) as helm:
        walks_every_page(helm)


async def test_iter_threads_walks_every_page_async(data: Path) -> None:
    async with onehelm.AsyncHelm.open(data) as helm:
        await walks_every_page_async(helm)


def test_iter_threads_walks_every_page_through_a_server(server_factory: Any) -> None:
    server = server_factory()
    walks_every_page(onehelm.Helm.connect(server.url, server.token))


async def test_iter_threads_walks_every_page_through_a_server_async(server_factory: Any) -> None:
    server = server_factory()
    await walks_every_page_async(onehelm.AsyncHelm.connect(server.url, server.token))


THREADS_ROUTE = 'helm_http_requests_total{method="GET",route="/api/channels/{channel}/threads",'


def pages_read(server: Any) -> int:
    """The thread pages the server has served, by its own request counter
    (``/metrics``): each page iter_threads reads is one request."""
    with urllib.request.urlopen(f"{server.url}/metrics", timeout=10) as response:
        text = response.read().decode()
    return sum(int(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith(THREADS_ROUTE))


def test_iter_threads_reads_only_the_pages_it_needs(server_factory: Any) -> None:
    server = server_factory()
    launch = onehelm.Helm.connect(server.url, server.token).create_channel("launch", "Plans the launch.")
    launch.import_history(HISTORY)
    start = pages_read(server)

    # Nothing is read until the loop asks; five threads two a page are
    # three pages, and the last one is known to be the last.
    walk = launch.iter_threads(page_size=2)
    assert pages_read(server) == start
    assert len(list(walk)) == 5
    assert pages_read(server) == start + 3
    assert list(walk) == []
    assert pages_read(server) == start + 3

    # A loop that breaks in the second page reads no third.
    start = pages_read(server)
    for seen, _ in enumerate(launch.iter_threads(page_size=2), 1):
        if seen == 3:
            break
    assert pages_read(server) == start + 2

    # One that breaks at the end of the first page reads no second.
    start = pages_read(server)
    for seen, _ in enumerate(launch.iter_threads(page_size=2), 1):
        if seen == 2:
            break
    assert pages_read(server) == start + 1


async def test_iter_threads_reads_only_the_pages_it_needs_async(server_factory: Any) -> None:
    server = server_factory()
    helm = onehelm.AsyncHelm.connect(server.url, server.token)
    launch = await helm.create_channel("launch", "Plans the launch.")
    await launch.import_history(HISTORY)

    start = pages_read(server)
    assert len([t async for t in launch.iter_threads(page_size=2)]) == 5
    assert pages_read(server) == start + 3

    start = pages_read(server)
    seen = 0
    async for _ in launch.iter_threads(page_size=2):
        seen += 1
        if seen == 3:
            break
    assert pages_read(server) == start + 2
