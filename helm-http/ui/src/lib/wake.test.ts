// The composer's hint follows the server's wake rule: a mention wakes the
// agent; a plain reply does when the agent answered (a failed reply does
// not count) and only one person speaks in the thread.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { Message } from "../api/types";
import { mentionedHandles, replyWakes } from "./wake";

let next = 1;
function human(user: number, content = "hi"): Message {
  return { id: next++, channel_id: 2, thread_id: 1, author: { kind: "human", user_id: user, name: `u${user}` }, content, status: "complete", created: "2026-01-01T00:00:00Z" };
}
function agent(status: Message["status"] = "complete"): Message {
  return { id: next++, channel_id: 2, thread_id: 1, author: { kind: "agent", agent_id: 7, handle: "ops-agent", agent_kind: "channel" }, content: "ok", status, created: "2026-01-01T00:00:00Z" };
}
const wakes = (text: string, thread: Message[], me = 1) => replyWakes(text, thread, 7, "ops-agent", me);

test("mentions are read as the server reads them", () => {
  assert.deepEqual(mentionedHandles("@Ops-Agent- can you, and @skipper?"), ["ops-agent", "skipper"]);
  assert.deepEqual(mentionedHandles("mail bob@ops-agent.io"), []);
  assert.deepEqual(mentionedHandles("(@ops-agent)"), ["ops-agent"]);
});

test("a mention always wakes the agent; @skipper alone is for Skipper", () => {
  assert.equal(wakes("@ops-agent again", [human(1), human(2)]), "mention");
  assert.equal(wakes("@skipper help", [human(1), agent()]), "skipper");
});

test("a plain reply wakes the agent once it answered, while one person speaks", () => {
  assert.equal(wakes("and then?", [human(1), agent()]), "continues");
  assert.equal(wakes("and then?", [human(1)]), "unanswered");
  // A reply that failed, was stopped or still streams: the person is talking to the agent.
  assert.equal(wakes("and then?", [human(1), agent("failed")]), "continues", "a failed reply: the follow-up tries again");
  assert.equal(wakes("and then?", [human(1), agent("stopped")]), "continues");
  assert.equal(wakes("and then?", [human(1), agent("streaming")]), "continues");
  assert.equal(wakes("and then?", [human(1), agent(), human(2)]), "others");
  assert.equal(wakes("and then?", [human(2), agent()]), "others", "someone else started it");
});
