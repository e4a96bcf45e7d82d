// The inbox of what waits for the Captain and admins: questions Skipper
// handed to the Captain (answered by writing in their thread), requests
// waiting for a decision, and those decided or answered before.
import { computed } from "@preact/signals";
import { useEffect, useState } from "preact/hooks";
import { describeError } from "../../api/client";
import { ErrorNote } from "../../components/Field";
import { useRetryOnReconnect } from "../../lib/reconnect";
import { Time } from "../../components/Time";
import type { Escalation } from "../../api/types";
import { Icon } from "../../components/Icon";
import { approvals, escalations, loadApprovals, loadEscalations, questionsForCaptain } from "../../state/activity";
import { channelById } from "../../state/channels";
import { channelPath } from "../../state/router";
import { ApprovalCard } from "../chat/ApprovalCard";

const sorted = computed(() => [...approvals.value.values()].sort((a, b) => b.id - a.id));
const answered = computed(() =>
  [...escalations.value.values()].filter((e) => e.status === "handed_to_captain" && e.answered_by).sort((a, b) => b.id - a.id),
);

export function Approvals() {
  const [error, setError] = useState<string>();
  const load = () => {
    setError(undefined);
    Promise.all([loadApprovals(true), loadEscalations()]).catch((e) => setError(describeError(e)));
  };
  useEffect(load, []);
  useRetryOnReconnect(error !== undefined, load);
  const pending = sorted.value.filter((a) => a.status === "pending");
  const decided = sorted.value.filter((a) => a.status !== "pending");
  return (
    <div class="stack-lg">
      <ErrorNote error={error} onRetry={load} />
      <section class="settings-section" aria-labelledby="questions-heading">
        <h3 id="questions-heading">Questions for the Captain ({questionsForCaptain.value.length})</h3>
        {questionsForCaptain.value.length === 0 && <p class="muted">Skipper has no question waiting for you.</p>}
        {questionsForCaptain.value.map((e) => (
          <Where key={e.id} channel={e.channel_id} thread={e.thread_id} at={e.created}>
            <Question escalation={e} />
          </Where>
        ))}
      </section>
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
      {answered.value.length > 0 && (
        <section class="settings-section">
          <h3>Answered questions</h3>
          {answered.value.slice(0, 20).map((e) => (
            <Where key={e.id} channel={e.channel_id} thread={e.thread_id} at={e.created}>
              <Question escalation={e} />
            </Where>
          ))}
        </section>
      )}
    </div>
  );
}

/** A question Skipper handed to the Captain: what it asks, why it was called, and where to answer. */
function Question({ escalation: e }: { escalation: Escalation }) {
  const name = channelById(e.channel_id)?.channel.name;
  return (
    <div class="question-card">
      <p>
        <Icon name="skipper" size={15} /> <strong>Skipper asks:</strong> {e.outcome ?? e.reason}
      </p>
      {e.outcome && <p class="muted small">Called in for: {e.reason}</p>}
      {e.answered_by ? (
        <p class="muted small">
          Answered by {e.answered_by}
          {e.answered_at && (
            <>
              {" "}
              <Time at={e.answered_at} />
            </>
          )}
        </p>
      ) : (
        name && (
          <p class="small">
            <a href={channelPath(name, "chat", e.thread_id)}>Answer in the thread</a>: your reply there answers it.
          </p>
        )
      )}
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
