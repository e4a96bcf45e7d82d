// Plain chat lines take the fast path (escaped, never parsed); anything
// Markdown would mark up goes to the parser and the sanitiser.
import assert from "node:assert/strict";
import { test } from "node:test";

(globalThis as Record<string, unknown>).window = globalThis;
const { isPlainText, renderMarkdown, plainText, streamBlocks } = await import("./markdown");

test("plain text is escaped into paragraphs without the parser", () => {
  assert.equal(renderMarkdown("Beta moves to Thursday.\nQA gets the week.\n\nThanks"), "<p>Beta moves to Thursday.<br>QA gets the week.</p><p>Thanks</p>");
  assert.equal(renderMarkdown("Tom's idea: 3 / 4 done"), "<p>Tom&#39;s idea: 3 / 4 done</p>");
});

test("anything that could be markup is not taken for plain text", () => {
  for (const text of ["a <b>bold</b> move", "**yes**", "see https://example.org", "1. first", "- item", "> quote", "[x](y)", "R&D", "`code`"]) {
    assert.equal(isPlainText(text), false, text);
  }
});

test("previews flatten Markdown", () => {
  assert.equal(plainText("**Plan**: see [the doc](x)\n\n```sh\nls\n```"), "Plan: see the doc [code]");
  assert.equal(plainText("## Status\n> _quoted_ ~~old~~ `x`\n\n- one\n- two"), "Status quoted old x one two");
  // A fence still open (a reply streaming) is code too.
  assert.equal(plainText("Try:\n```sh\nls"), "Try: [code]");
  // A long reply's preview comes from its opening alone.
  const long = `**Start** ${"word ".repeat(400_000)}`;
  const preview = plainText(long, 50);
  assert.equal(preview.length, 50);
  assert.ok(preview.startsWith("Start word word"), preview);
});

test("previews keep the characters that are text, not syntax", () => {
  assert.equal(plainText("Created #garden"), "Created #garden");
  assert.equal(plainText("Renamed snake_case to kebab-case"), "Renamed snake_case to kebab-case");
  assert.equal(plainText("when a > b in C#, ~2 days"), "when a > b in C#, ~2 days");
  // In a message with markup too, only the markup goes.
  assert.equal(plainText("**Done**: #garden uses snake_case, a > b"), "Done: #garden uses snake_case, a > b");
});

test("a streaming reply is cut at blank lines, never inside an open fence", () => {
  assert.deepEqual(streamBlocks("one\ntwo\n\nthree"), { done: ["one\ntwo"], tail: "three" });
  assert.deepEqual(streamBlocks("one\n\n\ntwo\n\n"), { done: ["one", "two"], tail: "" });
  // The fence is open: the blank line inside it closes nothing.
  assert.deepEqual(streamBlocks("intro\n\n```sh\nls\n\npwd"), { done: ["intro"], tail: "```sh\nls\n\npwd" });
  // Closed, and followed by a blank line: a finished block.
  assert.deepEqual(streamBlocks("```sh\nls\n\npwd\n```\n\nafter"), { done: ["```sh\nls\n\npwd\n```"], tail: "after" });
  // Each block, rendered alone, is what the whole would be (plain text:
  // the sanitiser needs a DOM).
  const text = "First line\nsecond\n\nthird\n\nend";
  const { done, tail } = streamBlocks(text);
  assert.equal([...done, tail].map((b) => renderMarkdown(b)).join(""), renderMarkdown(text));
});
