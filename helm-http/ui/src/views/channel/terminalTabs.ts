// The Terminal view's tabs as a list that follows the server's while
// keeping what the person was looking at: a shell that ends (closed by
// someone else, or exited) stays as a tab with its scrollback until its
// tab is closed, and tabs keep their names, so nobody is moved into
// another person's shell by a renumbering. No browser needed: unit-tested.
import type { Terminal as TerminalInfo } from "../../api/types";

/** How a shell ended, as far as this page can tell. */
export type Ending =
  /** Closed from this page. */
  | { kind: "here" }
  /** Killed without this page asking: someone else closed it, or its computer stopped. */
  | { kind: "elsewhere" }
  /** Closed by this person (the server names who closed it). */
  | { kind: "closedBy"; name: string }
  /** Its shell exited by itself (`exit`), with this code. */
  | { kind: "exited"; code: number };

/** A tab: a terminal the server listed, and how it ended once it has. */
export interface ShellTab {
  info: TerminalInfo;
  ended?: Ending;
}

/** Where a terminal id's node number starts (see helm-core's `terminal/mod.rs`). */
const NODE_SPAN = 2 ** 32;

/**
 * A shell's name, the same for everyone and for its whole life: its number
 * among its channel's terminals, as the server gives it (from a server
 * without numbers, the id without its node part), not its place in the
 * list, which changes as others open and close shells.
 */
export function shellLabel(info: { id: number; number?: number | null }): string {
  return `Shell ${info.number ?? info.id % NODE_SPAN}`;
}

/**
 * The tabs after a fresh read of the running terminals: new ones are added
 * at the end (in the order they were opened), listed ones are updated, and
 * one that is no longer listed is kept, ended (`closedHere` says which
 * this page closed). Tabs already ended stay as they are, and so do tabs
 * added after the read was asked for (`asked`: the ids known then), which
 * an answer sent before they were opened cannot list.
 */
export function mergeTabs(tabs: ShellTab[] | undefined, running: TerminalInfo[], closedHere: ReadonlySet<number>, asked?: ReadonlySet<number>): ShellTab[] {
  const listed = new Map(running.map((t) => [t.id, t]));
  const kept = (tabs ?? []).map((tab): ShellTab => {
    if (tab.ended) return tab;
    const info = listed.get(tab.info.id);
    if (info) return { info };
    if (asked && !asked.has(tab.info.id)) return tab;
    return { info: tab.info, ended: closedHere.has(tab.info.id) ? { kind: "here" } : { kind: "elsewhere" } };
  });
  const known = new Set(kept.map((t) => t.info.id));
  const added = running
    .filter((t) => !known.has(t.id))
    .sort((a, b) => a.id - b.id)
    .map((info) => ({ info }));
  return [...kept, ...added];
}

/** The tabs once the shell of `id` told its viewer it ended (with `exitCode`, when it exited by itself). */
export function endTab(tabs: ShellTab[], id: number, ending: Ending): ShellTab[] {
  return tabs.map((t) => {
    if (t.info.id !== id) return t;
    // The socket knows better than a read of the list: an exit code
    // replaces a guess of "closed elsewhere".
    if (t.ended && !(t.ended.kind === "elsewhere" && ending.kind !== "here")) return t;
    return { ...t, ended: ending };
  });
}

/** The exit codes of a shell killed by SIGHUP, SIGKILL or SIGTERM under a wrapper. */
const KILLED = [129, 137, 143];

/**
 * How an ended shell's viewer learns it ended: "closed" with the exit code
 * the server sent, and who closed it (`closedBy`, a name) when a person did.
 */
export function endingFrom(exitCode: number | null | undefined, closedHere: boolean, closedBy?: string): Ending {
  if (closedHere) return { kind: "here" };
  if (closedBy) return { kind: "closedBy", name: closedBy };
  // A shell killed by a signal has no exit code, or, inside bubblewrap
  // (which reports its child's death), 128 + the signal (HUP, KILL, TERM):
  // closed, not exited.
  if (exitCode === null || exitCode === undefined || KILLED.includes(exitCode)) return { kind: "elsewhere" };
  return { kind: "exited", code: exitCode };
}

/** The line an ended shell shows under its scrollback. */
export function endingNote(ending: Ending): string {
  switch (ending.kind) {
    case "here":
      return "This shell was closed (by you).";
    case "elsewhere":
      return "This shell was closed by someone else, or its computer stopped. What it showed stays here until you close its tab.";
    case "closedBy":
      return `This shell was closed by ${ending.name}. What it showed stays here until you close its tab.`;
    case "exited":
      return `This shell ended (exit code ${ending.code}). What it showed stays here until you close its tab.`;
  }
}

/** The short line written into an ended shell's screen, under its scrollback. */
export function endingLine(ending: Ending): string {
  switch (ending.kind) {
    case "here":
      return "this shell was closed (by you)";
    case "elsewhere":
      return "this shell was closed by someone else, or its computer stopped";
    case "closedBy":
      return `this shell was closed by ${ending.name}`;
    case "exited":
      return `the shell ended with exit code ${ending.code}`;
  }
}

/**
 * The tab to show: the one shown so far while it is still a tab (even
 * ended: the person is never moved into another shell by someone else's
 * close); else the first running one; else any.
 */
export function pickCurrent(current: number | undefined, tabs: ShellTab[]): number | undefined {
  if (current !== undefined && tabs.some((t) => t.info.id === current)) return current;
  return (tabs.find((t) => !t.ended) ?? tabs[0])?.info.id;
}

/**
 * The server's refusal of another shell (the channel, the workspace or the
 * person is at a limit), with the running shells it was given over. The
 * server does not say a limit ahead, so the refusal is all the page knows:
 * it stands, New terminal held back with its reason, until those shells
 * change (one closed, ended, or opened by someone else).
 */
export interface Refusal {
  reason: string;
  running: string;
}

/** The running shells of `tabs`, as a key to compare (the order of the tabs aside). */
function runningKey(tabs: readonly ShellTab[] | undefined): string {
  return (tabs ?? [])
    .filter((t) => !t.ended)
    .map((t) => t.info.id)
    .sort((a, b) => a - b)
    .join(",");
}

/** A refusal of another shell, given `reason`, over the shells of `tabs`. */
export function refuse(reason: string, tabs: readonly ShellTab[] | undefined): Refusal {
  return { reason, running: runningKey(tabs) };
}

/** The reason New terminal is held back now: the refusal's, while the running shells are still those it was given over. */
export function refusalReason(refusal: Refusal | undefined, tabs: readonly ShellTab[] | undefined): string | undefined {
  return refusal && refusal.running === runningKey(tabs) ? refusal.reason : undefined;
}

/** What the terminal does with a key: give it to the shell, hold it back, or leave. */
export type KeyVerdict = "shell" | "held" | "leave";

/** How long an Escape is held back, waiting to see whether a Tab follows. */
export const ESCAPE_WAIT_MS = 300;

type Key = { key: string; ctrlKey: boolean; altKey: boolean; metaKey: boolean };

/** The page's timers, called as functions (a browser refuses `setTimeout` called as another object's method). */
const BROWSER_TIMERS = {
  set: (fn: () => void, ms: number): unknown => setTimeout(fn, ms),
  clear: (handle: unknown): void => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/**
 * The way out of the terminal by keyboard, which otherwise takes every key:
 * Escape, then Tab. An Escape is held back for a moment: a Tab right after
 * it leaves, and the Escape never reaches the shell (sent, it would make
 * the shell read the next key, typed later by anyone, as Meta+key); any
 * other key, or the moment passing, sends it on (`release`) before that
 * key, so vi gets its Escape. Feed it each keydown.
 */
export function leaveKeys(release: () => void, wait = ESCAPE_WAIT_MS, timers: { set: (fn: () => void, ms: number) => unknown; clear: (handle: unknown) => void } = BROWSER_TIMERS): (key: Key) => KeyVerdict {
  let held: unknown;
  const letGo = () => {
    if (held === undefined) return;
    timers.clear(held);
    held = undefined;
    release();
  };
  return (e) => {
    const plain = !e.ctrlKey && !e.altKey && !e.metaKey;
    if (held !== undefined && e.key === "Tab" && plain) {
      timers.clear(held);
      held = undefined;
      return "leave";
    }
    // Shift alone (as in Shift+Tab) keeps the Escape held.
    if (e.key === "Shift") return "shell";
    letGo();
    if (e.key === "Escape" && plain) {
      held = timers.set(letGo, wait);
      return "held";
    }
    return "shell";
  };
}
