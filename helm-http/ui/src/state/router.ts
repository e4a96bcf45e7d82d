// Where the person is: the URL, parsed into a route, kept in a signal.
//
//   /                          → #main
//   /setup, /login, /join#code → first run, sign-in, accepting an invitation
//   /c/<channel>[/<view>]      → a channel's chat (or threads, files, …)
//   /c/<channel>/memory?q=…    → its memory, recalling what q asks
//   /c/<channel>/files?path=…  → its files, at a folder or a file
//   /c/<channel>/cowork        → Cowork, the visual editing plane
//   /c/<channel>/cowork?path=… → Cowork with a file open (its mode from its top folder)
//   /c/<channel>/cowork?mode=… → Cowork at a mode's folder (notes, code, …)
//   /c/<channel>/t/<id>        → its chat with a thread open beside it
//   /c/<channel>/t/<id>?m=<id> → the same, shown at one of its messages
//   /admin/<section>           → people, providers, approvals, audit, settings
//   /account                   → one's own account (changing one's password)
import { signal } from "@preact/signals";

export const CHANNEL_VIEWS = ["chat", "threads", "files", "cowork", "terminal", "memory", "activity", "settings"] as const;
export type ChannelViewName = (typeof CHANNEL_VIEWS)[number];
export const ADMIN_SECTIONS = ["people", "providers", "approvals", "audit", "settings"] as const;
export type AdminSection = (typeof ADMIN_SECTIONS)[number];

export type Route =
  | { name: "home" }
  | { name: "setup" }
  | { name: "login" }
  | { name: "join" }
  | { name: "channel"; channel: string; view: ChannelViewName; thread?: number; message?: number; path?: string; recall?: string; mode?: string }
  | { name: "admin"; section: AdminSection }
  | { name: "account" }
  | { name: "missing"; path: string };

export function parseRoute(pathname: string, search = ""): Route {
  const parts = pathname.split("/").filter(Boolean).map(decodeURIComponent);
  const [first, second, third, fourth] = parts;
  if (!first) return { name: "home" };
  if (first === "setup" && parts.length === 1) return { name: "setup" };
  if (first === "login" && parts.length === 1) return { name: "login" };
  if (first === "join" && parts.length === 1) return { name: "join" };
  if (first === "account" && parts.length === 1) return { name: "account" };
  if (first === "c" && second) {
    if (third === "t" && fourth && /^\d+$/.test(fourth)) {
      const m = new URLSearchParams(search).get("m");
      const message = m && /^\d+$/.test(m) ? Number(m) : undefined;
      return { name: "channel", channel: second, view: "chat", thread: Number(fourth), message };
    }
    const view = (third ?? "chat") as ChannelViewName;
    if (CHANNEL_VIEWS.includes(view) && parts.length <= 3) {
      const query = new URLSearchParams(search);
      const path = view === "files" || view === "cowork" ? query.get("path") || undefined : undefined;
      const recall = view === "memory" ? query.get("q") ?? undefined : undefined;
      const mode = view === "cowork" && !path ? query.get("mode") || undefined : undefined;
      return { name: "channel", channel: second, view, path, recall, mode };
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
export function navigate(path: string, { replace = false, force = false } = {}): void {
  if (path === location.pathname + location.search) return;
  if (!force && leaveGuard && !leaveGuard(path)) return;
  if (replace) history.replaceState(null, "", path);
  else history.pushState(null, "", path);
  route.value = parseRoute(location.pathname, location.search);
}

/** The address the route was last read from (for Back while a guard holds). */
let here = location.pathname + location.search;
route.subscribe(() => {
  here = location.pathname + location.search;
});

window.addEventListener("popstate", () => {
  const to = location.pathname + location.search;
  // Back or Forward cannot be cancelled: the guard said stay, so the address goes back.
  if (leaveGuard && to !== here && !leaveGuard(to)) {
    history.pushState(null, "", here);
    return;
  }
  route.value = parseRoute(location.pathname, location.search);
});

/** The path of a channel's view (or of a thread in its chat). */
export function channelPath(channel: string, view: ChannelViewName = "chat", thread?: number): string {
  const base = `/c/${encodeURIComponent(channel)}`;
  if (thread !== undefined) return `${base}/t/${thread}`;
  return view === "chat" ? base : `${base}/${view}`;
}

/** A thread in its channel's chat, shown at one of its messages. */
export function messagePath(channel: string, thread: number, message: number): string {
  return `${channelPath(channel, "chat", thread)}?m=${message}`;
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
 * Cowork, with the file `path` open (written as the Files view writes it:
 * `/workspace/notes/plan.md`); its mode follows from its top folder.
 */
export function coworkPath(channel: string, path?: string): string {
  const base = channelPath(channel, "cowork");
  return path ? `${base}?path=${encodeURIComponent(path)}` : base;
}

/** Cowork at one mode's folder (`notes`, `whiteboards`, `code`, `docs`, `presentations`). */
export function coworkModePath(channel: string, mode: string): string {
  return `${channelPath(channel, "cowork")}?mode=${encodeURIComponent(mode)}`;
}

/**
 * Asked before an in-app navigation leaves the page: answering false keeps
 * the person where they are (an editor with unsaved changes asks first,
 * then navigates itself with `force`).
 */
let leaveGuard: ((to: string) => boolean) | undefined;

export function setLeaveGuard(guard: ((to: string) => boolean) | undefined): void {
  leaveGuard = guard;
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
