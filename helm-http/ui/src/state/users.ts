// The people of the workspace, for names, avatars and @ completion.
import { computed, signal } from "@preact/signals";
import { api } from "../api/client";
import type { User } from "../api/types";

export const users = signal<ReadonlyMap<number, User>>(new Map());

export const userList = computed(() => [...users.value.values()].sort((a, b) => a.name.localeCompare(b.name)));

export async function loadUsers(): Promise<void> {
  const list = await api.get("/api/users");
  users.value = new Map(list.map((u) => [u.id, u]));
}

export function userById(id: number | null | undefined): User | undefined {
  return id === null || id === undefined ? undefined : users.value.get(id);
}
