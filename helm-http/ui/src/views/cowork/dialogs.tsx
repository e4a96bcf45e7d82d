// Cowork's dialogs: a new file (its name's rule said), rename, delete
// (confirmed), and leaving a file with unsaved changes.
import { useState } from "preact/hooks";
import { ApiError, api, describeError } from "../../api/client";
import { Dialog } from "../../components/Dialog";
import { ErrorNote, Field } from "../../components/Field";
import { existsQuietly } from "./Rail";
import { MODE_INFO, baseName, fileNameFor, modeFolder, nameProblem, nameRule, parentOf, starterContent, type Mode } from "../../lib/cowork";

export function NewFileDialog({ channel, mode, suggested, onClose, onDone }: { channel: string; mode: Mode; suggested: string; onClose: () => void; onDone: (path: string) => void }) {
  const info = MODE_INFO[mode];
  const [name, setName] = useState(suggested);
  const [problem, setProblem] = useState<string>();
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    const wrong = nameProblem(name, mode);
    setProblem(wrong);
    if (wrong) return;
    const file = fileNameFor(name, mode);
    const path = `${modeFolder(mode)}/${file}`;
    setBusy(true);
    setError(undefined);
    try {
      if (await existsQuietly(channel, path)) {
        setProblem(`There is already ${file} in ${modeFolder(mode)}. Choose another name.`);
        return;
      }
      // Writing the file makes its folders too.
      await api.put("/api/channels/{channel}/files", { path: { channel }, body: { path, content: starterContent(mode, file) } });
      onDone(path);
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog title={`New ${info.noun}`} onClose={onClose}>
      <form onSubmit={submit} class="stack" noValidate>
        <Field label="Name" hint={`${nameRule(mode)} It goes in ${modeFolder(mode)}.`} error={problem}>
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
              onFocus={(e) => {
                // The name without its extension is selected, to type over.
                const el = e.currentTarget;
                const dot = el.value.lastIndexOf(".");
                el.setSelectionRange(0, dot > 0 ? dot : el.value.length);
              }}
            />
          )}
        </Field>
        <ErrorNote error={error} />
        <div class="actions">
          <button type="button" class="btn btn-ghost" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" class="btn btn-primary" disabled={busy}>
            Create {info.noun}
          </button>
        </div>
      </form>
    </Dialog>
  );
}

export function RenameDialog({ channel, mode, path, beforeMove, onClose, onDone }: { channel: string; mode: Mode; path: string; beforeMove?: () => Promise<boolean>; onClose: () => void; onDone: (path: string) => void }) {
  // Code keeps its folders in the name (src/main.py); the others are one level.
  const folder = modeFolder(mode);
  const current = mode === "code" ? path.slice(folder.length + 1) : baseName(path);
  const [name, setName] = useState(current);
  const [problem, setProblem] = useState<string>();
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    const wrong = nameProblem(name, mode);
    setProblem(wrong);
    if (wrong) return;
    const file = fileNameFor(name, mode);
    const to = mode === "code" ? `${folder}/${file}` : `${parentOf(path)}/${file}`;
    if (to === path) return onClose();
    setBusy(true);
    setError(undefined);
    try {
      if (await existsQuietly(channel, to)) {
        setProblem(`There is already ${file} there. Choose another name.`);
        return;
      }
      if (beforeMove && !(await beforeMove())) return;
      await api.post("/api/channels/{channel}/files/move", { path: { channel }, body: { from: path, to } });
      onDone(to);
    } catch (err) {
      setError(err instanceof ApiError && err.status === 409 ? `There is already ${file} there. Choose another name.` : describeError(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog title={`Rename ${baseName(path)}`} onClose={onClose}>
      <form onSubmit={submit} class="stack" noValidate>
        <Field label="New name" hint={nameRule(mode)} error={problem}>
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
            />
          )}
        </Field>
        <ErrorNote error={error} />
        <div class="actions">
          <button type="button" class="btn btn-ghost" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" class="btn btn-primary" disabled={busy}>
            Rename
          </button>
        </div>
      </form>
    </Dialog>
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
