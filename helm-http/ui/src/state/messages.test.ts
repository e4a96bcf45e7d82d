// The messages reducer: a reply streams into its own signal, a final text
// replaces it and late deltas cannot change it; the feed takes each thread's
// root once, whichever of thread.created and message.created comes first.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { LiveEvent } from "../api/events";
import type { Message, Thread } from "../api/types";
import { repliesShown } from "../lib/failure";
import { heldFetch } from "./heldFetch";
import { applyMessageEvent, feedOf, loadFeed, loadThreadMessages, messageSignal, putMessage, threadLog, threadProgress, unreadStart } from "./messages";
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
  apply({ type: "message.delta", message_id: 100, thread_id: 1, text: "Hel", offset: 0 });
  apply({ type: "message.delta", message_id: 100, thread_id: 1, text: "lo", offset: 3 });
  assert.equal(messageSignal(100)?.value.content, "Hello");
  apply({ type: "message.completed", message: message(100, 1, "complete", "Hello.") });
  apply({ type: "message.delta", message_id: 100, thread_id: 1, text: " late", offset: 5 });
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

test("Helm's hidden failure note is not counted as a reply", () => {
  const feed = feedOf(7);
  feed.value = { entries: [], loaded: true };
  apply({ type: "thread.created", thread: thread(5, 50) });
  apply({ type: "message.created", message: message(50, 5, "complete", "@launch-agent what changed?") });
  apply({ type: "message.created", message: message(51, 5, "failed", "") });
  const note: Message = { ...message(52, 5, "complete", "The turn failed: provider mock: HTTP 500"), author: { kind: "system" } as Message["author"] };
  apply({ type: "message.created", message: note });
  // One reply shown (the failed one, which says why); the note is the newest word.
  assert.deepEqual(threadProgress(5).value, { replies: 1, latestReplyId: 52 });
  apply({ type: "message.created", message: message(53, 5, "complete", "Please try that again.") });
  assert.equal(threadProgress(5).value.replies, 2);
});

test("a whole thread is counted exactly, Helm's failure notes left out", () => {
  const note: Message = { ...message(62, 6, "complete", "This turn failed inside Helm: oops"), author: { kind: "system" } as Message["author"] };
  const root = message(60, 6, "complete", "root");
  assert.equal(repliesShown([root, message(61, 6, "failed", ""), note, message(64, 6, "complete", "again"), message(65, 6, "complete", "answer")], 60), 3);
  // A stopped turn's note is shown, so it counts.
  const stopped: Message = { ...message(66, 6, "complete", "Stopped."), author: { kind: "system" } as Message["author"] };
  assert.equal(repliesShown([root, stopped], 60), 1);
});

test("a page read while a reply streamed does not take back the text streamed meanwhile", () => {
  putMessage(message(200, 1, "streaming", ""));
  apply({ type: "message.delta", message_id: 200, thread_id: 1, text: "Hello wor", offset: 0 });
  putMessage(message(200, 1, "streaming", "Hel"));
  apply({ type: "message.delta", message_id: 200, thread_id: 1, text: "ld", offset: 9 });
  assert.equal(messageSignal(200)?.value.content, "Hello world");
});

test("deltas a thread's page already holds are not added twice", async () => {
  threadLog(50);
  const delta = (text: string, offset: number) => apply({ type: "message.delta", message_id: 500, thread_id: 50, text, offset });
  putMessage(message(500, 50, "streaming", ""));
  delta("🙂 He", 0);
  // The page is read after the server appended up to "w"; those deltas reach the browser after it.
  const held = heldFetch({ items: [message(500, 50, "streaming", "🙂 Hello w")], next_before: null });
  try {
    const loading = loadThreadMessages(50);
    await held.release();
    await loading;
  } finally {
    held.restore();
  }
  assert.equal(messageSignal(500)?.value.content, "🙂 Hello w");
  // Offsets count code points: the emoji is one, not two UTF-16 units.
  delta("llo", 4); // wholly held
  delta(" wor", 7); // " w" held, "or" new
  delta("ld 🙂", 11);
  assert.equal(messageSignal(500)?.value.content, "🙂 Hello world 🙂");
});

test("deltas missed are read again, and the chunks heard meanwhile land in place", async () => {
  threadLog(51);
  const delta = (text: string, offset: number) => apply({ type: "message.delta", message_id: 510, thread_id: 51, text, offset });
  putMessage(message(510, 51, "streaming", ""));
  delta("Hello", 0);
  // " wor" (offset 5) never reached this browser.
  const held = heldFetch({ items: [message(510, 51, "streaming", "Hello world")], next_before: null });
  try {
    delta("ld", 9);
    delta(" and", 11); // heard while the reply is read again
    assert.equal(messageSignal(510)?.value.content, "Hello", "nothing is placed past a gap");
    await held.release();
  } finally {
    held.restore();
  }
  assert.equal(messageSignal(510)?.value.content, "Hello world and");
  delta(" more", 15);
  assert.equal(messageSignal(510)?.value.content, "Hello world and more");
});

test("a reply completed while it was read again keeps its final text", async () => {
  threadLog(52);
  const delta = (text: string, offset: number) => apply({ type: "message.delta", message_id: 520, thread_id: 52, text, offset });
  putMessage(message(520, 52, "streaming", "Hi"));
  const held = heldFetch({ items: [message(520, 52, "streaming", "Hi the")], next_before: null });
  try {
    delta("re", 4);
    apply({ type: "message.completed", message: message(520, 52, "complete", "Hi there.") });
    await held.release();
  } finally {
    held.restore();
  }
  assert.equal(messageSignal(520)?.value.content, "Hi there.");
  assert.equal(messageSignal(520)?.value.status, "complete");
});

test("a feed page that predates a reply keeps the reply's count and newest reply", async () => {
  const root = message(300, 30, "complete", "root");
  const page = { items: [{ message: root, thread: thread(30, 300), replies: 1, latest_reply: message(301, 30, "complete", "first") }], next_before: null };
  const held = heldFetch(page);
  try {
    const loading = loadFeed(8, "launch");
    apply({ type: "message.created", message: message(302, 30, "complete", "second") });
    await held.release();
    await loading;
    assert.deepEqual(threadProgress(30).value, { replies: 2, latestReplyId: 302 }, "the reply heard during the read still counts");
  } finally {
    held.restore();
  }
});

test("a reply heard while a thread's first page is read is in the thread", async () => {
  threadLog(40);
  const held = heldFetch({ items: [message(401, 40, "complete", "the question")], next_before: null });
  try {
    const loading = loadThreadMessages(40);
    apply({ type: "message.created", message: message(402, 40, "complete", "the answer") });
    await held.release();
    await loading;
    assert.deepEqual(threadLog(40).value.ids, [401, 402], "the page predates the reply; the reply stays");
  } finally {
    held.restore();
  }
});

test("a message heard before a channel's feed was read does not stand for its history", async () => {
  feedOf(9);
  apply({ type: "message.created", message: { ...message(500, null, "complete", "new"), channel_id: 9 } });
  const held = heldFetch({ items: [{ message: { ...message(499, null, "complete", "old"), channel_id: 9 }, thread: null, replies: 0, latest_reply: null }], next_before: null });
  try {
    const loading = loadFeed(9, "ops");
    await held.release();
    await loading;
    assert.deepEqual(
      feedOf(9).value.entries.map((e) => e.messageId),
      [499, 500],
      "the first page is read all the same",
    );
  } finally {
    held.restore();
  }
});

test("what is unread starts at the first entry after the read marker by someone else", () => {
  const by = (id: number, user: number): Message => ({ ...message(id, id, "complete", "x"), author: { kind: "human", user_id: user, name: `u${user}` } });
  [by(500, 1), by(501, 2), by(502, 1), by(503, 2)].forEach(putMessage);
  const entries = [500, 501, 502, 503].map((id) => ({ messageId: id, threadId: id }));
  assert.equal(unreadStart(entries, 500, 1), 501);
  assert.equal(unreadStart(entries, 501, 1), 503, "the person's own thread is not new to them");
  assert.equal(unreadStart(entries, 503, 1), undefined, "all read");
  assert.equal(unreadStart(entries, undefined, 1), undefined, "no marker: no line");
  assert.equal(unreadStart(entries, 10, 2), 500, "the unread began before the loaded page: its first entry");
});
