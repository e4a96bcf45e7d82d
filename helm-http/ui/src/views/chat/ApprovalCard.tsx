// An agent asking for the Captain's approval, in the thread where it asked:
// Approve and Deny for the Captain and admins, the plain state for others.
import { useState } from "preact/hooks";
import { describeError } from "../../api/client";
import type { Approval } from "../../api/types";
import { Icon } from "../../components/Icon";
import { Time } from "../../components/Time";
import { decideApproval } from "../../state/activity";
import { isAdmin } from "../../state/session";
import { userById } from "../../state/users";

const ACTIONS: Record<string, string> = {
  host_command: "Run a command on the host",
  install_package: "Install a package",
  grant_capability: "Grant a capability",
  cross_channel_read: "Read another channel",
  delete_channel: "Delete a channel",
};

export function ApprovalCard({ approval }: { approval: Approval }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const decide = async (approve: boolean) => {
    setBusy(true);
    setError(undefined);
    try {
      await decideApproval(approval.id, approve);
    } catch (e) {
      setError(describeError(e));
    } finally {
      setBusy(false);
    }
  };
  const decidedBy = userById(approval.decided_by)?.display_name;
  const pending = approval.status === "pending";
  return (
    <section class={`approval-card approval-${approval.status}`} aria-label={`Approval request: ${approval.summary}`}>
      <header>
        <Icon name="shield" size={16} />
        <strong>{ACTIONS[approval.action] ?? "Approval needed"}</strong>
        <span class={`pill pill-${approval.status}`}>{approval.status}</span>
      </header>
      <p class="approval-summary">
        <code>{approval.summary}</code>
      </p>
      {approval.reason && <p class="muted">Why: {approval.reason}</p>}
      {pending && isAdmin.value && (
        <div class="actions">
          <button type="button" class="btn btn-primary btn-small" disabled={busy} onClick={() => decide(true)}>
            Approve
          </button>
          <button type="button" class="btn btn-small" disabled={busy} onClick={() => decide(false)}>
            Deny
          </button>
          <span class="muted small">
            Expires <Time at={approval.expires} />
          </span>
        </div>
      )}
      {pending && !isAdmin.value && <p class="muted small">Waiting for the Captain or an admin to decide.</p>}
      {!pending && (
        <p class="muted small">
          {approval.status === "approved" ? "Approved" : approval.status === "denied" ? "Denied" : "Expired"}
          {decidedBy ? ` by ${decidedBy}` : ""}
          {approval.decision_note ? `: ${approval.decision_note}` : ""}
        </p>
      )}
      {error && (
        <p class="error-text" role="alert">
          {error}
        </p>
      )}
    </section>
  );
}
