// What the person has not read, per channel: loaded from /api/unread,
// counted up as messages arrive elsewhere, cleared when they look (a read
// marker is sent, and channel.read from their other tabs clears it here).
import { signal } from "@preact/signals";
import { api } from "../api/client";
import type { LiveEvent } from "../api/events";

export interface Unread {
  unread: number;
  mentions: number;
  lastRead?: number;
}

export const unread = signal<ReadonlyMap<number, Unread>>(new Map());

/** Bumped at every change of a count (an event, a look), so a read can tell it was overtaken. */
let heard = 0;

/**
 * The threads whose messages made each channel's count, while that is known
 * (counted here since the channel was last read; a count read from the
 * server names none, so `unknown` stands for it).
 */
const counted = new Map<number, Set<number | "unknown">>();

function count(channel: number, thread: number | null | undefined): void {
  const threads = counted.get(channel) ?? new Set();
  threads.add(thread ?? "unknown");
  counted.set(channel, threads);
}

/**
 * Whether all that is unread in `channel` is in `thread`: then seeing that
 * one thread (Cowork's agent panel) may mark the channel read without
 * passing over anything else.
 */
export function unreadOnlyIn(channel: number, thread: number): boolean {
  const now = unread.value.get(channel);
  if (!now || now.unread + now.mentions === 0) return true;
  const threads = counted.get(channel);
  return threads !== undefined && threads.size === 1 && threads.has(thread);
}

function set(channel: number, value: Unread): void {
  heard += 1;
  if (value.unread + value.mentions === 0) counted.delete(channel);
  const next = new Map(unread.value);
  next.set(channel, value);
  unread.value = next;
}

/** What is unread across the channels, for a control that stands for them all (the phone's drawer button). */
export interface UnreadSummary {
  /** Mentions of the person, in all. */
  mentions: number;
  /** Channels with at least one mention of the person. */
  mentionChannels: number;
  /** Channels with anything unread (mentions or not). */
  unreadChannels: number;
}

/**
 * Sums the counts of the channels `listed` says the person has (a count
 * left from a channel gone from their list tells them of nothing they can open).
 */
export function summarizeUnread(counts: ReadonlyMap<number, Unread>, listed: (channel: number) => boolean): UnreadSummary {
  const summary = { mentions: 0, mentionChannels: 0, unreadChannels: 0 };
  for (const [channel, c] of counts) {
    if (!listed(channel)) continue;
    if (c.mentions > 0) {
      summary.mentions += c.mentions;
      summary.mentionChannels += 1;
    }
    if (c.unread + c.mentions > 0) summary.unreadChannels += 1;
  }
  return summary;
}

/** The summary in words, for the drawer button's name: "1 mention", "3 mentions in 2 channels", "unread messages"; nothing when all is read. */
export function unreadWords(s: UnreadSummary): string | undefined {
  if (s.mentions > 0) {
    const mentions = `${s.mentions} mention${s.mentions === 1 ? "" : "s"}`;
    return s.mentionChannels > 1 ? `${mentions} in ${s.mentionChannels} channels` : mentions;
  }
  return s.unreadChannels > 0 ? "unread messages" : undefined;
}

/**
 * Loads every channel's counts. A count that moved while the list was read
 * may be in the answer or not (the counts carry no version), so the list
 * is read again then, at most twice more, rather than losing the message.
 */
export async function loadUnread(): Promise<void> {
  for (let reads = 1; ; reads++) {
    const since = heard;
    const list = await api.get("/api/unread");
    if (heard === since || reads === 3) {
      unread.value = new Map(list.map((u) => [u.channel_id, { unread: u.unread, mentions: u.mentions, lastRead: u.last_read ?? undefined }]));
      counted.clear();
      for (const u of list) if (u.unread + u.mentions > 0) count(u.channel_id, undefined);
      return;
    }
  }
}

const pending = new Map<number, { message: number; timer: ReturnType<typeof setTimeout> }>();

/**
 * The person is looking at `channel` up to `message`: clear it and tell the
 * server (debounced), by the channel's id, which a rename meanwhile does not change.
 */
export function markRead(channel: number, message: number | undefined): void {
  const current = unread.value.get(channel);
  if (current && (current.unread > 0 || current.mentions > 0)) set(channel, { ...current, unread: 0, mentions: 0 });
  if (message === undefined || (current?.lastRead ?? 0) >= message) return;
  const waiting = pending.get(channel);
  if (waiting) clearTimeout(waiting.timer);
  const timer = setTimeout(() => {
    pending.delete(channel);
    api
      .put("/api/channels/{channel}/read", { path: { channel: String(channel) }, body: { message_id: message } })
      .then((marker) => {
        const now = unread.value.get(channel);
        set(channel, { unread: now?.unread ?? 0, mentions: now?.mentions ?? 0, lastRead: marker.message_id });
      })
      .catch(() => undefined);
  }, 600);
  pending.set(channel, { message, timer });
}

/**
 * Reads still waiting when the page goes (a reload, a link out) are sent at
 * once, kept alive past it: a reply seen just before must not come back unread.
 */
function flushReads(): void {
  for (const [channel, { message, timer }] of pending) {
    clearTimeout(timer);
    void fetch(`/api/channels/${channel}/read`, {
      method: "PUT",
      keepalive: true,
      credentials: "same-origin",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify({ message_id: message }),
    }).catch(() => undefined);
  }
  pending.clear();
}
if (typeof window !== "undefined" && typeof window.addEventListener === "function") window.addEventListener("pagehide", flushReads);

/**
 * The reducer. `looking(channel, thread)` says whether the person sees that
 * conversation right now (then nothing counts up). `me` is their user id.
 */
export function applyUnreadEvent(event: LiveEvent, me: number | undefined, looking: (channel: number, thread?: number | null) => boolean): void {
  switch (event.type) {
    case "message.created": {
      const m = event.message;
      const mine = m.author.kind === "human" && m.author.user_id === me;
      if (mine || looking(m.channel_id, m.thread_id)) return;
      const current = unread.value.get(m.channel_id) ?? { unread: 0, mentions: 0 };
      set(m.channel_id, { ...current, unread: current.unread + 1 });
      count(m.channel_id, m.thread_id);
      break;
    }
    case "mention.created": {
      const channel = event.message.channel_id;
      if (event.user_id !== me || looking(channel, event.message.thread_id)) return;
      const current = unread.value.get(channel) ?? { unread: 0, mentions: 0 };
      set(channel, { ...current, mentions: current.mentions + 1 });
      count(channel, event.message.thread_id);
      break;
    }
    case "channel.read": {
      if (event.user_id !== me || event.channel_id === undefined) return;
      const current = unread.value.get(event.channel_id);
      if ((current?.lastRead ?? 0) <= event.message_id) set(event.channel_id, { unread: 0, mentions: 0, lastRead: event.message_id });
      break;
    }
    default:
      break;
  }
}
