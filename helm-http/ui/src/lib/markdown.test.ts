// Plain chat lines take the fast path (escaped, never parsed); anything
// Markdown would mark up goes to the parser and the sanitiser.
import assert from "node:assert/strict";
import { test } from "node:test";

(globalThis as Record<string, unknown>).window = globalThis;
const { isPlainText, renderMarkdown, plainText } = await import("./markdown");

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
});
