// An open whiteboard: its header, the conflict bar, and the whiteboard
// editor (lazily loaded), which loads and saves the file itself; this shell
// only watches the disk for changes made meanwhile.
import type { ComponentChildren } from "preact";
import { lazy, Suspense } from "preact/compat";
import { useEffect, useRef, useState } from "preact/hooks";
import { api } from "../../api/client";
import { entryQuietly, sameStamp, stampOf, type Stamp } from "../../lib/files";
import type { Changed } from "../../state/workspace";
import { ConflictBar, FileHead, useFlash, type Conflict } from "./FileHead";

// The whiteboard editor, a chunk of its own; it reports unsaved edits with
// `onDirty`, so a change on disk never replaces unsaved strokes.
const Whiteboard = lazy(() => import("./Whiteboard").then((m) => ({ default: m.Whiteboard })));

/**
 * A whiteboard: its header, and the whiteboard editor, which loads and
 * saves the file itself. When the file changes on disk (the agent drew on
 * it) and the board has no unsaved edits, the editor is mounted again on
 * the new file; with unsaved edits (if the editor reports them through
 * `onDirty`) the person chooses, as in the other modes.
 */
export function BoardView({
  channel,
  path,
  archived,
  tools,
  version,
  change,
  agentName,
  onRename,
  onDelete,
  focusEditor = false,
}: {
  channel: string;
  path: string;
  /** Put the focus on the board once it is drawn (a board just made). */
  focusEditor?: boolean;
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

  // The board is a lazy chunk that then reads its file: wait (a few seconds
  // at most) for its canvas, then focus it, as a new text file's editor is.
  const root = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!focusEditor) return;
    let tries = 0;
    const timer = setInterval(() => {
      const canvas = root.current?.querySelector<SVGSVGElement>(".wb-canvas");
      if (!canvas && ++tries < 50) return;
      clearInterval(timer);
      canvas?.focus();
    }, 100);
    return () => clearInterval(timer);
  }, [focusEditor]);

  const onDirty = (now: boolean) => {
    const was = dirty.current;
    dirty.current = now;
    // Edits saved (or dropped) by the board: what is on disk is its own.
    if (was && !now) rebase();
  };

  return (
    <div class="cowork-file" ref={root}>
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
