// Looking at workspace files without asking for anything missing: a 404
// from fetch is logged by the browser as an error, so existence is decided
// by listing folders a listing showed, never by asking for the file.
import { api } from "../api/client";
import type { FileEntry } from "../api/types";

const ROOT = "/workspace";

/**
 * A folder's entries, or undefined when it does not exist. Walks down from
 * /workspace, listing only folders a listing showed.
 */
export async function listQuietly(channel: string, dir: string): Promise<FileEntry[] | undefined> {
  const parts = dir.slice(ROOT.length).split("/").filter(Boolean);
  let here = ROOT;
  let entries = await api.get("/api/channels/{channel}/files", { path: { channel }, query: { path: here } });
  for (const part of parts) {
    const next = entries.find((e) => e.name === part && e.kind === "dir");
    if (!next) return undefined;
    here = `${here}/${part}`;
    entries = await api.get("/api/channels/{channel}/files", { path: { channel }, query: { path: here } });
  }
  return entries;
}

/** `path`'s entry (its size and time), or undefined when it is not there. */
export async function entryQuietly(channel: string, path: string): Promise<FileEntry | undefined> {
  const cut = path.lastIndexOf("/");
  const entries = await listQuietly(channel, path.slice(0, cut));
  return entries?.find((e) => e.name === path.slice(cut + 1));
}

/**
 * How many rows a folder's listing shows at first and adds at each "Show
 * more": a folder of twenty thousand files would otherwise put every row in
 * the page at once (seconds of work, and a page that scrolls slowly).
 */
export const FILE_ROWS_PER_PAGE = 200;

/**
 * How many of a folder's `total` entries to show: the pages asked for, and
 * always far enough to include the open file (at `selected`, or -1), so a
 * link to a file deep in a big folder shows it, marked, in the list.
 */
export function rowsShown(total: number, asked: number, selected: number): number {
  const reach = selected >= 0 ? Math.ceil((selected + 1) / FILE_ROWS_PER_PAGE) * FILE_ROWS_PER_PAGE : 0;
  return Math.min(total, Math.max(asked, reach, FILE_ROWS_PER_PAGE));
}

/** What says a file changed on disk: its time and size. */
export interface Stamp {
  modified?: string | null;
  size: number;
}

export function stampOf(entry: Stamp): Stamp {
  return { modified: entry.modified ?? null, size: entry.size };
}

export function sameStamp(a: Stamp | undefined, b: Stamp | undefined): boolean {
  return !!a && !!b && (a.modified ?? null) === (b.modified ?? null) && a.size === b.size;
}

/**
 * Where an offset in `before` lands in `after` (a caret kept in place when
 * the text changes around it): before the change it stays, after it it
 * moves by the change's length, inside it it goes to the change's end.
 */
export function mapOffset(before: string, after: string, offset: number): number {
  let head = 0;
  while (head < before.length && head < after.length && before[head] === after[head]) head++;
  let tail = 0;
  while (tail < before.length - head && tail < after.length - head && before[before.length - 1 - tail] === after[after.length - 1 - tail]) tail++;
  if (offset <= head) return Math.min(offset, after.length);
  if (offset >= before.length - tail) return Math.max(0, Math.min(after.length, offset + after.length - before.length));
  return after.length - tail;
}
