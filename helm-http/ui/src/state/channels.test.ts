// The channel list and the events that change a channel while it is read:
// an answer that left before the event must not undo what the event said.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { LiveEvent } from "../api/events";
import type { Agent, Channel } from "../api/types";
import { heldFetch, tick } from "./heldFetch";

// The router (which channels.ts follows renames with) reads the address at load.
const address = new URL("http://helm.test/c/launch");
Object.assign(globalThis, { location: address, history: { pushState() {}, replaceState() {} }, window: { addEventListener() {} } });
const { applyChannelEvent, channelByName, loadChannel } = await import("./channels");

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
