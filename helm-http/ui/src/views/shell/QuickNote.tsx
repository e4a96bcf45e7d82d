// Quick Note: the top bar's note button (and `n`) opens a compact overlay
// under the button (a sheet at the bottom on a phone) to jot a Markdown note
// into a channel's /workspace/notes. Saving changes nothing else: not the
// address, the open thread, the chat's scroll position, nor the focus,
// which goes back to exactly where it was. A draft is kept per person in
// localStorage until it is saved (closing or reloading keeps it).
import { computed } from "@preact/signals";
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from "preact/hooks";
import { api, describeError } from "../../api/client";
import { ErrorNote } from "../../components/Field";
import { Icon } from "../../components/Icon";
import { defaultNoteTarget, draftKey, isEmptyDraft, lastChannelKey, noteTargets, parseDraft, savedNoteMessage, type NoteDraft } from "../../lib/notes";
import { channels } from "../../state/channels";
import { coworkPath, route } from "../../state/router";
import { isAdmin, me } from "../../state/session";
import { toast } from "../../state/toasts";
import { overlay } from "./Shell";

/** Where the focus was when Quick Note opened: it goes back there on close. */
let opener: HTMLElement | null = null;

/** Opens Quick Note, remembering the focus to give back. */
export function openQuickNote(): void {
  const active = document.activeElement as HTMLElement | null;
  // From the palette (which closes as this opens) there is nothing to go back to.
  opener = active && active !== document.body && !active.closest(".palette") ? active : null;
  overlay.value = "note";
}

const targets = computed(() =>
  noteTargets(
    [...channels.value.values()].map((e) => e.channel),
    isAdmin.value,
  ),
);

function storage(): Storage | undefined {
  try {
    return window.localStorage;
  } catch {
    return undefined;
  }
}

function readDraft(user: number | undefined): NoteDraft {
  return user === undefined ? { title: "", text: "" } : parseDraft(storage()?.getItem(draftKey(user)) ?? null);
}

function writeDraft(user: number | undefined, draft: NoteDraft): void {
  if (user === undefined) return;
  try {
    if (isEmptyDraft(draft)) storage()?.removeItem(draftKey(user));
    else storage()?.setItem(draftKey(user), JSON.stringify(draft));
  } catch {
    // Storage full or refused: the draft lives as long as the page.
  }
}

function lastChannel(user: number | undefined): number | undefined {
  if (user === undefined) return undefined;
  const stored = Number(storage()?.getItem(lastChannelKey(user)));
  return Number.isInteger(stored) && stored > 0 ? stored : undefined;
}

/** The top bar's button. It does not take the focus on a click, so the focus goes back to where it was. */
export function QuickNoteButton() {
  const open = overlay.value === "note";
  return (
    <button
      type="button"
      class={open ? "icon-button quick-note-button active" : "icon-button quick-note-button"}
      aria-label="Quick note"
      title="Quick note (n)"
      aria-haspopup="dialog"
      aria-expanded={open}
      onMouseDown={(e) => e.preventDefault()}
      onClick={() => (open ? (overlay.value = undefined) : openQuickNote())}
    >
      <Icon name="note" />
    </button>
  );
}

/** Where the overlay sits: under the visible note button, its right edge on the button's. */
function anchor(): { top: number; right: number } | undefined {
  for (const button of document.querySelectorAll<HTMLElement>(".quick-note-button")) {
    const box = button.getBoundingClientRect();
    if (box.width === 0 || box.height === 0) continue;
    return { top: Math.round(box.bottom + 6), right: Math.max(8, Math.round(window.innerWidth - box.right)) };
  }
  return undefined;
}

const MAC = /Mac|iPhone|iPad/.test(navigator.platform || navigator.userAgent);

const FOCUSABLE = "button:not(:disabled), input:not(:disabled), select:not(:disabled), textarea:not(:disabled), a[href]";

export function QuickNote({ onClose }: { onClose: () => void }) {
  const user = me.value?.id;
  const r = route.value;
  const choices = targets.value;
  const initial = useMemo(() => readDraft(user), [user]);
  const [title, setTitle] = useState(initial.title);
  const [text, setText] = useState(initial.text);
  const [channelId, setChannelId] = useState<number | undefined>(() => defaultNoteTarget(choices, r.name === "channel" ? r.channel : undefined, lastChannel(user))?.id);
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const [position, setPosition] = useState(anchor);
  const box = useRef<HTMLDivElement>(null);
  const textArea = useRef<HTMLTextAreaElement>(null);
  const target = choices.find((c) => c.id === channelId) ?? defaultNoteTarget(choices, r.name === "channel" ? r.channel : undefined, lastChannel(user));

  // In: the focus on the text (where the caret was left); out: back to where it was.
  useLayoutEffect(() => {
    const area = textArea.current;
    area?.focus({ preventScroll: true });
    if (area) area.setSelectionRange(area.value.length, area.value.length);
    return () => {
      const back = opener;
      opener = null;
      if (back?.isConnected) back.focus({ preventScroll: true });
    };
  }, []);

  // Kept under the button as the window changes.
  useEffect(() => {
    const place = () => setPosition(anchor());
    window.addEventListener("resize", place);
    return () => window.removeEventListener("resize", place);
  }, []);

  // A press outside closes it (the draft stays); the note button toggles it itself.
  useEffect(() => {
    const outside = (e: PointerEvent) => {
      const at = e.target as Element | null;
      if (!at || box.current?.contains(at) || at.closest?.(".quick-note-button")) return;
      opener = null; // The press decides where the focus goes.
      onClose();
    };
    document.addEventListener("pointerdown", outside, true);
    return () => document.removeEventListener("pointerdown", outside, true);
  }, []);

  // Kept as it is typed (not in an effect, which a quick Escape could outrun).
  const draft = useRef({ title, text });
  const change = (next: Partial<NoteDraft>) => {
    draft.current = { ...draft.current, ...next };
    writeDraft(user, draft.current);
    if (next.title !== undefined) setTitle(next.title);
    if (next.text !== undefined) setText(next.text);
  };

  const save = async () => {
    if (busy) return;
    if (!target) {
      setError("There is no channel you can save a note in.");
      return;
    }
    setBusy(true);
    setError(undefined);
    try {
      const entry = await api.post("/api/channels/{channel}/notes", {
        path: { channel: target.name },
        body: { text: draft.current.text, title: draft.current.title.trim() || undefined },
      });
      writeDraft(user, { title: "", text: "" });
      if (user !== undefined) {
        try {
          storage()?.setItem(lastChannelKey(user), String(target.id));
        } catch {
          // Only a convenience.
        }
      }
      onClose();
      toast(savedNoteMessage(entry.path, target.name), "info", coworkPath(target.name, entry.path));
    } catch (e) {
      setError(describeError(e));
      setBusy(false);
    }
  };

  const keys = (e: KeyboardEvent) => {
    if (e.key === "Escape") {
      // Not the thread behind, nor the drawer: only this closes.
      e.preventDefault();
      e.stopPropagation();
      onClose();
    } else if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      e.stopPropagation();
      void save();
    } else if (e.key === "Tab") {
      // The focus stays inside while it is open.
      const all = [...(box.current?.querySelectorAll<HTMLElement>(FOCUSABLE) ?? [])];
      const first = all[0];
      const last = all[all.length - 1];
      if (!first || !last) return;
      if (e.shiftKey && document.activeElement === first) {
        e.preventDefault();
        last.focus();
      } else if (!e.shiftKey && document.activeElement === last) {
        e.preventDefault();
        first.focus();
      }
    }
  };

  const placed = position ? { "--note-top": `${position.top}px`, "--note-right": `${position.right}px` } : undefined;
  return (
    <div ref={box} class="quick-note" role="dialog" aria-modal="true" aria-labelledby="quick-note-title" style={placed} onKeyDown={keys}>
      <form
        class="quick-note-form"
        onSubmit={(e) => {
          e.preventDefault();
          void save();
        }}
      >
        <header class="quick-note-head">
          <h2 id="quick-note-title">
            <Icon name="note" size={16} /> Quick note
          </h2>
          <span class="quick-note-keys" aria-hidden="true">
            <kbd>{MAC ? "⌘ Enter" : "Ctrl Enter"}</kbd> saves
          </span>
        </header>
        <div class="quick-note-row">
          <label for="quick-note-channel">Save to</label>
          <select
            id="quick-note-channel"
            value={target ? String(target.id) : ""}
            disabled={choices.length === 0}
            onChange={(e) => {
              setChannelId(Number(e.currentTarget.value));
              setError(undefined);
            }}
          >
            {choices.length === 0 && <option value="">No channel to save in</option>}
            {choices.map((c) => (
              <option key={c.id} value={String(c.id)}>
                #{c.name}
              </option>
            ))}
          </select>
        </div>
        <label class="sr-only" for="quick-note-name">
          Title (optional)
        </label>
        <input
          id="quick-note-name"
          class="quick-note-name"
          placeholder="Title (optional)"
          autoComplete="off"
          value={title}
          onInput={(e) => change({ title: e.currentTarget.value })}
        />
        <label class="sr-only" for="quick-note-text">
          Note (Markdown)
        </label>
        <textarea
          id="quick-note-text"
          ref={textArea}
          class="quick-note-text"
          rows={7}
          placeholder="Write in Markdown…"
          value={text}
          onInput={(e) => change({ text: e.currentTarget.value })}
        />
        <ErrorNote error={error} />
        <footer class="quick-note-foot">
          <span class="hint">
            {target ? (
              <>
                Into <code>/workspace/notes</code> of #{target.name}
              </>
            ) : (
              "No channel to save in"
            )}
          </span>
          <button type="button" class="btn btn-small btn-ghost" title="Close (Escape); the draft is kept" onClick={onClose}>
            Close
          </button>
          <button type="submit" class="btn btn-small btn-primary" disabled={busy} aria-keyshortcuts="Control+Enter Meta+Enter" title={MAC ? "Save (⌘ Enter)" : "Save (Ctrl Enter)"}>
            {busy ? "Saving…" : "Save"}
          </button>
        </footer>
      </form>
    </div>
  );
}
