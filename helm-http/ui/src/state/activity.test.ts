// The tool journal's copies of an action: a finished one is never replaced
// by an older, still-running copy (a thread's page can arrive after the
// socket said the action finished).
import assert from "node:assert/strict";
import { test } from "node:test";
import type { ToolAction } from "../api/types";
import { actionSignal, actionsOfTurn, putAction } from "./activity";

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
