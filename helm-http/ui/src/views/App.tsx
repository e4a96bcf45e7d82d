// Which screen: loading, the server unreachable, first run, sign-in,
// accepting an invitation, or the workspace.
import { route } from "../state/router";
import { phase } from "../state/session";
import { FirstRun } from "./auth/FirstRun";
import { Join } from "./auth/Join";
import { Login } from "./auth/Login";
import { Shell } from "./shell/Shell";

export function App() {
  const current = phase.value;
  if (current === "loading") {
    return (
      <div class="splash" aria-busy="true">
        <span class="brand-mark" aria-hidden="true" />
        <span class="sr-only">Loading Helm…</span>
      </div>
    );
  }
  if (current === "unreachable") {
    return (
      <main class="auth">
        <div class="auth-card">
          <h1>Helm is not answering</h1>
          <p>The page loaded, but the server did not answer. Check that it is running, then try again.</p>
          <button type="button" class="btn btn-primary" onClick={() => location.reload()}>
            Try again
          </button>
        </div>
      </main>
    );
  }
  if (current === "setup") return <FirstRun />;
  if (current === "signed-out") return route.value.name === "join" ? <Join /> : <Login />;
  return <Shell />;
}
