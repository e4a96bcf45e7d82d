// Where the person is: the URL, parsed into a route, kept in a signal.
//
//   /                          → #main
//   /setup, /login, /join#code → first run, sign-in, accepting an invitation
//   /c/<channel>[/<view>]      → a channel's chat (or threads, files, …)
//   /c/<channel>/memory?q=…    → its memory, recalling what q asks
//   /c/<channel>/t/<id>        → its chat with a thread open beside it
//   /admin/<section>           → people, providers, approvals, audit, settings
import { signal } from "@preact/signals";

export const CHANNEL_VIEWS = ["chat", "threads", "files", "terminal", "memory", "activity", "settings"] as const;
export type ChannelViewName = (typeof CHANNEL_VIEWS)[number];
export const ADMIN_SECTIONS = ["people", "providers", "approvals", "audit", "settings"] as const;
export type AdminSection = (typeof ADMIN_SECTIONS)[number];

export type Route =
  | { name: "home" }
  | { name: "setup" }
  | { name: "login" }
  | { name: "join" }
  | { name: "channel"; channel: string; view: ChannelViewName; thread?: number; path?: string; recall?: string }
  | { name: "admin"; section: AdminSection }
  | { name: "missing"; path: string };

export function parseRoute(pathname: string, search = ""): Route {
  const parts = pathname.split("/").filter(Boolean).map(decodeURIComponent);
  const [first, second, third, fourth] = parts;
  if (!first) return { name: "home" };
  if (first === "setup" && parts.length === 1) return { name: "setup" };
  if (first === "login" && parts.length === 1) return { name: "login" };
  if (first === "join" && parts.length === 1) return { name: "join" };
  if (first === "c" && second) {
    if (third === "t" && fourth && /^\d+$/.test(fourth)) {
      return { name: "channel", channel: second, view: "chat", thread: Number(fourth) };
    }
    const view = (third ?? "chat") as ChannelViewName;
    if (CHANNEL_VIEWS.includes(view) && parts.length <= 3) {
      const query = new URLSearchParams(search);
      const path = view === "files" ? query.get("path") ?? undefined : undefined;
      const recall = view === "memory" ? query.get("q") ?? undefined : undefined;
      return { name: "channel", channel: second, view, path, recall };
    }
  }
  if (first === "admin") {
    const section = (second ?? "people") as AdminSection;
    if (ADMIN_SECTIONS.includes(section) && parts.length <= 2) return { name: "admin", section };
  }
  return { name: "missing", path: pathname };
}

export const route = signal<Route>(parseRoute(location.pathname, location.search));

/** Goes to `path` (a same-origin path), adding a history entry unless `replace`. */
export function navigate(path: string, { replace = false } = {}): void {
  if (path === location.pathname + location.search) return;
  if (replace) history.replaceState(null, "", path);
  else history.pushState(null, "", path);
  route.value = parseRoute(location.pathname, location.search);
}

window.addEventListener("popstate", () => {
  route.value = parseRoute(location.pathname, location.search);
});

/** The path of a channel's view (or of a thread in its chat). */
export function channelPath(channel: string, view: ChannelViewName = "chat", thread?: number): string {
  const base = `/c/${encodeURIComponent(channel)}`;
  if (thread !== undefined) return `${base}/t/${thread}`;
  return view === "chat" ? base : `${base}/${view}`;
}

/** The Memory view, recalling what `query` asks. */
export function recallPath(channel: string, query: string): string {
  return `${channelPath(channel, "memory")}?q=${encodeURIComponent(query)}`;
}

/** The Files view at a directory or file. */
export function filesPath(channel: string, path?: string): string {
  const base = channelPath(channel, "files");
  return path ? `${base}?path=${encodeURIComponent(path)}` : base;
}

/**
 * Makes plain `<a href>` clicks inside the app navigate without a reload
 * (keeping ctrl/cmd-click, middle click and downloads as the browser's).
 */
export function interceptLinks(root: HTMLElement): void {
  root.addEventListener("click", (event) => {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    const anchor = (event.target as Element | null)?.closest?.("a");
    if (!anchor || anchor.target || anchor.hasAttribute("download")) return;
    const href = anchor.getAttribute("href");
    if (!href || !href.startsWith("/") || href.startsWith("//") || href.startsWith("/api/")) return;
    event.preventDefault();
    navigate(href);
  });
}
