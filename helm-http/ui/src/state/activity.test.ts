// The tool journal's copies of an action: a finished one is never replaced
// by an older, still-running copy (a thread's page can arrive after the
// socket said the action finished).
import assert from "node:assert/strict";
import { test } from "node:test";
import type { LiveEvent } from "../api/events";
import type { Approval, Escalation, ToolAction } from "../api/types";
import { ACTIVITY_PAGE, actionSignal, actionsOfTurn, activityKey, activityOf, activityPaging, applyActivityEvent, approvals, escalations, loadActivity, loadOlderActivity, moreActivity, putAction, putApproval, putEscalation, shownActivity } from "./activity";

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

test("Activity that outgrows a page shows nothing older than its oldest loaded action, until older ones are loaded", async () => {
  // 260 actions a second apart, the channel made before the first of them.
  const at = (n: number) => new Date(Date.UTC(2026, 0, 2, 0, 0, n)).toISOString();
  const all = Array.from({ length: 260 }, (_, i) => ({ ...action(1000 + i, "ok"), channel_id: 9, created: at(i + 1) }));
  const created = { type: "channel.created", seq: 3, at: at(0), channel_id: 9 };
  const asked: string[] = [];
  const realFetch = globalThis.fetch;
  globalThis.fetch = (async (url: string | URL | Request) => {
    const u = new URL(String(url), "http://localhost");
    asked.push(u.pathname + u.search);
    if (u.pathname.endsWith("/lifecycle")) return new Response(JSON.stringify([created]), { status: 200, headers: { "content-type": "application/json" } });
    const before = Number(u.searchParams.get("before") ?? Infinity);
    const limit = Number(u.searchParams.get("limit"));
    const page = all.filter((a) => a.id < before).slice(-limit);
    return new Response(JSON.stringify(page), { status: 200, headers: { "content-type": "application/json" } });
  }) as typeof fetch;
  try {
    await loadActivity(9, "big");
    const paging = activityPaging(9).value;
    assert.ok(moreActivity(paging), "older actions remain");
    const first = shownActivity(activityOf(9).value ?? [], paging).map(activityKey);
    assert.equal(first.length, ACTIVITY_PAGE);
    assert.equal(first.at(-1), "t1060", "the oldest loaded action ends the list");
    assert.ok(!first.includes("l3"), "the channel's creation is not shown right below it");
    await loadOlderActivity(9, "big");
    assert.ok(asked.some((q) => q.includes("before=1060")), asked.join(" "));
    const after = activityPaging(9).value;
    assert.ok(!moreActivity(after), "everything is loaded");
    const every = shownActivity(activityOf(9).value ?? [], after).map(activityKey);
    assert.equal(every.length, 261);
    assert.deepEqual(every.slice(-2), ["t1000", "l3"], "the creation comes after the first action");
    // The lifecycle had one page: it was not read again.
    assert.equal(asked.filter((q) => q.includes("/lifecycle")).length, 1);
  } finally {
    globalThis.fetch = realFetch;
  }
});
