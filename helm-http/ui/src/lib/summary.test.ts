import assert from "node:assert/strict";
import { test } from "node:test";
import { isRecorded, summaryParts } from "./summary";

test("a rendered summary's decisions are listed apart from its other lines", () => {
  const parts = summaryParts("Goal: Plan the launch\nWork done: Drafted plan.md\nResult: Ready\nDecisions: Beta on March 3rd; Press kit by Friday\nOpen items: Pick a venue");
  assert.deepEqual(parts.decisions, ["Beta on March 3rd", "Press kit by Friday"]);
  assert.deepEqual(parts.lines, ["Goal: Plan the launch", "Work done: Drafted plan.md", "Result: Ready", "Open items: Pick a venue"]);
  assert.deepEqual(summaryParts("Goal: g\nWork done: w\nResult: r").decisions, []);
});

test("a decision recorded in its thread with the same words counts as recorded", () => {
  const records = [
    { kind: "decision", status: "current", thread_id: 4, content: "Beta on March 3rd." },
    { kind: "decision", status: "forgotten", thread_id: 4, content: "Press kit by Friday" },
    { kind: "fact", status: "current", thread_id: 4, content: "Venue TBD" },
  ];
  assert.equal(isRecorded("beta on  March 3rd", records, 4), true);
  assert.equal(isRecorded("Beta on March 3rd", records, 5), false, "another thread's");
  assert.equal(isRecorded("Press kit by Friday", records, 4), false, "a forgotten one is not current");
  assert.equal(isRecorded("Venue TBD", records, 4), false, "a fact is not a decision");
});
