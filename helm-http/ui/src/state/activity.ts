// The tool journal and the authority records shown beside the work: tool
// actions (by turn, for the cards in a reply; by channel, for Activity),
// approvals and calls for Skipper. Filled by pages and events.
import { batch, computed, signal, type Signal } from "@preact/signals";
import { api } from "../api/client";
import type { LiveEvent } from "../api/events";
import type { Approval, Escalation, ToolAction } from "../api/types";
import { usageOfTurn, type TurnUsage } from "./threads";
import { plainFailure } from "../lib/failure";

const actions = new Map<number, Signal<ToolAction>>();
const byTurn = new Map<number, Signal<number[]>>();
/** Per channel: the Activity view's entries, newest first (once loaded). */
const byChannel = new Map<number, Signal<ActivityEntry[] | undefined>>();

export type ActivityEntry =
  | { kind: "tool"; id: number; at: string }
  | { kind: "escalation"; escalation: Escalation; at: string }
  | { kind: "approval"; approval: Approval; at: string }
  | { kind: "lifecycle"; text: string; at: string; seq: number; usage?: TurnUsage; raw?: string };

export function actionSignal(id: number): Signal<ToolAction> | undefined {
  return actions.get(id);
}

export function actionsOfTurn(turn: number): Signal<number[]> {
  let s = byTurn.get(turn);
  if (!s) {
    s = signal<number[]>([]);
    byTurn.set(turn, s);
  }
  return s;
}

export function activityOf(channel: number): Signal<ActivityEntry[] | undefined> {
  let s = byChannel.get(channel);
  if (!s) {
    s = signal<ActivityEntry[] | undefined>(undefined);
    byChannel.set(channel, s);
  }
  return s;
}

/** Per channel: entries heard live before its Activity was loaded, for the load to keep. */
const early = new Map<number, ActivityEntry[]>();

/** An entry's identity: one row per tool action, lifecycle event, and state of a call or an approval. */
export function activityKey(e: ActivityEntry): string {
  switch (e.kind) {
    case "tool":
      return `t${e.id}`;
    case "escalation":
      return `e${e.escalation.id}-${e.escalation.status}`;
    case "approval":
      return `a${e.approval.id}-${e.approval.status}`;
    default:
      return `l${e.seq}`;
  }
}

function addActivity(channel: number, entry: ActivityEntry): void {
  const list = byChannel.get(channel);
  if (!list?.value) {
    // A load in flight read the server before this happened; it keeps it.
    const heard = early.get(channel) ?? [];
    early.set(channel, [entry, ...heard].slice(0, 100));
    return;
  }
  const key = activityKey(entry);
  if (list.value.some((e) => activityKey(e) === key)) return;
  // Not cut to a size: what was loaded, older pages too, stays until left.
  list.value = [entry, ...list.value];
}

export function putAction(action: ToolAction): void {
  const existing = actions.get(action.id);
  // A finished action never goes back to running: a page loaded before the
  // socket said it finished can arrive after (as putTurn guards turns).
  if (existing && !(existing.value.status !== "running" && action.status === "running")) existing.value = action;
  else if (!existing) actions.set(action.id, signal(action));
  if (action.turn_id !== null && action.turn_id !== undefined) {
    const list = actionsOfTurn(action.turn_id);
    if (!list.value.includes(action.id)) list.value = [...list.value, action.id].sort((a, b) => a - b);
  }
  if (!existing) addActivity(action.channel_id, { kind: "tool", id: action.id, at: action.created });
}

/** Loads a thread's tool actions (for the cards in its replies). */
export async function loadThreadActions(channelName: string, thread: number): Promise<void> {
  const list = await api.get("/api/channels/{channel}/activity", { path: { channel: channelName }, query: { thread, limit: 500 } });
  batch(() => list.forEach(putAction));
}

/** How many tool actions, and lifecycle events, one read of Activity brings. */
export const ACTIVITY_PAGE = 200;

/**
 * Per channel: how far back Activity's two server lists are loaded. While
 * either has older items left, nothing older than its oldest loaded item
 * is shown (it would sit as if adjacent to what is loaded, hiding what
 * lies between).
 */
export type ActivityPaging = {
  /** Older tool actions remain; the next page is before `actionId`. */
  actionsMore: boolean;
  actionId?: number;
  /** When the oldest loaded tool action happened. */
  actionsFrom?: string;
  /** Older lifecycle events remain; the next page is before `seq`. */
  storyMore: boolean;
  seq?: number;
  storyFrom?: string;
  loading: boolean;
};
const pagings = new Map<number, Signal<ActivityPaging>>();

export function activityPaging(channel: number): Signal<ActivityPaging> {
  let s = pagings.get(channel);
  if (!s) {
    s = signal<ActivityPaging>({ actionsMore: false, storyMore: false, loading: false });
    pagings.set(channel, s);
  }
  return s;
}

/** Whether older activity remains to be loaded. */
export function moreActivity(p: ActivityPaging): boolean {
  return p.actionsMore || p.storyMore;
}

/**
 * The entries to show: all of them once everything is loaded; otherwise
 * none older than the oldest loaded item of a list with more left (its
 * older items, not loaded, would belong between).
 */
export function shownActivity(entries: ActivityEntry[], p: ActivityPaging): ActivityEntry[] {
  const edges = [p.actionsMore ? p.actionsFrom : undefined, p.storyMore ? p.storyFrom : undefined].filter((at): at is string => at !== undefined).map(Date.parse);
  if (edges.length === 0) return entries;
  const from = Math.max(...edges);
  return entries.filter((e) => Date.parse(e.at) >= from);
}

type Pages = { actions?: ToolAction[]; story?: LiveEvent[]; paging: Omit<ActivityPaging, "loading"> };

/**
 * Reads a page of either list (one more than a page, to know exactly
 * whether more remain): the actions before `actionId`, the lifecycle
 * before `seq`, or the newest of each when none is given. A list with
 * nothing left is not read.
 */
async function readPages(channelName: string, from: ActivityPaging | undefined): Promise<Pages> {
  const path = { channel: channelName };
  const limit = ACTIVITY_PAGE + 1;
  const [got, told] = await Promise.all([
    !from || from.actionsMore ? api.get("/api/channels/{channel}/activity", { path, query: { limit, before: from?.actionId } }) : undefined,
    !from || from.storyMore ? api.get("/api/channels/{channel}/lifecycle", { path, query: { limit, before: from?.seq } }) : undefined,
  ]);
  const paging: Omit<ActivityPaging, "loading"> = { actionsMore: false, storyMore: false, ...from };
  // Actions come newest last, lifecycle events newest first.
  const actions = got && (got.length > ACTIVITY_PAGE ? got.slice(1) : got);
  if (got) Object.assign(paging, { actionsMore: got.length > ACTIVITY_PAGE, actionId: actions?.[0]?.id ?? from?.actionId, actionsFrom: actions?.[0]?.created ?? from?.actionsFrom });
  const story = told && told.slice(0, ACTIVITY_PAGE);
  if (told) Object.assign(paging, { storyMore: told.length > ACTIVITY_PAGE, seq: story?.at(-1)?.seq ?? from?.seq, storyFrom: story?.at(-1)?.at ?? from?.storyFrom });
  return { actions, story: story as LiveEvent[] | undefined, paging };
}

function entriesOf(pages: Pages): ActivityEntry[] {
  const entries: ActivityEntry[] = (pages.actions ?? []).map((a) => ({ kind: "tool", id: a.id, at: a.created }));
  for (const event of pages.story ?? []) {
    const line = lifecycleEntry(event);
    if (line) entries.push(line);
  }
  return entries;
}

/**
 * Loads a channel's Activity view: the newest page of its tool journal and
 * of its lifecycle (both kept by the server, so a page opened later says
 * what one that watched saw), with the approvals and calls for Skipper
 * already loaded.
 */
export async function loadActivity(channel: number, channelName: string): Promise<void> {
  const pages = await readPages(channelName, undefined);
  batch(() => {
    (pages.actions ?? []).forEach(putAction);
    const entries = entriesOf(pages);
    for (const e of escalations.value.values()) if (e.channel_id === channel) entries.push({ kind: "escalation", escalation: e, at: e.created });
    for (const a of approvals.value.values()) if (a.channel_id === channel) entries.push({ kind: "approval", approval: a, at: a.created });
    const loaded = new Set(entries.map(activityKey));
    for (const e of early.get(channel) ?? []) if (!loaded.has(activityKey(e))) entries.push(e);
    early.delete(channel);
    entries.sort((a, b) => Date.parse(b.at) - Date.parse(a.at));
    activityOf(channel).value = entries;
    activityPaging(channel).value = { ...pages.paging, loading: false };
  });
}

/** Loads the next older page of whichever lists have more, into what is loaded. */
export async function loadOlderActivity(channel: number, channelName: string): Promise<void> {
  const paging = activityPaging(channel);
  if (!moreActivity(paging.value) || paging.value.loading) return;
  paging.value = { ...paging.value, loading: true };
  try {
    const pages = await readPages(channelName, paging.value);
    batch(() => {
      (pages.actions ?? []).forEach(putAction);
      const list = activityOf(channel);
      const have = list.value ?? [];
      const known = new Set(have.map(activityKey));
      const entries = [...have, ...entriesOf(pages).filter((e) => !known.has(activityKey(e)))];
      entries.sort((a, b) => Date.parse(b.at) - Date.parse(a.at));
      list.value = entries;
      paging.value = { ...pages.paging, loading: false };
    });
  } catch (e) {
    paging.value = { ...paging.value, loading: false };
    throw e;
  }
}

// Approvals and escalations are few: one map each is enough.
export const approvals = signal<ReadonlyMap<number, Approval>>(new Map());
export const escalations = signal<ReadonlyMap<number, Escalation>>(new Map());

/**
 * A decision is final: a copy still pending (a list read before the
 * decision's event, answered after it) never takes a decided approval back.
 */
export function putApproval(approval: Approval): void {
  const known = approvals.value.get(approval.id);
  if (known && known.status !== "pending" && approval.status === "pending") return;
  const next = new Map(approvals.value);
  next.set(approval.id, approval);
  approvals.value = next;
}

/**
 * As for approvals: a call for Skipper that was settled never opens again
 * from a stale copy, nor does a question the Captain answered.
 */
export function putEscalation(escalation: Escalation): void {
  const known = escalations.value.get(escalation.id);
  if (known && known.status !== "open" && escalation.status === "open") return;
  if (known?.answered_by && !escalation.answered_by) return;
  const next = new Map(escalations.value);
  next.set(escalation.id, escalation);
  escalations.value = next;
}

/** Whether a call waits for the Captain: Skipper handed it to her and nobody answered it in its thread yet. */
export function waitsForCaptain(e: Escalation): boolean {
  return e.status === "handed_to_captain" && !e.answered_by;
}

/** The questions Skipper handed to the Captain that wait for an answer, newest first. */
export const questionsForCaptain = computed(() => [...escalations.value.values()].filter(waitsForCaptain).sort((a, b) => b.id - a.id));

export async function loadApprovals(all = true): Promise<void> {
  const list = await api.get("/api/approvals", { query: { all } });
  batch(() => list.forEach(putApproval));
}

export async function loadEscalations(): Promise<void> {
  const list = await api.get("/api/escalations", { query: { all: true } });
  batch(() => list.forEach(putEscalation));
}

export async function decideApproval(id: number, approve: boolean, note?: string): Promise<void> {
  const body = { note: note || undefined };
  const decided = approve
    ? await api.post("/api/approvals/{id}/approve", { path: { id }, body })
    : await api.post("/api/approvals/{id}/deny", { path: { id }, body });
  putApproval(decided);
}

/** A line of Activity for an event about the channel itself; undefined for any other event. */
export function lifecycleEntry(event: LiveEvent): ActivityEntry | undefined {
  const line = (text: string, extra: { usage?: TurnUsage; raw?: string } = {}): ActivityEntry => ({ kind: "lifecycle", text, at: event.at, seq: event.seq, ...extra });
  switch (event.type) {
    case "channel.created":
      return line("The channel was created.");
    case "channel.renamed":
      return line(`Renamed from #${event.previous_name} to #${event.channel.name}.`);
    case "channel.updated":
      return line("The purpose or instructions changed.");
    case "model.changed": {
      const choice = event.choice ? `${event.choice.model ?? "the default model"} of ${event.choice.provider}` : undefined;
      if (event.level === "session") return line(choice ? `A thread now uses ${choice}.` : "A thread's model now follows the channel's.");
      if (event.level === "channel") return line(choice ? `The channel now uses ${choice}.` : "The channel's model now follows the workspace's.");
      return undefined;
    }
    case "channel.member_added":
      return line(`${event.name} joined the channel.`);
    case "channel.member_removed":
      return line(`${event.name} left the channel.`);
    case "channel.archived":
      return line("The channel was archived; its agent is paused.");
    case "channel.restored":
      return line("The channel was restored; its agent is back.");
    case "history.imported":
      return line(`History was imported: ${event.report.threads} threads, ${event.report.messages} messages, ${event.report.memories} memory records.`);
    case "turn.failed": {
      // In words, as the chat says it; the server's own reason behind Details.
      const raw = event.turn.error ?? undefined;
      return line(raw ? `A turn failed. ${plainFailure(raw)}` : "A turn failed.", { usage: usageOfTurn(event.turn), raw });
    }
    case "turn.cancelled":
      // A turn that ended says what it used, when the provider reported it.
      return line("A turn was stopped.", { usage: usageOfTurn(event.turn) });
    default:
      return undefined;
  }
}

export function applyActivityEvent(event: LiveEvent): void {
  switch (event.type) {
    case "tool_action.started":
    case "tool_action.finished":
      putAction(event.action);
      break;
    case "approval.changed":
      putApproval(event.approval);
      addActivity(event.approval.channel_id, { kind: "approval", approval: event.approval, at: event.at });
      break;
    case "escalation.changed":
      putEscalation(event.escalation);
      addActivity(event.escalation.channel_id, { kind: "escalation", escalation: event.escalation, at: event.at });
      break;
    default: {
      const line = lifecycleEntry(event);
      if (line && event.channel_id !== undefined && event.channel_id !== null) addActivity(event.channel_id, line);
    }
  }
}
