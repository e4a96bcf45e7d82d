// The tool journal's copies of an action: a finished one is never replaced
// by an older, still-running copy (a thread's page can arrive after the
// socket said the action finished).
import assert from "node:assert/strict";
import { test } from "node:test";
import type { LiveEvent } from "../api/events";
import type { Approval, Escalation, ToolAction } from "../api/types";
import { actionSignal, actionsOfTurn, activityKey, activityOf, applyActivityEvent, approvals, escalations, loadActivity, putAction, putApproval, putEscalation } from "./activity";

function action(id: number, status: ToolAction["status"], result = ""): ToolAction {
  return { id, agent_id: 1, channel_id: 7, thread_id: 3, turn_id: 9, tool: "write_file", input_summary: "plan.md", result_summary: result, status, created: "2026-01-01T00:00:00Z" };
}

test("a stale running copy never takes a finished action back", () => {
  putAction(action(1, "running"));
  putAction(action(1, "ok", "wrote plan.md"));
  putAction(action(1, "running"));
  assert.equal(actionSignal(1)?.value.status, "ok");
  assert.equal(actionSignal(1)?.value.result_summary, "wrote plan.md");
  assert.deepEqual(actionsOfTurn(9).value, [1]);
});

test("a running action takes its finished copy, and a finished one a later finished copy", () => {
  putAction(action(2, "running"));
  assert.equal(actionSignal(2)?.value.status, "running");
  putAction(action(2, "error", "failed"));
  assert.equal(actionSignal(2)?.value.status, "error");
  putAction(action(2, "error", "failed, said again"));
  assert.equal(actionSignal(2)?.value.result_summary, "failed, said again");
});

test("what is heard while Activity loads is kept by the load", async () => {
  // The server is read first; an action starts before its answer arrives.
  let answer!: () => void;
  const answered = new Promise<void>((resolve) => (answer = resolve));
  const realFetch = globalThis.fetch;
  globalThis.fetch = (async (url: string | URL | Request) => {
    await answered;
    const body = String(url).includes("/lifecycle") ? [] : [{ ...action(50, "ok"), channel_id: 8 }];
    return new Response(JSON.stringify(body), { status: 200, headers: { "content-type": "application/json" } });
  }) as typeof fetch;
  try {
    const loading = loadActivity(8, "ops");
    const started = { ...action(51, "running"), channel_id: 8, created: "2026-01-01T00:00:05Z" };
    applyActivityEvent({ type: "tool_action.started", seq: 1, at: started.created, channel_id: 8, action: started } as unknown as LiveEvent);
    answer();
    await loading;
    assert.deepEqual(activityOf(8).value?.map(activityKey), ["t51", "t50"]);
    // Heard again once loaded: still one row.
    applyActivityEvent({ type: "tool_action.finished", seq: 2, at: started.created, channel_id: 8, action: { ...started, status: "ok" } } as unknown as LiveEvent);
    assert.deepEqual(activityOf(8).value?.map(activityKey), ["t51", "t50"]);
  } finally {
    globalThis.fetch = realFetch;
  }
});

test("a decided approval, or an answered call for Skipper, never goes back to waiting from a stale copy", () => {
  const pending = { id: 41, status: "pending" } as unknown as Approval;
  putApproval(pending);
  putApproval({ ...pending, status: "approved" } as Approval);
  // A list read before the decision, answered after it.
  putApproval(pending);
  assert.equal(approvals.value.get(41)?.status, "approved");
  const open = { id: 42, status: "open" } as unknown as Escalation;
  putEscalation(open);
  putEscalation({ ...open, status: "resolved" } as Escalation);
  putEscalation(open);
  assert.equal(escalations.value.get(42)?.status, "resolved");
});
