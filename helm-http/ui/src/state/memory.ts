// A channel's memory: its records (newest first, a page at a time) and
// recall. Filled by the list's pages and by memory.changed events.
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

/** How many records one read of the list brings. */
export const MEMORY_PAGE = 100;

/** Per channel: whether records older than those loaded remain, and where the next page starts. */
export type MemoryPaging = { more: boolean; after?: number; loading: boolean };
const pagings = new Map<number, Signal<MemoryPaging>>();

export function memoryPaging(channel: number): Signal<MemoryPaging> {
  let s = pagings.get(channel);
  if (!s) {
    s = signal<MemoryPaging>({ more: false, loading: false });
    pagings.set(channel, s);
  }
  return s;
}

/** Records read one by one (a recall hit beyond the pages loaded), by id; kept current by events. */
const singles = new Map<number, Signal<MemoryItem | undefined>>();

/** Channels whose list is being read, and whether a record changed meanwhile. */
const loading = new Map<number, { changed: boolean }>();

function put(item: MemoryItem): void {
  const load = loading.get(item.channel_id);
  if (load) load.changed = true;
  const single = singles.get(item.id);
  if (single) single.value = item;
  const list = lists.get(item.channel_id);
  if (!list?.value) return;
  const others = list.value.filter((m) => m.id !== item.id);
  list.value = [item, ...others].sort((a, b) => b.id - a.id);
}

/**
 * One page of records, superseded and forgotten ones included (the view
 * filters), in the server's order (pinned first, then newest): one more
 * than a page is asked for, to know exactly whether more remain.
 */
async function readPage(channelName: string, after?: number): Promise<{ items: MemoryItem[]; paging: MemoryPaging }> {
  const got = await api.get("/api/channels/{channel}/memory", { path: { channel: channelName }, query: { all: true, limit: MEMORY_PAGE + 1, before: after } });
  const items = got.slice(0, MEMORY_PAGE);
  return { items, paging: { more: got.length > MEMORY_PAGE, after: items.at(-1)?.id, loading: false } };
}

/**
 * Loads the first page of records. A record that changed while the list
 * was read may predate the server's answer or not (records carry no
 * version), so the list is read again then, at most twice more, rather
 * than undoing the change.
 */
export async function loadMemory(channel: number, channelName: string): Promise<void> {
  for (let reads = 1; ; reads++) {
    const load = { changed: false };
    loading.set(channel, load);
    try {
      const page = await readPage(channelName);
      if (!load.changed || reads === 3) {
        batch(() => {
          memoryOf(channel).value = page.items;
          memoryPaging(channel).value = page.paging;
        });
        return;
      }
    } finally {
      if (loading.get(channel) === load) loading.delete(channel);
    }
  }
}

/** Loads the next page of older records, after those loaded (a record already there stays as it is). */
export async function loadOlderMemory(channel: number, channelName: string): Promise<void> {
  const paging = memoryPaging(channel);
  if (!paging.value.more || paging.value.loading) return;
  paging.value = { ...paging.value, loading: true };
  try {
    const page = await readPage(channelName, paging.value.after);
    batch(() => {
      const list = memoryOf(channel);
      const known = new Set((list.value ?? []).map((m) => m.id));
      list.value = [...(list.value ?? []), ...page.items.filter((m) => !known.has(m.id))].sort((a, b) => b.id - a.id);
      paging.value = page.paging;
    });
  } catch (e) {
    paging.value = { ...paging.value, loading: false };
    throw e;
  }
}

/**
 * A record by id, for a view that names it (a recall hit): the loaded
 * list's copy, or one read by itself when it is older than the pages
 * loaded. Undefined until read.
 */
export function memoryRecord(channel: number, id: number): Signal<MemoryItem | undefined> {
  let s = singles.get(id);
  if (!s) {
    const listed = memoryOf(channel).peek()?.find((m) => m.id === id);
    s = signal<MemoryItem | undefined>(listed);
    singles.set(id, s);
    const single = s;
    if (!listed)
      api
        .get("/api/memory/{id}", { path: { id } })
        .then((item) => {
          if (!single.value) single.value = item;
        })
        .catch(() => singles.delete(id));
  }
  return s;
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
