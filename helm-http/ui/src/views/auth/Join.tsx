// Accepting an invitation from its link: /join#<code>. The code is checked
// as the page opens, so a used, revoked or expired link says so at once
// instead of after the whole form is filled in.
import { useEffect, useState } from "preact/hooks";
import { api, ApiError, describeError } from "../../api/client";
import { ErrorNote, Field, patternMessage } from "../../components/Field";
import { USER_NAME_PATTERN, USER_NAME_RULE } from "../../lib/names";
import { enter, workspaceName } from "../../state/session";

export function Join() {
  const code = decodeURIComponent(location.hash.replace(/^#/, ""));
  const [name, setName] = useState("");
  const [displayName, setDisplayName] = useState("");
  const [password, setPassword] = useState("");
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  // What checking the code said: its role, or why it cannot be used. A check
  // that could not be made leaves the form up; joining checks again.
  const [check, setCheck] = useState<{ role: string } | { refused: string }>();

  useEffect(() => {
    if (!code) return;
    api.post("/api/invites/check", { body: { code } }).then(
      (valid) => setCheck({ role: valid.role }),
      (err) => err instanceof ApiError && err.status === 401 && setCheck({ refused: describeError(err) }),
    );
  }, [code]);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const session = await api.post("/api/invites/accept", {
        body: { code, name: name.trim(), display_name: displayName.trim() || undefined, password },
      });
      history.replaceState(null, "", "/");
      await enter(session.user);
    } catch (err) {
      setError(describeError(err));
      setBusy(false);
    }
  };

  if (!code) {
    return (
      <main class="auth">
        <div class="auth-card">
          <h1>This link has no invitation in it</h1>
          <p>An invitation link ends with a code after <code>#</code>. Ask whoever invited you to send the whole link again.</p>
          <a class="btn" href="/login">
            Go to sign-in
          </a>
        </div>
      </main>
    );
  }

  if (check && "refused" in check) {
    return (
      <main class="auth">
        <div class="auth-card">
          <h1>This invitation cannot be used</h1>
          <p role="alert">{check.refused}</p>
          <p>Ask whoever invited you for a new link. If you joined already, sign in.</p>
          <a class="btn" href="/login">
            Go to sign-in
          </a>
        </div>
      </main>
    );
  }

  return (
    <main class="auth">
      <form class="auth-card" onSubmit={submit} aria-labelledby="join-title">
        <div class="auth-brand">
          <span class="brand-mark" aria-hidden="true" />
          <span>{workspaceName.value}</span>
        </div>
        <h1 id="join-title">Join {workspaceName.value}</h1>
        <p class="muted">
          You were invited{check && "role" in check ? ` as ${check.role === "admin" ? "an admin" : "a member"}` : ""}. Choose how people will mention you, and a password.
        </p>
        <Field label="Name" hint="Lowercase letters, digits, - _ or . — others mention you as @name.">
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
              autoFocus
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
        <button type="submit" class="btn btn-primary btn-block" disabled={busy}>
          {busy ? "Joining…" : "Join the workspace"}
        </button>
      </form>
    </main>
  );
}
