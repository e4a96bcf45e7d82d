// The audit log: every tool call and authority change, hash-chained;
// "Verify chain" checks that no row was edited or removed.
import { useEffect, useState } from "preact/hooks";
import { api, describeError } from "../../api/client";
import type { AuditEntry, AuditVerification } from "../../api/types";
import { ErrorNote } from "../../components/Field";
import { useRetryOnReconnect } from "../../lib/reconnect";
import { Icon } from "../../components/Icon";
import { Time } from "../../components/Time";
import { channelById } from "../../state/channels";

export function Audit() {
  const [rows, setRows] = useState<AuditEntry[]>();
  const [check, setCheck] = useState<AuditVerification>();
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const [loadError, setLoadError] = useState<string>();
  const load = () => {
    setLoadError(undefined);
    api.get("/api/audit", { query: { limit: 200 } }).then((r) => setRows(r.slice().reverse()), (e) => setLoadError(describeError(e)));
  };
  useEffect(load, []);
  useRetryOnReconnect(loadError !== undefined, load);
  const verify = async () => {
    setBusy(true);
    try {
      setCheck(await api.get("/api/audit/verify"));
    } catch (e) {
      setError(describeError(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="stack-lg">
      <section class="settings-section">
        <div class="lifecycle-row">
          <div>
            <strong>Verify the chain</strong>
            <p class="muted">Each row's hash covers the one before it, so an edited or removed row shows.</p>
          </div>
          <button type="button" class="btn" onClick={verify} disabled={busy}>
            <Icon name="shield" size={15} /> {busy ? "Checking…" : "Verify chain"}
          </button>
        </div>
        {check && (
          <p class={check.intact ? "verify-ok" : "verify-bad"} role="status">
            {check.intact
              ? `Intact: all ${check.rows} rows check out.`
              : `Broken at row ${check.first_bad_row ?? "?"}: ${check.problem ?? "a hash does not match"}.`}
          </p>
        )}
      </section>
      <ErrorNote error={loadError} onRetry={load} />
      <ErrorNote error={error} />
      <section class="settings-section">
        <h3>Newest first</h3>
        {rows?.length === 0 && <p class="muted">Nothing recorded yet.</p>}
        <table class="table audit-table">
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Where</th>
              <th scope="col">Who</th>
              <th scope="col">What</th>
              <th scope="col">Outcome</th>
            </tr>
          </thead>
          <tbody>
            {(rows ?? []).map((r) => (
              <tr key={r.id}>
                <td>
                  <Time at={r.at} />
                </td>
                <td>{r.channel_id ? `#${channelById(r.channel_id)?.channel.name ?? r.channel_id}` : "workspace"}</td>
                <td>{[r.asker, r.agent].filter(Boolean).join(" via ") || "—"}</td>
                <td>
                  <code>{r.action}</code> <span class="muted">{r.input_summary}</span>
                </td>
                <td>{r.outcome}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>
    </div>
  );
}
