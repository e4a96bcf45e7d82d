// Tokens per reply and per thread: a turn's usage is known once it has
// ended and only if the provider reported it; a thread sums its turns that
// did, whether they came from a page or from events.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { LiveEvent } from "../api/events";
import { effect } from "@preact/signals";
import type { Thread, Turn } from "../api/types";
import { applyThreadEvent, channelThreadIds, ensureThreads, liveTurnsOf, loadThreads, putThread, putTurn, threadSignal, threadUsage, turnOfReply, usageOfTurn } from "./threads";

const at = "2026-01-01T00:00:00Z";
let seq = 1;

function turn(id: number, thread: number, reply: number, state: Turn["state"], steps: number, usage?: [number, number] | null): Turn {
  const t: Turn = { id, agent_id: 1, channel_id: 7, thread_id: thread, trigger_message_id: reply - 1, reply_message_id: reply, hop: 0, state, steps, queued_at: at };
  if (usage !== undefined) t.usage = usage === null ? null : { input_tokens: usage[0], output_tokens: usage[1] };
  return t;
}

function apply(event: Record<string, unknown>) {
  applyThreadEvent({ seq: seq++, at, channel_id: 7, ...event } as unknown as LiveEvent);
}

test("a reply's usage shows once its turn has ended, never while it runs or when none was reported", () => {
  assert.equal(usageOfTurn(turn(1, 1, 10, "running", 1, [10, 5])), undefined, "not while it runs");
  assert.equal(usageOfTurn(turn(1, 1, 10, "queued", 0)), undefined);
  assert.equal(usageOfTurn(turn(1, 1, 10, "failed", 1)), undefined, "absent: nothing, not 0");
  assert.equal(usageOfTurn(turn(1, 1, 10, "failed", 1, null)), undefined, "null: nothing, not 0");
  assert.deepEqual(usageOfTurn(turn(1, 1, 10, "completed", 2, [20, 10])), { input_tokens: 20, output_tokens: 10, calls: 2 });
  assert.deepEqual(usageOfTurn(turn(1, 1, 10, "waiting", 1, [10, 5])), { input_tokens: 10, output_tokens: 5, calls: 1 }, "waiting on a person is an end");
});

test("the turn's end event brings the reply's count and the thread's total, live", () => {
  apply({ type: "turn.queued", turn: turn(21, 2, 200, "queued", 0), ahead: 0 });
  apply({ type: "turn.started", turn: turn(21, 2, 200, "running", 0) });
  assert.equal(usageOfTurn(turnOfReply(200).value?.turn), undefined);
  assert.equal(threadUsage(2).value, undefined, "no total before any turn reported usage");
  apply({ type: "turn.completed", turn: turn(21, 2, 200, "completed", 2, [20, 10]) });
  assert.deepEqual(usageOfTurn(turnOfReply(200).value?.turn), { input_tokens: 20, output_tokens: 10, calls: 2 });
  assert.deepEqual(threadUsage(2).value, { input_tokens: 20, output_tokens: 10, calls: 2, turns: 1 });

  // A failed turn without usage adds nothing; one with usage adds it.
  apply({ type: "turn.failed", turn: turn(22, 2, 202, "failed", 1) });
  assert.deepEqual(threadUsage(2).value, { input_tokens: 20, output_tokens: 10, calls: 2, turns: 1 });
  apply({ type: "turn.cancelled", turn: turn(23, 2, 204, "cancelled", 1, [10, 5]) });
  assert.deepEqual(threadUsage(2).value, { input_tokens: 30, output_tokens: 15, calls: 3, turns: 2 });
});

test("a page's turns and the same turns' events are counted once", () => {
  const loaded = [turn(31, 3, 300, "completed", 2, [1200, 34]), turn(32, 3, 302, "completed", 1, [2000, 166])];
  loaded.forEach((t) => putTurn(t));
  // The same end again (a reload, an event after the page) changes nothing.
  loaded.forEach((t) => putTurn(t));
  apply({ type: "turn.completed", turn: loaded[1] });
  assert.deepEqual(threadUsage(3).value, { input_tokens: 3200, output_tokens: 200, calls: 3, turns: 2 });
  assert.equal(threadUsage(4).value, undefined, "another thread has none");
});

test("an older copy of a turn never takes it back: the post's answer after its end event", () => {
  apply({ type: "turn.started", turn: turn(41, 5, 500, "running", 0) });
  apply({ type: "turn.completed", turn: turn(41, 5, 500, "completed", 1, [10, 5]) });
  // The answer to the post that queued it comes last.
  putTurn(turn(41, 5, 500, "queued", 0), 0);
  assert.equal(turnOfReply(500).value?.turn.state, "completed");
  assert.deepEqual(usageOfTurn(turnOfReply(500).value?.turn), { input_tokens: 10, output_tokens: 5, calls: 1 });
  assert.equal(liveTurnsOf(5).value.size, 0, "Stop does not come back");
  // A running copy after the end is dropped too; a queued turn still moves on.
  putTurn(turn(41, 5, 500, "running", 0));
  assert.equal(turnOfReply(500).value?.turn.state, "completed");
  putTurn(turn(42, 5, 502, "queued", 0), 2);
  apply({ type: "turn.started", turn: turn(42, 5, 502, "running", 0) });
  assert.equal(turnOfReply(502).value?.turn.state, "running");
  assert.equal(liveTurnsOf(5).value.size, 1);
});

test("a view that looked for a thread before it was loaded hears it arrive", () => {
  // As Activity's thread links: drawn before the channel's threads came.
  const seen: (string | undefined)[] = [];
  const stop = effect(() => {
    seen.push(threadSignal(9001)?.value.title);
  });
  const thread: Thread = { id: 9001, channel_id: 7, opened_at: at, status: "open", summary: "", title: "fill in this retro", updated_at: at };
  putThread(thread);
  putThread({ ...thread, title: "the retro", updated_at: "2026-01-01T00:00:01Z" });
  stop();
  assert.deepEqual(seen, [undefined, "fill in this retro", "the retro"]);
});

test("a thread started while the list is read stays in it", async () => {
  const older: Thread = { id: 9100, channel_id: 31, opened_at: at, status: "open", summary: "", title: "Launch checklist", updated_at: at };
  let answer!: () => void;
  const answered = new Promise<void>((resolve) => (answer = resolve));
  const realFetch = globalThis.fetch;
  globalThis.fetch = (async () => {
    await answered;
    return new Response(JSON.stringify([older]), { status: 200, headers: { "content-type": "application/json" } });
  }) as typeof fetch;
  try {
    const loading = loadThreads(31, "launch");
    // The server answered from before this thread existed.
    const started: Thread = { ...older, id: 9101, title: "second topic: the press list", updated_at: "2026-01-01T00:00:09Z" };
    applyThreadEvent({ type: "thread.created", seq: seq++, at, channel_id: 31, thread: started } as unknown as LiveEvent);
    answer();
    await loading;
    assert.deepEqual([...(channelThreadIds(31).value ?? [])].sort(), [9100, 9101]);
  } finally {
    globalThis.fetch = realFetch;
  }
});

test("a copy read before a thread was archived never takes the archive back", () => {
  const open: Thread = { id: 9200, channel_id: 7, opened_at: at, status: "open", summary: "", title: "Old plans", updated_at: at };
  putThread(open);
  // The archive's event, then a page read before it.
  putThread({ ...open, status: "archived", updated_at: "2026-01-01T00:00:05Z" });
  putThread(open);
  assert.equal(threadSignal(9200)?.value.status, "archived");
});

test("threads a view names beyond the pages loaded are read together, each once", async () => {
  const asked: string[] = [];
  const realFetch = globalThis.fetch;
  globalThis.fetch = (async (input: RequestInfo | URL) => {
    const url = new URL(String(input instanceof Request ? input.url : input), "http://helm.test");
    asked.push(url.searchParams.get("ids") ?? "");
    const found = (url.searchParams.get("ids") ?? "").split(",").map((id) => ({ id: Number(id), channel_id: 7, opened_at: at, status: "open", summary: "", title: `thread ${id}`, updated_at: at }));
    return new Response(JSON.stringify(found), { status: 200, headers: { "content-type": "application/json" } });
  }) as typeof fetch;
  try {
    putThread({ id: 9300, channel_id: 7, opened_at: at, status: "open", summary: "", title: "known", updated_at: at });
    ensureThreads("launch", [9301, 9300, 9302, 9301]);
    ensureThreads("launch", [9302, 9303]);
    await new Promise((resolve) => setTimeout(resolve, 0));
    assert.deepEqual(asked, ["9301,9302", "9303"], "one read for the unknown ones, none asked twice");
    assert.equal(threadSignal(9302)?.value.title, "thread 9302");
  } finally {
    globalThis.fetch = realFetch;
  }
});

test("a thread's newest turn is known from pages and events alike", async () => {
  const { latestTurnOf } = await import("./threads");
  putTurn(turn(61, 6, 600, "failed", 1));
  assert.equal(latestTurnOf(6).value, 61);
  // The retry's turn, from its event: the failed one is no longer the last.
  apply({ type: "turn.queued", turn: turn(62, 6, 602, "queued", 0), ahead: 0 });
  assert.equal(latestTurnOf(6).value, 62);
  // An older turn read later (a page) does not move it back.
  putTurn(turn(61, 6, 600, "failed", 1));
  assert.equal(latestTurnOf(6).value, 62);
});
