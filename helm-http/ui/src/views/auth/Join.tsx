// Accepting an invitation from its link: /join#<code>.
import { useState } from "preact/hooks";
import { api, describeError } from "../../api/client";
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

  return (
    <main class="auth">
      <form class="auth-card" onSubmit={submit} aria-labelledby="join-title">
        <div class="auth-brand">
          <span class="brand-mark" aria-hidden="true" />
          <span>{workspaceName.value}</span>
        </div>
        <h1 id="join-title">Join {workspaceName.value}</h1>
        <p class="muted">You were invited. Choose how people will mention you, and a password.</p>
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
