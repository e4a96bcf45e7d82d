"""Channels, files, commands, memory and lifecycle, embedded: each as a
blocking test and its asyncio twin."""

from __future__ import annotations

from pathlib import Path

import pytest

import onehelm


def test_create_list_and_get_a_channel(data: Path) -> None:
    with onehelm.Helm.open(data) as helm:
        assert helm.mode == "embedded"
        assert helm.me().role == "captain"
        launch = helm.create_channel("launch", "This channel owns planning the product launch.")
        assert (launch.name, launch.agent, launch.status, launch.kind) == (
            "launch",
            "@launch-agent",
            "active",
            "agent",
        )
        assert [c.name for c in helm.channels()] == ["launch", "main"]
        again = helm.channel("#launch")
        assert again.id == launch.id and again.purpose == launch.purpose
        # By id, as a number or its digits.
        assert helm.channel(launch.id).name == helm.channel(str(launch.id)).name == "launch"


async def test_create_list_and_get_a_channel_async(data: Path) -> None:
    async with onehelm.AsyncHelm.open(data) as helm:
        assert (await helm.me()).role == "captain"
        launch = await helm.create_channel("launch", "This channel owns planning the product launch.")
        assert launch.agent == "@launch-agent"
        assert [c.name for c in await helm.channels()] == ["launch", "main"]
        assert (await helm.channel("launch")).id == launch.id
        assert (await helm.channel(launch.id)).name == "launch"


def test_files_commands_and_memory(data: Path) -> None:
    with onehelm.Helm.open(data) as helm:
        ops = helm.create_channel("ops", "Keeps the lights on.")
        entry = ops.files.write("notes/todo.md", "- ship\n")
        assert entry.path == "/workspace/notes/todo.md" and entry.size == 7
        assert ops.files.read("/workspace/notes/todo.md") == "- ship\n"
        ops.files.write("blob.bin", b"\x00\xff")
        assert ops.files.read_bytes("blob.bin") == b"\x00\xff"
        # create=True makes only a new file; one already there is kept.
        with pytest.raises(onehelm.Conflict, match="/workspace/notes/todo.md already exists"):
            ops.files.write("notes/todo.md", "- gone\n", create=True)
        assert ops.files.read("notes/todo.md") == "- ship\n"
        assert ops.files.write("fresh.md", "new", create=True).size == 3
        assert [e.name for e in ops.files.list("notes")] == ["todo.md"]
        ran = ops.run("cat notes/todo.md && pwd && exit 4")
        assert ran.exit_code == 4 and not ran.ok
        # Python's own words in a repr: 4, not Rust's Some(4).
        assert repr(ran).startswith("CommandResult(exit_code=4, stdout="), repr(ran)
        assert ran.stdout.splitlines()[0] == "- ship"
        item = ops.memory.add("decision", "We deploy on Tuesdays.")
        assert (item.kind, item.status) == ("decision", "current")
        assert [m.text for m in ops.memory.list()] == ["We deploy on Tuesdays."]
        hits = ops.memory.recall("which day do we deploy?", k=3)
        assert hits and hits[0].text == "We deploy on Tuesdays."


def test_a_quick_note_never_replaces_a_file(data: Path) -> None:
    with onehelm.Helm.open(data) as helm:
        ops = helm.create_channel("ops", "Keeps the lights on.")
        first = ops.files.note("Standup at 9\nthen deploys")
        again = ops.files.note("Standup at 9")
        assert first.path.startswith("/workspace/notes/") and first.path.endswith("-standup-at-9.md")
        assert again.path == first.path.replace(".md", "-2.md")
        assert ops.files.read(first.path) == "Standup at 9\nthen deploys\n"
        with pytest.raises(onehelm.InvalidInput, match="the note is empty"):
            ops.files.note("   ")
        with pytest.raises(onehelm.InvalidInput, match="one line"):
            ops.files.note("x", title="two\nlines")
        assert len(ops.files.list("notes")) == 2


async def test_files_commands_and_memory_async(data: Path) -> None:
    async with onehelm.AsyncHelm.open(data) as helm:
        ops = await helm.create_channel("ops", "Keeps the lights on.")
        await ops.files.write("todo.md", "- ship\n")
        assert await ops.files.read("todo.md") == "- ship\n"
        assert await ops.files.read_bytes("todo.md") == b"- ship\n"
        assert [e.name for e in await ops.files.list()] == ["todo.md"]
        assert (await ops.run("cat todo.md")).stdout == "- ship\n"
        note = await ops.files.note("Rotate the pager", title="Pager")
        assert note.path.endswith("-pager.md")
        assert await ops.files.read(note.path) == "# Pager\n\nRotate the pager\n"
        await ops.memory.add("fact", "The pager rotates weekly.")
        hits = await ops.memory.recall("pager rotation")
        assert hits[0].text == "The pager rotates weekly."


def test_rename_keeps_the_agent_and_frees_the_old_name(data: Path) -> None:
    with onehelm.Helm.open(data) as helm:
        launch = helm.create_channel("launch", "Plans the launch.")
        handle = launch.agent
        launch.files.write("plan.md", "beta in May")
        launch.rename("liftoff")
        assert launch.name == "liftoff" and launch.agent == handle
        assert helm.channel("liftoff").files.read("plan.md") == "beta in May"
        with pytest.raises(onehelm.NotFound):
            helm.channel("launch")
        helm.create_channel("launch", "A new one under the old name.")
        with pytest.raises(onehelm.Conflict):
            launch.rename("launch")
        with pytest.raises(onehelm.InvalidInput):
            launch.rename("no spaces please")


async def test_rename_keeps_the_agent_and_frees_the_old_name_async(data: Path) -> None:
    async with onehelm.AsyncHelm.open(data) as helm:
        launch = await helm.create_channel("launch", "Plans the launch.")
        await launch.rename("liftoff")
        assert launch.name == "liftoff"
        assert (await helm.channel("liftoff")).name == "liftoff"
        with pytest.raises(onehelm.NotFound):
            await helm.channel("launch")


def test_archive_restore_delete(data: Path) -> None:
    with onehelm.Helm.open(data) as helm:
        temp = helm.create_channel("temp", "Short-lived.")
        temp.files.write("keep.txt", "kept")
        temp.archive()
        assert temp.status == "archived"
        with pytest.raises(onehelm.Refused):
            temp.run("true")
        temp.restore()
        assert temp.status == "active" and temp.files.read("keep.txt") == "kept"
        temp.archive()
        with pytest.raises(onehelm.Refused):
            temp.delete(confirm="wrong")
        temp.delete(confirm="temp")
        with pytest.raises(onehelm.NotFound):
            helm.channel("temp")


async def test_archive_restore_delete_async(data: Path) -> None:
    async with onehelm.AsyncHelm.open(data) as helm:
        temp = await helm.create_channel("temp", "Short-lived.")
        await temp.archive()
        assert temp.status == "archived"
        await temp.restore()
        assert temp.status == "active"
        await temp.archive()
        await temp.delete(confirm="temp")
        with pytest.raises(onehelm.NotFound):
            await helm.channel("temp")


def test_a_decision_is_recalled_after_closing_and_reopening(data: Path) -> None:
    with onehelm.Helm.open(data) as helm:
        launch = helm.create_channel("launch", "Plans the launch.")
        launch.memory.add("decision", "The launch date is 12 March.")
    with onehelm.Helm.open(data, create=False) as helm:
        hits = helm.channel("launch").memory.recall("when is the launch date?")
        assert hits[0].kind == "decision" and "12 March" in hits[0].text


async def test_a_decision_is_recalled_after_closing_and_reopening_async(data: Path) -> None:
    async with onehelm.AsyncHelm.open(data) as helm:
        launch = await helm.create_channel("launch", "Plans the launch.")
        await launch.memory.add("decision", "The launch date is 12 March.")
    async with onehelm.AsyncHelm.open(data, create=False) as helm:
        launch = await helm.channel("launch")
        hits = await launch.memory.recall("when is the launch date?")
        assert "12 March" in hits[0].text


HISTORY = b"""{"type":"thread","id":"s1","title":"Planning","opened_at":"2026-03-01T09:00:00Z"}
{"type":"message","thread":"s1","external_id":"m1","author":"Caroline","text":"The venue is the old harbour hall.","at":"2026-03-01T09:01:00Z"}
{"type":"memory","kind":"decision","content":"The launch party is at the harbour hall.","thread":"s1","source_external_id":"m1"}
"""


def test_a_history_is_imported_and_records_are_kept_by_hand(data: Path, tmp_path: Path) -> None:
    with onehelm.Helm.open(data) as helm:
        launch = helm.create_channel("launch", "Plans the launch.")
        report = launch.import_history(HISTORY)
        assert (report.threads, report.messages, report.memories) == (1, 1, 1)
        # From a file too; a bad line imports nothing and says which.
        bad = tmp_path / "bad.jsonl"
        bad.write_bytes(HISTORY.replace(b'"type":"message"', b'"type":"msg"'))
        with pytest.raises(onehelm.InvalidInput) as refused:
            launch.import_history(bad)
        assert "line 2" in str(refused.value)
        with pytest.raises(onehelm.InvalidInput):
            launch.import_history(tmp_path / "missing.jsonl")
        assert len(launch.threads()) == 1

        (decision,) = launch.memory.list(kind="decision")
        hits = launch.memory.recall("where is the launch party?", k=3)
        assert any(h.text == decision.text for h in hits)
        edited = launch.memory.edit(decision.id, "The launch party is at the lighthouse.")
        assert edited.text == "The launch party is at the lighthouse."
        assert launch.memory.pin(edited.id).pinned
        assert not launch.memory.pin(edited.id, pinned=False).pinned
        assert launch.memory.forget(edited.id).status == "forgotten"
        assert launch.memory.list(kind="decision") == []

        # Page by page: every record once, in order.
        for n in range(5):
            launch.memory.add("fact", f"Fact number {n}.")
        everything = [m.id for m in launch.memory.list(limit=500)]
        paged: list[int] = []
        page = launch.memory.list(limit=2)
        while page:
            paged += [m.id for m in page]
            page = launch.memory.list(limit=2, before=page[-1].id)
        assert paged == everything


async def test_memory_records_are_kept_by_hand_async(data: Path) -> None:
    async with onehelm.AsyncHelm.open(data) as helm:
        launch = await helm.create_channel("launch", "Plans the launch.")
        report = await launch.import_history(HISTORY)
        assert report.memories == 1
        (decision,) = await launch.memory.list(kind="decision")
        assert (await launch.memory.pin(decision.id)).pinned
        assert (await launch.memory.forget(decision.id)).status == "forgotten"


def test_a_thread_is_renamed_and_a_forgotten_record_restored(data: Path) -> None:
    with onehelm.Helm.open(data) as helm:
        launch = helm.create_channel("launch", "Plans the launch.")
        launch.import_history(HISTORY)
        (thread,) = launch.threads()
        thread.rename("  Venue planning  ")
        assert thread.title == "Venue planning"
        assert launch.thread(thread.id).title == "Venue planning"
        # Found by a word only its message holds; archived ones apart.
        assert [t.id for t in launch.threads(search="harbour")] == [thread.id]
        assert launch.threads(search="zebra") == []
        assert [t.id for t in launch.threads(archived=False)] == [thread.id]
        assert launch.threads(archived=True) == []
        with pytest.raises(onehelm.InvalidInput, match="search is empty"):
            launch.threads(search="  ")
        with pytest.raises(onehelm.InvalidInput) as refused:
            thread.rename("two\nlines")
        assert "one line" in str(refused.value)
        assert thread.title == "Venue planning"

        (decision,) = launch.memory.list(kind="decision")
        forgotten = launch.memory.forget(decision.id)
        assert forgotten.status == "forgotten"
        assert forgotten.forgotten_by == helm.me().name
        assert forgotten.forgotten_at is not None
        assert launch.memory.list(kind="decision") == []
        restored = launch.memory.restore(decision.id)
        assert (restored.status, restored.forgotten_by, restored.forgotten_at) == ("current", None, None)
        assert [m.id for m in launch.memory.list(kind="decision")] == [decision.id]
        with pytest.raises(onehelm.Conflict):
            launch.memory.restore(decision.id)

        launch.archive()
        with pytest.raises(onehelm.Refused, match="archived"):
            thread.rename("After the archive")


async def test_a_thread_is_renamed_and_a_forgotten_record_restored_async(data: Path) -> None:
    async with onehelm.AsyncHelm.open(data) as helm:
        launch = await helm.create_channel("launch", "Plans the launch.")
        await launch.import_history(HISTORY)
        (thread,) = await launch.threads()
        await thread.rename("Venue planning")
        assert thread.title == "Venue planning"
        assert [t.id for t in await launch.threads(search="harbour hall")] == [thread.id]
        assert await launch.threads(search="harbour", archived=True) == []
        with pytest.raises(onehelm.InvalidInput):
            await thread.rename("   ")
        (decision,) = await launch.memory.list(kind="decision")
        forgotten = await launch.memory.forget(decision.id)
        assert forgotten.forgotten_by == (await helm.me()).name
        restored = await launch.memory.restore(decision.id)
        assert restored.status == "current" and restored.forgotten_by is None


def test_only_a_records_author_or_a_manager_changes_it(data: Path) -> None:
    with onehelm.Helm.open(data) as helm:
        launch = helm.create_channel("launch", "Plans the launch.")
        decision = launch.memory.add("decision", "We launch on Friday.")
        helm.add_user("mia")
        helm.add_user("nol")
        mia = helm.as_user("mia").channel("launch")
        nol = helm.as_user("nol").channel("launch")
        fact = mia.memory.add("fact", "The venue seats 300.")
        # Another member may not edit or pin the Captain's record, nor mia's.
        for record in (decision, fact):
            with pytest.raises(onehelm.Forbidden, match="may edit"):
                nol.memory.edit(record.id, "Changed.")
            with pytest.raises(onehelm.Forbidden, match="may pin"):
                nol.memory.pin(record.id)
            with pytest.raises(onehelm.Forbidden, match="may unpin"):
                nol.memory.pin(record.id, pinned=False)
        # Its author and the Captain may.
        assert mia.memory.pin(fact.id).pinned
        edited = mia.memory.edit(fact.id, "The venue seats 320.")
        assert edited.text == "The venue seats 320."
        assert launch.memory.edit(edited.id, "The venue seats 350.").pinned
        assert launch.memory.pin(decision.id).pinned


async def test_only_a_records_author_or_a_manager_changes_it_async(data: Path) -> None:
    async with onehelm.AsyncHelm.open(data) as helm:
        launch = await helm.create_channel("launch", "Plans the launch.")
        decision = await launch.memory.add("decision", "We launch on Friday.")
        await helm.add_user("nol")
        nol = await (await helm.as_user("nol")).channel("launch")
        with pytest.raises(onehelm.Forbidden):
            await nol.memory.edit(decision.id, "Changed.")
        with pytest.raises(onehelm.Forbidden):
            await nol.memory.pin(decision.id)
        assert (await launch.memory.pin(decision.id)).pinned
