// One message of a thread. An agent's reply carries its turn, as the turn's
// own state says: queued (with how many are ahead), working, waiting on an
// approval, failed (in words, the raw reason behind "Details", with Retry
// while it can work) or stopped; its tool calls as cards; the approvals
// it asked for; once its turn has ended, the tokens it used. Each message
// reads only its own signals, so a streaming reply re-renders alone.
import { computed } from "@preact/signals";
import { memo } from "preact/compat";
import { useMemo, useState } from "preact/hooks";
import { ApiError, api, describeError } from "../../api/client";
import type { Message, Turn } from "../../api/types";
import { Avatar } from "../../components/Avatar";
import { Markdown, StreamingMarkdown } from "../../components/Markdown";
import { plainFailure } from "../../lib/failure";
import { canRetry, turnNote } from "../../lib/turns";
import { useFramed } from "../../lib/framed";
import { Time } from "../../components/Time";
import { Tokens } from "../../components/Tokens";
import { actionSignal, actionsOfTurn, approvals } from "../../state/activity";
import { channelById } from "../../state/channels";
import { messageSignal } from "../../state/messages";
import { latestTurnOf, loadThread, putTurn, turnOfReply, usageOfTurn } from "../../state/threads";
import { userById } from "../../state/users";
import { ApprovalCard } from "./ApprovalCard";
import { Details, NoModelError, isModelUnavailable } from "./NoModel";
import { ToolCard } from "./ToolCard";

export function authorName(message: Message): string {
  const a = message.author;
  switch (a.kind) {
    case "human":
      return userById(a.user_id)?.display_name || a.name;
    case "agent":
      return a.agent_kind === "skipper" ? "Skipper" : a.handle;
    case "guest":
      return a.name;
    default:
      return "Helm";
  }
}

export function authorKind(message: Message): "human" | "agent" | "skipper" | "system" {
  const a = message.author;
  if (a.kind === "agent") return a.agent_kind === "skipper" ? "skipper" : "agent";
  if (a.kind === "system") return "system";
  return "human";
}

function TurnState({ messageId }: { messageId: number }) {
  const view = turnOfReply(messageId).value;
  const message = useFramed(messageSignal(messageId));
  const turnId = view?.turn.id;
  const awaitingApproval = useMemo(
    () => computed(() => turnId !== undefined && [...approvals.value.values()].some((a) => a.turn_id === turnId && a.status === "pending")),
    [turnId],
  ).value;
  if (!message) return null;
  const note = turnNote(message.status, message.content !== "", view?.turn.state, view?.ahead, awaitingApproval);
  switch (note?.kind) {
    case "queued":
      return <p class="turn-note">{note.ahead > 0 ? `Queued, ${note.ahead} ahead` : "Queued: starts in a moment"}</p>;
    case "working":
      return (
        <p class="turn-note working">
          <span class="pulse" aria-hidden="true" /> Working…
        </p>
      );
    case "approval":
      // The approval card above says what was asked and who decides.
      return <p class="turn-note">Waiting for the approval above to be decided.</p>;
    case "failed":
      return <Failed message={message} turn={view?.turn} />;
    case "stopped":
      return <p class="turn-note">Stopped.</p>;
    case "interrupted":
      // Helm stopped under it (a restart, a crash): nobody chose to end it, so it can run again.
      return <Failed message={message} turn={view?.turn} interrupted />;
    default:
      return null;
  }
}

/** A retry refused because the turn cannot run again (retried already, or the thread went on). */
function isStaleRetry(error: unknown): boolean {
  return error instanceof ApiError && error.status === 409 && error.code === "conflict" && !isModelUnavailable(error);
}

/**
 * A failed reply (or one interrupted when Helm stopped), said once (Helm's own note about it is not shown, see
 * ThreadPanel): what happened in words, the server's reason behind
 * "Details", and Retry, which runs the failed turn again on the server
 * (`POST /api/threads/{id}/retry`): Helm notes in the thread who asked, and
 * the agent answers the thread anew, the question included, so nothing is
 * posted in the person's name. Retry is offered only while it can work:
 * the server runs only the thread's last turn again, so once this one was
 * retried (or the thread went on) it is gone.
 */
function Failed({ message, turn, interrupted = false }: { message: Message; turn?: Turn; interrupted?: boolean }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const handle = message.author.kind === "agent" ? message.author.handle : undefined;
  const archived = channelById(message.channel_id)?.channel.status === "archived";
  const latest = message.thread_id == null ? undefined : latestTurnOf(message.thread_id).value;
  const retryable = turn ? canRetry(turn, latest) : true;
  const retry = async () => {
    if (!handle || message.thread_id == null) return;
    setBusy(true);
    setError(undefined);
    try {
      const turn = await api.post("/api/threads/{id}/retry", { path: { id: message.thread_id } });
      putTurn(turn);
    } catch (e) {
      setError(e);
      // Tried again elsewhere meanwhile: the thread as it now is shows what came of it.
      if (isStaleRetry(e)) void loadThread(message.thread_id).catch(() => undefined);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="turn-failed">
      <p class="turn-note failed">
        {interrupted ? "Interrupted when the server restarted." : `This reply failed. ${plainFailure(turn?.error)}`}
        {handle && !archived && retryable && (
          <button type="button" class="btn btn-small" disabled={busy} onClick={() => void retry()} title={`Ask @${handle} again`}>
            {busy ? "Retrying…" : "Retry"}
          </button>
        )}
      </p>
      {turn?.error && <Details text={turn.error} />}
      {error !== undefined &&
        (isModelUnavailable(error) && handle ? (
          <NoModelError handle={handle} error={error} />
        ) : (
          <p class="error-text" role="alert">
            {isStaleRetry(error) ? "This was already tried again, or the thread went on since: see the replies below." : describeError(error)}
          </p>
        ))}
    </div>
  );
}

/** The reply's tokens, once its turn has ended and the provider reported them. */
function TurnTokens({ messageId }: { messageId: number }) {
  const usage = usageOfTurn(turnOfReply(messageId).value?.turn);
  return usage ? <Tokens usage={usage} /> : null;
}

function TurnWork({ messageId }: { messageId: number }) {
  const view = turnOfReply(messageId).value;
  const turnId = view?.turn.id;
  const ids = turnId === undefined ? [] : actionsOfTurn(turnId).value;
  const asked = useMemo(
    () => computed(() => (turnId === undefined ? [] : [...approvals.value.values()].filter((a) => a.turn_id === turnId))),
    [turnId],
  ).value;
  if (ids.length === 0 && asked.length === 0) return null;
  return (
    <div class="turn-work">
      {ids.map((id) => {
        const action = actionSignal(id);
        return action ? <ToolCard key={id} action={action} /> : null;
      })}
      {asked.map((a) => (
        <ApprovalCard key={a.id} approval={a} />
      ))}
    </div>
  );
}

export const MessageItem = memo(function MessageItem({ id, compact = false, focused = false }: { id: number; compact?: boolean; focused?: boolean }) {
  // Drawn at most once a frame, however fast the reply streams.
  const message = useFramed(messageSignal(id));
  if (!message) return null;
  const kind = authorKind(message);
  const name = authorName(message);
  const isAgent = kind === "agent" || kind === "skipper";
  const streaming = message.status === "streaming";
  return (
    <div class={`message message-${kind}${compact ? " compact" : ""}${focused ? " focused" : ""}`} aria-busy={streaming ? true : undefined} aria-current={focused ? "true" : undefined}>
      <Avatar name={name} kind={kind} />
      <div class="message-body">
        <div class="message-head">
          <span class="author">{name}</span>
          {kind === "agent" && <span class="tag">agent</span>}
          {kind === "skipper" && <span class="tag tag-skipper">operator</span>}
          <Time at={message.created} />
          {message.served_by && isAgent && (
            <span class="served-by" title="The model that served this reply">
              {message.served_by.model ?? message.served_by.provider}
            </span>
          )}
          {isAgent && <TurnTokens messageId={id} />}
        </div>
        {isAgent && <TurnWork messageId={id} />}
        {message.content && (streaming ? <StreamingMarkdown text={message.content} class="streaming" /> : <Markdown text={message.content} />)}
        {isAgent && <TurnState messageId={id} />}
      </div>
    </div>
  );
});
