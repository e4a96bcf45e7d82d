// Messages: one signal per message, so a streaming reply re-renders only the
// component showing it; per-thread logs (ids, oldest first) for the thread
// panel; and per-channel feeds (each thread's root and the announcements)
// for the chat. Filled by pages from the API and by message.* events.
import { batch, signal, type Signal } from "@preact/signals";
import { api } from "../api/client";
import type { LiveEvent } from "../api/events";
import type { Message } from "../api/types";
import { repliesShown, shownInThread } from "../lib/failure";
import { putThread, threadSignal } from "./threads";

const byId = new Map<number, Signal<Message>>();

export function messageSignal(id: number): Signal<Message> | undefined {
  return byId.get(id);
}

/** Stores a message (newer data wins; a final message is never made streaming again). */
export function putMessage(message: Message): Signal<Message> {
  const existing = byId.get(message.id);
  if (!existing) {
    const created = signal(message);
    byId.set(message.id, created);
    return created;
  }
  const old = existing.value;
  const settled = old.status !== "streaming" && old.status !== "pending";
  if (settled && (message.status === "streaming" || message.status === "pending")) return existing;
  // A page read while the reply streamed can hold less of it than the
  // deltas brought meanwhile: the text shown does not go back.
  const behind = old.status === "streaming" && message.status === "streaming" && old.content.length > message.content.length && old.content.startsWith(message.content);
  if (behind) return existing;
  existing.value = message;
  return existing;
}

// Thread logs -----------------------------------------------------------

function isAscending(ids: number[]): boolean {
  for (let i = 1; i < ids.length; i++) if (ids[i]! <= ids[i - 1]!) return false;
  return true;
}

export interface ThreadLog {
  /** Message ids, oldest first. */
  ids: number[];
  /** Older messages exist that are not loaded. */
  olderCursor?: number;
  loaded: boolean;
}

const logs = new Map<number, Signal<ThreadLog>>();

export function threadLog(thread: number): Signal<ThreadLog> {
  let log = logs.get(thread);
  if (!log) {
    log = signal<ThreadLog>({ ids: [], loaded: false });
    logs.set(thread, log);
  }
  return log;
}

function mergeIds(a: number[], b: number[]): number[] {
  // The common cases, without a set or a sort over a long thread: an older
  // page goes before everything, a new message after everything.
  if (a.length > 0 && b.length > 0 && isAscending(a) && isAscending(b)) {
    if (b[b.length - 1]! < a[0]!) return b.concat(a);
    if (b[0]! > a[a.length - 1]!) return a.concat(b);
  }
  const set = new Set(a);
  const merged = a.slice();
  for (const id of b) if (!set.has(id)) merged.push(id);
  return merged.sort((x, y) => x - y);
}

/** Per thread whose first page is being read: the messages heard meanwhile, which the page may predate. */
const heardWhileLoading = new Map<number, number[]>();

/** Loads a thread's newest page (once). */
export async function loadThreadMessages(thread: number, limit = 100): Promise<void> {
  const log = threadLog(thread);
  if (log.value.loaded) return;
  const heard: number[] = [];
  heardWhileLoading.set(thread, heard);
  let page;
  try {
    page = await api.get("/api/threads/{id}/messages", { path: { id: thread }, query: { newest: true, limit } });
  } finally {
    if (heardWhileLoading.get(thread) === heard) heardWhileLoading.delete(thread);
  }
  batch(() => {
    page.items.forEach(putMessage);
    const ids = mergeIds(mergeIds(page.items.map((m) => m.id), log.value.ids), heard);
    log.value = { ids, olderCursor: page.next_before ?? undefined, loaded: true };
    countWholeThread(thread);
  });
}

/**
 * Once every message of a thread is here, its reply count is exactly what
 * the thread shows (the feed's count includes Helm's hidden failure notes).
 */
export function countWholeThread(thread: number): void {
  const log = threadLog(thread).value;
  if (!log.loaded || log.olderCursor !== undefined || log.ids.length === 0) return;
  // The thread's first message is its root.
  const root = threadSignal(thread)?.peek().root_message_id ?? log.ids[0];
  const p = threadProgress(thread);
  const replies = repliesShown(log.ids.map((id) => byId.get(id)?.peek()), root);
  if (p.peek().replies !== replies) p.value = { ...p.peek(), replies };
}

/**
 * Pages being fetched, so a list asking again meanwhile does not ask twice;
 * the second asker waits for the same answer (a link to an old message
 * pages back while the list's own scrolling may be asking too).
 */
const inFlight = new Map<string, Promise<void>>();

function once(key: string, work: () => Promise<void>): Promise<void> {
  const asked = inFlight.get(key);
  if (asked) return asked;
  const done = work().finally(() => inFlight.delete(key));
  inFlight.set(key, done);
  return done;
}

/** Loads the page before the oldest one shown. */
export async function loadOlderMessages(thread: number, limit = 100): Promise<void> {
  const log = threadLog(thread);
  const cursor = log.value.olderCursor;
  if (cursor === undefined) return;
  await once(`t${thread}:${cursor}`, () => loadOlderPage(thread, cursor, limit));
}

async function loadOlderPage(thread: number, cursor: number, limit: number): Promise<void> {
  const log = threadLog(thread);
  const page = await api.get("/api/threads/{id}/messages", { path: { id: thread }, query: { before: cursor, limit } });
  batch(() => {
    page.items.forEach(putMessage);
    log.value = { ...log.value, ids: mergeIds(page.items.map((m) => m.id), log.value.ids), olderCursor: page.next_before ?? undefined };
    countWholeThread(thread);
  });
}

// Feeds -----------------------------------------------------------------

export interface FeedEntry {
  /** The root message (or announcement). */
  messageId: number;
  /** Its thread, if it opened one. */
  threadId?: number;
}

export interface ThreadProgress {
  replies: number;
  latestReplyId?: number;
}

export interface Feed {
  entries: FeedEntry[];
  olderCursor?: number;
  loaded: boolean;
}

const feeds = new Map<number, Signal<Feed>>();
const progress = new Map<number, Signal<ThreadProgress>>();

export function feedOf(channel: number): Signal<Feed> {
  let feed = feeds.get(channel);
  if (!feed) {
    feed = signal<Feed>({ entries: [], loaded: false });
    feeds.set(channel, feed);
  }
  return feed;
}

export function threadProgress(thread: number): Signal<ThreadProgress> {
  let p = progress.get(thread);
  if (!p) {
    p = signal<ThreadProgress>({ replies: 0 });
    progress.set(thread, p);
  }
  return p;
}

function addFeedEntries(channel: number, entries: FeedEntry[], olderCursor?: number | null, replaceCursor = false): void {
  const feed = feedOf(channel);
  const known = new Set(feed.value.entries.map((e) => e.messageId));
  const merged = feed.value.entries.slice();
  for (const entry of entries) if (!known.has(entry.messageId)) merged.push(entry);
  merged.sort((a, b) => a.messageId - b.messageId);
  feed.value = {
    entries: merged,
    // Only a page loads a feed: one filled by events alone still needs its
    // history read (an event heard before the first page, or after it failed).
    loaded: replaceCursor || feed.value.loaded,
    olderCursor: replaceCursor ? (olderCursor ?? undefined) : feed.value.olderCursor,
  };
}

/**
 * While feed pages are read: each thread's shown replies heard meanwhile,
 * which a page may predate. Its count and newest reply must not undo them.
 */
let feedReads = 0;
const heardReplies = new Map<number, number[]>();

function hearReply(thread: number, id: number): void {
  if (feedReads === 0) return;
  const ids = heardReplies.get(thread);
  if (ids) ids.push(id);
  else heardReplies.set(thread, [id]);
}

async function loadFeedPage(channel: number, channelName: string, before?: number, limit = 50): Promise<void> {
  feedReads += 1;
  let page;
  try {
    page = await api.get("/api/channels/{channel}/feed", { path: { channel: channelName }, query: { before, limit } });
  } finally {
    feedReads -= 1;
  }
  const heard = new Map(heardReplies);
  if (feedReads === 0) heardReplies.clear();
  batch(() => {
    const entries: FeedEntry[] = [];
    for (const item of page.items) {
      putMessage(item.message);
      if (item.thread) putThread(item.thread);
      if (item.latest_reply) putMessage(item.latest_reply);
      if (item.thread) {
        // Replies newer than the page's newest came by event after it was read.
        const latest = item.latest_reply?.id ?? 0;
        const since = (heard.get(item.thread.id) ?? []).filter((id) => id > latest).length;
        const newest = Math.max(latest, threadProgress(item.thread.id).peek().latestReplyId ?? 0);
        threadProgress(item.thread.id).value = { replies: item.replies + since, latestReplyId: newest || undefined };
        countWholeThread(item.thread.id);
      }
      entries.push({ messageId: item.message.id, threadId: item.thread?.id });
    }
    addFeedEntries(channel, entries, page.next_before, true);
  });
}

/** Loads a channel's newest feed page (once). */
export async function loadFeed(channel: number, channelName: string): Promise<void> {
  if (feedOf(channel).value.loaded) return;
  await loadFeedPage(channel, channelName);
}

export async function loadOlderFeed(channel: number, channelName: string): Promise<void> {
  const cursor = feedOf(channel).value.olderCursor;
  if (cursor === undefined) return;
  await once(`f${channel}:${cursor}`, () => loadFeedPage(channel, channelName, cursor));
}

/** The newest message id this client knows in a channel (for read markers). */
export function newestKnown(channel: number): number | undefined {
  let newest: number | undefined;
  for (const entry of feedOf(channel).value.entries) {
    const latest = entry.threadId === undefined ? undefined : threadProgress(entry.threadId).value.latestReplyId;
    const candidate = Math.max(entry.messageId, latest ?? 0);
    if (newest === undefined || candidate > newest) newest = candidate;
  }
  return newest;
}

/**
 * Where what is unread starts in a loaded feed: the first entry (a thread's
 * first message, or an announcement) posted after the read marker `after`
 * by someone other than `me`, or undefined when none of the loaded entries
 * is (or there is no marker: a channel never read has no "since").
 */
export function unreadStart(entries: readonly FeedEntry[], after: number | undefined, me: number | undefined): number | undefined {
  if (after === undefined) return undefined;
  for (const entry of entries) {
    if (entry.messageId <= after) continue;
    const author = byId.get(entry.messageId)?.peek().author;
    if (author?.kind === "human" && author.user_id === me) continue;
    return entry.messageId;
  }
  return undefined;
}

/**
 * The newest message of a channel, of any thread (the server's read marker
 * takes a message id; the feed's pages may hold neither the newest threads
 * nor an old thread with new replies).
 */
export async function channelNewest(channel: number): Promise<number | undefined> {
  const page = await api.get("/api/channels/{channel}/messages", { path: { channel: String(channel) }, query: { newest: true, limit: 1 } });
  return page.items.at(-1)?.id;
}

// The reducer -------------------------------------------------------------

function onCreated(message: Message): void {
  putMessage(message);
  const channel = message.channel_id;
  const thread = message.thread_id ?? undefined;
  if (thread === undefined) {
    if (feeds.has(channel)) addFeedEntries(channel, [{ messageId: message.id }]);
    return;
  }
  const root = threadSignal(thread)?.value.root_message_id;
  if (root === message.id) {
    if (feeds.has(channel)) addFeedEntries(channel, [{ messageId: message.id, threadId: thread }]);
  } else {
    // Helm's failure note is not counted (the chat does not show it), but
    // it is the newest word on the thread: the feed says it, in words.
    const p = threadProgress(thread);
    if (shownInThread(message)) hearReply(thread, message.id);
    p.value = { replies: p.value.replies + (shownInThread(message) ? 1 : 0), latestReplyId: Math.max(message.id, p.value.latestReplyId ?? 0) };
  }
  const log = logs.get(thread);
  if (log?.value.loaded) log.value = { ...log.value, ids: mergeIds(log.value.ids, [message.id]) };
  else heardWhileLoading.get(thread)?.push(message.id);
}

/** Each stored message's text length in code points, counted once and then kept up as deltas add to it. */
const lengths = new WeakMap<Message, number>();

/** UTF-16 units of the code point starting at `i` of `s`. */
function unitsAt(s: string, i: number): number {
  const high = s.charCodeAt(i);
  return high >= 0xd800 && high <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00 ? 2 : 1;
}

/** The length of `s` in code points, the unit of a delta's `offset` (not `.length`'s UTF-16 units). */
function codePoints(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i += unitsAt(s, i)) n++;
  return n;
}

/** What follows the first `count` code points of `s`. */
function afterCodePoints(s: string, count: number): string {
  let i = 0;
  for (; count > 0 && i < s.length; count--) i += unitsAt(s, i);
  return s.slice(i);
}

function heldLength(message: Message): number {
  let n = lengths.get(message);
  if (n === undefined) {
    n = codePoints(message.content);
    lengths.set(message, n);
  }
  return n;
}

/**
 * Per streaming reply whose deltas skipped past its text (some were
 * missed): the chunks heard since, held until a fresh read of the reply
 * fills what was missed.
 */
const gaps = new Map<number, { text: string; offset: number }[]>();

/**
 * Places a chunk at its `offset`. A page read while the reply streamed can
 * already hold text whose deltas come after it: a chunk wholly inside what
 * is held is skipped, one reaching past it adds only its new part. One
 * beyond it (deltas missed) starts a read of the reply; the chunks heard
 * meanwhile are placed once its answer is in.
 */
function onDelta(messageId: number, text: string, offset: number): void {
  const message = byId.get(messageId);
  if (!message) return; // Not shown anywhere; a page will bring its text.
  const waiting = gaps.get(messageId);
  if (waiting) {
    waiting.push({ text, offset });
    return;
  }
  const current = message.value;
  const thread = current.thread_id;
  if (offset > heldLength(current) && thread !== null && thread !== undefined && streams(current)) {
    gaps.set(messageId, [{ text, offset }]);
    void refill(message, thread);
    return;
  }
  place(message, text, offset);
}

function streams(message: Message): boolean {
  return message.status === "streaming" || message.status === "pending";
}

function place(message: Signal<Message>, text: string, offset: number): void {
  const current = message.value;
  if (!streams(current)) return;
  const held = heldLength(current);
  const length = codePoints(text);
  if (offset + length <= held) return;
  // Past the end only when the read that should have filled a gap failed:
  // the text is added where it ends, and `message.completed` brings the whole.
  const added = offset < held ? afterCodePoints(text, held - offset) : text;
  const next: Message = { ...current, status: "streaming", content: current.content + added };
  lengths.set(next, offset < held ? offset + length : held + length);
  message.value = next;
}

/**
 * Reads a reply again after deltas were missed. The server appended every
 * chunk heard before it sent it, so the reply as read holds at least up to
 * the end of each chunk heard so far; those are then placed on it (skipped
 * where it holds them). A reply completed meanwhile keeps its final text.
 */
async function refill(message: Signal<Message>, thread: number): Promise<void> {
  const id = message.peek().id;
  let fresh: Message | undefined;
  try {
    // The page just after the message before it starts with it (ids are positive).
    const query = id > 1 ? { after: id - 1, limit: 1 } : { limit: 1 };
    const page = await api.get("/api/threads/{id}/messages", { path: { id: thread }, query });
    fresh = page.items.find((m) => m.id === id);
  } catch {
    // Placed as they came, below; `message.completed` brings the whole text.
  }
  const waiting = gaps.get(id) ?? [];
  gaps.delete(id);
  batch(() => {
    if (fresh) putMessage(fresh);
    for (const chunk of waiting) place(message, chunk.text, chunk.offset);
  });
}

export function applyMessageEvent(event: LiveEvent): void {
  switch (event.type) {
    case "message.created":
      onCreated(event.message);
      break;
    case "message.delta":
      onDelta(event.message_id, event.text, event.offset);
      break;
    case "message.completed":
    case "mention.created":
      putMessage(event.message);
      break;
    case "thread.created": {
      // Its root message may have arrived first.
      putThread(event.thread);
      const root = event.thread.root_message_id;
      if (root !== null && root !== undefined && byId.has(root) && feeds.has(event.thread.channel_id)) {
        addFeedEntries(event.thread.channel_id, [{ messageId: root, threadId: event.thread.id }]);
      }
      break;
    }
    case "channel.deleted":
      feeds.delete(event.id);
      break;
    default:
      break;
  }
}
