// The unread counts and the messages that arrive while they are read: a
// list that may predate a message must not lose it. And which threads made
// a count: seeing one thread (Cowork's agent panel) marks the channel read
// only when nothing else is unread. And what the phone's drawer button
// says of all the channels behind it.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { LiveEvent } from "../api/events";
import { heldFetch } from "./heldFetch";
import { applyUnreadEvent, loadUnread, summarizeUnread, unread, unreadOnlyIn, unreadWords } from "./unread";

test("a message that arrives while the counts are read is counted", async () => {
  // The first answer predates the message; the second has it.
  const held = heldFetch([{ channel_id: 4, unread: 0, mentions: 0, last_read: 40 }], [{ channel_id: 4, unread: 1, mentions: 0, last_read: 40 }]);
  try {
    const loading = loadUnread();
    const message = { id: 41, channel_id: 4, thread_id: 9, author: { kind: "agent", agent_id: 2, handle: "launch" }, content: "done", status: "complete", created: "2026-01-01T00:00:01Z" };
    applyUnreadEvent({ type: "message.created", seq: 1, at: "2026-01-01T00:00:01Z", channel_id: 4, message } as unknown as LiveEvent, 1, () => false);
    await held.release();
    await held.release();
    await loading;
    assert.equal(unread.value.get(4)?.unread, 1, "read again after the message, not the answer before it");
  } finally {
    held.restore();
  }
});

const message = (id: number, thread: number) =>
  ({ type: "message.created", seq: id, at: "2026-01-01T00:00:00Z", message: { id, channel_id: 14, thread_id: thread, author: { kind: "agent", agent_id: 9 } } }) as unknown as LiveEvent;
const away = () => false;

test("a channel's unread count is known to be one thread's, until another's counts too", () => {
  assert.equal(unreadOnlyIn(14, 5), true, "nothing unread");
  applyUnreadEvent(message(10, 5), 1, away);
  applyUnreadEvent(message(11, 5), 1, away);
  assert.equal(unreadOnlyIn(14, 5), true);
  assert.equal(unreadOnlyIn(14, 6), false);
  applyUnreadEvent(message(12, 6), 1, away);
  assert.equal(unreadOnlyIn(14, 5), false, "thread 6 is unread too");
  applyUnreadEvent({ type: "channel.read", seq: 13, at: "2026-01-01T00:00:00Z", channel_id: 14, user_id: 1, message_id: 12 } as unknown as LiveEvent, 1, away);
  assert.equal(unreadOnlyIn(14, 6), true, "read: nothing unread");
});

test("the drawer button tells mentions, by channel, then anything unread, of the channels the person has", () => {
  const counts = new Map([
    [1, { unread: 3, mentions: 0 }],
    [2, { unread: 1, mentions: 1 }],
    [3, { unread: 0, mentions: 0 }],
    [8, { unread: 5, mentions: 2 }],
  ]);
  const all = () => true;
  assert.deepEqual(summarizeUnread(counts, all), { mentions: 3, mentionChannels: 2, unreadChannels: 3 });
  assert.equal(unreadWords(summarizeUnread(counts, all)), "3 mentions in 2 channels");
  // Channel 8 is gone from the list: its count is not the person's to open.
  const listed = (id: number) => id !== 8;
  assert.deepEqual(summarizeUnread(counts, listed), { mentions: 1, mentionChannels: 1, unreadChannels: 2 });
  assert.equal(unreadWords(summarizeUnread(counts, listed)), "1 mention");
  assert.equal(unreadWords(summarizeUnread(new Map([[2, { unread: 0, mentions: 4 }]]), all)), "4 mentions");
  assert.equal(unreadWords(summarizeUnread(new Map([[1, { unread: 2, mentions: 0 }]]), all)), "unread messages");
  assert.equal(unreadWords(summarizeUnread(new Map([[3, { unread: 0, mentions: 0 }]]), all)), undefined, "all read: nothing to say");
});
