// Signing in with a name and password.
import { useState } from "preact/hooks";
import { ApiError, describeError } from "../../api/client";
import { ErrorNote, Field } from "../../components/Field";
import { signIn, signedOutReason, workspaceName } from "../../state/session";

export function Login() {
  const [name, setName] = useState("");
  const [password, setPassword] = useState("");
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await signIn(name.trim(), password);
    } catch (err) {
      // A deactivated account (the password was right) is said as the
      // server says it; any other 401 is a wrong name or password.
      const wrong = err instanceof ApiError && err.status === 401 && err.code !== "deactivated";
      setError(wrong ? "That name and password do not match. Check both and try again." : describeError(err));
      setBusy(false);
    }
  };

  return (
    <main class="auth">
      <form class="auth-card" onSubmit={submit} aria-labelledby="login-title">
        <div class="auth-brand">
          <span class="brand-mark" aria-hidden="true" />
          <span>{workspaceName.value}</span>
        </div>
        <h1 id="login-title">Sign in</h1>
        {signedOutReason.value && <p class="notice">{signedOutReason.value}</p>}
        <Field label="Name">
          {(p) => <input {...p} value={name} onInput={(e) => setName(e.currentTarget.value)} autocomplete="username" autoFocus required />}
        </Field>
        <Field label="Password">
          {(p) => (
            <input {...p} type="password" value={password} onInput={(e) => setPassword(e.currentTarget.value)} autocomplete="current-password" required />
          )}
        </Field>
        <ErrorNote error={error} />
        <button type="submit" class="btn btn-primary btn-block" disabled={busy}>
          {busy ? "Signing in…" : "Sign in"}
        </button>
        <p class="muted small">New here? Ask the Captain for an invitation link.</p>
      </form>
    </main>
  );
}
