// Cowork's pure rules: paths and modes, names, slides, the document
// toolbar's edits, and the agent panel's first message.
import assert from "node:assert/strict";
import { test } from "node:test";
import { applyFormat, fileNameFor, firstMessage, fitsMode, freeName, modeOfPath, nameProblem, slideAt, splitSlides, workspacePath } from "./cowork";

test("paths are read either way the files API takes them; the mode is the top folder", () => {
  assert.equal(workspacePath("notes/a.md"), "/workspace/notes/a.md");
  assert.equal(workspacePath("/workspace/notes/a.md"), "/workspace/notes/a.md");
  assert.equal(workspacePath("/code/src/"), "/workspace/code/src");
  assert.equal(modeOfPath("/workspace/whiteboards/plan.svg"), "whiteboards");
  assert.equal(modeOfPath("code/src/lib/x.rs"), "code");
  assert.equal(modeOfPath("/workspace/uploads/x.md"), undefined);
  assert.equal(modeOfPath("/workspace/notesy/x.md"), undefined);
  assert.ok(fitsMode("/workspace/docs/a.MD", "docs"));
  assert.ok(!fitsMode("/workspace/docs/a.png", "docs"));
  assert.ok(fitsMode("/workspace/whiteboards/b.svg", "whiteboards"));
});

test("names: the rule, the default extension, a free name", () => {
  assert.equal(nameProblem("Weekly sync", "notes"), undefined);
  assert.equal(nameProblem("  ", "notes"), "Give it a name.");
  assert.match(nameProblem("a/b.md", "notes") ?? "", /cannot contain '\/'/);
  assert.equal(nameProblem("src/main.py", "code"), undefined);
  assert.match(nameProblem("src//main.py", "code") ?? "", /\/\//);
  assert.ok(nameProblem("../escape.py", "code"));
  assert.ok(nameProblem(".hidden", "docs"));
  assert.ok(nameProblem("what?.md", "docs"));
  assert.ok(nameProblem("x".repeat(101), "docs"));
  assert.equal(nameProblem("Résumé 2026", "docs"), undefined);
  assert.equal(fileNameFor("Weekly sync", "notes"), "Weekly sync.md");
  assert.equal(fileNameFor("plan.md", "docs"), "plan.md");
  assert.equal(fileNameFor("old.markdown", "docs"), "old.markdown");
  assert.equal(fileNameFor("flow", "whiteboards"), "flow.svg");
  assert.equal(fileNameFor("Makefile", "code"), "Makefile");
  assert.equal(freeName("note.md", ["a.md"]), "note.md");
  assert.equal(freeName("note.md", ["note.md", "Note-2.md"]), "note-3.md");
  assert.equal(freeName("Makefile", ["makefile"]), "Makefile-2");
});

test("slides are cut at lines holding only ---, not inside code fences", () => {
  const text = "# One\n\nhi\n---\n## Two\n\n```\n---\n```\n  ---  \nThree";
  const slides = splitSlides(text);
  assert.deepEqual(slides.map((s) => s.text), ["# One\n\nhi", "## Two\n\n```\n---\n```", "Three"]);
  assert.equal(text.slice(slides[1]!.start, slides[1]!.start + 6), "## Two");
  assert.equal(slideAt(slides, 0), 0);
  assert.equal(slideAt(slides, text.indexOf("Two")), 1);
  assert.equal(slideAt(slides, text.length), 2);
  assert.deepEqual(splitSlides("").map((s) => s.text), [""]);
  assert.equal(splitSlides("a\n----\nb").length, 1, "a longer rule is not a separator");
  assert.equal(splitSlides("a\n\n---\n\nb\n\n---\n\nc\n").length, 3);
});

test("the toolbar's edits act on the selection", () => {
  // Bold wraps the selection and keeps it selected; again unwraps it.
  let e = applyFormat("make this loud", 10, 14, "bold");
  assert.deepEqual(e, { text: "make this **loud**", start: 12, end: 16 });
  assert.deepEqual(applyFormat(e.text, e.start, e.end, "bold"), { text: "make this loud", start: 10, end: 14 });
  // No selection: a placeholder, selected, to type over.
  e = applyFormat("x ", 2, 2, "italic");
  assert.equal(e.text, "x _italic text_");
  assert.equal(e.text.slice(e.start, e.end), "italic text");
  // Headings cycle ## → ### → none on the caret's line.
  e = applyFormat("intro\nTitle\nrest", 8, 8, "heading");
  assert.equal(e.text, "intro\n## Title\nrest");
  assert.equal(e.start, 11);
  e = applyFormat(e.text, e.start, e.end, "heading");
  assert.equal(e.text, "intro\n### Title\nrest");
  e = applyFormat(e.text, e.start, e.end, "heading");
  assert.equal(e.text, "intro\nTitle\nrest");
  // Lists prefix every selected line, and come off when all have it.
  e = applyFormat("a\nb\nc", 0, 3, "list");
  assert.equal(e.text, "- a\n- b\nc");
  assert.equal(applyFormat(e.text, e.start, e.end, "list").text, "a\nb\nc");
  // Links select the URL to type over.
  e = applyFormat("see docs", 4, 8, "link");
  assert.equal(e.text, "see [docs](https://)");
  assert.equal(e.text.slice(e.start, e.end), "https://");
  // Code: inline for a word, a fence for lines.
  assert.equal(applyFormat("run ls now", 4, 6, "code").text, "run `ls` now");
  assert.equal(applyFormat("a\nb\n", 0, 4, "code").text, "```\na\nb\n```");
});

test("the panel's first message is addressed to the agent and ends with the open file's path", () => {
  assert.equal(firstMessage("tidy this up", "docs-agent", "docs/plan.md"), "@docs-agent tidy this up\n\n/workspace/docs/plan.md");
  assert.equal(firstMessage("@Docs-Agent tidy", "docs-agent", "/workspace/docs/plan.md"), "@Docs-Agent tidy\n\n/workspace/docs/plan.md");
  assert.equal(firstMessage(" hello ", "docs-agent", undefined), "@docs-agent hello");
});
