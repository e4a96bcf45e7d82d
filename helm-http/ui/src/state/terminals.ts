// Terminals opened and ended in channels, from the events socket
// (`terminal.opened`, `terminal.closed`): the Terminal view of a channel
// listens while shown, so other people's shells appear and go at once.
import type { EventOf, LiveEvent } from "../api/events";

export type TerminalEvent = EventOf<"terminal.opened"> | EventOf<"terminal.closed">;
type Listener = (event: TerminalEvent) => void;
const listeners = new Map<number, Set<Listener>>();

/** Hears `channel`'s terminals opening and ending; returns the way to stop. */
export function onTerminalEvent(channel: number, listener: Listener): () => void {
  let set = listeners.get(channel);
  if (!set) listeners.set(channel, (set = new Set()));
  set.add(listener);
  return () => {
    set.delete(listener);
    if (set.size === 0) listeners.delete(channel);
  };
}

/** From the socket (`session.applyEvent`): tells the channel's listeners. */
export function applyTerminalEvent(event: LiveEvent): void {
  if (event.type !== "terminal.opened" && event.type !== "terminal.closed") return;
  if (event.channel_id === undefined) return;
  for (const listener of [...(listeners.get(event.channel_id) ?? [])]) {
    try {
      listener(event);
    } catch (e) {
      console.warn("helm: a terminal listener failed", e);
    }
  }
}
