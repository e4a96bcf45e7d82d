// What happened in the channel, newest first and live: tool actions,
// Skipper's interventions, approvals, and lifecycle changes.
import { useEffect, useState } from "preact/hooks";
import { useLatest } from "../../lib/latest";
import { describeError } from "../../api/client";
import { ErrorNote } from "../../components/Field";
import { useRetryOnReconnect } from "../../lib/reconnect";
import { Icon } from "../../components/Icon";
import { Time } from "../../components/Time";
import { Tokens } from "../../components/Tokens";
import { actionSignal, activityKey, activityOf, activityPaging, loadActivity, loadOlderActivity, moreActivity, shownActivity, type ActivityEntry } from "../../state/activity";
import type { ChannelEntry } from "../../state/channels";
import { channelPath } from "../../state/router";
import { ensureThreads, threadSignal } from "../../state/threads";
import { Details } from "../chat/NoModel";
import { ToolCard } from "../chat/ToolCard";

export function Activity({ entry }: { entry: ChannelEntry }) {
  const channel = entry.channel;
  const loaded = activityOf(channel.id).value;
  const paging = activityPaging(channel.id).value;
  const list = loaded && shownActivity(loaded, paging);
  const [error, setError] = useState<string>();
  const latest = useLatest();
  const load = () => {
    const current = latest();
    setError(undefined);
    // Another channel's failure, heard after a switch, is not this one's.
    loadActivity(channel.id, channel.name).catch((e) => current() && setError(describeError(e)));
  };
  useEffect(load, [channel.id]);
  // The rows link to their threads by title: each thread a row names is
  // read once if it is not known yet (it may be older than any list loaded).
  useEffect(() => ensureThreads(channel.name, threadsNamed(list ?? [])), [list]);
  useRetryOnReconnect(error !== undefined, load);
  return (
    <div class="page">
      <div class="page-head">
        <h2>Activity</h2>
        <p class="muted">Everything the agent and Skipper did here, as it happens.</p>
      </div>
      <ErrorNote error={error} onRetry={load} />
      {list && list.length === 0 && !moreActivity(paging) && <p class="muted">Nothing has happened here yet.</p>}
      <ol class="activity-list" aria-label="Activity, newest first">
        {(list ?? []).map((e) => (
          <li key={activityKey(e)} class={`activity-item activity-${e.kind}`}>
            <Row entry={e} channel={channel.name} />
          </li>
        ))}
      </ol>
      {list && moreActivity(paging) && <OlderActivity channel={channel.id} channelName={channel.name} />}
    </div>
  );
}

/** Below the oldest row shown while older activity remains: says so, and loads the next page. */
function OlderActivity({ channel, channelName }: { channel: number; channelName: string }) {
  const paging = activityPaging(channel).value;
  const [error, setError] = useState<string>();
  const latest = useLatest();
  const more = () => {
    const current = latest();
    setError(undefined);
    loadOlderActivity(channel, channelName).catch((e) => current() && setError(describeError(e)));
  };
  return (
    <div class="activity-more" aria-live="polite">
      <p class="muted small">Older activity is not shown yet.</p>
      <button type="button" class="btn" disabled={paging.loading} onClick={more}>
        {paging.loading ? "Loading…" : "Show older"}
      </button>
      <ErrorNote error={error} onRetry={more} />
    </div>
  );
}

function Row({ entry, channel }: { entry: ActivityEntry; channel: string }) {
  switch (entry.kind) {
    case "tool": {
      const action = actionSignal(entry.id);
      if (!action) return null;
      const thread = action.value.thread_id;
      return (
        <div class="activity-row">
          <div class="activity-meta">
            <Time at={entry.at} />
            {thread && <ThreadLink channel={channel} id={thread} />}
          </div>
          <ToolCard action={action} />
        </div>
      );
    }
    case "escalation": {
      const e = entry.escalation;
      return (
        <div class="activity-row">
          <div class="activity-meta">
            <Time at={entry.at} />
            <ThreadLink channel={channel} id={e.thread_id} />
          </div>
          <p>
            <Icon name="skipper" size={15} /> <strong>Skipper</strong> {e.status === "open" ? "was called in" : e.status === "handed_to_captain" ? "handed it to the Captain" : "handed back"}: {e.reason}
            {e.outcome && <span class="muted"> — {e.outcome}</span>}
            {e.answered_by && <span class="muted"> (answered by {e.answered_by})</span>}
          </p>
        </div>
      );
    }
    case "approval": {
      const a = entry.approval;
      return (
        <div class="activity-row">
          <div class="activity-meta">
            <Time at={entry.at} />
            {a.thread_id && <ThreadLink channel={channel} id={a.thread_id} />}
          </div>
          <p>
            <Icon name="shield" size={15} /> Approval {a.status}: <code>{a.summary}</code>
          </p>
        </div>
      );
    }
    default:
      return (
        <div class="activity-row">
          <div class="activity-meta">
            <Time at={entry.at} />
          </div>
          <p>
            {entry.text}
            {entry.usage && (
              <>
                {" "}
                <Tokens usage={entry.usage} class="muted" />
              </>
            )}
          </p>
          {entry.raw && <Details text={entry.raw} />}
        </div>
      );
  }
}

/** A link to a thread by its title ("thread" only while the title is unknown). */
function ThreadLink({ channel, id }: { channel: string; id: number }) {
  const title = threadSignal(id)?.value.title;
  return (
    <a class="activity-thread" href={channelPath(channel, "chat", id)} title={title ? `Open the thread “${title}”` : "Open the thread"}>
      {title || "thread"}
    </a>
  );
}

/** The threads Activity's rows name. */
function threadsNamed(list: ActivityEntry[]): number[] {
  const ids = new Set<number>();
  for (const e of list) {
    const id = e.kind === "tool" ? actionSignal(e.id)?.peek().thread_id : e.kind === "escalation" ? e.escalation.thread_id : e.kind === "approval" ? e.approval.thread_id : undefined;
    if (id) ids.add(id);
  }
  return [...ids];
}
