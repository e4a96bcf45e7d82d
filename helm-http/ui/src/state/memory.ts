// A channel's memory: its records (newest first) and recall. Filled by the
// list and by memory.changed events.
import { batch, signal, type Signal } from "@preact/signals";
import { api } from "../api/client";
import type { LiveEvent } from "../api/events";
import type { MemoryItem, MemoryKind, RecallHit } from "../api/types";

const lists = new Map<number, Signal<MemoryItem[] | undefined>>();

export function memoryOf(channel: number): Signal<MemoryItem[] | undefined> {
  let s = lists.get(channel);
  if (!s) {
    s = signal<MemoryItem[] | undefined>(undefined);
    lists.set(channel, s);
  }
  return s;
}

/** Channels whose list is being read, and whether a record changed meanwhile. */
const loading = new Map<number, { changed: boolean }>();

function put(item: MemoryItem): void {
  const load = loading.get(item.channel_id);
  if (load) load.changed = true;
  const list = lists.get(item.channel_id);
  if (!list?.value) return;
  const others = list.value.filter((m) => m.id !== item.id);
  list.value = [item, ...others].sort((a, b) => b.id - a.id);
}

/**
 * Loads every record, superseded and forgotten ones included (the view
 * filters). A record that changed while the list was read may predate the
 * server's answer or not (records carry no version), so the list is read
 * again then, at most twice more, rather than undoing the change.
 */
export async function loadMemory(channel: number, channelName: string): Promise<void> {
  for (let reads = 1; ; reads++) {
    const load = { changed: false };
    loading.set(channel, load);
    try {
      const items = await api.get("/api/channels/{channel}/memory", { path: { channel: channelName }, query: { all: true, limit: 500 } });
      if (!load.changed || reads === 3) {
        memoryOf(channel).value = items;
        return;
      }
    } finally {
      if (loading.get(channel) === load) loading.delete(channel);
    }
  }
}

/** Adds a record by hand (of `thread`, when given). */
export async function addMemory(channelName: string, kind: Exclude<MemoryKind, "summary">, content: string, thread?: number): Promise<MemoryItem> {
  const item = await api.post("/api/channels/{channel}/memory", { path: { channel: channelName }, body: { kind, content, thread_id: thread } });
  put(item);
  return item;
}

export async function editMemory(id: number, content: string): Promise<MemoryItem> {
  const item = await api.patch("/api/memory/{id}", { path: { id }, body: { content } });
  put(item);
  return item;
}

export async function forgetMemory(id: number): Promise<void> {
  put(await api.post("/api/memory/{id}/forget", { path: { id } }));
}

export async function restoreMemory(id: number): Promise<void> {
  put(await api.post("/api/memory/{id}/restore", { path: { id } }));
}

export async function pinMemory(id: number, pinned: boolean): Promise<void> {
  const item = pinned ? await api.post("/api/memory/{id}/pin", { path: { id } }) : await api.post("/api/memory/{id}/unpin", { path: { id } });
  put(item);
}

export async function recall(channelName: string, q: string): Promise<RecallHit[]> {
  return api.get("/api/channels/{channel}/recall", { path: { channel: channelName }, query: { q, limit: 20 } });
}

export function applyMemoryEvent(event: LiveEvent): void {
  if (event.type === "memory.changed") batch(() => put(event.item));
}
