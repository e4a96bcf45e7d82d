// Cowork: the direct visual editing plane for the channel's files under
// /workspace/notes, whiteboards, code, docs and presentations, the same
// files the agent works on. One folder rail for every mode, the open file
// in its mode's editor, and an optional panel with the channel's agent.
// Loaded only when opened (with the whiteboard editor a chunk of its own).
//
// The route: /c/<channel>/cowork[?path=<file> | ?mode=<folder>].
import { lazy, Suspense } from "preact/compat";
import type { ComponentChildren } from "preact";
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { ApiError, api, describeError } from "../../api/client";
import { ErrorNote } from "../../components/Field";
import { Icon } from "../../components/Icon";
import { Time } from "../../components/Time";
import { entryQuietly, mapOffset, sameStamp, stampOf, type Stamp } from "../../lib/files";
import { useRetryOnReconnect } from "../../lib/reconnect";
import { MODES, MODE_INFO, baseName, fitsMode, freeName, isMode, modeFolder, modeOfPath, workspacePath, type Mode } from "../../lib/cowork";
import type { ChannelEntry } from "../../state/channels";
import { channelPath, coworkModePath, coworkPath, filesPath, navigate, setLeaveGuard } from "../../state/router";
import { useWorkspaceChanges, type Changed } from "../../state/workspace";
import { CodeEditor, DocsEditor, NotesEditor, Presenter, SlidesEditor } from "./editors";
import { AgentPanel } from "./AgentPanel";
import { DeleteDialog, LeaveDialog, NewFileDialog, RenameDialog } from "./dialogs";
import { MODE_ICON, Rail, useListings, type Listing } from "./Rail";

// The whiteboard editor, a chunk of its own; it reports unsaved edits with
// `onDirty`, so a change on disk never replaces unsaved strokes.
const Whiteboard = lazy(() => import("./Whiteboard").then((m) => ({ default: m.Whiteboard })));

/** How long "Updated by @agent" stays in a file's header. */
const UPDATED_MS = 5000;

const AGENT_KEY = "helm.cowork.agent";

function agentRemembered(): boolean {
  try {
    return localStorage.getItem(AGENT_KEY) === "open";
  } catch {
    return false;
  }
}

type DialogState = { kind: "new"; mode: Mode } | { kind: "rename" } | { kind: "delete" };

export function Cowork({ entry, path, mode }: { entry: ChannelEntry; path?: string; mode?: string }) {
  const channel = entry.channel.name;
  const archived = entry.channel.status === "archived";
  const target = path ? workspacePath(path) : undefined;
  const current: Mode | undefined = target ? modeOfPath(target) : isMode(mode) ? mode : undefined;
  const [version, setVersion] = useState(0);
  const refresh = () => setVersion((v) => v + 1);
  const lists = useListings(channel, version);
  // The agent works on these files too: while it works, each file it
  // writes (and each command it runs) lists the rail again, a quiet
  // moment after; the open file looks at the disk then too.
  const live = useWorkspaceChanges(entry.channel.id);
  useEffect(() => {
    if (live.tick > 0) refresh();
  }, [live.tick]);
  const agentName = `@${entry.agent.handle}`;
  // And when it goes back to ready, look again.
  const agentStatus = entry.agent.status;
  const settled = useRef(agentStatus);
  useEffect(() => {
    if (agentStatus === "ready" && settled.current !== "ready") refresh();
    settled.current = agentStatus;
  }, [agentStatus]);
  const [agentOpen, setAgentOpen] = useState(agentRemembered);
  const [dialog, setDialog] = useState<DialogState>();
  const [leaving, setLeaving] = useState<string>();
  // The open file's unsaved state and its save, for leaving it.
  const dirty = useRef(false);
  const saver = useRef<(() => Promise<void>) | undefined>(undefined);

  useEffect(() => {
    setLeaveGuard((to) => {
      if (!dirty.current) return true;
      setLeaving(to);
      return false;
    });
    return () => setLeaveGuard(undefined);
  }, []);

  const toggleAgent = () => {
    const next = !agentOpen;
    setAgentOpen(next);
    try {
      localStorage.setItem(AGENT_KEY, next ? "open" : "closed");
    } catch {
      // Not remembered, then.
    }
  };

  const tools = (
    <button type="button" class={agentOpen ? "btn btn-small agent-toggle on" : "btn btn-small agent-toggle"} aria-pressed={agentOpen} onClick={toggleAgent} title="Show the channel's agent beside your work">
      <Icon name="panel" size={15} /> Agent
    </button>
  );

  const go = (to: string, replace = false) => {
    dirty.current = false;
    navigate(to, { replace, force: true });
  };

  const newFile = (m: Mode) => setDialog({ kind: "new", mode: m });
  const suggested = (m: Mode) => freeName(MODE_INFO[m].suggested, (lists[m].files ?? []).map((f) => f.name));

  let main: ComponentChildren;
  if (target && !current) {
    main = <Elsewhere channel={channel} path={target} tools={tools} />;
  } else if (target && current === "whiteboards" && fitsMode(target, "whiteboards")) {
    main = (
      <BoardView
        key={target}
        channel={channel}
        path={target}
        archived={archived}
        tools={tools}
        version={version}
        change={live}
        agentName={agentName}
        onRename={() => setDialog({ kind: "rename" })}
        onDelete={() => setDialog({ kind: "delete" })}
      />
    );
  } else if (target && current) {
    main = (
      <FileView
        key={target}
        channel={channel}
        path={target}
        mode={current}
        archived={archived}
        tools={tools}
        onState={(d, save) => {
          dirty.current = d;
          saver.current = save;
        }}
        onSaved={refresh}
        version={version}
        change={live}
        agentName={agentName}
        onRename={() => setDialog({ kind: "rename" })}
        onDelete={() => setDialog({ kind: "delete" })}
      />
    );
  } else if (current) {
    main = <ModeHome channel={channel} mode={current} list={lists[current]} archived={archived} tools={tools} onNew={() => newFile(current)} />;
  } else {
    main = <Home channel={channel} lists={lists} archived={archived} tools={tools} onNew={newFile} />;
  }

  const classes = ["cowork", target ? "has-file" : "", agentOpen ? "with-agent" : ""].filter(Boolean).join(" ");
  return (
    <div class={classes}>
      <Rail channel={channel} lists={lists} mode={current} open={target} archived={archived} version={version} onNew={newFile} />
      <div class="cowork-main">{main}</div>
      {agentOpen && <AgentPanel entry={entry} path={target} onClose={toggleAgent} />}
      {dialog?.kind === "new" && (
        <NewFileDialog
          channel={channel}
          mode={dialog.mode}
          suggested={suggested(dialog.mode)}
          onClose={() => setDialog(undefined)}
          onDone={(p) => {
            setDialog(undefined);
            refresh();
            navigate(coworkPath(channel, p));
          }}
        />
      )}
      {dialog?.kind === "rename" && target && current && (
        <RenameDialog
          channel={channel}
          mode={current}
          path={target}
          beforeMove={async () => {
            // Unsaved changes go with the file.
            if (dirty.current && saver.current) await saver.current();
            return true;
          }}
          onClose={() => setDialog(undefined)}
          onDone={(to) => {
            setDialog(undefined);
            refresh();
            go(coworkPath(channel, to), true);
          }}
        />
      )}
      {dialog?.kind === "delete" && target && current && (
        <DeleteDialog
          channel={channel}
          path={target}
          onClose={() => setDialog(undefined)}
          onDone={() => {
            setDialog(undefined);
            refresh();
            go(coworkModePath(channel, current), true);
          }}
        />
      )}
      {leaving !== undefined && target && (
        <LeaveDialog
          path={target}
          onClose={() => setLeaving(undefined)}
          onDiscard={() => {
            setLeaving(undefined);
            go(leaving);
          }}
          onSave={async () => {
            await saver.current?.();
            setLeaving(undefined);
            go(leaving);
          }}
        />
      )}
    </div>
  );
}

/** The open file's header: its name and path, what is saved, and its actions. */
function FileHead({
  channel,
  mode,
  path,
  archived,
  tools,
  status,
  updatedBy,
  save,
  onRename,
  onDelete,
}: {
  channel: string;
  mode: Mode;
  path: string;
  archived: boolean;
  tools: ComponentChildren;
  status?: ComponentChildren;
  /** Who just changed the file on disk (shown for a few seconds). */
  updatedBy?: string;
  save?: ComponentChildren;
  onRename: () => void;
  onDelete: () => void;
}) {
  return (
    <header class="cowork-head">
      <a class="icon-button phone-only" href={coworkModePath(channel, mode)} aria-label={`Back to ${MODE_INFO[mode].label}`}>
        <Icon name="back" />
      </a>
      <Icon name={MODE_ICON[mode]} size={20} class="cowork-head-icon" />
      <div class="cowork-title">
        <h2>{baseName(path)}</h2>
        <p class="muted small">
          <span class="cowork-path">{path}</span>
          {status}
          <span class="live-updated" role="status">
            {updatedBy && ` · Updated by ${updatedBy}`}
          </span>
        </p>
      </div>
      <div class="toolbar-actions">
        {save}
        {!archived && (
          <>
            <button type="button" class="btn btn-small" onClick={onRename}>
              Rename
            </button>
            <button type="button" class="btn btn-small btn-danger-quiet" onClick={onDelete} aria-label={`Delete ${baseName(path)}`}>
              <Icon name="trash" size={15} />
            </button>
          </>
        )}
        {tools}
      </div>
    </header>
  );
}

type LoadState = "loading" | "ready" | "missing" | "binary" | "failed";

/** The file changed on disk while the person had unsaved edits (or it went away). */
interface Conflict {
  by: string;
  /** What is on disk now; undefined when the file was removed. */
  content?: string;
  truncated?: boolean;
}

/** "Updated by @agent" for a few seconds, then nothing. */
function useFlash(): [string | undefined, (by: string) => void] {
  const [shown, setShown] = useState<string>();
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useEffect(() => () => clearTimeout(timer.current), []);
  const flash = (by: string) => {
    clearTimeout(timer.current);
    setShown(by);
    timer.current = setTimeout(() => setShown(undefined), UPDATED_MS);
  };
  return [shown, flash];
}

/** The bar over a file someone else changed while it had unsaved edits here. */
function ConflictBar({ conflict, onReload, onKeep }: { conflict: Conflict; onReload?: () => void; onKeep: () => void }) {
  const removed = conflict.content === undefined && !onReload;
  return (
    <div class="live-conflict" role="alert">
      <p>
        <strong>
          {conflict.by} {removed ? "removed this file." : "changed this file."}
        </strong>{" "}
        {removed ? "Your edits are still here: saving puts the file back." : "Your edits here are not saved."}
      </p>
      <div class="live-conflict-actions">
        {onReload && (
          <button type="button" class="btn btn-small" onClick={onReload}>
            Reload (discard your edits)
          </button>
        )}
        <button type="button" class="btn btn-small btn-primary" onClick={onKeep}>
          Keep mine
        </button>
      </div>
    </div>
  );
}

function FileView({
  channel,
  path,
  mode,
  archived,
  tools,
  onState,
  onSaved,
  version,
  change,
  agentName,
  onRename,
  onDelete,
}: {
  channel: string;
  path: string;
  mode: Mode;
  archived: boolean;
  tools: ComponentChildren;
  onState: (dirty: boolean, save: () => Promise<void>) => void;
  onSaved: () => void;
  /** Bumped when files may have changed (the agent wrote or finished, a save here). */
  version: number;
  /** The last batch of live changes: which paths they named, and who made them. */
  change: Changed;
  /** The channel's agent (`@launch-agent`), for changes that name nobody. */
  agentName: string;
  onRename: () => void;
  onDelete: () => void;
}) {
  const [state, setState] = useState<LoadState>("loading");
  const [text, setText] = useState("");
  const [saved, setSaved] = useState("");
  const [truncated, setTruncated] = useState(false);
  const [error, setError] = useState<string>();
  const [saving, setSaving] = useState(false);
  const [justSaved, setJustSaved] = useState(false);
  const [attempt, setAttempt] = useState(0);
  const [presenting, setPresenting] = useState<number>();
  const [conflict, setConflict] = useState<Conflict>();
  const [updatedBy, flashUpdated] = useFlash();
  const latest = useRef(text);
  latest.current = text;
  const savedRef = useRef(saved);
  savedRef.current = saved;
  const stateRef = useRef(state);
  stateRef.current = state;
  // The disk's time and size for the text in `saved` (unknown until first looked at).
  const stamp = useRef<Stamp | undefined>(undefined);
  // A save on its way: what it writes (a look at the disk meanwhile waits for it).
  const inflight = useRef<string | undefined>(undefined);
  const recheck = useRef(false);
  const checks = useRef(0);
  const alive = useRef(true);
  useEffect(() => () => void (alive.current = false), []);
  const root = useRef<HTMLDivElement>(null);
  // The caret and scroll of the text box, kept over a reload in place.
  const keep = useRef<{ before: string; start: number; end: number; top: number; left: number } | undefined>(undefined);

  useEffect(() => {
    setState("loading");
    setError(undefined);
    stamp.current = undefined;
    api
      .get("/api/channels/{channel}/files/read", { path: { channel }, query: { path } })
      .then((file) => {
        setText(file.content);
        setSaved(file.content);
        setTruncated(file.truncated);
        setState("ready");
      })
      .catch((e) => {
        if (e instanceof ApiError && e.status === 404) setState("missing");
        else if (e instanceof ApiError && e.status === 422) setState("binary");
        else {
          setState("failed");
          setError(describeError(e));
        }
      });
  }, [channel, path, attempt]);
  useRetryOnReconnect(state === "failed", () => setAttempt((a) => a + 1));

  /** Shows `content` (what is on disk) in place of the text, keeping the caret where it was. */
  const reloadInPlace = (content: string, cut: boolean) => {
    const box = root.current?.querySelector<HTMLTextAreaElement>(".cowork-editor textarea");
    keep.current = box ? { before: box.value, start: box.selectionStart, end: box.selectionEnd, top: box.scrollTop, left: box.scrollLeft } : undefined;
    setText(content);
    setSaved(content);
    setTruncated(cut);
    setConflict(undefined);
  };
  useLayoutEffect(() => {
    const kept = keep.current;
    const box = root.current?.querySelector<HTMLTextAreaElement>(".cowork-editor textarea");
    if (!kept || !box || box.value !== text) return;
    keep.current = undefined;
    box.setSelectionRange(mapOffset(kept.before, text, kept.start), mapOffset(kept.before, text, kept.end));
    box.scrollTop = kept.top;
    box.scrollLeft = kept.left;
  }, [text]);

  /**
   * Looks at the disk: the file's time and size against what was loaded
   * (and, when they differ or a change named this file, its text against
   * it), so the person's own saves are never taken for someone else's.
   */
  const check = async (named: boolean, by: string) => {
    if (stateRef.current !== "ready") return;
    if (inflight.current !== undefined) {
      recheck.current = true;
      return;
    }
    const mine = ++checks.current;
    const stale = () => !alive.current || mine !== checks.current || inflight.current !== undefined || stateRef.current !== "ready";
    try {
      const entry = await entryQuietly(channel, path);
      if (stale()) return;
      if (!entry) {
        // Gone: with nothing unsaved, say so; with edits, keep them (saving puts it back).
        if (latest.current === savedRef.current) setState("missing");
        else setConflict({ by });
        stamp.current = undefined;
        return;
      }
      if (!named && sameStamp(entry, stamp.current)) return;
      const file = await api.get("/api/channels/{channel}/files/read", { path: { channel }, query: { path } });
      if (stale()) return;
      stamp.current = stampOf(entry);
      const disk = file.content;
      if (disk === savedRef.current) {
        // Nothing new (a save of ours, or the same text written again).
        setConflict((c) => (c?.content === undefined ? undefined : c));
        return;
      }
      if (disk === latest.current) {
        // What the person has is what is on disk now: nothing is unsaved.
        setSaved(disk);
        setConflict(undefined);
        return;
      }
      if (latest.current === savedRef.current) {
        reloadInPlace(disk, file.truncated);
        flashUpdated(by);
      } else {
        setConflict({ by, content: disk, truncated: file.truncated });
      }
    } catch {
      // Looked at again with the next change.
    }
  };
  const checkRef = useRef(check);
  checkRef.current = check;

  // Files may have changed (the agent wrote, ran something, or finished): look.
  const first = useRef(true);
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    void check(change.paths.has(path), change.by ?? agentName);
  }, [version]);

  // A file read only in part is not written back: saving would cut it.
  const readOnly = archived || truncated;
  const dirty = state === "ready" && text !== saved;

  const save = async () => {
    const content = latest.current;
    setSaving(true);
    setError(undefined);
    inflight.current = content;
    try {
      const entry = await api.put("/api/channels/{channel}/files", { path: { channel }, body: { path, content } });
      stamp.current = stampOf(entry);
      setSaved(content);
      savedRef.current = content;
      setConflict(undefined);
      setJustSaved(true);
      onSaved();
    } catch (e) {
      setError(describeError(e));
      throw e;
    } finally {
      inflight.current = undefined;
      setSaving(false);
      if (recheck.current) {
        recheck.current = false;
        void checkRef.current(false, agentName);
      }
    }
  };
  onState(dirty, save);

  const reload = () => {
    if (conflict?.content === undefined) return;
    reloadInPlace(conflict.content, conflict.truncated ?? false);
  };
  // Keep mine: the edits stay, unsaved against what is on disk now; saving writes them over it.
  const keepMine = () => {
    if (conflict?.content !== undefined) setSaved(conflict.content);
    setConflict(undefined);
  };

  // Ctrl/Cmd-S saves (and never opens the browser's "Save page").
  const dirtyNow = useRef(dirty);
  dirtyNow.current = dirty;
  useEffect(() => {
    const keys = (e: KeyboardEvent) => {
      if (!(e.ctrlKey || e.metaKey) || e.altKey || e.key.toLowerCase() !== "s") return;
      e.preventDefault();
      if ((dirtyNow.current || conflictNow.current) && !readOnly) void save().catch(() => undefined);
    };
    window.addEventListener("keydown", keys);
    return () => window.removeEventListener("keydown", keys);
  }, [readOnly, path]);
  const conflictNow = useRef(conflict);
  conflictNow.current = conflict;

  // Closing the tab or reloading with unsaved changes asks first.
  useEffect(() => {
    if (!dirty) return;
    setJustSaved(false);
    const ask = (e: BeforeUnloadEvent) => {
      e.preventDefault();
      e.returnValue = "";
    };
    window.addEventListener("beforeunload", ask);
    return () => window.removeEventListener("beforeunload", ask);
  }, [dirty]);

  const status =
    state !== "ready" ? null : (
      <span class={dirty ? "save-state dirty" : "save-state"} role="status">
        {archived ? " · read-only: the channel is archived" : truncated ? " · read-only: too big to edit here" : saving ? " · saving…" : dirty ? " · unsaved changes" : justSaved ? " · saved" : ""}
      </span>
    );
  const saveButton = !readOnly && state === "ready" && (
    <button type="button" class="btn btn-small btn-primary" disabled={(!dirty && !conflict) || saving} onClick={() => void save().catch(() => undefined)} title="Save (Ctrl+S)">
      {saving ? "Saving…" : "Save"}
    </button>
  );

  const props = { path, text, onChange: setText, readOnly };
  return (
    <div class="cowork-file" ref={root}>
      <FileHead
        channel={channel}
        mode={mode}
        path={path}
        archived={archived}
        tools={tools}
        status={status}
        updatedBy={dirty ? undefined : updatedBy}
        save={saveButton}
        onRename={onRename}
        onDelete={onDelete}
      />
      <ErrorNote error={error} onRetry={state === "failed" ? () => setAttempt((a) => a + 1) : undefined} />
      {state === "ready" && conflict && <ConflictBar conflict={conflict} onReload={conflict.content === undefined ? undefined : reload} onKeep={keepMine} />}
      {state === "loading" && <p class="muted pad">Opening {baseName(path)}…</p>}
      {state === "missing" && (
        <div class="preview-empty muted">
          <p>{path} is not in this workspace (any more).</p>
          <a class="btn btn-small" href={coworkModePath(channel, mode)}>
            Back to {MODE_INFO[mode].label}
          </a>
        </div>
      )}
      {state === "binary" && (
        <div class="preview-empty muted">
          <p>This file is not text, so it cannot be edited here.</p>
          <a class="btn btn-small" href={filesPath(channel, path)}>
            Open it in Files
          </a>
        </div>
      )}
      {state === "ready" && mode === "notes" && <NotesEditor {...props} />}
      {state === "ready" && mode === "docs" && <DocsEditor {...props} />}
      {state === "ready" && (mode === "code" || mode === "whiteboards") && <CodeEditor {...props} />}
      {state === "ready" && mode === "presentations" && <SlidesEditor {...props} onPresent={setPresenting} />}
      {presenting !== undefined && <Presenter text={text} title={baseName(path)} from={presenting} onClose={() => setPresenting(undefined)} />}
    </div>
  );
}

/**
 * A whiteboard: its header, and the whiteboard editor, which loads and
 * saves the file itself. When the file changes on disk (the agent drew on
 * it) and the board has no unsaved edits, the editor is mounted again on
 * the new file; with unsaved edits (if the editor reports them through
 * `onDirty`) the person chooses, as in the other modes.
 */
function BoardView({
  channel,
  path,
  archived,
  tools,
  version,
  change,
  agentName,
  onRename,
  onDelete,
}: {
  channel: string;
  path: string;
  archived: boolean;
  tools: ComponentChildren;
  version: number;
  change: Changed;
  agentName: string;
  onRename: () => void;
  onDelete: () => void;
}) {
  const [mount, setMount] = useState(0);
  const [conflict, setConflict] = useState<Conflict>();
  const [updatedBy, flashUpdated] = useFlash();
  const dirty = useRef(false);
  // What is on disk as the board last loaded (or saved) it.
  const base = useRef<{ stamp: Stamp; text?: string } | null | undefined>(undefined);
  const checks = useRef(0);
  const alive = useRef(true);
  useEffect(() => () => void (alive.current = false), []);

  /** The disk now: its stamp, and its text when `withText`; null when the file is not there. */
  const look = async (withText: boolean) => {
    const entry = await entryQuietly(channel, path);
    if (!entry) return null;
    const text = withText ? (await api.get("/api/channels/{channel}/files/read", { path: { channel }, query: { path } })).content : undefined;
    return { stamp: stampOf(entry), text };
  };
  const rebase = () => {
    const mine = ++checks.current;
    look(true)
      .then((now) => {
        if (alive.current && mine === checks.current) base.current = now;
      })
      .catch(() => undefined);
  };
  useEffect(rebase, [channel, path]);

  const check = async (named: boolean, by: string) => {
    if (base.current === undefined) return;
    const mine = ++checks.current;
    try {
      const entry = await entryQuietly(channel, path);
      if (!alive.current || mine !== checks.current || !entry) return;
      if (!named && base.current && sameStamp(entry, base.current.stamp)) return;
      const text = (await api.get("/api/channels/{channel}/files/read", { path: { channel }, query: { path } })).content;
      if (!alive.current || mine !== checks.current) return;
      const known = base.current;
      base.current = { stamp: stampOf(entry), text };
      if (known && known.text === text) return;
      if (dirty.current) setConflict({ by, content: text });
      else {
        setMount((m) => m + 1);
        flashUpdated(by);
      }
    } catch {
      // Looked at again with the next change.
    }
  };
  const first = useRef(true);
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    void check(change.paths.has(path), change.by ?? agentName);
  }, [version]);

  const onDirty = (now: boolean) => {
    const was = dirty.current;
    dirty.current = now;
    // Edits saved (or dropped) by the board: what is on disk is its own.
    if (was && !now) rebase();
  };

  return (
    <div class="cowork-file">
      <FileHead channel={channel} mode="whiteboards" path={path} archived={archived} tools={tools} updatedBy={updatedBy} onRename={onRename} onDelete={onDelete} />
      {conflict && (
        <ConflictBar
          conflict={conflict}
          onReload={() => {
            dirty.current = false;
            setConflict(undefined);
            setMount((m) => m + 1);
          }}
          onKeep={() => setConflict(undefined)}
        />
      )}
      <Suspense fallback={<p class="muted pad">Loading the whiteboard…</p>}>
        <Whiteboard key={mount} channel={channel} path={path} onDirty={onDirty} />
      </Suspense>
    </div>
  );
}

/** A path outside Cowork's folders: said, with the way to Files. */
function Elsewhere({ channel, path, tools }: { channel: string; path: string; tools: ComponentChildren }) {
  return (
    <div class="cowork-home">
      <header class="cowork-home-head">
        <div>
          <h2>Not a Cowork file</h2>
          <p class="muted">
            <code>{path}</code> is outside Cowork's folders ({MODES.map((m) => modeFolder(m).slice("/workspace/".length)).join(", ")}).
          </p>
        </div>
        <div class="toolbar-actions">{tools}</div>
      </header>
      <a class="btn btn-small" href={filesPath(channel, path)}>
        Open it in Files
      </a>
    </div>
  );
}

/** A mode's folder: its files as cards, and the way to a new one. */
function ModeHome({ channel, mode, list, archived, tools, onNew }: { channel: string; mode: Mode; list: Listing; archived: boolean; tools: ComponentChildren; onNew: () => void }) {
  const info = MODE_INFO[mode];
  const files = (list.files ?? []).filter((f) => f.kind === "file");
  return (
    <div class="cowork-home">
      <header class="cowork-home-head">
        <div>
          <h2>
            <Icon name={MODE_ICON[mode]} size={20} class="cowork-head-icon" /> {info.label}
          </h2>
          <p class="muted">
            {info.blurb} In <code>{modeFolder(mode)}</code>, where the agent sees them too.
          </p>
        </div>
        <div class="toolbar-actions">
          {!archived && (
            <button type="button" class="btn btn-small btn-primary" onClick={onNew}>
              <Icon name="plus" size={15} /> New {info.noun}
            </button>
          )}
          {tools}
        </div>
      </header>
      <ErrorNote error={list.error} />
      {list.files !== undefined && files.length === 0 && (
        <div class="cowork-empty">
          <Icon name={MODE_ICON[mode]} size={28} />
          <p>
            No {info.noun}s yet{mode === "code" && (list.files?.length ?? 0) > 0 ? " at the top of the folder: open its folders in the rail" : ""}.
            {!archived && ` Make the first one, or ask the agent to.`}
          </p>
        </div>
      )}
      {files.length > 0 && (
        <ul class="cowork-cards" aria-label={`${info.label} files`}>
          {files.map((f) => (
            <li key={f.path}>
              <a class="cowork-card" href={coworkPath(channel, f.path)}>
                <Icon name={MODE_ICON[mode]} size={18} />
                <span class="cowork-card-name">{f.name}</span>
                {f.modified && (
                  <span class="muted small">
                    changed <Time at={f.modified} />
                  </span>
                )}
              </a>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** Cowork's front: the five modes, what each holds, a new file of each. */
function Home({ channel, lists, archived, tools, onNew }: { channel: string; lists: Record<Mode, Listing>; archived: boolean; tools: ComponentChildren; onNew: (m: Mode) => void }) {
  return (
    <div class="cowork-home">
      <header class="cowork-home-head">
        <div>
          <h2>Cowork</h2>
          <p class="muted">
            Edit the channel's notes, whiteboards, code, docs and presentations directly. They are files under <code>/workspace</code>: the agent works on
            the same ones. Open the agent panel to ask it about the file in front of you.
          </p>
        </div>
        <div class="toolbar-actions">{tools}</div>
      </header>
      <ul class="cowork-modes" aria-label="Work modes">
        {MODES.map((m) => {
          const info = MODE_INFO[m];
          const count = lists[m].files?.filter((f) => f.kind === "file").length;
          return (
            <li key={m} class="cowork-mode-card">
              <a href={coworkModePath(channel, m)} class="cowork-mode-link">
                <Icon name={MODE_ICON[m]} size={22} />
                <span class="cowork-mode-name">{info.label}</span>
              </a>
              <p class="muted small">{info.blurb}</p>
              <p class="muted small">{count === undefined ? "…" : count === 0 ? `No ${info.noun}s yet` : count === 1 ? `1 ${info.noun}` : `${count} ${info.noun}s`}</p>
              {!archived && (
                <button type="button" class="btn btn-small" onClick={() => onNew(m)}>
                  <Icon name="plus" size={14} /> New {info.noun}
                </button>
              )}
            </li>
          );
        })}
      </ul>
      <p class="muted small">
        Prefer the whole workspace? <a href={filesPath(channel)}>Files</a> shows every folder; <a href={channelPath(channel)}>Chat</a> has every thread.
      </p>
    </div>
  );
}
