// The workspace's own settings for the Captain and admins: its name (what
// people see in the sidebar and when they sign in or join). The first-run
// wizard sets it once; this is where it changes afterwards. Everyone sees
// the new name live (the `workspace.updated` event).
import { useEffect, useState } from "preact/hooks";
import { api, describeError } from "../../api/client";
import { ErrorNote, Field, patternMessage } from "../../components/Field";
import { WORKSPACE_NAME_PATTERN, WORKSPACE_NAME_RULE } from "../../lib/names";
import { workspaceName } from "../../state/session";
import { toast } from "../../state/toasts";

export function WorkspaceSettings() {
  const current = workspaceName.value;
  const [name, setName] = useState(current);
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  // Renamed elsewhere meanwhile: show the name it has now.
  useEffect(() => setName(current), [current]);
  const wanted = name.trim();
  const changed = wanted !== "" && wanted !== current;
  const submit = async (e: Event) => {
    e.preventDefault();
    if (!changed) return;
    setBusy(true);
    setError(undefined);
    try {
      const workspace = await api.patch("/api/workspace", { body: { name: wanted } });
      workspaceName.value = workspace.name;
      toast(`The workspace is now called ${workspace.name}.`);
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="stack-lg">
      <form class="settings-section" onSubmit={submit}>
        <h3>Name</h3>
        <Field label="Workspace name" hint={`What people see in the sidebar and when they sign in or join. ${WORKSPACE_NAME_RULE}`}>
          {(p) => (
            <input
              {...p}
              {...patternMessage(WORKSPACE_NAME_RULE)}
              value={name}
              maxLength={64}
              pattern={WORKSPACE_NAME_PATTERN}
              required
              onInput={(e) => {
                setName(e.currentTarget.value);
                setError(undefined);
              }}
            />
          )}
        </Field>
        <ErrorNote error={error} />
        <div class="actions">
          <button type="submit" class="btn btn-primary" disabled={busy || !changed}>
            Rename
          </button>
        </div>
      </form>
    </div>
  );
}
