// The members of private channels, read when a composer there needs them
// (who to offer for @, who a mention would not reach) and kept current by
// the channel.member_added / member_removed events.
import { signal } from "@preact/signals";
import { api } from "../api/client";
import type { LiveEvent } from "../api/events";

/** Member ids by channel id, for the private channels read so far. */
export const members = signal<ReadonlyMap<number, ReadonlySet<number>>>(new Map());
const asked = new Set<number>();

/** Reads `channel`'s members once (events keep them current after). */
export function loadMembers(channel: number): void {
  if (asked.has(channel)) return;
  asked.add(channel);
  api
    .get("/api/channels/{channel}/members", { path: { channel: String(channel) } })
    .then((list) => {
      members.value = new Map(members.value).set(channel, new Set(list.map((m) => m.user.id)));
    })
    .catch(() => asked.delete(channel));
}

/** The members' reducer. */
export function applyMemberEvent(event: LiveEvent): void {
  if (event.type !== "channel.member_added" && event.type !== "channel.member_removed") return;
  const channel = event.channel_id;
  const known = channel === undefined ? undefined : members.value.get(channel);
  if (channel === undefined || !known) return;
  const next = new Set(known);
  if (event.type === "channel.member_added") next.add(event.user_id);
  else next.delete(event.user_id);
  members.value = new Map(members.value).set(channel, next);
}
