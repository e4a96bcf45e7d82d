// Renaming a thread: a small dialog with its title, offered from the
// thread's header and from the Threads list. Anyone who may post in the
// channel may rename its threads (not while the channel is archived); the
// server checks the title (one line, 1 to 200 characters) and says why not.
import { useState } from "preact/hooks";
import { describeError } from "../../api/client";
import type { Thread } from "../../api/types";
import { Dialog } from "../../components/Dialog";
import { ErrorNote, Field } from "../../components/Field";
import { renameThread } from "../../state/threads";
import { toast } from "../../state/toasts";

/** The longest title the server accepts, in characters. */
export const MAX_THREAD_TITLE = 200;

export function RenameThreadDialog({ thread, onClose }: { thread: Thread; onClose: () => void }) {
  const [title, setTitle] = useState(thread.title);
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const wanted = title.trim();
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await renameThread(thread.id, wanted);
      toast("Thread renamed.");
      onClose();
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog title="Rename this thread" onClose={onClose} description="Everyone in the channel sees the new title.">
      <form onSubmit={submit} class="stack">
        <Field label="Title">
          {(p) => (
            <input
              {...p}
              value={title}
              maxLength={MAX_THREAD_TITLE}
              onInput={(e) => setTitle(e.currentTarget.value)}
              onFocus={(e) => e.currentTarget.select()}
              required
              autoFocus
            />
          )}
        </Field>
        <ErrorNote error={error} />
        <div class="actions">
          <button type="button" class="btn btn-ghost" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" class="btn btn-primary" disabled={busy || !wanted || wanted === thread.title}>
            Rename
          </button>
        </div>
      </form>
    </Dialog>
  );
}
