// The messages reducer: a reply streams into its own signal, a final text
// replaces it and late deltas cannot change it; the feed takes each thread's
// root once, whichever of thread.created and message.created comes first.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { LiveEvent } from "../api/events";
import type { Message, Thread } from "../api/types";
import { applyMessageEvent, feedOf, messageSignal, putMessage, threadProgress } from "./messages";
import { applyThreadEvent } from "./threads";

const at = "2026-01-01T00:00:00Z";
let seq = 1;

function message(id: number, thread: number | null, status: Message["status"], content: string): Message {
  return { id, channel_id: 7, thread_id: thread, author: { kind: "human", user_id: 1, name: "ada" }, content, status, created: at };
}

function thread(id: number, root: number): Thread {
  return { id, channel_id: 7, root_message_id: root, title: "t", status: "open", summary: "", opened_at: at, updated_at: at };
}

function apply(event: Record<string, unknown>) {
  const e = { seq: seq++, at, channel_id: 7, ...event } as unknown as LiveEvent;
  applyThreadEvent(e);
  applyMessageEvent(e);
}

test("a reply streams into its signal; the final text wins and late text is dropped", () => {
  putMessage(message(100, 1, "streaming", ""));
  apply({ type: "message.delta", message_id: 100, thread_id: 1, text: "Hel" });
  apply({ type: "message.delta", message_id: 100, thread_id: 1, text: "lo" });
  assert.equal(messageSignal(100)?.value.content, "Hello");
  apply({ type: "message.completed", message: message(100, 1, "complete", "Hello.") });
  apply({ type: "message.delta", message_id: 100, thread_id: 1, text: " late" });
  assert.equal(messageSignal(100)?.value.content, "Hello.");
  // A stale copy of it (still streaming) cannot bring it back.
  putMessage(message(100, 1, "streaming", "Hel"));
  assert.equal(messageSignal(100)?.value.status, "complete");
});

test("the feed takes each root once, in either order, and counts replies", () => {
  const feed = feedOf(7);
  feed.value = { entries: [], loaded: true };
  apply({ type: "thread.created", thread: thread(1, 10) });
  apply({ type: "message.created", message: message(10, 1, "complete", "first") });
  apply({ type: "message.created", message: message(20, 2, "complete", "second") });
  apply({ type: "thread.created", thread: thread(2, 20) });
  apply({ type: "message.created", message: message(11, 1, "pending", "") });
  apply({ type: "message.created", message: message(30, null, "complete", "an announcement") });
  assert.deepEqual(
    feed.value.entries.map((e) => [e.messageId, e.threadId]),
    [
      [10, 1],
      [20, 2],
      [30, undefined],
    ],
  );
  assert.deepEqual(threadProgress(1).value, { replies: 1, latestReplyId: 11 });
});
