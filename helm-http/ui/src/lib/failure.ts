// Why an agent's reply failed, in words a person understands. The server's
// reason is written for whoever runs the server ("provider openai: HTTP 500
// Internal Server Error from https://…/v1/chat/completions: … (gave up
// after 3 retries)"); the chat says what happened in a sentence and keeps
// that text behind a "Details" disclosure.
import type { Message } from "../api/types";

/** The note Helm adds to a thread when a turn fails (helm-core's `failed`). */
const FAILURE_NOTE = /^(?:The turn failed|This turn failed inside Helm): /;

/** Whether `message` is Helm's note about a failed turn (its reply already says so). */
export function isFailureNote(message: Message | undefined): boolean {
  return message?.author.kind === "system" && FAILURE_NOTE.test(message.content);
}

/**
 * Whether the chat shows `message` in its thread (and counts it as a reply):
 * everything but Helm's failure note, which the failed reply already says.
 */
export function shownInThread(message: Message | undefined): boolean {
  return !isFailureNote(message);
}

/** The replies shown of a whole thread: its messages after the root but failure notes. */
export function repliesShown(messages: (Message | undefined)[], root: number | null | undefined): number {
  return messages.filter((m) => m !== undefined && m.id !== root && shownInThread(m)).length;
}

/** The failure's own text, without the note's opening words. */
export function failureOfNote(message: Message): string {
  return message.content.replace(FAILURE_NOTE, "");
}

/** A sentence for a turn's `error`. */
export function plainFailure(error: string | null | undefined): string {
  if (!error) return "The agent could not finish this reply.";
  const status = /\bHTTP (\d{3})\b/.exec(error)?.[1];
  if (status) {
    const code = Number(status);
    if (code === 401 || code === 403) return `The model provider refused Helm's API key (HTTP ${code}).`;
    if (code === 404) return `The model provider does not know this model or address (HTTP ${code}).`;
    if (code === 429) return `The model provider is busy and asked Helm to slow down (HTTP ${code}).`;
    if (code >= 500) return `The model could not be reached (HTTP ${code}).`;
    return `The model provider turned the request down (HTTP ${code}).`;
  }
  if (/could not connect securely/.test(error)) return "Helm could not connect securely to the model provider.";
  if (/could not connect to|the request to .* failed/.test(error)) return "The model could not be reached: its server did not answer.";
  if (/timed out|no response from .* within/.test(error)) return "The model took too long to answer.";
  if (/^provider /.test(error)) return "The model provider could not answer.";
  if (/^no model serves|not registered|choose a model/.test(error)) return "No model can answer here yet.";
  return "The agent could not finish this reply.";
}
