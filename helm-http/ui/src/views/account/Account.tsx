// One's own account: who you are here, and changing your password (the
// current one first, so a session left open on another screen cannot lock
// its owner out). The server's rules are said before anything is typed.
import { useState } from "preact/hooks";
import { api, describeError } from "../../api/client";
import { ErrorNote, Field } from "../../components/Field";
import { me } from "../../state/session";
import { toast } from "../../state/toasts";
import { QuickNoteButton } from "../shell/QuickNote";
import { DrawerButton } from "../shell/Shell";

/** The server's rule for passwords (helm-core's `password::validate`). */
const PASSWORD_RULE = "At least 10 characters (at most 1024 bytes). A phrase of a few words is easy to remember and hard to guess.";
const MIN_PASSWORD = 10;

const ROLE_WORDS = {
  captain: "the Captain: you own the workspace and may do everything",
  admin: "an admin: you manage people, providers and every channel",
  member: "a member: you work in public channels and the private ones you belong to",
} as const;

export function AccountView() {
  document.title = "Your account · Helm";
  const user = me.value;
  return (
    <div class="admin">
      <header class="admin-header">
        <DrawerButton />
        <h1>Your account</h1>
        <QuickNoteButton />
      </header>
      <div class="page">
        <div class="stack-lg">
          {user && (
            <section class="settings-section">
              <h3>You</h3>
              <p>
                {user.display_name} (<span>@{user.name}</span>) is {ROLE_WORDS[user.role]}.
              </p>
            </section>
          )}
          <ChangePassword />
        </div>
      </div>
    </div>
  );
}

function ChangePassword() {
  const [current, setCurrent] = useState("");
  const [password, setPassword] = useState("");
  const [repeat, setRepeat] = useState("");
  const [error, setError] = useState<string>();
  const [mismatch, setMismatch] = useState<string>();
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    if (password !== repeat) {
      setMismatch("The two new passwords differ; type the same one twice.");
      return;
    }
    setBusy(true);
    try {
      await api.put("/api/auth/password", { body: { current_password: current, password } });
      setCurrent("");
      setPassword("");
      setRepeat("");
      toast("Your password is changed. Use the new one next time you sign in.");
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="settings-section" onSubmit={submit}>
      <h3>Change password</h3>
      <p class="muted rule">{PASSWORD_RULE}</p>
      <PasswordField
        label="Current password"
        value={current}
        autocomplete="current-password"
        onInput={(v) => {
          setCurrent(v);
          setError(undefined);
        }}
      />
      <PasswordField
        label="New password"
        hint={`At least ${MIN_PASSWORD} characters.`}
        value={password}
        autocomplete="new-password"
        onInput={(v) => {
          setPassword(v);
          setMismatch(undefined);
          setError(undefined);
        }}
      />
      <PasswordField
        label="Repeat the new password"
        error={mismatch}
        value={repeat}
        autocomplete="new-password"
        onInput={(v) => {
          setRepeat(v);
          setMismatch(undefined);
        }}
      />
      <ErrorNote error={error} />
      <div class="actions">
        <button type="submit" class="btn btn-primary" disabled={busy}>
          Change password
        </button>
      </div>
    </form>
  );
}

/** A required password input; a new password is held to the server's minimum length. */
function PasswordField({
  label,
  hint,
  error,
  value,
  autocomplete,
  onInput,
}: {
  label: string;
  hint?: string;
  error?: string;
  value: string;
  autocomplete: "current-password" | "new-password";
  onInput: (value: string) => void;
}) {
  return (
    <Field label={label} hint={hint} error={error}>
      {(p) => (
        <input
          {...p}
          type="password"
          value={value}
          minLength={autocomplete === "new-password" ? MIN_PASSWORD : undefined}
          autocomplete={autocomplete}
          required
          onInput={(e) => onInput(e.currentTarget.value)}
        />
      )}
    </Field>
  );
}
