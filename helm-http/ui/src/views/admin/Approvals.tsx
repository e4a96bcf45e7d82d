// The approvals inbox: requests waiting for a decision (the Captain and
// admins decide), and those decided before.
import { computed } from "@preact/signals";
import { useEffect, useState } from "preact/hooks";
import { describeError } from "../../api/client";
import { ErrorNote } from "../../components/Field";
import { useRetryOnReconnect } from "../../lib/reconnect";
import { Time } from "../../components/Time";
import { approvals, loadApprovals } from "../../state/activity";
import { channelById } from "../../state/channels";
import { channelPath } from "../../state/router";
import { ApprovalCard } from "../chat/ApprovalCard";

const sorted = computed(() => [...approvals.value.values()].sort((a, b) => b.id - a.id));

export function Approvals() {
  const [error, setError] = useState<string>();
  const load = () => {
    setError(undefined);
    loadApprovals(true).catch((e) => setError(describeError(e)));
  };
  useEffect(load, []);
  useRetryOnReconnect(error !== undefined, load);
  const pending = sorted.value.filter((a) => a.status === "pending");
  const decided = sorted.value.filter((a) => a.status !== "pending");
  return (
    <div class="stack-lg">
      <ErrorNote error={error} onRetry={load} />
      <section class="settings-section">
        <h3>Waiting ({pending.length})</h3>
        {pending.length === 0 && <p class="muted">Nothing waits for a decision.</p>}
        {pending.map((a) => (
          <Where key={a.id} channel={a.channel_id} thread={a.thread_id} at={a.created}>
            <ApprovalCard approval={a} />
          </Where>
        ))}
      </section>
      <section class="settings-section">
        <h3>Decided</h3>
        {decided.length === 0 && <p class="muted">None yet.</p>}
        {decided.slice(0, 50).map((a) => (
          <Where key={a.id} channel={a.channel_id} thread={a.thread_id} at={a.created}>
            <ApprovalCard approval={a} />
          </Where>
        ))}
      </section>
    </div>
  );
}

function Where({ channel, thread, at, children }: { channel: number; thread?: number | null; at: string; children: preact.ComponentChildren }) {
  const name = channelById(channel)?.channel.name;
  return (
    <div class="approval-where">
      <p class="muted small">
        {name ? <a href={thread ? channelPath(name, "chat", thread) : channelPath(name)}>#{name}</a> : "a channel"} · <Time at={at} />
      </p>
      {children}
    </div>
  );
}
