// A channel's memory list and the records that change while it is read:
// the list shown is never one the change already outdated.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { LiveEvent } from "../api/events";
import type { MemoryItem } from "../api/types";
import { applyMemoryEvent, loadMemory, memoryOf } from "./memory";

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
