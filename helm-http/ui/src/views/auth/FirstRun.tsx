// First run (spec §8.1): create the Captain, connect a model provider, see
// the computer the agents will use, name the workspace, and land in #main
// with Skipper ready. Nothing about agents, memory or directories is asked.
// A Captain who leaves before the end comes back to the next unfinished
// step, as the server tells it (see `unfinishedFirstRun`); the step reached
// is kept for the tab too, so a reload resumes it exactly.
import { useEffect, useState } from "preact/hooks";
import { ApiError, api, describeError } from "../../api/client";
import type { Status } from "../../api/types";
import { ErrorNote, Field, patternMessage } from "../../components/Field";
import { USER_NAME_PATTERN, USER_NAME_RULE } from "../../lib/names";
import { Icon } from "../../components/Icon";
import { FIRST_RUN_KEY, enter, firstRunStep, markEntered, workspaceName } from "../../state/session";
import { ProviderForm } from "../admin/ProviderForm";

type Step = "captain" | "model" | "computer" | "name";
const STEPS: { id: Step; title: string }[] = [
  { id: "captain", title: "Your account" },
  { id: "model", title: "A model" },
  { id: "computer", title: "The computer" },
  { id: "name", title: "The workspace" },
];

export function FirstRun() {
  const saved = (sessionStorage.getItem(FIRST_RUN_KEY) ?? firstRunStep.value) as Step | null;
  const [step, setStep] = useState<Step>(saved && STEPS.some((s) => s.id === saved) ? saved : "captain");
  const go = (next: Step) => {
    sessionStorage.setItem(FIRST_RUN_KEY, next);
    setStep(next);
    requestAnimationFrame(() => document.querySelector<HTMLElement>(".wizard h1")?.focus());
  };
  const finish = async () => {
    // Said to the server first: a tab closed from here on does not bring the wizard back.
    await markEntered().catch(() => undefined);
    sessionStorage.removeItem(FIRST_RUN_KEY);
    const who = await api.get("/api/auth/me");
    await enter(who.user);
  };
  const index = STEPS.findIndex((s) => s.id === step);

  return (
    <main class="auth">
      <div class="auth-card wizard">
        <div class="auth-brand">
          <span class="brand-mark" aria-hidden="true" />
          <span>Welcome to Helm</span>
        </div>
        <ol class="steps" aria-label="Setup steps">
          {STEPS.map((s, i) => (
            <li key={s.id} class={i < index ? "done" : i === index ? "current" : ""} aria-current={i === index ? "step" : undefined}>
              <span class="step-number" aria-hidden="true">
                {i < index ? <Icon name="check" size={14} /> : i + 1}
              </span>
              {s.title}
            </li>
          ))}
        </ol>
        {step === "captain" && <CaptainStep onDone={() => go("model")} />}
        {step === "model" && <ModelStep onDone={() => go("computer")} />}
        {step === "computer" && <ComputerStep onDone={() => go("name")} />}
        {step === "name" && <NameStep onDone={finish} />}
      </div>
    </main>
  );
}

/** A wrong setup code, for a person (the server's own text names the API field). */
export const WRONG_CODE =
  "That setup code is not right. The server prints it in its log when it starts (a line “Helm setup code: …”), and keeps it in the file setup-code in its data directory.";

function CaptainStep({ onDone }: { onDone: () => void }) {
  // The server's one-time code proves the person at this page can see the
  // server (its log or its data directory), not just reach its port.
  const [code, setCode] = useState(new URLSearchParams(location.search).get("code") ?? "");
  const [name, setName] = useState("");
  const [displayName, setDisplayName] = useState("");
  const [password, setPassword] = useState("");
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await api.post("/api/setup", {
        body: { name: name.trim(), display_name: displayName.trim() || undefined, password, setup_code: code.trim() },
      });
      onDone();
    } catch (err) {
      setError(err instanceof ApiError && err.code === "bad_setup_code" ? WRONG_CODE : describeError(err));
      setBusy(false);
    }
  };
  return (
    <form onSubmit={submit}>
      <h1 tabIndex={-1}>Create the Captain</h1>
      <p class="muted">You are the Captain: the owner of this workspace and its final authority. You can invite others later.</p>
      <Field label="Setup code" hint="The server printed it when it started; it is also in the file setup-code in its data directory.">
        {(p) => (
          <input {...p} value={code} onInput={(e) => setCode(e.currentTarget.value)} autocomplete="one-time-code" spellcheck={false} required autoFocus />
        )}
      </Field>
      <Field label="Name" hint="How you sign in and how people mention you (@name): lowercase letters, digits, - _ or .">
        {(p) => (
          <input
            {...p}
            value={name}
            {...patternMessage(USER_NAME_RULE)}
            onInput={(e) => {
              setName(e.currentTarget.value.toLowerCase());
              setError(undefined);
            }}
            autocomplete="username"
            pattern={USER_NAME_PATTERN}
            required
          />
        )}
      </Field>
      <Field label="Display name" hint="Optional: how your name is shown.">
        {(p) => <input {...p} value={displayName} onInput={(e) => setDisplayName(e.currentTarget.value)} autocomplete="name" />}
      </Field>
      <Field label="Password" hint="At least 10 characters.">
        {(p) => (
          <input {...p} type="password" value={password} minLength={10} onInput={(e) => setPassword(e.currentTarget.value)} autocomplete="new-password" required />
        )}
      </Field>
      <ErrorNote error={error} />
      <div class="actions">
        <button type="submit" class="btn btn-primary" disabled={busy}>
          {busy ? "Creating…" : "Create the Captain"}
        </button>
      </div>
    </form>
  );
}

function ModelStep({ onDone }: { onDone: () => void }) {
  return (
    <div>
      <h1 tabIndex={-1}>Connect a model</h1>
      <p class="muted">
        Agents think with a model you choose. You can change it any time; a channel keeps its agent, files and memory when you do.
      </p>
      <ProviderForm makeDefault onSaved={onDone} submitLabel="Connect and continue" />
      <div class="actions actions-quiet">
        <button type="button" class="btn btn-ghost" onClick={onDone}>
          Skip for now
        </button>
        <span class="muted small">Agents will answer once a model is connected (Workspace → Providers, in the sidebar).</span>
      </div>
    </div>
  );
}

/** What this server's channel computers are, as the status says (the server settles it when asked). */
function isolationWords(isolation: string | null | undefined): string {
  switch (isolation) {
    case "bubblewrap":
      return "Each channel's computer runs in a bubblewrap sandbox: it sees its own /workspace, never the host's files or another channel's.";
    case "process":
      return "bubblewrap is not installed here, so channel computers run as ordinary processes of this server's user: Helm keeps each agent's files to its /workspace, but a command could read what that user can. Install bubblewrap (the bubblewrap package) and restart the server for a sandbox.";
    case "remote":
      return "Channel computers run on another machine this server is configured to use, each in its own workspace.";
    default:
      return "Channel computers are isolated from each other and from the host as the server is configured.";
  }
}

function ComputerStep({ onDone }: { onDone: () => void }) {
  const [status, setStatus] = useState<Status>();
  const [error, setError] = useState<string>();
  useEffect(() => {
    api.get("/api/status").then(setStatus, (e) => setError(describeError(e)));
  }, []);
  return (
    <div>
      <h1 tabIndex={-1}>The computer</h1>
      <p class="muted">Every channel's agent gets a computer of its own: a shell and files in its workspace. Nothing to set up.</p>
      <ul class="facts">
        <li>
          <Icon name="folder" />
          <div>
            <strong>One workspace per channel</strong>
            <span>The agent works in <code>/workspace</code>; the channel's Files view shows the same files.</span>
          </div>
        </li>
        <li>
          <Icon name="terminal" />
          <div>
            <strong>Terminals</strong>
            <span>
              Anyone who can see a channel can open a terminal in its workspace. The terminal of <code>#main</code> is this host's,
              for the Captain and admins only.
            </span>
          </div>
        </li>
        <li>
          <Icon name="shield" />
          <div>
            <strong>Isolation</strong>
            <span>{isolationWords(status?.isolation)}</span>
          </div>
        </li>
        {status?.data_dir && (
          <li>
            <Icon name="archive" />
            <div>
              <strong>Data</strong>
              <span>
                Everything lives in <code>{status.data_dir}</code> on this server.
              </span>
            </div>
          </li>
        )}
      </ul>
      <ErrorNote error={error} />
      <div class="actions">
        <button type="button" class="btn btn-primary" onClick={onDone} autoFocus>
          Continue
        </button>
      </div>
    </div>
  );
}

function NameStep({ onDone }: { onDone: () => Promise<void> }) {
  const [name, setName] = useState(workspaceName.value === "Helm" ? "" : workspaceName.value);
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const chosen = name.trim();
      if (chosen && chosen !== workspaceName.value) {
        const workspace = await api.patch("/api/workspace", { body: { name: chosen } });
        workspaceName.value = workspace.name;
      }
      await onDone();
    } catch (err) {
      setError(describeError(err));
      setBusy(false);
    }
  };
  return (
    <form onSubmit={submit}>
      <h1 tabIndex={-1}>Name the workspace</h1>
      <p class="muted">This is what people see when they sign in. Skipper, the workspace's operator, is waiting for you in #main.</p>
      <Field label="Workspace name" hint="Up to 64 characters. You can rename it later (Workspace → Settings, in the sidebar).">
        {(p) => <input {...p} value={name} placeholder="Helm" maxLength={64} onInput={(e) => setName(e.currentTarget.value)} autoFocus />}
      </Field>
      <ErrorNote error={error} />
      <div class="actions">
        <button type="submit" class="btn btn-primary" disabled={busy}>
          {busy ? "Opening…" : "Enter #main"}
        </button>
      </div>
    </form>
  );
}
