// Live changes to channels' workspaces, from the events socket (what counts
// is decided in lib/changes.ts): views that show files (Cowork, Files)
// listen per channel, wait for a quiet moment, then look at the disk again.
import { useEffect, useState } from "preact/hooks";
import type { LiveEvent } from "../api/events";
import { QUIET_MS, changesOf, debounceChanges, type Changed, type WorkspaceChange } from "../lib/changes";
import { channelByName, channels } from "./channels";

export type { Changed, WorkspaceChange };

function agentHandle(agentId: number): string | undefined {
  for (const entry of channels.value.values()) if (entry.agent.id === agentId) return `@${entry.agent.handle}`;
  return undefined;
}

type Listener = (change: WorkspaceChange) => void;
const listeners = new Map<number, Set<Listener>>();

/** Hears every change to `channel`'s workspace; returns the way to stop. */
export function onWorkspaceChange(channel: number, listener: Listener): () => void {
  let set = listeners.get(channel);
  if (!set) listeners.set(channel, (set = new Set()));
  set.add(listener);
  return () => {
    set.delete(listener);
    if (set.size === 0) listeners.delete(channel);
  };
}

/**
 * From the socket (`session.applyEvent`): tells the listeners of each
 * channel concerned. `me` is the signed-in person, whose own changes are
 * named as made elsewhere (their other tabs).
 */
export function applyWorkspaceEvent(event: LiveEvent, me?: number): void {
  if (listeners.size === 0) return;
  for (const change of changesOf(event, { agentHandle, channelId: (name) => channelByName(name)?.channel.id, me })) {
    for (const listener of [...(listeners.get(change.channel) ?? [])]) {
      try {
        listener(change);
      } catch (e) {
        console.warn("helm: a workspace listener failed", e);
      }
    }
  }
}

/** The changes to `channel`'s workspace, a quiet moment after they happen. */
export function useWorkspaceChanges(channel: number, quiet = QUIET_MS): Changed {
  const [changed, setChanged] = useState<Changed>({ tick: 0, paths: new Set(), anything: false });
  useEffect(() => {
    const batcher = debounceChanges((b) => setChanged((c) => ({ ...b, tick: c.tick + 1 })), quiet);
    const stop = onWorkspaceChange(channel, batcher.add);
    return () => {
      stop();
      batcher.stop();
    };
  }, [channel, quiet]);
  return changed;
}
