// Drafts of the message boxes: kept per person and per box, cleared when blank.
import assert from "node:assert/strict";
import { test } from "node:test";
import { draftKey, keepDraft, readDraft, type DraftStore } from "./drafts";

function memoryStore(): DraftStore & { map: Map<string, string> } {
  const map = new Map<string, string>();
  return { map, getItem: (k) => map.get(k) ?? null, setItem: (k, v) => void map.set(k, v), removeItem: (k) => void map.delete(k) };
}

test("a draft is read back by the same person in the same box only", () => {
  const store = memoryStore();
  keepDraft(store, 1, { channel: 4, thread: 9 }, "half a reply");
  assert.equal(readDraft(store, 1, { channel: 4, thread: 9 }), "half a reply");
  assert.equal(readDraft(store, 2, { channel: 4, thread: 9 }), "", "another person on the machine sees nothing");
  assert.equal(readDraft(store, 1, { channel: 4, thread: 10 }), "", "another thread's box is empty");
  assert.equal(readDraft(store, 1, { channel: 4, box: "new" }), "", "the channel's new-thread box is its own");
  assert.equal(readDraft(store, undefined, { channel: 4, thread: 9 }), "", "nobody signed in: nothing");
});

test("blank text (a sent message) clears the draft", () => {
  const store = memoryStore();
  keepDraft(store, 1, { channel: 4, box: "new" }, "a thought");
  keepDraft(store, 1, { channel: 4, box: "new" }, "  ");
  assert.equal(store.map.size, 0);
  assert.notEqual(draftKey(1, { channel: 4, box: "new" }), draftKey(1, { channel: 4, box: "panel" }));
});

test("storage that refuses is survived", () => {
  const refusing: DraftStore = {
    getItem: () => {
      throw new Error("denied");
    },
    setItem: () => {
      throw new Error("quota");
    },
    removeItem: () => undefined,
  };
  keepDraft(refusing, 1, { channel: 4, box: "new" }, "text");
  assert.equal(readDraft(refusing, 1, { channel: 4, box: "new" }), "");
});
