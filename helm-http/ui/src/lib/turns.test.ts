// A reply's note follows its turn's real state; Retry is offered only on
// the reply of a thread's last turn, and only while that turn failed.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { Turn } from "../api/types";
import { canRetry, turnNote } from "./turns";

test("a pending reply is queued only while its turn is", () => {
  assert.deepEqual(turnNote("pending", false, "queued", 2, false), { kind: "queued", ahead: 2 });
  assert.deepEqual(turnNote("pending", false, undefined, undefined, false), { kind: "queued", ahead: 0 }, "turn not known yet");
  // Its turn runs, with no words yet: working, not queued.
  assert.deepEqual(turnNote("pending", false, "running", undefined, false), { kind: "working" });
  assert.deepEqual(turnNote("streaming", false, "running", undefined, false), { kind: "working" });
  assert.equal(turnNote("streaming", true, "running", undefined, false), undefined, "its words say it");
});

test("a turn blocked on an approval says so, not queued", () => {
  assert.deepEqual(turnNote("pending", false, "running", undefined, true), { kind: "approval" });
  assert.deepEqual(turnNote("streaming", true, "running", undefined, true), { kind: "approval" });
  assert.deepEqual(turnNote("complete", true, "waiting", undefined, true), { kind: "approval" });
  // Decided, and the turn ended: nothing more to say.
  assert.equal(turnNote("complete", true, "completed", undefined, false), undefined);
});

test("ended replies say how they ended", () => {
  assert.deepEqual(turnNote("failed", false, "failed", undefined, false), { kind: "failed" });
  assert.deepEqual(turnNote("stopped", true, "stopped", undefined, false), { kind: "stopped" });
  assert.deepEqual(turnNote("interrupted", false, "interrupted", undefined, false), { kind: "interrupted" });
});

function turn(id: number, state: Turn["state"]): Turn {
  return { id, agent_id: 1, channel_id: 7, thread_id: 3, trigger_message_id: 1, reply_message_id: 2, hop: 0, state, steps: 1, queued_at: "2026-01-01T00:00:00Z" };
}

test("Retry only on the thread's last turn, while it failed", () => {
  assert.equal(canRetry(turn(11, "failed"), 11), true);
  assert.equal(canRetry(turn(11, "interrupted"), undefined), true);
  // Retried (or the thread went on): a later turn exists, so this one cannot run again.
  assert.equal(canRetry(turn(11, "failed"), 12), false);
  assert.equal(canRetry(turn(11, "completed"), 11), false);
});
