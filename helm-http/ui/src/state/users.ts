// The people of the workspace, for names, avatars and @ completion, kept
// current by `user.updated` events (a role changed, someone deactivated).
import { computed, signal } from "@preact/signals";
import { api } from "../api/client";
import type { LiveEvent } from "../api/events";
import type { User } from "../api/types";

export const users = signal<ReadonlyMap<number, User>>(new Map());
/**
 * Counts the changes heard (events, and the answers to one's own changes),
 * and when each person last had one: a list read while someone changed
 * must not put them back as they were.
 */
let heard = 0;
const heardAt = new Map<number, number>();

export const userList = computed(() => [...users.value.values()].sort((a, b) => a.name.localeCompare(b.name)));

/** Puts a person as they are now (after a change, or a `user.updated` event). */
export function putUser(user: User): void {
  heard += 1;
  heardAt.set(user.id, heard);
  const next = new Map(users.value);
  next.set(user.id, user);
  users.value = next;
}

/** The people's reducer: roles and access change live for everyone. */
export function applyUserEvent(event: LiveEvent): void {
  if (event.type === "user.updated") putUser(event.user);
}

export async function loadUsers(): Promise<void> {
  const since = heard;
  const list = await api.get("/api/users");
  const known = users.value;
  users.value = new Map(list.map((u) => [u.id, (heardAt.get(u.id) ?? 0) > since ? (known.get(u.id) ?? u) : u]));
}

export function userById(id: number | null | undefined): User | undefined {
  return id === null || id === undefined ? undefined : users.value.get(id);
}
