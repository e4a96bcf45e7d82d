// The channel's sessions, open ones first: status, title, summary, when
// they last moved. Opening one shows it beside the chat; each can be
// renamed, resolved or reopened here.
import { useEffect, useMemo, useState } from "preact/hooks";
import { describeError } from "../../api/client";
import type { Thread } from "../../api/types";
import { ErrorNote } from "../../components/Field";
import { Icon } from "../../components/Icon";
import { Time } from "../../components/Time";
import { useRetryOnReconnect } from "../../lib/reconnect";
import type { ChannelEntry } from "../../state/channels";
import { channelPath } from "../../state/router";
import { channelThreadIds, loadThreads, setThreadStatus, sortedThreads } from "../../state/threads";
import { toast } from "../../state/toasts";
import { RenameThreadDialog } from "../chat/RenameThread";

const OPEN = new Set(["open", "waiting", "failed"]);

export function Threads({ entry }: { entry: ChannelEntry }) {
  const channel = entry.channel;
  const [error, setError] = useState<string>();
  const [filter, setFilter] = useState<"open" | "finished" | "all">("all");
  const list = useMemo(() => sortedThreads(channel.id), [channel.id]).value;
  const loaded = channelThreadIds(channel.id).value !== undefined;

  const load = () => {
    setError(undefined);
    loadThreads(channel.id, channel.name).catch((e) => setError(describeError(e)));
  };
  useEffect(load, [channel.id]);
  useRetryOnReconnect(error !== undefined, load);

  // Open sessions first (the work still going), each group by its last move:
  // resolving a thread sends it down among the finished, not to the top.
  const shown = list
    .filter((t) => filter === "all" || (filter === "open" ? OPEN.has(t.status) : !OPEN.has(t.status)))
    .sort((a, b) => Number(OPEN.has(b.status)) - Number(OPEN.has(a.status)));
  const open = list.filter((t) => OPEN.has(t.status)).length;

  return (
    <div class="page">
      <div class="page-head">
        <h2>Threads</h2>
        <p class="muted">
          Each thread is a focused session with #{channel.name}'s agent. {open} open, {list.length - open} finished.
        </p>
        <div class="segmented" role="group" aria-label="Show">
          {(["all", "open", "finished"] as const).map((f) => (
            <button key={f} type="button" aria-pressed={filter === f} onClick={() => setFilter(f)}>
              {f === "all" ? "All" : f === "open" ? "Open" : "Finished"}
            </button>
          ))}
        </div>
      </div>
      <ErrorNote error={error} onRetry={load} />
      {loaded && shown.length === 0 && <p class="muted">No threads here yet. Start one from the chat.</p>}
      <ul class="thread-list">
        {shown.map((t) => (
          <ThreadRow key={t.id} thread={t} channel={channel.name} archived={channel.status === "archived"} />
        ))}
      </ul>
    </div>
  );
}

function ThreadRow({ thread, channel, archived }: { thread: Thread; channel: string; archived: boolean }) {
  const [busy, setBusy] = useState(false);
  const [renaming, setRenaming] = useState(false);
  const finished = thread.status === "resolved" || thread.status === "archived";
  const change = async () => {
    setBusy(true);
    try {
      await setThreadStatus(thread.id, finished ? "open" : "resolved");
    } catch (e) {
      toast(describeError(e), "error");
    } finally {
      setBusy(false);
    }
  };
  return (
    <li class="thread-row">
      <div class="thread-row-main">
        <a href={channelPath(channel, "chat", thread.id)} class="thread-row-title">
          <Icon name="threads" size={15} />
          {thread.title || "Untitled thread"}
        </a>
        <span class={`pill pill-${thread.status}`}>{thread.status}</span>
        <span class="muted small">
          <Time at={thread.updated_at} />
        </span>
      </div>
      {thread.summary && <p class="thread-row-summary">{thread.summary}</p>}
      <div class="thread-row-actions">
        {!archived && (
          <button type="button" class="btn btn-small btn-ghost" onClick={() => setRenaming(true)} aria-label={`Rename ${thread.title || "this thread"}`}>
            <Icon name="edit" size={14} /> Rename
          </button>
        )}
        <button type="button" class="btn btn-small btn-ghost" disabled={busy} onClick={change} aria-label={`${finished ? "Reopen" : "Resolve"} ${thread.title}`}>
          {finished ? "Reopen" : "Resolve"}
        </button>
      </div>
      {renaming && <RenameThreadDialog thread={thread} onClose={() => setRenaming(false)} />}
    </li>
  );
}
