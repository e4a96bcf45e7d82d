// Editing a text file of the workspace (loaded only when someone edits):
// Ctrl/Cmd-S saves, Escape cancels; Tab indents rather than leaving the
// box (Ctrl-M or Escape lets focus move on, as a keyboard user expects).
import { useEffect, useRef, useState } from "preact/hooks";
import { api, describeError } from "../../api/client";
import { ErrorNote } from "../../components/Field";
import { toast } from "../../state/toasts";

export function Editor({ channel, path, initial, onClose }: { channel: string; path: string; initial: string; onClose: (saved?: string) => void }) {
  const [text, setText] = useState(initial);
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
      if (e.key === "Escape" && text === initial) {
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
          {lines} lines · {text === initial ? "no changes" : "changed"} · {tabMoves ? "Tab moves focus" : "Tab indents (Escape to move on)"}
        </span>
        <ErrorNote error={error} />
        <div class="actions">
          <button type="button" class="btn btn-ghost btn-small" onClick={() => onClose()}>
            Cancel
          </button>
          <button type="button" class="btn btn-primary btn-small" disabled={busy || text === initial} onClick={() => void save()}>
            {busy ? "Saving…" : "Save"}
          </button>
        </div>
      </div>
    </div>
  );
}
