// What counts as seeing a conversation: only a channel's chat (and Cowork's
// agent panel for its own thread). Its other views do not, so a mention
// there still tells the person and the channel is not marked read.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { Route } from "./router";
import { seesConversation } from "./seeing";

const at = (view: string, thread?: number) => ({ name: "channel", channel: "launch", view, thread }) as Route;

test("only the channel's chat, shown, sees its conversation", () => {
  assert.equal(seesConversation(at("chat"), true, 5, true, undefined), true);
  assert.equal(seesConversation(at("chat", 6), true, 5, true, undefined), true, "the feed is beside the thread open");
  for (const view of ["threads", "files", "cowork", "terminal", "memory", "activity", "settings"]) {
    assert.equal(seesConversation(at(view), true, 5, true, undefined), false, `${view} does not show the conversation`);
  }
  assert.equal(seesConversation(at("chat"), false, 5, true, undefined), false, "another channel's chat");
  assert.equal(seesConversation(at("chat"), true, 5, false, undefined), false, "a hidden tab");
  assert.equal(seesConversation({ name: "admin", section: "people" }, false, 5, true, undefined), false);
});

test("Cowork's agent panel sees only the thread it shows", () => {
  assert.equal(seesConversation(at("cowork"), true, 5, true, 5), true);
  assert.equal(seesConversation(at("cowork"), true, 6, true, 5), false);
  assert.equal(seesConversation(at("cowork"), true, null, true, 5), false);
  assert.equal(seesConversation(at("files"), true, 5, true, 5), false, "the panel is Cowork's");
});
