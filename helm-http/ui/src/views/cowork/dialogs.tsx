// Cowork's dialogs: a new file (its name's rule said), rename, delete
// (confirmed), and leaving a file with unsaved changes.
import { useState } from "preact/hooks";
import { ApiError, api, describeError } from "../../api/client";
import { Dialog } from "../../components/Dialog";
import { ErrorNote, Field } from "../../components/Field";
import { existsQuietly } from "./Rail";
import { MODE_INFO, baseName, fileNameFor, modeFolder, nameProblem, nameRule, parentOf, starterContent, type Mode } from "../../lib/cowork";

/**
 * A file's name asked for in a dialog (a new file, a rename): the mode's
 * rule checked before anything is sent, the extension added when left out,
 * and `act` given the checked file name. `act` answers a problem with the
 * name (said under the field) or nothing once done; what it throws is
 * said below the form.
 */
function NameDialog({
  title,
  label,
  hint,
  initial,
  submit: submitLabel,
  mode,
  selectStem,
  onClose,
  act,
}: {
  title: string;
  label: string;
  hint: string;
  initial: string;
  submit: string;
  mode: Mode;
  /** Select the name without its extension when the field takes focus, to type over. */
  selectStem?: boolean;
  onClose: () => void;
  act: (file: string) => Promise<string | undefined>;
}) {
  const [name, setName] = useState(initial);
  const [problem, setProblem] = useState<string>();
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    const wrong = nameProblem(name, mode);
    setProblem(wrong);
    if (wrong) return;
    setBusy(true);
    setError(undefined);
    try {
      setProblem(await act(fileNameFor(name, mode)));
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog title={title} onClose={onClose}>
      <form onSubmit={submit} class="stack" noValidate>
        <Field label={label} hint={hint} error={problem}>
          {(p) => (
            <input
              {...p}
              value={name}
              onInput={(e) => {
                setName(e.currentTarget.value);
                setProblem(undefined);
              }}
              required
              maxLength={100}
              autoFocus
              autocomplete="off"
              spellcheck={false}
              onFocus={
                selectStem
                  ? (e) => {
                      const el = e.currentTarget;
                      const dot = el.value.lastIndexOf(".");
                      el.setSelectionRange(0, dot > 0 ? dot : el.value.length);
                    }
                  : undefined
              }
            />
          )}
        </Field>
        <ErrorNote error={error} />
        <div class="actions">
          <button type="button" class="btn btn-ghost" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" class="btn btn-primary" disabled={busy}>
            {submitLabel}
          </button>
        </div>
      </form>
    </Dialog>
  );
}

export function NewFileDialog({ channel, mode, suggested, onClose, onDone }: { channel: string; mode: Mode; suggested: string; onClose: () => void; onDone: (path: string) => void }) {
  const info = MODE_INFO[mode];
  const folder = modeFolder(mode);
  const create = async (file: string) => {
    const path = `${folder}/${file}`;
    // A create-only write: the server refuses a taken name (409) instead of
    // replacing what someone, or the agent, just made there; it makes the
    // folders too.
    try {
      await api.put("/api/channels/{channel}/files", { path: { channel }, body: { path, content: starterContent(mode, file), create: true } });
    } catch (err) {
      if (err instanceof ApiError && err.code === "conflict") return `There is already ${file} in ${folder}. Choose another name.`;
      throw err;
    }
    onDone(path);
    return undefined;
  };
  return (
    <NameDialog
      title={`New ${info.noun}`}
      label="Name"
      hint={`${nameRule(mode)} It goes in ${folder}.`}
      initial={suggested}
      submit={`Create ${info.noun}`}
      mode={mode}
      selectStem
      onClose={onClose}
      act={create}
    />
  );
}

export function RenameDialog({ channel, mode, path, beforeMove, onClose, onDone }: { channel: string; mode: Mode; path: string; beforeMove?: () => Promise<boolean>; onClose: () => void; onDone: (path: string) => void }) {
  // Code keeps its folders in the name (src/main.py); the others are one level.
  const folder = modeFolder(mode);
  const current = mode === "code" ? path.slice(folder.length + 1) : baseName(path);
  const rename = async (file: string) => {
    const to = mode === "code" ? `${folder}/${file}` : `${parentOf(path)}/${file}`;
    const taken = `There is already ${file} there. Choose another name.`;
    if (to === path) {
      onClose();
      return undefined;
    }
    if (await existsQuietly(channel, to)) return taken;
    if (beforeMove && !(await beforeMove())) return undefined;
    try {
      await api.post("/api/channels/{channel}/files/move", { path: { channel }, body: { from: path, to } });
    } catch (err) {
      // Taken meanwhile: the move never replaces a file.
      if (err instanceof ApiError && err.status === 409) return taken;
      throw err;
    }
    onDone(to);
    return undefined;
  };
  return (
    <NameDialog
      title={`Rename ${baseName(path)}`}
      label="New name"
      hint={nameRule(mode)}
      initial={current}
      submit="Rename"
      mode={mode}
      onClose={onClose}
      act={rename}
    />
  );
}

export function DeleteDialog({ channel, path, onClose, onDone }: { channel: string; path: string; onClose: () => void; onDone: () => void }) {
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const remove = async () => {
    setBusy(true);
    try {
      await api.delete("/api/channels/{channel}/files", { path: { channel }, query: { path } });
      onDone();
    } catch (err) {
      setError(describeError(err));
      setBusy(false);
    }
  };
  return (
    <Dialog title={`Delete ${baseName(path)}?`} onClose={onClose}>
      <p>
        <code>{path}</code> will be removed from the workspace, for everyone in the channel and its agent. This cannot be undone.
      </p>
      <ErrorNote error={error} />
      <div class="actions">
        <button type="button" class="btn btn-ghost" onClick={onClose} autoFocus>
          Keep it
        </button>
        <button type="button" class="btn btn-danger" onClick={remove} disabled={busy}>
          Delete
        </button>
      </div>
    </Dialog>
  );
}

export function LeaveDialog({ path, onSave, onDiscard, onClose }: { path: string; onSave: () => Promise<void>; onDiscard: () => void; onClose: () => void }) {
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const save = async () => {
    setBusy(true);
    try {
      await onSave();
    } catch (e) {
      setError(describeError(e));
      setBusy(false);
    }
  };
  return (
    <Dialog title="Unsaved changes" onClose={onClose}>
      <p>
        <code>{path}</code> has changes that are not saved. Save them before you go?
      </p>
      <ErrorNote error={error} />
      <div class="actions">
        <button type="button" class="btn btn-ghost" onClick={onClose} autoFocus>
          Keep editing
        </button>
        <button type="button" class="btn btn-danger-quiet btn" onClick={onDiscard} disabled={busy}>
          Discard changes
        </button>
        <button type="button" class="btn btn-primary" onClick={() => void save()} disabled={busy}>
          Save and go
        </button>
      </div>
    </Dialog>
  );
}
