// One thread (a session), beside the feed: its whole transcript with the
// agent's replies streaming in, tool and approval cards, Skipper's arrival
// and hand-back; its title (Rename), its status with Resolve / Reopen, and
// the tokens its turns used; Stop while work runs; and a reply box. The thread's own channel
// wins over the address: a link naming another channel is replaced by the
// thread's real one.
import { computed } from "@preact/signals";
import { useEffect, useMemo, useState } from "preact/hooks";
import { ApiError, describeError } from "../../api/client";
import type { Escalation } from "../../api/types";
import { ErrorNote } from "../../components/Field";
import { Icon } from "../../components/Icon";
import { Time } from "../../components/Time";
import { Tokens } from "../../components/Tokens";
import { VirtualList } from "../../components/VirtualList";
import { shownInThread } from "../../lib/failure";
import { useRetryOnReconnect } from "../../lib/reconnect";
import { escalations, loadThreadActions } from "../../state/activity";
import { channelById, loadChannel, type ChannelEntry } from "../../state/channels";
import { loadOlderMessages, loadThreadMessages, messageSignal, threadLog } from "../../state/messages";
import { channelPath, navigate } from "../../state/router";
import { archiveThread, liveTurnsOf, loadThread, setThreadStatus, stopThread, threadSignal, threadUsage } from "../../state/threads";
import { toast } from "../../state/toasts";
import { Composer } from "./Composer";
import { MessageItem } from "./MessageItem";
import { RenameThreadDialog } from "./RenameThread";
import { ThreadSummary } from "./ThreadSummary";

type Row = { kind: "message"; id: number; at: number } | { kind: "escalation"; escalation: Escalation; at: number };

/** How many pages of older messages a link to one message reads to reach it. */
const PAGES_TO_A_MESSAGE = 20;

export function ThreadPanel({
  entry,
  thread,
  message,
  onUpload,
}: {
  entry: ChannelEntry;
  thread: number;
  /** A message to show the thread at (a search hit), if one was named. */
  message?: number;
  onUpload?: (files: File[]) => Promise<string[]>;
}) {
  const [error, setError] = useState<string>();
  // How loading the thread itself went: a missing one says so instead of
  // offering a reply box that cannot work.
  const [found, setFound] = useState<"yes" | "missing" | "failed">();
  // Whether its newest messages were read (a link to an older one pages back from them).
  const [read, setRead] = useState(false);
  const [attempt, setAttempt] = useState(0);
  const [busy, setBusy] = useState(false);
  const [renaming, setRenaming] = useState(false);
  const channel = entry.channel;

  useEffect(() => {
    setError(undefined);
    setFound(undefined);
    loadThread(thread).then(
      () => setFound("yes"),
      (e) => {
        const missing = e instanceof ApiError && e.status === 404;
        setFound(missing ? "missing" : "failed");
        if (!missing) setError(describeError(e));
      },
    );
    // Its messages fail the same way when it is missing; that is said above.
    loadThreadMessages(thread)
      .then(() => setRead(true))
      .catch((e) => !(e instanceof ApiError && e.status === 404) && setError(describeError(e)));
  }, [thread, attempt]);

  // A link to one message: older pages are read until it is among them
  // (the list then shows it; see `reveal` below).
  // Said when the whole thread was read without it (deleted, or a link to another thread's).
  const [notHere, setNotHere] = useState(false);
  useEffect(() => {
    setNotHere(false);
    if (message === undefined || !read) return;
    let current = true;
    void (async () => {
      for (let page = 0; current && page < PAGES_TO_A_MESSAGE; page++) {
        const log = threadLog(thread).peek();
        if (log.ids.includes(message)) return;
        if (log.olderCursor === undefined) {
          if (current) setNotHere(true);
          return;
        }
        await loadOlderMessages(thread);
      }
    })().catch(() => undefined);
    return () => {
      current = false;
    };
  }, [thread, message, read]);

  const info = threadSignal(thread)?.value;
  // The thread belongs to another channel than the address names (a link
  // edited by hand, or copied from elsewhere): show it where it lives, so
  // its header, agent and replies are that channel's.
  const elsewhere = info !== undefined && info.channel_id !== channel.id;
  useEffect(() => {
    if (!info || !elsewhere) return;
    // Only while this thread is still the one shown: an answer after the
    // person went elsewhere must not take them back to it.
    let current = true;
    const go = (owner: ChannelEntry | undefined) => {
      if (!current) return;
      if (owner) navigate(channelPath(owner.channel.name, "chat", thread), { replace: true });
      else setFound("missing");
    };
    const known = channelById(info.channel_id);
    if (known) go(known);
    else loadChannel(String(info.channel_id)).then(go, () => current && setFound("missing"));
    return () => {
      current = false;
    };
  }, [info?.channel_id, channel.id]);

  useRetryOnReconnect(error !== undefined, () => setAttempt((a) => a + 1));

  useEffect(() => {
    if (elsewhere) return;
    loadThreadActions(channel.name, thread).catch(() => undefined);
  }, [thread, channel.name, elsewhere]);
  const log = threadLog(thread).value;
  const live = liveTurnsOf(thread).value;
  // Its tokens over the turns that reported them (none said when none did).
  const usage = threadUsage(thread).value;
  const calls = useMemo(() => computed(() => [...escalations.value.values()].filter((e) => e.thread_id === thread)), [thread]).value;

  const rows = useMemo<Row[]>(() => {
    // A failed turn's reply says why itself (MessageItem): Helm's note
    // repeating it, with the provider's raw reason, is left out, so the
    // failure shows once.
    const shown = log.ids.filter((id) => shownInThread(messageSignal(id)?.peek()));
    const list: Row[] = shown.map((id) => ({ kind: "message", id, at: id }));
    if (calls.length === 0) return list;
    // A call for Skipper goes just before the first message after it.
    const placed: Row[] = [];
    const pending = calls.slice().sort((a, b) => a.id - b.id);
    for (const row of list) {
      while (pending.length) {
        const m = row.kind === "message" ? messageSignal(row.id)?.value : undefined;
        if (!m || Date.parse(m.created) < Date.parse(pending[0]!.created)) break;
        const e = pending.shift()!;
        placed.push({ kind: "escalation", escalation: e, at: row.at - 0.5 });
      }
      placed.push(row);
    }
    for (const e of pending) placed.push({ kind: "escalation", escalation: e, at: Number.MAX_SAFE_INTEGER });
    return placed;
  }, [log.ids, calls]);

  const close = () => {
    navigate(channelPath(channel.name));
    // The focus was in the panel, which is gone: it goes back to where the
    // thread was opened from, its link in the feed (or the feed's box when
    // that row is not drawn), not to the page.
    requestAnimationFrame(() => {
      const at = document.activeElement;
      if (at && at !== document.body && at.isConnected) return;
      const link = document.querySelector<HTMLElement>(`.feed a.thread-link[href="${channelPath(channel.name, "chat", thread)}"]`);
      (link ?? document.querySelector<HTMLElement>(".feed-pane .composer textarea"))?.focus();
    });
  };

  useEffect(() => {
    const esc = (e: KeyboardEvent) => {
      // An Escape something took (the @ list closing) is not for the thread.
      if (e.key === "Escape" && !e.defaultPrevented && !document.querySelector("dialog[open], .palette, .quick-note")) close();
    };
    window.addEventListener("keydown", esc);
    return () => window.removeEventListener("keydown", esc);
  }, [channel.name, thread]);

  const changeStatus = async (status: "open" | "resolved") => {
    setBusy(true);
    try {
      await setThreadStatus(thread, status);
      toast(status === "resolved" ? "Thread resolved; its summary goes to the channel's memory." : info?.status === "archived" ? "Thread unarchived." : "Thread reopened.");
    } catch (e) {
      toast(describeError(e), "error");
    } finally {
      setBusy(false);
    }
  };

  const archive = async () => {
    setBusy(true);
    try {
      await archiveThread(thread);
    } catch (e) {
      toast(describeError(e), "error");
    } finally {
      setBusy(false);
    }
  };

  const stop = async () => {
    try {
      await stopThread(thread);
    } catch (e) {
      toast(describeError(e), "error");
    }
  };

  const resolved = info?.status === "resolved" || info?.status === "archived";
  // An archived channel is kept as it was: its threads change once it is restored.
  const changeable = info !== undefined && channel.status !== "archived";
  // Replies only into a thread that loaded and belongs here.
  const writable = info !== undefined && !elsewhere && found !== "missing" && found !== "failed";
  return (
    <aside class="thread-panel" aria-label={`Thread: ${info?.title ?? ""}`}>
      <header class="thread-header">
        <div class="thread-title">
          <h2>{info?.title || "Thread"}</h2>
          {info && (
            <span class="thread-meta">
              <span class={`pill pill-${info.status}`}>{info.status}</span> · started <Time at={info.opened_at} />
              {usage && (
                <>
                  {" · "}
                  <Tokens usage={usage} turns={usage.turns} label="Tokens" />
                </>
              )}
            </span>
          )}
        </div>
        <div class="thread-actions">
          {info && writable && channel.status !== "archived" && (
            <button type="button" class="btn btn-small btn-ghost" onClick={() => setRenaming(true)} aria-label="Rename this thread" title="Rename this thread">
              <Icon name="edit" size={14} /> Rename
            </button>
          )}
          {live.size > 0 && (
            <button type="button" class="btn btn-small btn-danger" onClick={stop}>
              <Icon name="stop" size={14} /> Stop
            </button>
          )}
          {changeable && !resolved && (
            <button type="button" class="btn btn-small" disabled={busy || live.size > 0} onClick={() => changeStatus("resolved")} title={live.size > 0 ? "Stop the work first" : "Mark this session done"}>
              <Icon name="check" size={14} /> Resolve
            </button>
          )}
          {changeable && resolved && (
            <button type="button" class="btn btn-small" disabled={busy} onClick={() => changeStatus("open")} aria-label={info.status === "archived" ? "Unarchive this thread" : "Reopen this thread"}>
              {info.status === "archived" ? "Unarchive" : "Reopen"}
            </button>
          )}
          {changeable && info.status !== "archived" && (
            <button type="button" class="btn btn-small btn-ghost" disabled={busy || live.size > 0} onClick={archive} aria-label="Archive this thread" title={live.size > 0 ? "Stop the work first" : "Put this thread away; Unarchive brings it back"}>
              Archive
            </button>
          )}
        </div>
        <button type="button" class="icon-button thread-close" aria-label="Close the thread" onClick={close}>
          <Icon name="close" />
        </button>
      </header>
      {info?.summary && <ThreadSummary summary={info.summary} channelId={channel.id} channelName={channel.name} thread={thread} writable={writable} />}
      {found === "missing" ? (
        <Missing thread={thread} channel={channel.name} />
      ) : (
        <>
          <ErrorNote error={error} onRetry={() => setAttempt((a) => a + 1)} />
          {notHere && <p class="muted small pad">The message this link names is not in this thread (any more): the thread is shown from its newest messages.</p>}
          <VirtualList
            class="thread-log"
            label="Messages in this thread"
            items={rows}
            keyOf={(r: Row) => (r.kind === "message" ? r.id : `e${r.escalation.id}`)}
            estimate={120}
            stickToBottom
            reveal={message}
            onNearTop={() => void loadOlderMessages(thread).catch(() => undefined)}
            header={log.olderCursor !== undefined ? <p class="muted small center">Loading earlier messages…</p> : null}
            render={(r: Row) => (r.kind === "message" ? <MessageItem id={r.id} focused={r.id === message} /> : <SkipperCall escalation={r.escalation} />)}
          />
        </>
      )}
      {renaming && info && <RenameThreadDialog thread={info} onClose={() => setRenaming(false)} />}
      {writable && (
        <Composer
          key={`reply-${thread}`}
          entry={entry}
          thread={thread}
          placeholder="Reply in this thread"
          askByDefault={false}
          onUploadRequest={onUpload}
          closed={
            info.status === "archived" ? (
              <>
                <span>This thread is archived, so nobody replies here.</span>{" "}
                {changeable ? (
                  <>
                    <button type="button" class="link-like" disabled={busy} onClick={() => changeStatus("open")}>
                      Unarchive it to reply
                    </button>
                    .
                  </>
                ) : (
                  <span>Once the channel is restored, it can be unarchived.</span>
                )}
              </>
            ) : undefined
          }
        />
      )}
    </aside>
  );
}

function Missing({ thread, channel }: { thread: number; channel: string }) {
  return (
    <div class="thread-missing">
      <p>
        <strong>This thread does not exist.</strong> There is no thread {thread} in #{channel}: it may have been deleted, or the link is wrong.
      </p>
      <a class="btn btn-small" href={channelPath(channel)}>
        Back to #{channel}
      </a>
    </div>
  );
}

function SkipperCall({ escalation }: { escalation: Escalation }) {
  const open = escalation.status === "open";
  return (
    <div class={`skipper-call ${open ? "open" : "done"}`} role="note">
      <Icon name="skipper" size={16} />
      <div>
        <strong>{open ? "Skipper was called in" : escalation.status === "handed_to_captain" ? "Skipper handed this to the Captain" : "Skipper handed back"}</strong>
        {escalation.answered_by && <span class="muted"> · answered by {escalation.answered_by}</span>}
        <span class="muted"> · {escalation.reason}</span>
        {escalation.outcome && <p class="small">{escalation.outcome}</p>}
      </div>
    </div>
  );
}
