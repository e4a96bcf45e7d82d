// Quick Note's rules: where a note may go, where the picker starts, drafts
// read back from storage, and the words after a save.
import assert from "node:assert/strict";
import { test } from "node:test";
import { defaultNoteTarget, isEmptyDraft, noteTargets, parseDraft, savedNoteMessage } from "./notes";

const main = { id: 1, name: "main", kind: "home", status: "active" };
const launch = { id: 2, name: "launch", kind: "standard", status: "active" };
const design = { id: 3, name: "design", kind: "standard", status: "active" };
const old = { id: 4, name: "old", kind: "standard", status: "archived" };

test("notes go to active channels; #main only for the Captain and admins", () => {
  assert.deepEqual(noteTargets([launch, old, design, main], true).map((c) => c.name), ["main", "design", "launch"]);
  assert.deepEqual(noteTargets([launch, old, design, main], false).map((c) => c.name), ["design", "launch"]);
});

test("the picker starts on the channel viewed, else the last one used, else #main", () => {
  const all = noteTargets([main, launch, design, old], true);
  assert.equal(defaultNoteTarget(all, "launch", 3)?.name, "launch");
  assert.equal(defaultNoteTarget(all, "old", 3)?.name, "design", "an archived channel is not offered");
  assert.equal(defaultNoteTarget(all, undefined, 3)?.name, "design");
  assert.equal(defaultNoteTarget(all, undefined, 99)?.name, "main");
  assert.equal(defaultNoteTarget(noteTargets([main, launch], false), undefined, undefined)?.name, "launch", "a member without #main");
  assert.equal(defaultNoteTarget([], "launch", 2), undefined);
});

test("a draft reads back leniently", () => {
  assert.deepEqual(parseDraft(JSON.stringify({ title: "Press", text: "- call Ada" })), { title: "Press", text: "- call Ada" });
  assert.deepEqual(parseDraft(null), { title: "", text: "" });
  assert.deepEqual(parseDraft("{not json"), { title: "", text: "" });
  assert.deepEqual(parseDraft(JSON.stringify({ title: 3 })), { title: "", text: "" });
  assert.equal(isEmptyDraft({ title: " ", text: "\n" }), true);
  assert.equal(isEmptyDraft({ title: "", text: "x" }), false);
});

test("a saved note is named from the workspace", () => {
  assert.equal(savedNoteMessage("/workspace/notes/2026-12-07-press-list.md", "launch"), "Saved notes/2026-12-07-press-list.md in #launch");
});
