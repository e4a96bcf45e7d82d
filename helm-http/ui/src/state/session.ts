// The session: is setup needed, who is signed in, and the live events
// feeding every area's reducer. `boot` decides the first screen; `enter`
// starts a signed-in session; signing out reloads the page so nothing of
// the session stays in memory.
import { batch, computed, effect, signal } from "@preact/signals";
import { ApiError, api, onUnauthenticated } from "../api/client";
import type { LiveEvent } from "../api/events";
import type { User } from "../api/types";
import { mentionNotice } from "../lib/mention";
import { createEventStream, type EventStream, type StreamState } from "../socket/events";
import { applyActivityEvent, loadApprovals, loadEscalations } from "./activity";
import { applyChannelEvent, channelById, channelByName, loadChannels } from "./channels";
import { applyMemberEvent } from "./members";
import { applyMemoryEvent } from "./memory";
import { applyMessageEvent } from "./messages";
import { channelPath, messagePath, navigate, route } from "./router";
import { panelThread, seesConversation } from "./seeing";
import { applyThreadEvent } from "./threads";
import { applyTerminalEvent } from "./terminals";
import { toast } from "./toasts";
import { applyUnreadEvent, loadUnread, markRead, unreadOnlyIn } from "./unread";
import { applyUserEvent, loadUsers, userById } from "./users";
import { applyWorkspaceEvent } from "./workspace";

export type Phase = "loading" | "setup" | "signed-out" | "ready" | "unreachable";

export const phase = signal<Phase>("loading");
export const me = signal<User | undefined>(undefined);
export const workspaceName = signal("Helm");
const stream = signal<EventStream | undefined>(undefined);
export const streamState = computed<StreamState>(() => stream.value?.state.value ?? "connecting");
/** Bumps each time the stream comes back after a drop (see `useRetryOnReconnect`). */
export const reconnects = computed(() => stream.value?.reconnects.value ?? 0);
/** Set when the session ended on its own (shown on the sign-in screen). */
export const signedOutReason = signal<string | undefined>(undefined);

export const isAdmin = computed(() => me.value?.role === "captain" || me.value?.role === "admin");

/**
 * Whether the person sees the conversation a message of `thread` in
 * `channel` belongs to: that channel's chat is shown (or Cowork's agent
 * panel on that thread). Its other views do not show it, so a mention
 * there still tells them, and the channel is not marked read.
 */
function looking(channel: number, thread?: number | null): boolean {
  const r = route.value;
  const inChannel = r.name === "channel" && channelByName(r.channel)?.channel.id === channel;
  return seesConversation(r, inChannel, thread, document.visibilityState === "visible", panelThread.value);
}

/** Every event, to every reducer. */
export function applyEvent(event: LiveEvent): void {
  let roleChanged = false;
  batch(() => {
    const user = me.value?.id;
    applyThreadEvent(event);
    applyMessageEvent(event);
    applyChannelEvent(event, user);
    applyActivityEvent(event);
    applyMemoryEvent(event);
    applyMemberEvent(event);
    applyUnreadEvent(event, user, looking);
    applyUserEvent(event);
    if (event.type === "workspace.updated") workspaceName.value = event.workspace.name;
    // One's own role changed: what the UI offers follows at once.
    if (event.type === "user.updated" && event.user.id === me.value?.id) {
      roleChanged = me.value?.role !== event.user.role;
      me.value = event.user;
    }
  });
  // And the channels one sees: a private one may be gone (or newly there).
  if (roleChanged) void loadChannels().catch(() => undefined);
  // Outside the batch: listeners only start timers.
  applyWorkspaceEvent(event, me.value?.id);
  applyTerminalEvent(event);
  // A message in the channel being looked at is read (on the server too, so
  // a reload does not count it); the chat also marks read as it shows them.
  if (event.type === "message.created" && looking(event.message.channel_id, event.message.thread_id)) {
    const { channel_id: channel, thread_id: thread } = event.message;
    // Cowork's panel shows one thread: the marker moves only when that passes over nothing unread elsewhere.
    const chat = route.value.name === "channel" && route.value.view === "chat";
    if (chat || (thread !== null && thread !== undefined && unreadOnlyIn(channel, thread))) markRead(channel, event.message.id);
  }
  if (event.type === "mention.created" && event.user_id === me.value?.id) notifyMention(event);
}

function notifyMention(event: Extract<LiveEvent, { type: "mention.created" }>): void {
  const message = event.message;
  const channel = channelById(message.channel_id)?.channel.name ?? "a channel";
  const who =
    message.author.kind === "human"
      ? (userById(message.author.user_id)?.display_name ?? message.author.name)
      : message.author.kind === "agent"
        ? `@${message.author.handle}`
        : "Helm";
  const text = mentionNotice(message, who, channel);
  // The thread, at the message that named them.
  const href = message.thread_id ? messagePath(channel, message.thread_id, message.id) : channelPath(channel);
  if (looking(message.channel_id, message.thread_id)) return;
  toast(text, "mention", href);
  if ("Notification" in window && Notification.permission === "granted" && document.visibilityState !== "visible") {
    const n = new Notification(text, { body: message.content.slice(0, 140), tag: `mention-${message.id}` });
    n.onclick = () => {
      window.focus();
      navigate(href);
    };
  }
}

/** Decides the first screen. */
export async function boot(): Promise<void> {
  try {
    const setup = await api.get("/api/setup");
    workspaceName.value = setup.workspace;
    if (setup.needed) {
      phase.value = "setup";
      if (route.value.name !== "setup") navigate("/setup", { replace: true });
      return;
    }
    const who = await api.get("/api/auth/session");
    if (!who.user) {
      phase.value = "signed-out";
      const r = route.value.name;
      if (r !== "login" && r !== "join") {
        const next = location.pathname + location.search;
        navigate(next === "/" ? "/login" : `/login?next=${encodeURIComponent(next)}`, { replace: true });
      }
      return;
    }
    const resume = await unfinishedFirstRun(who.user);
    if (resume) {
      // The Captain has not finished the first-run wizard: back to it.
      me.value = who.user;
      firstRunStep.value = resume;
      phase.value = "setup";
      return;
    }
    await enter(who.user);
  } catch (e) {
    if (e instanceof ApiError && e.status === 0) {
      phase.value = "unreachable";
      return;
    }
    throw e;
  }
}

/** This tab's step in the first-run wizard (a reload resumes it exactly). */
export const FIRST_RUN_KEY = "helm.firstRun";

/** The first-run wizard's steps after the Captain exists. */
export type FirstRunStep = "model" | "computer" | "name";

/** Where a Captain's unfinished first run resumes (see `unfinishedFirstRun`). */
export const firstRunStep = signal<FirstRunStep | undefined>(undefined);

/**
 * The step a Captain who has not finished the first-run wizard comes back
 * to, or undefined. Decided from what the server says, not from the tab
 * (closing it must not skip the rest): the wizard ends in #main, so a
 * Captain who has read no channel yet never got there; without a model
 * connected, the model step is next (where it can be skipped again).
 * This tab's own step, if it was in the wizard, wins: it may be further on.
 */
async function unfinishedFirstRun(user: User): Promise<FirstRunStep | undefined> {
  if (user.role !== "captain") return undefined;
  const here = sessionStorage.getItem(FIRST_RUN_KEY) as FirstRunStep | null;
  if (here) return here;
  const counts = await api.get("/api/unread");
  if (counts.some((c) => c.last_read != null)) return undefined;
  const providers = await api.get("/api/providers");
  return providers.length === 0 ? "model" : "computer";
}

/**
 * The Captain has entered the workspace: #main is marked read up to its
 * newest message, which is what says (to every tab and device) that the
 * first-run wizard is done. The chat marks it too, a moment after it shows.
 */
export async function markEntered(): Promise<void> {
  const page = await api.get("/api/channels/{channel}/feed", { path: { channel: "main" }, query: { limit: 1 } });
  const newest = Math.max(0, ...page.items.map((i) => Math.max(i.message.id, i.latest_reply?.id ?? 0)));
  if (newest > 0) await api.put("/api/channels/{channel}/read", { path: { channel: "main" }, body: { message_id: newest } });
}

/** Starts a signed-in session for `user`. */
export async function enter(user: User): Promise<void> {
  me.value = user;
  signedOutReason.value = undefined;
  const events = createEventStream({
    onEvent: applyEvent,
    onSignedOut: () => endSession("Your session ended. Sign in again to go on."),
  });
  stream.value = events;
  events.start();
  // The app shows once the stream is live too: an event sent the moment
  // the page looks ready (a mention of this person) must not fall between
  // the pages' reads and the socket's first handshake. A proxy that drops
  // WebSockets must not keep it hidden, though: at most STREAM_WAIT_MS.
  await Promise.all([loadChannels(), loadUsers(), loadUnread(), liveOrAfter(events, STREAM_WAIT_MS)]);
  phase.value = "ready";
  const r = route.value;
  if (r.name === "home" || r.name === "setup" || r.name === "login" || r.name === "join") {
    const next = new URLSearchParams(location.search).get("next");
    navigate(next && next.startsWith("/") && !next.startsWith("//") ? next : channelPath("main"), { replace: true });
  }
  // Less urgent: the authority records cards and the inbox show.
  void loadApprovals(true).catch(() => undefined);
  void loadEscalations().catch(() => undefined);
}

/** The longest the first screen waits for the event stream's handshake. */
const STREAM_WAIT_MS = 3000;

/** Resolves once `events` is live, or after `ms`, whichever comes first. */
function liveOrAfter(events: EventStream, ms: number): Promise<void> {
  return new Promise((resolve) => {
    let settled = false;
    let stop: (() => void) | undefined;
    const settle = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      stop?.();
      resolve();
    };
    const timer = setTimeout(settle, ms);
    stop = effect(() => {
      if (events.state.value === "live") settle();
    });
    if (settled) stop();
  });
}

/**
 * Ends the session here: back to a clean sign-in page. A session that ended
 * by itself (elsewhere, or expired) says so, and signing in again returns
 * to the page the person was on (`next`), where their drafts wait.
 */
function endSession(reason?: string): void {
  stream.value?.stop();
  location.assign(reason ? signInAgainPath(location.pathname + location.search) : "/login");
}

/** The sign-in page after a session ended while `here` (path and query) was open. */
export function signInAgainPath(here: string): string {
  const back = here.startsWith("/") && !here.startsWith("//") && !/^\/(login|join|setup)\b/.test(here) && here !== "/";
  return back ? `/login?ended=1&next=${encodeURIComponent(here)}` : "/login?ended=1";
}

export async function signIn(name: string, password: string): Promise<void> {
  await api.post("/api/auth/login", { body: { name, password } });
  const who = await api.get("/api/auth/me");
  await enter(who.user);
}

export async function signOut(): Promise<void> {
  try {
    await api.post("/api/auth/logout");
  } finally {
    endSession();
  }
}

/** The events stream, for the few views that need its cursor (tests, the banner). */
export function eventStream(): EventStream | undefined {
  return stream.value;
}

onUnauthenticated(() => {
  if (phase.value === "ready") endSession("Your session ended. Sign in again to go on.");
});

if (new URLSearchParams(location.search).get("ended") === "1") {
  signedOutReason.value = "Your session ended. Sign in again to go on.";
}
