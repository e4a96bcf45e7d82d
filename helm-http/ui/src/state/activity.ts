// The tool journal and the authority records shown beside the work: tool
// actions (by turn, for the cards in a reply; by channel, for Activity),
// approvals and calls for Skipper. Filled by pages and events.
import { batch, signal, type Signal } from "@preact/signals";
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

function addActivity(channel: number, entry: ActivityEntry): void {
  const list = byChannel.get(channel);
  if (!list?.value) return;
  if (entry.kind === "tool" && list.value.some((e) => e.kind === "tool" && e.id === entry.id)) return;
  list.value = [entry, ...list.value].slice(0, 500);
}

export function putAction(action: ToolAction): void {
  const existing = actions.get(action.id);
  if (existing) existing.value = action;
  else actions.set(action.id, signal(action));
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

/** Loads a channel's Activity view. */
export async function loadActivity(channel: number, channelName: string): Promise<void> {
  const list = await api.get("/api/channels/{channel}/activity", { path: { channel: channelName }, query: { limit: 200 } });
  batch(() => {
    list.forEach(putAction);
    const entries: ActivityEntry[] = list.map((a) => ({ kind: "tool", id: a.id, at: a.created }));
    for (const e of escalations.value.values()) if (e.channel_id === channel) entries.push({ kind: "escalation", escalation: e, at: e.created });
    for (const a of approvals.value.values()) if (a.channel_id === channel) entries.push({ kind: "approval", approval: a, at: a.created });
    entries.sort((a, b) => Date.parse(b.at) - Date.parse(a.at));
    activityOf(channel).value = entries;
  });
}

// Approvals and escalations are few: one map each is enough.
export const approvals = signal<ReadonlyMap<number, Approval>>(new Map());
export const escalations = signal<ReadonlyMap<number, Escalation>>(new Map());

export function putApproval(approval: Approval): void {
  const next = new Map(approvals.value);
  next.set(approval.id, approval);
  approvals.value = next;
}

export function putEscalation(escalation: Escalation): void {
  const next = new Map(escalations.value);
  next.set(escalation.id, escalation);
  escalations.value = next;
}

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

const LIFECYCLE: Partial<Record<LiveEvent["type"], string>> = {
  "channel.archived": "The channel was archived; its agent is paused.",
  "channel.restored": "The channel was restored; its agent is back.",
  "channel.updated": "The purpose or instructions changed.",
  "channel.member_added": "Someone joined the channel.",
  "channel.member_removed": "Someone left the channel.",
  "turn.failed": "A turn failed.",
  "turn.cancelled": "A turn was stopped.",
};

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
      const text = LIFECYCLE[event.type];
      if (text && event.channel_id !== undefined) {
        let detail = text;
        if (event.type === "channel.member_added") detail = `${event.name} joined the channel.`;
        if (event.type === "channel.member_removed") detail = `${event.name} left the channel.`;
        // In words, as the chat says it; the server's own reason behind Details.
        const raw = event.type === "turn.failed" ? event.turn.error ?? undefined : undefined;
        if (raw) detail = `A turn failed. ${plainFailure(raw)}`;
        // A turn that ended says what it used, when the provider reported it.
        const usage = event.type === "turn.failed" || event.type === "turn.cancelled" ? usageOfTurn(event.turn) : undefined;
        addActivity(event.channel_id, { kind: "lifecycle", text: detail, at: event.at, seq: event.seq, usage, raw });
      }
    }
  }
}
