// A channel's memory list and the records that change while it is read:
// the list shown is never one the change already outdated.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { LiveEvent } from "../api/events";
import type { MemoryItem } from "../api/types";
import { applyMemoryEvent, loadMemory, loadOlderMemory, MEMORY_PAGE, memoryOf, memoryPaging } from "./memory";

function record(id: number, pinned: boolean): MemoryItem {
  return {
    id,
    channel_id: 4,
    kind: "decision",
    content: "Beta in May.",
    pinned,
    status: "current",
    scope: "channel",
    source: "human",
    author_type: "human",
    created: "2026-01-01T00:00:00Z",
  } as MemoryItem;
}

test("a record that changes while the list is read is shown as it now is", async () => {
  // The server's first answer predates the pin; the second has it.
  const answers = [[record(1, false)], [record(1, true)]];
  const asked: (() => void)[] = [];
  const realFetch = globalThis.fetch;
  globalThis.fetch = (async () => {
    await new Promise<void>((resolve) => asked.push(resolve));
    return new Response(JSON.stringify(answers.shift()), { status: 200, headers: { "content-type": "application/json" } });
  }) as typeof fetch;
  try {
    const loading = loadMemory(4, "launch");
    await new Promise((resolve) => setTimeout(resolve, 0));
    applyMemoryEvent({ type: "memory.changed", seq: 1, at: "2026-01-01T00:00:01Z", channel_id: 4, item: record(1, true) } as unknown as LiveEvent);
    asked.shift()?.();
    await new Promise((resolve) => setTimeout(resolve, 0));
    asked.shift()?.();
    await loading;
    assert.deepEqual(memoryOf(4).value?.map((m) => m.pinned), [true], "read again after the pin, not the answer before it");
  } finally {
    globalThis.fetch = realFetch;
  }
});

test("a memory longer than a page is loaded a page at a time, each record once, saying whether more remain", async () => {
  // 250 records, newest first, as the server lists them.
  const all = Array.from({ length: 250 }, (_, i) => ({ ...record(250 - i, false), channel_id: 5 }));
  const asked: string[] = [];
  const realFetch = globalThis.fetch;
  globalThis.fetch = (async (url: string | URL | Request) => {
    const u = new URL(String(url), "http://localhost");
    asked.push(u.search);
    const before = Number(u.searchParams.get("before") ?? Infinity);
    const page = all.filter((m) => m.id < before).slice(0, Number(u.searchParams.get("limit")));
    return new Response(JSON.stringify(page), { status: 200, headers: { "content-type": "application/json" } });
  }) as typeof fetch;
  try {
    await loadMemory(5, "big");
    assert.equal(memoryOf(5).value?.length, MEMORY_PAGE);
    assert.equal(memoryPaging(5).value.more, true);
    await loadOlderMemory(5, "big");
    assert.ok(asked.at(-1)?.includes(`before=${251 - MEMORY_PAGE}`), asked.join(" "));
    await loadOlderMemory(5, "big");
    assert.equal(memoryPaging(5).value.more, false, "the last page says none remain");
    const ids = memoryOf(5).value?.map((m) => m.id) ?? [];
    assert.equal(new Set(ids).size, 250);
    assert.equal(ids.at(-1), 1, "the oldest record is reached");
    await loadOlderMemory(5, "big");
    assert.equal(asked.length, 3, "nothing more is asked once all is loaded");
  } finally {
    globalThis.fetch = realFetch;
  }
});
