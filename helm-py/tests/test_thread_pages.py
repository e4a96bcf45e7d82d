"""A channel's threads a page at a time (``threads(before=…)``) and archived
by hand (``thread.archive()``): embedded and through a server, blocking and
asyncio alike."""

from __future__ import annotations

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
