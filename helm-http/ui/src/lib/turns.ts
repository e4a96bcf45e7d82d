// What an agent's reply says about its turn, decided from the turn's real
// state (from the thread's turns and the turn events), not guessed from the
// reply message alone: a reply stays `pending` until its first words, so a
// running turn, or one blocked on an approval, would read as queued.
import type { MessageStatus, Turn, TurnState } from "../api/types";

/** The note under a reply; `undefined`: none (the reply's text says it all). */
export type TurnNote =
  | { kind: "queued"; ahead: number }
  | { kind: "working" }
  | { kind: "approval" }
  | { kind: "failed" }
  | { kind: "stopped" }
  | { kind: "interrupted" };

/**
 * The note for a reply: `state` is its turn's, when known; `awaitingApproval`
 * whether an approval that turn asked for is still pending.
 */
export function turnNote(
  status: MessageStatus,
  hasText: boolean,
  state: TurnState | undefined,
  ahead: number | undefined,
  awaitingApproval: boolean,
): TurnNote | undefined {
  // Queued only when its turn is; with the turn unknown, a pending reply is.
  if (state === "queued" || (state === undefined && status === "pending")) return { kind: "queued", ahead: ahead ?? 0 };
  const running = state === "running" || (state === undefined && status === "streaming");
  // Blocked on a person's decision (its card is shown above the note).
  if (awaitingApproval && (running || state === "waiting")) return { kind: "approval" };
  if (running) return hasText ? undefined : { kind: "working" };
  if (status === "failed" || status === "stopped" || status === "interrupted") return { kind: status };
  return undefined;
}

/**
 * Whether Retry on the reply of `turn` can work: it ended failed or
 * interrupted, and no later turn of its thread is known (`latest`, the
 * newest turn id): the server runs only a thread's last turn again, so once
 * it was retried, or the thread went on, the old reply's Retry cannot.
 */
export function canRetry(turn: Turn, latest: number | undefined): boolean {
  return (turn.state === "failed" || turn.state === "interrupted") && (latest === undefined || latest <= turn.id);
}
