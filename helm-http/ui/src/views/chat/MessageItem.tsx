// One message of a thread. An agent's reply carries its turn: queued (with
// how many are ahead), streaming, failed or stopped; its tool calls as
// cards; the approvals it asked for. Each message reads only its own
// signals, so a streaming reply re-renders alone.
import { computed } from "@preact/signals";
import { memo } from "preact/compat";
import { useMemo } from "preact/hooks";
import type { Message } from "../../api/types";
import { Avatar } from "../../components/Avatar";
import { Markdown, StreamingMarkdown } from "../../components/Markdown";
import { useFramed } from "../../lib/framed";
import { Time } from "../../components/Time";
import { actionSignal, actionsOfTurn, approvals } from "../../state/activity";
import { messageSignal } from "../../state/messages";
import { turnOfReply } from "../../state/threads";
import { userById } from "../../state/users";
import { ApprovalCard } from "./ApprovalCard";
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
  if (!message) return null;
  const state = view?.turn.state;
  if (message.status === "pending" || state === "queued") {
    const ahead = view?.ahead ?? 0;
    return <p class="turn-note">{ahead > 0 ? `Queued, ${ahead} ahead` : "Queued: starts in a moment"}</p>;
  }
  if (message.status === "streaming" && !message.content) {
    return (
      <p class="turn-note working">
        <span class="pulse" aria-hidden="true" /> Working…
      </p>
    );
  }
  if (message.status === "failed") {
    return <p class="turn-note failed">{view?.turn.error ? `This reply failed: ${view.turn.error}` : "This reply failed."}</p>;
  }
  if (message.status === "stopped") return <p class="turn-note">Stopped.</p>;
  if (message.status === "interrupted") return <p class="turn-note">Interrupted when the server restarted.</p>;
  return null;
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

export const MessageItem = memo(function MessageItem({ id, compact = false }: { id: number; compact?: boolean }) {
  // Drawn at most once a frame, however fast the reply streams.
  const message = useFramed(messageSignal(id));
  if (!message) return null;
  const kind = authorKind(message);
  const name = authorName(message);
  const isAgent = kind === "agent" || kind === "skipper";
  const streaming = message.status === "streaming";
  return (
    <div class={`message message-${kind}${compact ? " compact" : ""}`} aria-busy={streaming ? true : undefined}>
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
        </div>
        {isAgent && <TurnWork messageId={id} />}
        {message.content && (streaming ? <StreamingMarkdown text={message.content} class="streaming" /> : <Markdown text={message.content} />)}
        {isAgent && <TurnState messageId={id} />}
      </div>
    </div>
  );
});
