// The chat: the channel's feed of threads (each thread's first message,
// with its latest reply streaming live beneath it) and, beside it, the open
// thread in full. A new message starts a thread and opens it; files
// dropped anywhere on the chat are uploaded to /workspace/uploads.
import { memo } from "preact/compat";
import { useEffect, useRef, useState } from "preact/hooks";
import { api, describeError } from "../../api/client";
import { Avatar } from "../../components/Avatar";
import { ErrorNote } from "../../components/Field";
import { Icon } from "../../components/Icon";
import { Markdown } from "../../components/Markdown";
import { Time } from "../../components/Time";
import { VirtualList } from "../../components/VirtualList";
import { useFramed } from "../../lib/framed";
import { failureOfNote, isFailureNote, plainFailure } from "../../lib/failure";
import { plainText } from "../../lib/markdown";
import { plural } from "../../lib/format";
import { useLatest } from "../../lib/latest";
import { useRetryOnReconnect } from "../../lib/reconnect";
import type { ChannelEntry } from "../../state/channels";
import { composerInsert } from "../../state/composer";
import { channelNewest, feedOf, loadFeed, loadOlderFeed, messageSignal, newestKnown, threadProgress, unreadStart, type FeedEntry } from "../../state/messages";
import { channelPath } from "../../state/router";
import { threadSignal } from "../../state/threads";
import { toast } from "../../state/toasts";
import { me } from "../../state/session";
import { markRead, unread } from "../../state/unread";
import { offHostComputer } from "../channel/hostComputer";
import { Composer } from "./Composer";
import { authorKind, authorName } from "./MessageItem";
import { ThreadPanel } from "./ThreadPanel";

export function Chat({ entry, thread, message }: { entry: ChannelEntry; thread?: number; message?: number }) {
  const channel = entry.channel;
  const feed = feedOf(channel.id).value;
  const [error, setError] = useState<string>();
  const [dragging, setDragging] = useState(false);

  const latest = useLatest();
  const load = () => {
    const current = latest();
    setError(undefined);
    // Another channel's failure, heard after a switch, is not this one's.
    loadFeed(channel.id, channel.name).catch((e) => current() && setError(describeError(e)));
  };
  useEffect(load, [channel.id]);
  useRetryOnReconnect(error !== undefined, load);

  // The moment a channel first shows its messages, for the UI benchmark.
  useEffect(() => {
    if (feed.loaded && !performance.getEntriesByName("helm:channel-interactive").length) {
      requestAnimationFrame(() => performance.mark("helm:channel-interactive"));
    }
  }, [feed.loaded]);

  // Where the person had read to when the chat opened (the read marker, if
  // anything was unread then): the "new since you last read" line goes
  // before the first entry after it, and the chat opens there.
  const [since, setSince] = useState<{ channel: number; after?: number }>();
  useEffect(() => {
    if (!feed.loaded || since?.channel === channel.id) return;
    const counts = unread.peek().get(channel.id);
    setSince({ channel: channel.id, after: counts && counts.unread + counts.mentions > 0 ? counts.lastRead : undefined });
  }, [feed.loaded, channel.id]);
  const after = since?.channel === channel.id ? since.after : undefined;
  const firstUnread = unreadStart(feed.entries, after, me.value?.id);
  // Where the chat opens: the line's entry as it was when the chat first
  // showed (older pages loading above later do not move the view).
  const [landing, setLanding] = useState<{ channel: number; at?: number }>();
  useEffect(() => {
    if (since?.channel === channel.id && landing?.channel !== channel.id) setLanding({ channel: channel.id, at: firstUnread });
  }, [since, channel.id]);
  const reveal = landing?.channel === channel.id ? landing.at : undefined;

  // Reading the chat marks the channel read, up to its newest message: the
  // newest one the feed knows and, when something was unread on opening,
  // the channel's newest as the server says (new replies in an old thread
  // are in no loaded feed page, yet the person has come to read them).
  const newest = newestKnown(channel.id);
  const [serverNewest, setServerNewest] = useState<{ channel: number; id?: number }>();
  useEffect(() => {
    if (!feed.loaded) return;
    const counts = unread.peek().get(channel.id);
    if (!counts || counts.unread + counts.mentions === 0) return;
    const current = latest();
    channelNewest(channel.id)
      .then((id) => current() && setServerNewest({ channel: channel.id, id }))
      .catch(() => undefined);
  }, [feed.loaded, channel.id]);
  const readTo = Math.max(newest ?? 0, serverNewest?.channel === channel.id ? (serverNewest.id ?? 0) : 0) || undefined;
  const readToNow = useRef(readTo);
  readToNow.current = readTo;
  useEffect(() => {
    if (feed.loaded && document.visibilityState === "visible") markRead(channel.id, readTo);
  }, [feed.loaded, readTo, channel.id]);
  useEffect(() => {
    const visible = () => document.visibilityState === "visible" && markRead(channel.id, Math.max(readToNow.current ?? 0, newestKnown(channel.id) ?? 0) || undefined);
    document.addEventListener("visibilitychange", visible);
    return () => document.removeEventListener("visibilitychange", visible);
  }, [channel.id]);

  const upload = async (files: File[]): Promise<string[]> => {
    // Never over an earlier attachment (a thread still points at it): a taken name gets a number.
    const uploaded = await api.upload(channel.name, files, undefined, "keep_both");
    toast(`Uploaded ${plural(uploaded.length, "file")} to /workspace/uploads.`);
    return uploaded.map((u) => u.file.path);
  };

  // Uploads go into the channel's computer: none for a member in #main
  // (Skipper's host computer), so no Attach button or drop target there.
  const canUpload = channel.status !== "archived" && !offHostComputer(entry);

  const onDrop = async (e: DragEvent) => {
    e.preventDefault();
    setDragging(false);
    const files = [...(e.dataTransfer?.files ?? [])];
    if (files.length === 0 || !canUpload) return;
    try {
      const paths = await upload(files);
      composerInsert.value = { channel: channel.id, text: paths.map((p) => `Attached \`${p}\``).join("\n") };
    } catch (err) {
      toast(describeError(err), "error");
    }
  };

  const isHome = channel.kind === "home";
  return (
    <div
      class={`chat${thread !== undefined ? " with-thread" : ""}${dragging ? " dragging" : ""}`}
      onDragOver={(e) => {
        if (canUpload && e.dataTransfer?.types.includes("Files")) {
          e.preventDefault();
          setDragging(true);
        }
      }}
      onDragLeave={(e) => {
        if (e.currentTarget === e.target) setDragging(false);
      }}
      onDrop={onDrop}
    >
      <div class="feed-pane">
        <ErrorNote error={error} onRetry={load} />
        {feed.loaded && feed.entries.length === 0 && <p class="muted pad">No messages yet.</p>}
        <VirtualList
          class="feed"
          label={`Messages in #${channel.name}`}
          items={feed.entries}
          keyOf={(e: FeedEntry) => e.messageId}
          estimate={110}
          stickToBottom
          onNearTop={() => void loadOlderFeed(channel.id, channel.name).catch(() => undefined)}
          header={feed.olderCursor !== undefined ? <p class="muted small center">Loading earlier messages…</p> : <ChannelStart entry={entry} />}
          reveal={reveal}
          render={(e: FeedEntry) => (
            <>
              {e.messageId === firstUnread && <NewSince />}
              <FeedItem entry={e} channel={channel.name} open={thread === e.threadId && thread !== undefined} />
            </>
          )}
        />
        <Composer
          key={`new-${channel.id}`}
          entry={entry}
          placeholder={isHome ? "Message #main: ask Skipper anything" : `Start a thread in #${channel.name}`}
          askByDefault
          onUploadRequest={canUpload ? upload : undefined}
        />
      </div>
      {thread !== undefined && <ThreadPanel key={thread} entry={entry} thread={thread} message={message} onUpload={canUpload ? upload : undefined} />}
      {dragging && (
        <div class="drop-hint" aria-hidden="true">
          <Icon name="upload" size={28} />
          Drop to upload to /workspace/uploads
        </div>
      )}
    </div>
  );
}

/** The line where what the person has not read begins. */
function NewSince() {
  return (
    <div class="new-since" role="separator" aria-label="New since you last read">
      <span>New since you last read</span>
    </div>
  );
}

function ChannelStart({ entry }: { entry: ChannelEntry }) {
  return (
    <div class="channel-start">
      <h2>
        This is the very beginning of #{entry.channel.name}
      </h2>
      <p class="muted">
        {entry.channel.kind === "home"
          ? "Skipper, the workspace's operator, lives here. Ask for new channels, help, or anything across the workspace."
          : `Mention @${entry.agent.handle} to put its agent to work. Every message starts a thread: a focused session.`}
      </p>
    </div>
  );
}

function LatestReply({ id }: { id: number }) {
  // A reply streaming here is drawn at most once a frame.
  const message = useFramed(messageSignal(id));
  if (!message) return null;
  const name = authorName(message);
  const streaming = message.status === "streaming" || message.status === "pending";
  // Helm's note about a failed turn, in words rather than the provider's raw reason.
  const text = isFailureNote(message) ? `A reply failed. ${plainFailure(failureOfNote(message))}` : plainText(message.content, 220);
  return (
    <div class="latest-reply">
      <Avatar name={name} kind={authorKind(message)} size="sm" />
      <span class="latest-author">{name}</span>
      <span class="latest-text">
        {text || (streaming ? "is working…" : message.status === "failed" ? "could not answer" : "")}
        {streaming && <span class="caret" aria-hidden="true" />}
      </span>
    </div>
  );
}

const FeedItem = memo(function FeedItem({ entry, channel, open }: { entry: FeedEntry; channel: string; open: boolean }) {
  const message = messageSignal(entry.messageId)?.value;
  if (!message) return null;
  const thread = entry.threadId === undefined ? undefined : threadSignal(entry.threadId)?.value;
  const progress = entry.threadId === undefined ? undefined : threadProgress(entry.threadId).value;
  const kind = authorKind(message);
  const name = authorName(message);
  if (!thread) {
    return (
      <div class={`announcement announcement-${kind}`}>
        <Avatar name={name} kind={kind} size="sm" />
        <div class="announcement-body">
          <span class="author">{name}</span> <Time at={message.created} />
          <Markdown text={message.content} />
        </div>
      </div>
    );
  }
  return (
    <div class={open ? "feed-item open" : "feed-item"}>
      <Avatar name={name} kind={kind} />
      <div class="feed-body">
        <div class="message-head">
          <span class="author">{name}</span>
          <Time at={message.created} />
          {thread.status !== "open" && <span class={`pill pill-${thread.status}`}>{thread.status}</span>}
        </div>
        <Markdown text={message.content} />
        {progress && progress.latestReplyId !== undefined && <LatestReply id={progress.latestReplyId} />}
        <a class="thread-link" href={channelPath(channel, "chat", thread.id)} aria-current={open ? "true" : undefined}>
          <Icon name="threads" size={14} />
          {progress && progress.replies > 0 ? plural(progress.replies, "reply", "replies") : "Open thread"}
          <span class="sr-only">: {thread.title}</span>
        </a>
      </div>
    </div>
  );
});
