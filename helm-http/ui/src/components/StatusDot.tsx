// An agent's live status as a dot, with the word for screen readers and
// on hover: ready, working, waiting, paused.
import type { AgentStatus } from "../api/types";

const WORDS: Record<AgentStatus, string> = {
  ready: "ready",
  working: "working",
  waiting: "waiting on a person",
  paused: "paused",
};

export function statusWord(status: AgentStatus): string {
  return WORDS[status];
}

export function StatusDot({ status, label }: { status: AgentStatus; label?: string }) {
  const word = WORDS[status];
  return (
    <span class={`dot dot-${status}`} title={label ? `${label}: ${word}` : word}>
      <span class="sr-only">{label ? `${label} is ${word}` : word}</span>
    </span>
  );
}
