// Channels and their resident agents, kept from the channel list and the
// channel.* and agent.status events. The sidebar reads `sidebar`; a view
// reads one entry with `channelByName`.
import { batch, computed, signal } from "@preact/signals";
import { ApiError, api } from "../api/client";
import type { LiveEvent } from "../api/events";
import type { Agent, Channel, ChannelRecord } from "../api/types";
import { channelPath, navigate, route } from "./router";

export interface ChannelEntry {
  channel: Channel;
  agent: Agent;
  profile?: ChannelRecord["profile"];
}

export const channels = signal<ReadonlyMap<number, ChannelEntry>>(new Map());

/**
 * Why a channel this person had is gone from their list: they were removed
 * from it (a private channel), left it themselves, it was deleted, or a
 * read of the list no longer has it (their role changed, say).
 */
export type GoneReason = "removed" | "left" | "deleted" | "hidden";

/** A channel gone from this person's list, and why (the channel view says so). */
export interface GoneChannel {
  id: number;
  name: string;
  reason: GoneReason;
}

/** The channels gone while this page was open, by id. */
export const gone = signal<ReadonlyMap<number, GoneChannel>>(new Map());
/** Private channels this person is leaving from this tab: their removal is theirs. */
const leaving = new Set<number>();
/** Ids deleted while a list was loading, so a stale list cannot bring them back. */
const deleted = new Set<number>();
/** Counts the channel and agent events heard, and when each channel last had one:
 * a read that was answered after an event about its channel must not undo it. */
let heard = 0;
const heardAt = new Map<number, number>();

function hear(channelId: number): void {
  heard += 1;
  heardAt.set(channelId, heard);
}

/** Puts what a read started at `since` returned, keeping for each channel an
 * event heard meanwhile told of (its status, name, agent); the read's profile is taken. */
function putRead(entries: ChannelEntry[], since: number): void {
  put(
    entries.map((entry) => {
      const old = channels.value.get(entry.channel.id);
      return old && (heardAt.get(entry.channel.id) ?? 0) > since ? { ...old, profile: entry.profile ?? old.profile } : entry;
    }),
  );
}

function put(entries: ChannelEntry[]): void {
  const next = new Map(channels.value);
  const back = new Map(gone.value);
  for (const entry of entries) {
    if (deleted.has(entry.channel.id)) continue;
    back.delete(entry.channel.id);
    const old = next.get(entry.channel.id);
    next.set(entry.channel.id, { ...old, ...entry, profile: entry.profile ?? old?.profile });
  }
  channels.value = next;
  if (back.size !== gone.value.size) gone.value = back;
}

function remove(id: number, reason: GoneReason): void {
  // A list that no longer has it is the newest word: a later one may have it again (a role given back).
  if (reason !== "hidden") deleted.add(id);
  leaving.delete(id);
  const old = channels.value.get(id);
  if (!old) return;
  const next = new Map(channels.value);
  next.delete(id);
  channels.value = next;
  gone.value = new Map(gone.value).set(id, { id, name: old.channel.name, reason });
}

/**
 * The channel `name` (or id) if it went from this person's list while the
 * page was open, with why; undefined for one never had (or back again).
 */
export function goneChannel(name: string): GoneChannel | undefined {
  const wanted = name.replace(/^#/, "").toLowerCase();
  for (const g of gone.value.values()) if (g.name.toLowerCase() === wanted || String(g.id) === wanted) return g;
  return undefined;
}

/**
 * This person is about to leave the private channel `id` from this tab: its
 * removal, when the event comes, is said as theirs ("You left"). `false`
 * takes it back (the request failed).
 */
export function markLeaving(id: number, on = true): void {
  if (on) leaving.add(id);
  else leaving.delete(id);
}

function patchChannel(channel: Channel): void {
  hear(channel.id);
  const old = channels.value.get(channel.id);
  if (old) put([{ ...old, channel }]);
}

function patchAgent(agentId: number, change: Partial<Agent>): void {
  for (const entry of channels.value.values()) {
    if (entry.agent.id !== agentId) continue;
    hear(entry.channel.id);
    put([{ ...entry, agent: { ...entry.agent, ...change } }]);
  }
}

/** #main first, then active channels by name; archived ones apart. */
export const sidebar = computed(() => {
  const all = [...channels.value.values()];
  const byName = (a: ChannelEntry, b: ChannelEntry) => a.channel.name.localeCompare(b.channel.name);
  const home = all.find((e) => e.channel.kind === "home");
  const active = all.filter((e) => e.channel.kind !== "home" && e.channel.status === "active").sort(byName);
  const archived = all.filter((e) => e.channel.status === "archived").sort(byName);
  return { home, active, archived };
});

export function channelByName(name: string): ChannelEntry | undefined {
  const wanted = name.replace(/^#/, "").toLowerCase();
  for (const entry of channels.value.values()) {
    if (entry.channel.name.toLowerCase() === wanted || String(entry.channel.id) === wanted) return entry;
  }
  return undefined;
}

export function channelById(id: number | null | undefined): ChannelEntry | undefined {
  return id === null || id === undefined ? undefined : channels.value.get(id);
}

/** The home channel's agent: Skipper. */
export const skipper = computed(() => sidebar.value.home?.agent);

/**
 * Reads the whole list. A channel known here that the list no longer has,
 * and that no event told of meanwhile, is gone for this person (their role
 * changed, or an event was missed): it leaves the sidebar, and a view open
 * on it says so.
 */
export async function loadChannels(): Promise<void> {
  const since = heard;
  const list = await api.get("/api/channels", { query: { all: true } });
  batch(() => {
    const listed = new Set(list.map((r) => r.channel.id));
    for (const id of [...channels.value.keys()]) if (!listed.has(id) && (heardAt.get(id) ?? 0) <= since) remove(id, "hidden");
    putRead(list.map((r) => ({ channel: r.channel, agent: r.agent, profile: r.profile })), since);
  });
}

/** Fetches one channel (after being added to it, or to refresh its profile). */
export async function loadChannel(name: string): Promise<ChannelEntry | undefined> {
  const since = heard;
  const detail = await api.get("/api/channels/{channel}", { path: { channel: name } });
  putRead([{ channel: detail.channel, agent: detail.agent, profile: detail.profile }], since);
  return channels.value.get(detail.channel.id);
}

/** The reducer for channel and agent events. */
export function applyChannelEvent(event: LiveEvent, me: number | undefined): void {
  switch (event.type) {
    case "channel.created":
      hear(event.channel.id);
      put([{ channel: event.channel, agent: event.agent }]);
      break;
    case "channel.archived":
    case "channel.restored":
    case "channel.updated":
      patchChannel(event.channel);
      break;
    case "channel.renamed": {
      patchChannel(event.channel);
      // Someone looking at the channel follows it to its new name.
      const at = route.value;
      if (at.name === "channel" && at.channel.replace(/^#/, "").toLowerCase() === event.previous_name.toLowerCase()) {
        navigate(channelPath(event.channel.name, at.view, at.thread), { replace: true });
      }
      break;
    }
    case "channel.deleted":
      remove(event.id, "deleted");
      break;
    case "agent.status":
      patchAgent(event.agent_id, { status: event.status });
      break;
    case "channel.member_added":
      // Added to a private channel: it now exists for this person.
      if (event.user_id === me && event.channel_id !== undefined) {
        hear(event.channel_id);
        // Removed before and added back: no longer a channel gone for good.
        deleted.delete(event.channel_id);
        if (!channels.value.has(event.channel_id)) void loadChannel(String(event.channel_id)).catch(() => undefined);
      }
      break;
    case "channel.member_removed": {
      // Removed from a private channel: gone for them, unless they see
      // everything, or were added back while the check was on its way.
      const id = event.channel_id;
      if (event.user_id === me && id !== undefined && channels.value.get(id)?.channel.visibility === "private") {
        const since = heard;
        api.get("/api/channels/{channel}", { path: { channel: String(id) } }).catch((e: unknown) => {
          // The server says who removed them (`by`: themselves when they
          // left, in any tab); an older server does not, so this tab's own
          // Leave is the next best sign.
          const left = event.by !== undefined ? event.by === me : leaving.has(id);
          if (e instanceof ApiError && e.status === 404 && (heardAt.get(id) ?? 0) <= since) remove(id, left ? "left" : "removed");
        });
      }
      break;
    }
    default:
      break;
  }
}
