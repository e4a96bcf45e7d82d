// Creating a channel (spec §8.2): a name and, in plain words, what it is
// for. Visibility, instructions and, where the server offers several, the
// computer its agent works on wait behind "More options". It ends in the
// new channel, on its ready announcement.
import { useEffect, useState } from "preact/hooks";
import { api, describeError } from "../../api/client";
import { Dialog } from "../../components/Dialog";
import { ErrorNote, Field, patternMessage } from "../../components/Field";
import { CHANNEL_NAME_PATTERN, CHANNEL_NAME_RULE } from "../../lib/names";
import { loadChannel } from "../../state/channels";
import { channelPath, navigate } from "../../state/router";

export function CreateChannel({ onClose }: { onClose: () => void }) {
  const [name, setName] = useState("");
  const [purpose, setPurpose] = useState("");
  const [visibility, setVisibility] = useState<"public" | "private">("public");
  const [instructions, setInstructions] = useState("");
  // The computers a channel may choose (none: every channel gets the default).
  const [computers, setComputers] = useState<string[]>([]);
  const [computer, setComputer] = useState("");
  const [error, setError] = useState<string>();

  useEffect(() => {
    api.get("/api/status").then(
      (status) => setComputers(status.computers),
      () => setComputers([]),
    );
  }, []);
  const [busy, setBusy] = useState(false);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const created = await api.post("/api/channels", {
        body: {
          name: name.trim().replace(/^#/, ""),
          purpose: purpose.trim(),
          visibility,
          instructions: instructions.trim() || undefined,
          computer: computer || undefined,
        },
      });
      await loadChannel(created.channel.name).catch(() => undefined);
      onClose();
      navigate(channelPath(created.channel.name));
    } catch (err) {
      setError(describeError(err));
      setBusy(false);
    }
  };

  return (
    <Dialog title="Create a channel" onClose={onClose} description="A channel comes with its own agent, computer, files and memory.">
      <form onSubmit={submit} class="stack">
        <Field label="Name" hint={`Such as launch or tax-2026. ${CHANNEL_NAME_RULE}`}>
          {(p) => (
            <div class="input-prefix">
              <span aria-hidden="true">#</span>
              <input
                {...p}
                {...patternMessage(CHANNEL_NAME_RULE)}
                value={name}
                onInput={(e) => {
                  setName(e.currentTarget.value.toLowerCase().replace(/\s+/g, "-"));
                  setError(undefined);
                }}
                pattern={CHANNEL_NAME_PATTERN}
                maxLength={64}
                required
                autoFocus
                autocomplete="off"
              />
            </div>
          )}
        </Field>
        <Field label="What is this channel all about?" hint="In plain words. Its agent works from this.">
          {(p) => (
            <textarea
              {...p}
              rows={3}
              value={purpose}
              onInput={(e) => setPurpose(e.currentTarget.value)}
              placeholder="This channel owns planning and coordinating the product launch."
              required
            />
          )}
        </Field>
        <details class="disclosure">
          <summary>More options</summary>
          <fieldset class="radio-row">
            <legend>Who can see it</legend>
            <label class="check">
              <input type="radio" name="visibility" checked={visibility === "public"} onChange={() => setVisibility("public")} />
              Everyone in the workspace
            </label>
            <label class="check">
              <input type="radio" name="visibility" checked={visibility === "private"} onChange={() => setVisibility("private")} />
              Only people added to it (private)
            </label>
          </fieldset>
          <Field label="Instructions for its agent" hint="Optional: how it should work, beyond the purpose.">
            {(p) => <textarea {...p} rows={3} value={instructions} onInput={(e) => setInstructions(e.currentTarget.value)} />}
          </Field>
          {computers.length > 0 && (
            <Field label="Computer" hint="Where its agent's /workspace, commands and terminals live. Chosen once.">
              {(p) => (
                <select {...p} value={computer} onChange={(e) => setComputer(e.currentTarget.value)}>
                  <option value="">The workspace's default</option>
                  {computers.map((c) => (
                    <option key={c} value={c}>
                      {c}
                    </option>
                  ))}
                </select>
              )}
            </Field>
          )}
        </details>
        <ErrorNote error={error} />
        <div class="actions">
          <button type="button" class="btn btn-ghost" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" class="btn btn-primary" disabled={busy}>
            {busy ? "Creating…" : "Create channel"}
          </button>
        </div>
      </form>
    </Dialog>
  );
}
