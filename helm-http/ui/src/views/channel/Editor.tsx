// Editing a text file of the workspace (loaded only when someone edits):
// Ctrl/Cmd-S saves, Escape cancels; Tab indents rather than leaving the
// box (Ctrl-M or Escape lets focus move on, as a keyboard user expects).
// When the file changes on disk meanwhile (`disk`: the agent wrote it),
// the new text replaces one with no changes; changes here are never
// overwritten: a bar offers Reload (discarding them) or Keep mine.
import { useEffect, useRef, useState } from "preact/hooks";
import { api, describeError } from "../../api/client";
import { ErrorNote } from "../../components/Field";
import { toast } from "../../state/toasts";

export function Editor({
  channel,
  path,
  initial,
  disk,
  onClose,
}: {
  channel: string;
  path: string;
  initial: string;
  /** What is on disk, when it changed after the editor opened (a new `seq` each time). */
  disk?: { content: string; by: string; seq: number };
  onClose: (saved?: string) => void;
}) {
  const [text, setText] = useState(initial);
  // What the text is compared with: the file as it is on disk (as far as is known).
  const [base, setBase] = useState(initial);
  const [conflict, setConflict] = useState<{ content: string; by: string }>();
  const [updatedBy, setUpdatedBy] = useState<string>();
  const seen = useRef(disk?.seq);
  useEffect(() => {
    if (!disk || disk.seq === seen.current) return;
    seen.current = disk.seq;
    if (disk.content === base) return;
    if (disk.content === text) {
      setBase(disk.content);
      setConflict(undefined);
    } else if (text === base) {
      setText(disk.content);
      setBase(disk.content);
      setUpdatedBy(disk.by);
    } else setConflict({ content: disk.content, by: disk.by });
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
      await api.put("/api/channels/{channel}/files", { path: { channel }, body: { path, content: text } });
      toast(`Saved ${path}.`);
      onClose(text);
    } catch (e) {
      setError(describeError(e));
      setBusy(false);
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
            <strong>{conflict.by} changed this file.</strong> Your edits here are not saved.
          </p>
          <div class="live-conflict-actions">
            <button
              type="button"
              class="btn btn-small"
              onClick={() => {
                setText(conflict.content);
                setBase(conflict.content);
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
