// Threads (sessions) and the turns that work in them: one signal per
// thread; per-channel thread lists for the Threads view; and, per agent
// reply, the turn producing it (its state, and how many turns are ahead of
// it while it waits); per thread, the tokens its ended turns used. Filled by
// pages and by thread.* and turn.* events.
import { batch, computed, signal, type Signal } from "@preact/signals";
import { api, describeError } from "../api/client";
import { toast, toastWithAction } from "./toasts";
import type { LiveEvent } from "../api/events";
import type { Thread, Turn } from "../api/types";

const threads = new Map<number, Signal<Thread>>();
/** Thread ids per channel, for the Threads view (filled once loaded). */
const channelThreads = new Map<number, Signal<number[] | undefined>>();

/** Bumped when a thread is first known, so a view that looked for one too early hears it arrive. */
const arrivals = signal(0);

/**
 * A thread's signal, once it is known. A view that finds none yet is told
 * when threads arrive: a component that reads signals is not drawn again
 * with its parent, so it must hear the arrival itself.
 */
export function threadSignal(id: number): Signal<Thread> | undefined {
  const s = threads.get(id);
  if (!s) void arrivals.value;
  return s;
}

/** Per channel: threads heard while its first page was read, for that page to keep. */
const heardWhileLoading = new Map<number, Set<number>>();

export function putThread(thread: Thread): Signal<Thread> {
  heardWhileLoading.get(thread.channel_id)?.add(thread.id);
  let s = threads.get(thread.id);
  if (!s) {
    s = signal(thread);
    threads.set(thread.id, s);
    arrivals.value++;
  } else if (Date.parse(thread.updated_at) >= Date.parse(s.value.updated_at)) {
    // Every change of a thread, its status too, moves `updated_at`: an
    // older copy (a page read before a resolve or archive) is stale.
    s.value = thread;
  }
  const list = channelThreads.get(thread.channel_id);
  if (list?.value && !list.value.includes(thread.id)) list.value = [thread.id, ...list.value];
  return s;
}

export function channelThreadIds(channel: number): Signal<number[] | undefined> {
  let list = channelThreads.get(channel);
  if (!list) {
    list = signal<number[] | undefined>(undefined);
    channelThreads.set(channel, list);
  }
  return list;
}

/** A channel's threads, most recently active first. */
export function sortedThreads(channel: number) {
  const ids = channelThreadIds(channel);
  return computed(() =>
    (ids.value ?? [])
      .map((id) => threads.get(id)?.value)
      .filter((t): t is Thread => t !== undefined)
      .sort((a, b) => Date.parse(b.updated_at) - Date.parse(a.updated_at) || b.id - a.id),
  );
}

/** Threads asked for per page. */
export const THREAD_PAGE = 50;

/** How far one of a channel's thread lists (archived or not) has been read back. */
export interface ThreadPager {
  /** The first page has come. */
  loaded: boolean;
  /** No older threads are left. */
  done: boolean;
  loading: boolean;
  /** Where the next page starts: the last thread listed, as it was listed. */
  cursor?: { updated_at: string; id: number };
}

const pagers = new Map<string, Signal<ThreadPager>>();

/** How far a channel's unarchived (or archived) threads have been loaded. */
export function threadPager(channel: number, archived: boolean): Signal<ThreadPager> {
  const key = `${channel}:${archived}`;
  let s = pagers.get(key);
  if (!s) {
    s = signal<ThreadPager>({ loaded: false, done: false, loading: false });
    pagers.set(key, s);
  }
  return s;
}

/**
 * Loads a page of a channel's threads: the first (`more` false, which
 * starts the list anew) or the next older one. Threads that change later
 * arrive by `thread.*` events and sort to the head, so pages and events
 * together miss none.
 */
export async function loadThreadPage(channel: number, channelName: string, archived: boolean, more: boolean): Promise<void> {
  const pager = threadPager(channel, archived);
  if (more && (pager.value.loading || pager.value.done || !pager.value.loaded)) return;
  const cursor = more ? pager.value.cursor : undefined;
  const fresh = !more && !archived;
  // A thread started (or moved) while the first page is read may be missing
  // from the server's answer; it is kept rather than dropped by the reset.
  const heard = new Set<number>();
  if (fresh) heardWhileLoading.set(channel, heard);
  pager.value = { ...pager.value, loading: true };
  try {
    const list = await api.get("/api/channels/{channel}/threads", {
      path: { channel: channelName },
      query: {
        limit: THREAD_PAGE,
        archived,
        ...(cursor ? { before_updated_at: cursor.updated_at, before_id: cursor.id } : {}),
      },
    });
    batch(() => {
      const ids = channelThreadIds(channel);
      if (fresh) {
        // A fresh start: the other list's pages are read again when shown.
        ids.value = [...heard];
        threadPager(channel, true).value = { loaded: false, done: false, loading: false };
      }
      if (ids.value === undefined) ids.value = [];
      list.forEach(putThread);
      const known = new Set(ids.value);
      ids.value = [...ids.value, ...list.map((t) => t.id).filter((id) => !known.has(id))];
      const last = list[list.length - 1];
      pager.value = {
        loaded: true,
        done: list.length < THREAD_PAGE,
        loading: false,
        cursor: last ? { updated_at: last.updated_at, id: last.id } : cursor,
      };
    });
  } catch (e) {
    pager.value = { ...pager.value, loading: false };
    throw e;
  } finally {
    if (heardWhileLoading.get(channel) === heard) heardWhileLoading.delete(channel);
  }
}

/** A channel's first page of threads (all but archived ones), most recently active first. */
export function loadThreads(channel: number, channelName: string): Promise<void> {
  return loadThreadPage(channel, channelName, false, false);
}

/**
 * Threads of a channel whose title, summary or messages hold the words of
 * `q`, best first, each saying where it matched. Not added to the channel's
 * list: they may lie beyond the pages loaded.
 */
export async function searchThreads(channelName: string, q: string, archived: boolean): Promise<Thread[]> {
  const found = await api.get("/api/channels/{channel}/threads", { path: { channel: channelName }, query: { q, archived, limit: 50 } });
  for (const t of found) {
    const known = threads.get(t.id);
    if (known && Date.parse(t.updated_at) >= Date.parse(known.value.updated_at)) known.value = { ...t, matched: undefined };
  }
  return found;
}

/** Threads asked for by id, so each is asked for once. */
const asked = new Set<number>();
/** The most threads one request names (the server's limit). */
const IDS_PER_READ = 100;

/**
 * Makes sure these threads of a channel are known (a view that names
 * threads beyond the pages loaded, such as Activity): the unknown ones are
 * read together, each once.
 */
export function ensureThreads(channelName: string, ids: Iterable<number>): void {
  const wanted = [...new Set(ids)].filter((id) => !threads.has(id) && !asked.has(id));
  for (let i = 0; i < wanted.length; i += IDS_PER_READ) {
    const some = wanted.slice(i, i + IDS_PER_READ);
    some.forEach((id) => asked.add(id));
    api
      .get("/api/channels/{channel}/threads", { path: { channel: channelName }, query: { ids: some.join(",") } })
      .then((found) => batch(() => found.forEach((t) => putThread(t))))
      .catch(() => some.forEach((id) => asked.delete(id)));
  }
}

/** Loads one thread with its turns. */
export async function loadThread(id: number): Promise<Thread> {
  const detail = await api.get("/api/threads/{id}", { path: { id } });
  batch(() => {
    putThread(detail.thread);
    detail.turns.forEach((t) => putTurn(t));
  });
  return detail.thread;
}

export async function setThreadStatus(id: number, status: "open" | "resolved" | "archived"): Promise<void> {
  const thread = await api.put("/api/threads/{id}/status", { path: { id }, body: { status } });
  putThread(thread);
}

/**
 * Archives a thread, with an Undo that puts it back as it was (resolved
 * stays resolved; anything else reopens). Archiving loses nothing.
 */
export async function archiveThread(id: number): Promise<void> {
  const before = threads.get(id)?.value.status;
  await setThreadStatus(id, "archived");
  const back = before === "resolved" ? "resolved" : "open";
  toastWithAction("Thread archived. Find it under Archived.", {
    label: "Undo",
    run: () => void setThreadStatus(id, back).catch((e) => toast(describeError(e), "error")),
  });
}

/** Gives a thread a new title; everyone else hears it through `thread.updated`. */
export async function renameThread(id: number, title: string): Promise<void> {
  putThread(await api.patch("/api/threads/{id}", { path: { id }, body: { title } }));
}

export async function stopThread(id: number): Promise<void> {
  await api.post("/api/threads/{id}/stop", { path: { id } });
}

// Turns ---------------------------------------------------------------

export interface TurnView {
  turn: Turn;
  /** While queued: how many turns run before it. */
  ahead?: number;
}

const turnsByReply = new Map<number, Signal<TurnView | undefined>>();
/** Per thread: what each turn that reported usage used (by turn id). */
const usageByThread = new Map<number, Map<number, TurnUsage>>();
const threadTotals = new Map<number, Signal<UsageTotal | undefined>>();
/** Live turns per thread (queued or running), for the Stop button. */
const liveTurns = new Map<number, Signal<ReadonlySet<number>>>();
/** Per thread: the newest turn this client knows (the one Retry would run again). */
const latestTurns = new Map<number, Signal<number | undefined>>();

export function turnOfReply(messageId: number): Signal<TurnView | undefined> {
  let s = turnsByReply.get(messageId);
  if (!s) {
    s = signal<TurnView | undefined>(undefined);
    turnsByReply.set(messageId, s);
  }
  return s;
}

export function liveTurnsOf(thread: number): Signal<ReadonlySet<number>> {
  let s = liveTurns.get(thread);
  if (!s) {
    s = signal<ReadonlySet<number>>(new Set());
    liveTurns.set(thread, s);
  }
  return s;
}

/**
 * The id of the newest turn of `thread` this client knows: Retry runs the
 * thread's last turn again, so only that turn's failed reply can offer it.
 */
export function latestTurnOf(thread: number): Signal<number | undefined> {
  let s = latestTurns.get(thread);
  if (!s) {
    s = signal<number | undefined>(undefined);
    latestTurns.set(thread, s);
  }
  return s;
}

const LIVE_STATES = new Set(["queued", "running"]);

/** What one turn used: its tokens, summed over its model calls, and how many calls. */
export interface TurnUsage {
  input_tokens: number;
  output_tokens: number;
  /** Model calls made. */
  calls: number;
}

/** A thread's tokens over the turns that reported usage. */
export interface UsageTotal extends TurnUsage {
  /** How many turns it sums. */
  turns: number;
}

/**
 * What a turn used, once it has ended and only if the provider reported it
 * (the server leaves `usage` out while it runs and when none was reported:
 * never shown as 0 then).
 */
export function usageOfTurn(turn: Turn | undefined): TurnUsage | undefined {
  const usage = turn?.usage;
  if (!turn || !usage || LIVE_STATES.has(turn.state)) return undefined;
  return { input_tokens: usage.input_tokens, output_tokens: usage.output_tokens, calls: turn.steps };
}

/** A thread's tokens over the turns this client knows that reported usage; undefined when none did. */
export function threadUsage(thread: number): Signal<UsageTotal | undefined> {
  let s = threadTotals.get(thread);
  if (!s) {
    s = signal<UsageTotal | undefined>(undefined);
    threadTotals.set(thread, s);
  }
  return s;
}

function countUsage(turn: Turn): void {
  const usage = usageOfTurn(turn);
  let known = usageByThread.get(turn.thread_id);
  const before = known?.get(turn.id);
  if (!usage) {
    if (!before) return;
    known!.delete(turn.id);
  } else {
    if (before && before.input_tokens === usage.input_tokens && before.output_tokens === usage.output_tokens && before.calls === usage.calls) return;
    if (!known) {
      known = new Map();
      usageByThread.set(turn.thread_id, known);
    }
    known.set(turn.id, usage);
  }
  let total: UsageTotal | undefined;
  for (const u of known!.values()) {
    total ??= { input_tokens: 0, output_tokens: 0, calls: 0, turns: 0 };
    total.input_tokens += u.input_tokens;
    total.output_tokens += u.output_tokens;
    total.calls += u.calls;
    total.turns += 1;
  }
  threadUsage(turn.thread_id).value = total;
}

/** How far a turn has come: queued, running, then ended (any end state is final). */
function progressOf(state: Turn["state"]): number {
  return state === "queued" ? 0 : state === "running" ? 1 : 2;
}

export function putTurn(turn: Turn, ahead?: number): void {
  const view = turnOfReply(turn.reply_message_id);
  const latest = latestTurnOf(turn.thread_id);
  if (latest.value === undefined || latest.value < turn.id) latest.value = turn.id;
  // An older copy never takes a turn back: the answer to the post that
  // queued it can arrive after the socket said it ended (a quick answer).
  const known = view.value?.turn;
  if (known?.id === turn.id && progressOf(turn.state) < progressOf(known.state)) return;
  view.value = { turn, ahead: turn.state === "queued" ? (ahead ?? view.value?.ahead) : undefined };
  const live = liveTurnsOf(turn.thread_id);
  const next = new Set(live.value);
  if (LIVE_STATES.has(turn.state)) next.add(turn.id);
  else next.delete(turn.id);
  if (next.size !== live.value.size || [...next].some((id) => !live.value.has(id))) live.value = next;
  countUsage(turn);
}

export function applyThreadEvent(event: LiveEvent): void {
  switch (event.type) {
    case "thread.created":
    case "thread.updated":
      putThread(event.thread);
      break;
    case "turn.queued":
      putTurn(event.turn, event.ahead);
      break;
    case "turn.started":
    case "turn.completed":
    case "turn.failed":
    case "turn.cancelled":
      putTurn(event.turn);
      // Turns behind this one in its thread moved up.
      if (event.type !== "turn.started") {
        for (const s of turnsByReply.values()) {
          const v = s.value;
          if (v?.turn.thread_id === event.turn.thread_id && v.turn.state === "queued" && v.ahead) {
            s.value = { ...v, ahead: Math.max(0, v.ahead - 1) };
          }
        }
      }
      break;
    default:
      break;
  }
}

/** Every thread this client knows, for the command palette. */
export function knownThreads(): Thread[] {
  return [...threads.values()].map((s) => s.value);
}
