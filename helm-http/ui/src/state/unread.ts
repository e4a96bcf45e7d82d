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

function set(channel: number, value: Unread): void {
  heard += 1;
  const next = new Map(unread.value);
  next.set(channel, value);
  unread.value = next;
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
 * The reducer. `looking(channel)` says whether the person is reading that
 * channel right now (then nothing counts up). `me` is their user id.
 */
export function applyUnreadEvent(event: LiveEvent, me: number | undefined, looking: (channel: number) => boolean): void {
  switch (event.type) {
    case "message.created": {
      const m = event.message;
      const mine = m.author.kind === "human" && m.author.user_id === me;
      if (mine || looking(m.channel_id)) return;
      const current = unread.value.get(m.channel_id) ?? { unread: 0, mentions: 0 };
      set(m.channel_id, { ...current, unread: current.unread + 1 });
      break;
    }
    case "mention.created": {
      const channel = event.message.channel_id;
      if (event.user_id !== me || looking(channel)) return;
      const current = unread.value.get(channel) ?? { unread: 0, mentions: 0 };
      set(channel, { ...current, mentions: current.mentions + 1 });
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
