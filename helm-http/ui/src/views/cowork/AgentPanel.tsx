// Cowork's agent panel: the channel's resident agent beside the work. The
// first message starts an ordinary thread of the channel, addressed to the
// agent and carrying the open file's /workspace path (never its contents);
// the panel then shows that thread live, as the chat does, and later
// messages reply in it. The same thread is in Chat ("Open in Chat").
import { useEffect, useMemo, useState } from "preact/hooks";
import { ApiError, describeError } from "../../api/client";
import { ErrorNote } from "../../components/Field";
import { Icon } from "../../components/Icon";
import { StatusDot, statusWord } from "../../components/StatusDot";
import { VirtualList } from "../../components/VirtualList";
import { firstMessage } from "../../lib/cowork";
import { isFailureNote } from "../../lib/failure";
import { useRetryOnReconnect } from "../../lib/reconnect";
import { loadThreadActions } from "../../state/activity";
import type { ChannelEntry } from "../../state/channels";
import { loadOlderMessages, loadThreadMessages, messageSignal, threadLog } from "../../state/messages";
import { channelPath } from "../../state/router";
import { panelThread } from "../../state/seeing";
import { markRead, unread, unreadOnlyIn } from "../../state/unread";
import { liveTurnsOf, loadThread, stopThread, threadSignal } from "../../state/threads";
import { toast } from "../../state/toasts";
import { Composer } from "../chat/Composer";
import { MessageItem } from "../chat/MessageItem";

const threadKey = (channel: number) => `helm.cowork.thread.${channel}`;

function remembered(channel: number): number | undefined {
  try {
    const v = Number(localStorage.getItem(threadKey(channel)));
    return Number.isInteger(v) && v > 0 ? v : undefined;
  } catch {
    return undefined;
  }
}

function remember(channel: number, thread: number | undefined): void {
  try {
    if (thread === undefined) localStorage.removeItem(threadKey(channel));
    else localStorage.setItem(threadKey(channel), String(thread));
  } catch {
    // Storage refused (private mode): the panel forgets on reload.
  }
}

export function AgentPanel({ entry, path, onClose }: { entry: ChannelEntry; path?: string; onClose: () => void }) {
  const { agent, channel } = entry;
  const [thread, setThread] = useState<number | undefined>(() => remembered(channel.id));
  const start = (id: number) => {
    remember(channel.id, id);
    setThread(id);
  };
  const fresh = () => {
    remember(channel.id, undefined);
    setThread(undefined);
  };
  return (
    <aside class="cowork-agent" aria-label={`Agent panel: @${agent.handle}`}>
      <header class="agent-head">
        <StatusDot status={agent.status} label={`@${agent.handle}`} />
        {/* The handle, as the agent's messages are signed (the display name in the tooltip). */}
        <div class="agent-head-text" title={agent.display_name}>
          <strong>@{agent.handle}</strong>
          <span class="muted small">{statusWord(agent.status)}</span>
        </div>
        {thread !== undefined && (
          <button type="button" class="btn btn-small btn-ghost" onClick={fresh} title="Start another thread from here">
            <Icon name="plus" size={14} /> New
          </button>
        )}
        <button type="button" class="icon-button" aria-label="Close the agent panel" onClick={onClose}>
          <Icon name="close" />
        </button>
      </header>
      {thread === undefined ? (
        <div class="agent-start">
          <div class="agent-intro">
            <p>
              Ask <strong>@{agent.handle}</strong> about what you are working on. Your first message starts a thread in #{channel.name}
              {path ? (
                <>
                  {" "}
                  and ends with the open file's path, <code>{path}</code> (the path only: the agent reads the file itself).
                </>
              ) : (
                "."
              )}
            </p>
            <p class="muted small">The thread is an ordinary one: it is in Chat too.</p>
          </div>
          <Composer
            key={`cowork-${channel.id}`}
            entry={entry}
            placeholder={`Ask @${agent.handle}`}
            askByDefault
            prepare={(text) => firstMessage(text, agent.handle, path)}
            onStarted={start}
          />
        </div>
      ) : (
        <PanelThread key={thread} entry={entry} thread={thread} onMissing={fresh} />
      )}
    </aside>
  );
}

function PanelThread({ entry, thread, onMissing }: { entry: ChannelEntry; thread: number; onMissing: () => void }) {
  const [error, setError] = useState<string>();
  const [attempt, setAttempt] = useState(0);
  const [found, setFound] = useState(false);
  useEffect(() => {
    setError(undefined);
    const fail = (e: unknown) => {
      // A thread deleted meanwhile (or another channel's): start afresh.
      if (e instanceof ApiError && e.status === 404) onMissing();
      else setError(describeError(e));
    };
    loadThread(thread).then((t) => (t.channel_id === entry.channel.id ? setFound(true) : onMissing()), fail);
    loadThreadMessages(thread).catch(fail);
    // The tool cards in its replies (as the chat's thread panel loads them).
    loadThreadActions(entry.channel.name, thread).catch(() => undefined);
  }, [thread, attempt]);
  // Its messages are seen here: they do not count as unread, nor notify (state/seeing.ts).
  useEffect(() => {
    panelThread.value = thread;
    return () => {
      if (panelThread.peek() === thread) panelThread.value = undefined;
    };
  }, [thread]);
  // A reply that came before the panel showed the thread (the agent answers
  // as the first message is posted) was counted: shown now, it is read,
  // when nothing else in the channel is unread.
  const newest = threadLog(thread).value.ids.at(-1);
  const behind = unread.value.get(entry.channel.id);
  useEffect(() => {
    if (newest === undefined || !behind || behind.unread + behind.mentions === 0) return;
    if (document.visibilityState === "visible" && unreadOnlyIn(entry.channel.id, thread)) markRead(entry.channel.id, newest);
  }, [newest, behind, thread]);
  useRetryOnReconnect(error !== undefined, () => setAttempt((a) => a + 1));

  const info = threadSignal(thread)?.value;
  const log = threadLog(thread).value;
  const live = liveTurnsOf(thread).value;
  const rows = useMemo(() => log.ids.filter((id) => !isFailureNote(messageSignal(id)?.peek())), [log.ids]);
  const stop = async () => {
    try {
      await stopThread(thread);
    } catch (e) {
      toast(describeError(e), "error");
    }
  };
  return (
    <>
      <div class="agent-thread-head">
        <span class="agent-thread-title" title={info?.title}>
          {info?.title || "Thread"}
        </span>
        {live.size > 0 && (
          <button type="button" class="btn btn-small btn-danger" onClick={stop}>
            <Icon name="stop" size={14} /> Stop
          </button>
        )}
        <a class="btn btn-small" href={channelPath(entry.channel.name, "chat", thread)}>
          Open in Chat
        </a>
      </div>
      <ErrorNote error={error} onRetry={() => setAttempt((a) => a + 1)} />
      <VirtualList
        class="thread-log agent-log"
        label="Messages with the agent"
        items={rows}
        keyOf={(id: number) => id}
        estimate={120}
        stickToBottom
        onNearTop={() => void loadOlderMessages(thread).catch(() => undefined)}
        header={log.olderCursor !== undefined ? <p class="muted small center">Loading earlier messages…</p> : null}
        render={(id: number) => <MessageItem id={id} />}
      />
      {found && <Composer key={`cowork-reply-${thread}`} entry={entry} thread={thread} placeholder="Reply to the agent" askByDefault={false} />}
    </>
  );
}
