// Whether a reply wakes the channel's agent, by the server's rule
// (helm-core's runtime/wake.rs, docs/cli.md): a message wakes the agent when
// it mentions its handle, or when it continues a thread the agent has a
// reply in (of any status: streaming, failed and stopped ones count) while
// only one human speaks there; once a second human speaks,
// only mentions wake it. `@skipper` without the agent is for Skipper alone.
// The composer says which of these a reply will do, so a plain reply never
// silently reaches nobody.
import type { Message } from "../api/types";

/** The handles `text` mentions, read as the server reads them (lowercased). */
export function mentionedHandles(text: string): string[] {
  const found: string[] = [];
  const mention = /@([a-z0-9-]+)/gi;
  for (let m = mention.exec(text); m; m = mention.exec(text)) {
    const before = m.index === 0 ? "" : text[m.index - 1]!;
    if (before && /[\p{L}\p{N}._+-]/u.test(before)) continue;
    // Trailing hyphens are punctuation ("@launch-agent-, can you…").
    const handle = m[1]!.replace(/-+$/, "").toLowerCase();
    if (handle && !found.includes(handle)) found.push(handle);
  }
  return found;
}

/** What sending `text` in a thread does to the agent. */
export type Wake =
  /** It mentions the agent. */
  | "mention"
  /** It calls Skipper alone. */
  | "skipper"
  /** Plain, and the agent answers it: it has a reply here and only this person speaks. */
  | "continues"
  /** Plain, and the agent has no reply here yet (it was never asked in this thread). */
  | "unanswered"
  /** Plain, and another person speaks here too: only a mention wakes the agent. */
  | "others";

/**
 * `thread`: its messages as loaded; `agentId`/`handle`: the channel's agent
 * (Skipper in #main); `me`: who is writing.
 */
export function replyWakes(text: string, thread: Message[], agentId: number, handle: string, me: number | undefined): Wake {
  const named = mentionedHandles(text);
  if (named.includes(handle.toLowerCase())) return "mention";
  if (named.includes("skipper")) return "skipper";
  const answered = thread.some((m) => m.author.kind === "agent" && m.author.agent_id === agentId);
  if (!answered) return "unanswered";
  const others = thread.some((m) => m.author.kind === "human" && m.author.user_id !== me);
  return others ? "others" : "continues";
}
