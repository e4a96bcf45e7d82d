// Live workspace changes: which events say a channel's files changed (and
// where), and how they are gathered into one look a quiet moment later.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { LiveEvent } from "../api/events";
import { mapOffset } from "./files";
import { absolute, changesOf, debounceChanges, namedPath, type WorkspaceChange } from "./changes";

const at = "2026-01-01T00:00:00Z";

function toolFinished(tool: string, input_summary: string, status = "ok"): LiveEvent {
  return {
    type: "tool_action.finished",
    seq: 1,
    at,
    channel_id: 7,
    action: { id: 1, agent_id: 3, channel_id: 7, created: at, input_summary, result_summary: "", status, tool },
  } as unknown as LiveEvent;
}

test("paths are read as the agent writes them", () => {
  assert.equal(absolute("docs/plan.md"), "/workspace/docs/plan.md");
  assert.equal(absolute("./docs/plan.md"), "/workspace/docs/plan.md");
  assert.equal(absolute("/workspace/docs/plan.md"), "/workspace/docs/plan.md");
  assert.equal(absolute("/docs/"), "/workspace/docs");
  assert.deepEqual(namedPath("write_file docs/plan.md (12 bytes)"), { path: "/workspace/docs/plan.md", channel: undefined });
  assert.deepEqual(namedPath("write_file [other] notes/a b.md (3 bytes)"), { path: "/workspace/notes/a b.md", channel: "other" });
  assert.equal(namedPath("run_command ls -la"), undefined);
});

test("a file tool names its path; a command may change anything; reads change nothing", () => {
  assert.deepEqual(changesOf(toolFinished("write_file", "write_file docs/plan.md (12 bytes)")), [
    { channel: 7, paths: ["/workspace/docs/plan.md"], anything: false, by: undefined },
  ]);
  assert.deepEqual(changesOf(toolFinished("run_command", "run_command touch x")), [{ channel: 7, paths: [], anything: true, by: undefined }]);
  assert.deepEqual(changesOf(toolFinished("read_file", "read_file docs/plan.md")), []);
  assert.deepEqual(changesOf(toolFinished("run_command", "run_command rm -rf /", "denied")), []);
  const artifact = {
    type: "artifact.recorded",
    seq: 2,
    at,
    channel_id: 7,
    artifact: { id: 1, channel_id: 7, created: at, created_by: "studio-agent", kind: "file", path: "/workspace/notes/a.md" },
  } as unknown as LiveEvent;
  assert.deepEqual(changesOf(artifact), [{ channel: 7, paths: ["/workspace/notes/a.md"], anything: false, by: "@studio-agent" }]);
  assert.deepEqual(changesOf({ type: "message.delta", seq: 3, at, channel_id: 7, message_id: 1, thread_id: 1, text: "x" } as unknown as LiveEvent), []);
});

test("a person's change names its paths and who made it; to that person it is theirs, from another tab", () => {
  const event = (extra: object) =>
    ({ type: "file.changed", seq: 4, at, channel_id: 7, change: "saved", path: "/workspace/notes/plan.md", version: "abc", user_id: 2, by: "Alice", ...extra }) as unknown as LiveEvent;
  assert.deepEqual(changesOf(event({})), [{ channel: 7, paths: ["/workspace/notes/plan.md"], anything: false, by: "Alice" }]);
  assert.deepEqual(changesOf(event({ change: "moved", path: "/workspace/b.md", from: "/workspace/a.md" }), { me: 5 }), [
    { channel: 7, paths: ["/workspace/b.md", "/workspace/a.md"], anything: false, by: "Alice" },
  ]);
  assert.deepEqual(changesOf(event({}), { me: 2 }), [{ channel: 7, paths: ["/workspace/notes/plan.md"], anything: false, by: "you (another tab)" }]);
});

test("changes are gathered until a quiet moment, and never wait past the longest wait", async () => {
  const batches: { paths: string[]; anything: boolean; by?: string }[] = [];
  const b = debounceChanges((x) => batches.push({ paths: [...x.paths], anything: x.anything, by: x.by }), 30, 80);
  const change = (p: string, anything = false): WorkspaceChange => ({ channel: 7, paths: p ? [p] : [], anything, by: "@a" });
  b.add(change("/workspace/a"));
  b.add(change("/workspace/b"));
  b.add(change("", true));
  await new Promise((r) => setTimeout(r, 60));
  assert.deepEqual(batches, [{ paths: ["/workspace/a", "/workspace/b"], anything: true, by: "@a" }]);
  // A steady stream still gets looked at within the longest wait.
  const start = Date.now();
  while (Date.now() - start < 200 && batches.length < 2) {
    b.add(change("/workspace/c"));
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.equal(batches.length, 2);
  assert.ok(Date.now() - start < 150);
  b.stop();
});

test("a caret keeps its place when the text changes around it", () => {
  const before = "one\ntwo\nthree\n";
  const after = "zero\none\ntwo\nthree\n";
  assert.equal(mapOffset(before, after, before.indexOf("two")), after.indexOf("two"));
  assert.equal(mapOffset(before, "one\ntwo\nthree\nfour\n", 2), 2);
  assert.equal(mapOffset("abcdef", "abXYef", 3), 4);
  assert.equal(mapOffset("abc", "", 2), 0);
});
