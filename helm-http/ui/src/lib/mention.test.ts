import assert from "node:assert/strict";
import { test } from "node:test";
import type { Message } from "../api/types";
import { mentionNotice } from "./mention";

const at = "2026-12-07T10:00:00Z";
const message = (author: Message["author"], content: string): Message =>
  ({ id: 9, channel_id: 2, thread_id: 4, author, content, status: "complete", created: at, updated: at }) as Message;

test("a call Skipper hands to the Captain is Skipper asking her", () => {
  const note = message({ kind: "system" }, "@skipper asks the Captain: Should we pay for the analytics service?");
  assert.equal(mentionNotice(note, "Helm", "launch"), "@skipper asks you in #launch");
});

test("any other mention names who wrote it", () => {
  const said = message({ kind: "human", user_id: 3, name: "bob" }, "@ada please sign off the budget");
  assert.equal(mentionNotice(said, "Bob", "launch"), "Bob mentioned you in #launch");
  const note = message({ kind: "system" }, "Approval 3 was approved by @ada.");
  assert.equal(mentionNotice(note, "Helm", "launch"), "Helm mentioned you in #launch");
});
