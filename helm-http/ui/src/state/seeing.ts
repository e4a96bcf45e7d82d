// Whether the person sees a conversation right now: what spares them a
// mention's notice and keeps a channel read. Only its chat shows a
// channel's conversation (the feed, and the thread open beside it); its
// other views (Files, Terminal, Settings…) do not, except Cowork's agent
// panel for the one thread it shows.
import { signal } from "@preact/signals";
import type { Route } from "./router";

/** The thread Cowork's agent panel shows, while it is open. */
export const panelThread = signal<number | undefined>(undefined);

/**
 * Whether a message of `thread` in the channel `route` may be at is seen:
 * `inChannel` says the route is that channel's, `visible` that the page is shown.
 */
export function seesConversation(route: Route, inChannel: boolean, thread: number | null | undefined, visible: boolean, panel: number | undefined): boolean {
  if (!visible || route.name !== "channel" || !inChannel) return false;
  if (route.view === "chat") return true;
  return route.view === "cowork" && thread !== null && thread !== undefined && thread === panel;
}
