// The channel list and the events that change a channel while it is read:
// an answer that left before the event must not undo what the event said.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { LiveEvent } from "../api/events";
import type { Agent, Channel } from "../api/types";
import { heldAnswers, heldFetch, tick } from "./heldFetch";

// The router (which channels.ts follows renames with) reads the address at load.
const address = new URL("http://helm.test/c/launch");
Object.assign(globalThis, { location: address, history: { pushState() {}, replaceState() {} }, window: { addEventListener() {} } });
const { applyChannelEvent, channelByName, goneChannel, loadChannel, loadChannels } = await import("./channels");

function channel(status: "active" | "archived"): Channel {
  return { id: 7, name: "launch", purpose: "Ship it", kind: "agent", status, visibility: "public", created_by: 1, created: "2026-01-01T00:00:00Z" } as Channel;
}

const agent = { id: 70, handle: "launch", display_name: "Launch", status: "idle" } as unknown as Agent;

test("a channel archived while it was being read stays archived", async () => {
  const held = heldFetch({ channel: channel("active"), agent, profile: { purpose: "Ship it" } });
  try {
    // Known and active, as the first list said.
    const first = loadChannel("launch");
    await held.release();
    await first;
    assert.equal(channelByName("launch")?.channel.status, "active");

    // A read leaves; the channel is archived; the read's answer (from before) arrives.
    const stale = loadChannel("launch");
    await tick();
    applyChannelEvent({ type: "channel.archived", seq: 1, at: "2026-01-01T00:00:01Z", channel: channel("archived") } as unknown as LiveEvent, 1);
    await held.release();
    await stale;
    assert.equal(channelByName("launch")?.channel.status, "archived", "the event is newer than the answer");

    // A read that leaves after the event is taken as it is.
    const fresh = loadChannel("launch");
    await held.release();
    await fresh;
    assert.equal(channelByName("launch")?.channel.status, "active");
  } finally {
    held.restore();
  }
});

test("a person removed from a private channel and added back sees it again, even when the two cross", async () => {
  const vault = { ...channel("active"), id: 8, name: "vault", visibility: "private" } as Channel;
  const detail = { channel: vault, agent: { ...agent, id: 80 }, profile: { purpose: "Ship it" } };
  const gone = { code: "not_found", message: "channel vault not found" };
  const removed = { type: "channel.member_removed", seq: 2, at: "2026-01-01T00:00:02Z", channel_id: 8, user_id: 1 } as unknown as LiveEvent;
  const added = { type: "channel.member_added", seq: 3, at: "2026-01-01T00:00:03Z", channel_id: 8, user_id: 1 } as unknown as LiveEvent;
  const held = heldAnswers([[200, detail], [404, gone], [200, detail], [404, gone], [200, detail]]);
  try {
    const known = loadChannel("vault");
    await held.release();
    await known;
    assert.equal(channelByName("vault")?.channel.name, "vault");

    // Removed: gone. Added back: there again.
    applyChannelEvent(removed, 1);
    await held.release();
    assert.equal(channelByName("vault"), undefined, "removed");
    applyChannelEvent(added, 1);
    await held.release();
    assert.equal(channelByName("vault")?.channel.name, "vault", "added back");

    // Removed, then added back before the removal's check answers: kept.
    applyChannelEvent(removed, 1);
    await tick();
    applyChannelEvent(added, 1);
    await held.release();
    assert.equal(channelByName("vault")?.channel.name, "vault", "the check that predates the addition does not remove it");
  } finally {
    held.restore();
  }
});

test("the server's word says whether a person left a private channel or was removed from it", async () => {
  for (const [by, reason] of [[1, "left"], [2, "removed"]] as const) {
    const id = 60 + by;
    const vault = { ...channel("active"), id, name: `vault${by}`, visibility: "private" } as Channel;
    const detail = { channel: vault, agent: { ...agent, id: 90 }, profile: { purpose: "Ship it" } };
    const gone = { code: "not_found", message: `channel vault${by} not found` };
    const removed = { type: "channel.member_removed", seq: 4, at: "2026-01-01T00:00:04Z", channel_id: id, user_id: 1, by } as unknown as LiveEvent;
    const held = heldAnswers([[200, detail], [404, gone]]);
    try {
      const known = loadChannel(`vault${by}`);
      await held.release();
      await known;
      applyChannelEvent(removed, 1);
      await held.release();
      assert.equal(goneChannel(`vault${by}`)?.reason, reason, `by ${by}`);
    } finally {
      held.restore();
    }
  }
});

test("a list that no longer has a channel takes it away, saying why; one deleted says so too", async () => {
  const list = (ids: number[]) =>
    ids.map((id) => ({ channel: { ...channel("active"), id, name: `c${id}`, visibility: "private" }, agent: { ...agent, id: id * 10 }, profile: { purpose: "" } }));
  const held = heldFetch(list([21, 22, 23]), list([21, 23]), list([21, 22, 23]));
  try {
    const first = loadChannels();
    await held.release();
    await first;
    assert.equal(channelByName("c22")?.channel.id, 22);

    // One's role changed: the list read again no longer has #c22.
    const second = loadChannels();
    await held.release();
    await second;
    assert.equal(channelByName("c22"), undefined, "gone from the list");
    assert.deepEqual(goneChannel("c22"), { id: 22, name: "c22", reason: "hidden" });
    assert.equal(goneChannel("c21"), undefined);

    // The role given back: it is there again, and no longer gone.
    const third = loadChannels();
    await held.release();
    await third;
    assert.equal(channelByName("c22")?.channel.id, 22);
    assert.equal(goneChannel("c22"), undefined);

    applyChannelEvent({ type: "channel.deleted", seq: 9, at: "2026-01-01T00:00:09Z", id: 23 } as unknown as LiveEvent, 1);
    assert.equal(goneChannel("C23")?.reason, "deleted");
  } finally {
    held.restore();
  }
});
