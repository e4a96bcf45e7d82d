// Editing a text file of the workspace (loaded only when someone edits):
// Ctrl/Cmd-S saves, Escape cancels; Tab indents rather than leaving the
// box (Ctrl-M or Escape lets focus move on, as a keyboard user expects).
// When the file changes on disk meanwhile (`disk`: the agent wrote it, or
// another person saved it), the new text replaces one with no changes;
// changes here are never overwritten: a bar offers Reload (discarding
// them) or Keep mine. A save names the version it was edited from, so one
// that crosses another save is refused by the server and shown the same
// way.
import { useEffect, useRef, useState } from "preact/hooks";
import { ApiError, api, describeError } from "../../api/client";
import { ErrorNote } from "../../components/Field";
import { sentenceStart } from "../../lib/format";
import { toast } from "../../state/toasts";

export function Editor({
  channel,
  path,
  initial,
  version,
  disk,
  onClose,
}: {
  channel: string;
  path: string;
  initial: string;
  /** The version of `initial` (as read), which a save is made over. */
  version?: string;
  /** What is on disk, when it changed after the editor opened (a new `seq` each time). */
  disk?: { content: string; version?: string; by: string; seq: number };
  onClose: (saved?: string, version?: string) => void;
}) {
  const [text, setText] = useState(initial);
  // What the text is compared with: the file as it is on disk (as far as is known), and its version.
  const [base, setBase] = useState(initial);
  const baseVersion = useRef(version);
  const [conflict, setConflict] = useState<{ content: string; version?: string; by: string }>();
  const [updatedBy, setUpdatedBy] = useState<string>();
  const seen = useRef(disk?.seq);
  useEffect(() => {
    if (!disk || disk.seq === seen.current) return;
    seen.current = disk.seq;
    if (disk.content === base) {
      baseVersion.current = disk.version;
      return;
    }
    if (disk.content === text) {
      setBase(disk.content);
      baseVersion.current = disk.version;
      setConflict(undefined);
    } else if (text === base) {
      setText(disk.content);
      setBase(disk.content);
      baseVersion.current = disk.version;
      setUpdatedBy(disk.by);
    } else setConflict({ content: disk.content, version: disk.version, by: disk.by });
  }, [disk?.seq]);
  useEffect(() => {
    if (!updatedBy) return;
    const t = setTimeout(() => setUpdatedBy(undefined), 5000);
    return () => clearTimeout(t);
  }, [updatedBy]);
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const [tabMoves, setTabMoves] = useState(false);
  const area = useRef<HTMLTextAreaElement>(null);
  useEffect(() => area.current?.focus(), []);

  const save = async () => {
    setBusy(true);
    setError(undefined);
    try {
      const entry = await api.put("/api/channels/{channel}/files", { path: { channel }, body: { path, content: text, base_version: baseVersion.current } });
      toast(`Saved ${path}.`);
      onClose(text, entry.version ?? undefined);
    } catch (e) {
      if (e instanceof ApiError && e.code === "conflict") await showTheirs(e);
      else setError(describeError(e));
      setBusy(false);
    }
  };

  /** After a save refused for a newer version on disk: the bar, over what is there now. */
  const showTheirs = async (refused: ApiError) => {
    try {
      const now = await api.get("/api/channels/{channel}/files/read", { path: { channel }, query: { path } });
      setConflict({ content: now.content, version: now.version ?? undefined, by: "Someone" });
    } catch {
      // Gone meanwhile: the server's words say so, and saving again makes it anew.
      baseVersion.current = undefined;
      setError(describeError(refused));
    }
  };

  const keys = (e: KeyboardEvent) => {
    if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === "s") {
      e.preventDefault();
      void save();
    } else if ((e.ctrlKey && e.key.toLowerCase() === "m") || e.key === "Escape") {
      if (e.key === "Escape" && text === base) {
        onClose();
        return;
      }
      e.preventDefault();
      setTabMoves(!tabMoves);
    } else if (e.key === "Tab" && !tabMoves && !e.shiftKey) {
      e.preventDefault();
      const el = e.currentTarget as HTMLTextAreaElement;
      const { selectionStart: s, selectionEnd: end } = el;
      const next = `${text.slice(0, s)}  ${text.slice(end)}`;
      setText(next);
      requestAnimationFrame(() => (el.selectionStart = el.selectionEnd = s + 2));
    }
  };

  const lines = text.split("\n").length;
  return (
    <div class="editor">
      {conflict && (
        <div class="live-conflict" role="alert">
          <p>
            <strong>{sentenceStart(conflict.by)} changed this file.</strong> Your edits here are not saved.
          </p>
          <div class="live-conflict-actions">
            <button
              type="button"
              class="btn btn-small"
              onClick={() => {
                setText(conflict.content);
                setBase(conflict.content);
                baseVersion.current = conflict.version;
                setConflict(undefined);
              }}
            >
              Reload (discard your edits)
            </button>
            <button
              type="button"
              class="btn btn-small btn-primary"
              onClick={() => {
                setBase(conflict.content);
                baseVersion.current = conflict.version;
                setConflict(undefined);
              }}
            >
              Keep mine
            </button>
          </div>
        </div>
      )}
      <textarea
        ref={area}
        class="editor-area"
        value={text}
        spellcheck={false}
        aria-label={`Editing ${path}`}
        onInput={(e) => setText(e.currentTarget.value)}
        onKeyDown={keys}
      />
      <div class="editor-bar">
        <span class="muted small">
          {lines} lines · {text === base ? "no changes" : "changed"}
          {updatedBy && text === base && <span class="live-updated"> · Updated by {updatedBy}</span>} · {tabMoves ? "Tab moves focus" : "Tab indents (Escape to move on)"}
        </span>
        <ErrorNote error={error} />
        <div class="actions">
          <button type="button" class="btn btn-ghost btn-small" onClick={() => onClose()}>
            Cancel
          </button>
          <button type="button" class="btn btn-primary btn-small" disabled={busy || (text === base && !conflict)} onClick={() => void save()}>
            {busy ? "Saving…" : "Save"}
          </button>
        </div>
      </div>
    </div>
  );
}
