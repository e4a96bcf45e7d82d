// What an event says about a channel's workspace files (the store that
// hands changes to views is state/workspace.ts): an artifact recorded (a
// tool of an agent wrote a new file, a person uploaded one, a note was
// saved), a tool call finished (a file tool names its path; a shell
// command may have changed anything), or a person changed a file
// (`file.changed`: a save, upload, move, delete; the person's own, made
// in another tab, are "you (another tab)"). An event only says where to look,
// never what changed: views look at the disk, a quiet moment later.
import type { LiveEvent } from "../api/events";

const ROOT = "/workspace";

/** Who made a change the signed-in person made in another tab or window. */
export const YOU_ELSEWHERE = "you (another tab)";

/** What one event says about a channel's workspace. */
export interface WorkspaceChange {
  channel: number;
  /** Paths it names (`/workspace/...`); a shell command names none. */
  paths: string[];
  /** Whether it may have changed files it does not name (a shell command). */
  anything: boolean;
  /** Who made the change, as people read it (`@launch-agent`, `ada`). */
  by?: string;
}

/** Tools that only read: their calls change nothing on disk. */
const READS = new Set(["read_file", "list_files", "recall", "search_memory", "read_memory"]);

/** `docs/plan.md`, `./docs/plan.md` or `/workspace/docs/plan.md` as `/workspace/docs/plan.md`. */
export function absolute(path: string): string {
  let p = path.trim().replace(/^\.\//, "");
  if (p === ROOT || p.startsWith(`${ROOT}/`)) return p.replace(/\/+$/, "") || ROOT;
  p = p.replace(/^\/+/, "");
  return p ? `${ROOT}/${p}`.replace(/\/+$/, "") : ROOT;
}

/** Who is who, for naming a change's author and the channel a tool names. */
export interface Lookup {
  agentHandle?: (agentId: number) => string | undefined;
  channelId?: (name: string) => number | undefined;
  /** The signed-in person: their own changes are named as theirs, from elsewhere. */
  me?: number;
}

/**
 * The path a file tool's journal line names: `write_file docs/a.md (12 bytes)`,
 * `write_file [other] docs/a.md (12 bytes)`. Undefined for anything else.
 */
export function namedPath(summary: string): { path: string; channel?: string } | undefined {
  const m = /^[a-z_]+_file(?: \[([^\]]+)\])? (.+?)(?: \(\d+ bytes\))?$/.exec(summary.trim());
  if (!m || !m[2]) return undefined;
  return { path: absolute(m[2]), channel: m[1] };
}

/** What an event says about workspaces (none for most events). */
export function changesOf(event: LiveEvent, lookup: Lookup = {}): WorkspaceChange[] {
  if (event.type === "artifact.recorded") {
    const a = event.artifact;
    if (a.kind === "link") return [];
    const by = a.kind === "file" && a.created_by && !a.created_by.startsWith("@") && a.created_by !== "terminal" ? `@${a.created_by}` : a.created_by;
    return [{ channel: a.channel_id, paths: [absolute(a.path)], anything: false, by }];
  }
  if (event.type === "file.changed") {
    if (event.channel_id === undefined) return [];
    const paths = [absolute(event.path)];
    if (event.from) paths.push(absolute(event.from));
    // The person's own change is news to their other tabs; the tab that
    // made it finds the disk as it already shows it, so it says nothing.
    return [{ channel: event.channel_id, paths, anything: false, by: event.user_id === lookup.me ? YOU_ELSEWHERE : event.by }];
  }
  if (event.type === "tool_action.finished") {
    const action = event.action;
    if (READS.has(action.tool) || action.status === "denied") return [];
    const by = lookup.agentHandle?.(action.agent_id);
    const named = namedPath(action.input_summary);
    if (named) {
      const other = named.channel ? lookup.channelId?.(named.channel.replace(/^#/, "")) : undefined;
      return [{ channel: other ?? action.channel_id, paths: [named.path], anything: false, by }];
    }
    return [{ channel: action.channel_id, paths: [], anything: true, by }];
  }
  return [];
}

/** Changes gathered over a quiet moment. */
export interface Changed {
  /** Bumped once per quiet moment after changes (0: none yet). */
  tick: number;
  paths: ReadonlySet<string>;
  anything: boolean;
  by?: string;
}

export const QUIET_MS = 300;
/** However busy the agent is, look at least this often. */
export const MAX_WAIT_MS = 1500;

/**
 * Gathers changes into batches: one `setTimeout` wait of `quiet` ms after
 * the last change (at most `maxWait` after the first), then `flush` with
 * what was gathered. Returns `add` and `stop`.
 */
export function debounceChanges(flush: (batch: Omit<Changed, "tick">) => void, quiet = QUIET_MS, maxWait = MAX_WAIT_MS) {
  let paths = new Set<string>();
  let anything = false;
  let by: string | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let first = 0;
  const fire = () => {
    timer = undefined;
    const batch = { paths, anything, by };
    paths = new Set();
    anything = false;
    by = undefined;
    flush(batch);
  };
  return {
    add(change: WorkspaceChange) {
      change.paths.forEach((p) => paths.add(p));
      anything ||= change.anything;
      by = change.by ?? by;
      const now = Date.now();
      if (timer === undefined) first = now;
      else clearTimeout(timer);
      timer = setTimeout(fire, Math.max(0, Math.min(quiet, first + maxWait - now)));
    },
    stop() {
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
    },
  };
}

