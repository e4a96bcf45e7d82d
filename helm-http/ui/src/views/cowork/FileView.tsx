// The open text file (notes, code, docs, presentations): loaded, edited in
// its mode's editor, saved (Ctrl/Cmd-S or Save; closing the tab with unsaved
// changes asks first), and compared with the disk when the agent or another
// person may have changed it (a person's saves come as `file.changed`
// events): replaced in place when nothing is unsaved, the conflict bar
// when something is. A save names the version it was edited from, so a
// save that still crosses another is never written over it: the server
// refuses, and the conflict bar offers theirs or mine.
import type { ComponentChildren } from "preact";
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { ApiError, api, describeError } from "../../api/client";
import { ErrorNote } from "../../components/Field";
import { entryQuietly, mapOffset, sameStamp, stampOf, type Stamp } from "../../lib/files";
import { useRetryOnReconnect } from "../../lib/reconnect";
import { MODE_INFO, baseName, type Mode } from "../../lib/cowork";
import { coworkModePath, filesPath } from "../../state/router";
import type { Changed } from "../../state/workspace";
import { CodeEditor, DocsEditor, NotesEditor, Presenter, SlidesEditor } from "./editors";
import { ConflictBar, FileHead, useFlash, type Conflict } from "./FileHead";

type LoadState = "loading" | "ready" | "missing" | "binary" | "failed";

export function FileView({
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
  focusEditor = false,
}: {
  channel: string;
  path: string;
  mode: Mode;
  /** Put the focus in the editor once the file is open (a file just made). */
  focusEditor?: boolean;
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
  // The disk's version of the text in `saved`: what a save is made over.
  const base = useRef<string | undefined>(undefined);
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
        base.current = file.version ?? undefined;
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

  useEffect(() => {
    if (state !== "ready" || !focusEditor) return;
    // After the dialog that made the file has given the focus back to its opener.
    const box = root.current?.querySelector<HTMLTextAreaElement>(".cowork-editor textarea");
    box?.focus();
    box?.setSelectionRange(box.value.length, box.value.length);
  }, [state, focusEditor]);

  /** Shows `content` (what is on disk) in place of the text, keeping the caret where it was. */
  const reloadInPlace = (content: string, cut: boolean, version: string | undefined) => {
    base.current = version;
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
      const version = file.version ?? undefined;
      if (disk === savedRef.current) {
        // Nothing new (a save of ours, or the same text written again).
        base.current = version;
        setConflict((c) => (c?.content === undefined ? undefined : c));
        return;
      }
      if (disk === latest.current) {
        // What the person has is what is on disk now: nothing is unsaved.
        base.current = version;
        setSaved(disk);
        setConflict(undefined);
        return;
      }
      if (latest.current === savedRef.current) {
        reloadInPlace(disk, file.truncated, version);
        flashUpdated(by);
      } else {
        setConflict({ by, content: disk, truncated: file.truncated, version });
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
      const entry = await api.put("/api/channels/{channel}/files", { path: { channel }, body: { path, content, base_version: base.current } });
      stamp.current = stampOf(entry);
      base.current = entry.version ?? undefined;
      setSaved(content);
      savedRef.current = content;
      setConflict(undefined);
      setJustSaved(true);
      onSaved();
    } catch (e) {
      // Saved by someone else since it was opened here: theirs or mine.
      if (e instanceof ApiError && e.code === "conflict") await showTheirs();
      else setError(describeError(e));
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

  /** The conflict bar over what is on disk now, after a save was refused for it. */
  const showTheirs = async () => {
    try {
      const file = await api.get("/api/channels/{channel}/files/read", { path: { channel }, query: { path } });
      if (alive.current) setConflict({ by: "Someone", content: file.content, truncated: file.truncated, version: file.version ?? undefined });
    } catch (e) {
      if (!alive.current) return;
      if (e instanceof ApiError && e.status === 404) setConflict({ by: "Someone" });
      else setError(describeError(e));
    }
  };

  const reload = () => {
    if (conflict?.content === undefined) return;
    reloadInPlace(conflict.content, conflict.truncated ?? false, conflict.version);
  };
  // Keep mine: the edits stay, unsaved against what is on disk now; saving writes them over it.
  const keepMine = () => {
    if (conflict?.content !== undefined) setSaved(conflict.content);
    base.current = conflict?.version;
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
