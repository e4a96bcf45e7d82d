// Looking at any view of a channel reads it, not only its chat: someone in
// Files or Cowork sees the work as it happens (and the agent's replies in
// Cowork's panel), so the sidebar must not count those messages as unread.
// The chat marks read itself, up to the newest message it shows; here,
// entering another view with something unread marks the channel read up to
// the newest message the feed knows, and messages arriving meanwhile are
// marked read by the session (see `looking` in state/session.ts).
import { useEffect } from "preact/hooks";
import type { ChannelEntry } from "../../state/channels";
import { loadFeed, newestKnown } from "../../state/messages";
import type { ChannelViewName } from "../../state/router";
import { markRead, unread } from "../../state/unread";

export function useChannelRead(entry: ChannelEntry | undefined, view: ChannelViewName): void {
  const id = entry?.channel.id;
  const name = entry?.channel.name;
  const count = id === undefined ? undefined : unread.value.get(id);
  const behind = (count?.unread ?? 0) + (count?.mentions ?? 0) > 0;
  useEffect(() => {
    if (id === undefined || name === undefined || view === "chat" || !behind) return;
    const read = () => {
      if (document.visibilityState !== "visible") return;
      loadFeed(id, name)
        .then(() => markRead(id, newestKnown(id)))
        .catch(() => undefined);
    };
    read();
    document.addEventListener("visibilitychange", read);
    return () => document.removeEventListener("visibilitychange", read);
  }, [id, view, behind]);
}
