// The signed-in workspace: the channel sidebar beside the current view,
// plus what floats over everything (the offline banner, notices, the
// command palette, the shortcut sheet, the create-channel dialog, Quick Note).
import { computed, signal } from "@preact/signals";
import { useEffect } from "preact/hooks";
import { Icon } from "../../components/Icon";
import { channels } from "../../state/channels";
import { channelPath, navigate, route } from "../../state/router";
import { me } from "../../state/session";
import { summarizeUnread, unread, unreadWords } from "../../state/unread";
import { AccountView } from "../account/Account";
import { AdminView } from "../admin/AdminView";
import { ChannelView } from "../channel/ChannelView";
import { CreateChannel } from "../channel/CreateChannel";
import { CommandPalette } from "./CommandPalette";
import { OfflineBanner } from "./OfflineBanner";
import { openQuickNote, QuickNote } from "./QuickNote";
import { Shortcuts } from "./Shortcuts";
import { Sidebar } from "./Sidebar";
import { Toasts } from "./Toasts";

export type Overlay = "palette" | "shortcuts" | "create" | "note" | undefined;
export const overlay = signal<Overlay>(undefined);
/** On narrow screens the sidebar is a drawer. */
export const drawerOpen = signal(false);

function typingInField(target: EventTarget | null): boolean {
  const el = target as HTMLElement | null;
  return !!el && (el.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(el.tagName) || !!el.closest?.(".xterm"));
}

export function Shell() {
  useEffect(() => {
    const keys = (e: KeyboardEvent) => {
      if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === "k") {
        e.preventDefault();
        overlay.value = overlay.value === "palette" ? undefined : "palette";
        return;
      }
      if (typingInField(e.target) || e.ctrlKey || e.metaKey || e.altKey) return;
      if (e.key === "?") {
        e.preventDefault();
        overlay.value = "shortcuts";
      } else if (e.key === "c" && overlay.value === undefined) {
        e.preventDefault();
        overlay.value = "create";
      } else if (e.key === "n" && overlay.value === undefined) {
        e.preventDefault();
        openQuickNote();
      }
    };
    window.addEventListener("keydown", keys);
    return () => window.removeEventListener("keydown", keys);
  }, []);

  useEffect(() => {
    drawerOpen.value = false;
  }, [route.value]);

  // The open drawer holds the focus: it starts on the current channel,
  // Escape closes it, and a window grown past phone width drops it (the
  // sidebar is then a column, and the page behind must not stay inert).
  const open = drawerOpen.value;
  useEffect(() => {
    if (!open) return;
    const sidebar = document.querySelector<HTMLElement>(".sidebar");
    (sidebar?.querySelector<HTMLElement>("[aria-current='page']") ?? sidebar?.querySelector<HTMLElement>("a[href], button"))?.focus();
    const keys = (e: KeyboardEvent) => {
      if (e.key === "Escape" && overlay.value === undefined) {
        e.preventDefault();
        closeDrawer();
      }
    };
    const narrow = window.matchMedia(NARROW);
    const resized = () => {
      if (!narrow.matches) drawerOpen.value = false;
    };
    window.addEventListener("keydown", keys);
    narrow.addEventListener("change", resized);
    return () => {
      window.removeEventListener("keydown", keys);
      narrow.removeEventListener("change", resized);
      // Run once the page behind is no longer inert, so it can take the focus.
      if (focusBackOnClose) {
        focusBackOnClose = false;
        document.querySelector<HTMLElement>("main .drawer-button")?.focus();
      }
    };
  }, [open]);

  const r = route.value;
  let main;
  if (r.name === "channel") main = <ChannelView key={r.channel} />;
  else if (r.name === "admin") main = <AdminView section={r.section} />;
  else if (r.name === "account") main = <AccountView />;
  else if (r.name === "join") main = <SignedInJoin />;
  else if (r.name === "home" || r.name === "setup" || r.name === "login") main = <Redirect to={channelPath("main")} />;
  else main = <Missing />;

  return (
    <div class={drawerOpen.value ? "shell drawer-open" : "shell"}>
      <a class="skip-link" href="#main-content">
        Skip to content
      </a>
      <OfflineBanner />
      <Sidebar />
      <button type="button" class="drawer-scrim" aria-label="Close the channel list" tabIndex={-1} onClick={closeDrawer} />
      <main id="main-content" class="main" tabIndex={-1} inert={open}>
        {main}
      </main>
      <Toasts />
      {overlay.value === "palette" && <CommandPalette onClose={() => (overlay.value = undefined)} />}
      {overlay.value === "shortcuts" && <Shortcuts onClose={() => (overlay.value = undefined)} />}
      {overlay.value === "create" && <CreateChannel onClose={() => (overlay.value = undefined)} />}
      {overlay.value === "note" && <QuickNote onClose={() => (overlay.value = undefined)} />}
    </div>
  );
}

/** The width below which the sidebar is a drawer (as in app.css). */
const NARROW = "(max-width: 760px)";

/** Whether closing the drawer gives the focus back to the button that opened it
 * (so when the person closed it; not when a link in it was followed). */
let focusBackOnClose = false;

/** Closes the drawer, the focus going back to the button that opened it. */
function closeDrawer() {
  focusBackOnClose = true;
  drawerOpen.value = false;
}

/** What is unread in the channels of the sidebar, which on a phone is a closed drawer. */
const drawerUnread = computed(() => summarizeUnread(unread.value, (id) => channels.value.has(id)));

/**
 * The button that opens the sidebar drawer on narrow screens. The drawer is
 * closed there, so the button carries what its channel list would show: how
 * many channels mention the person, or a dot for anything else unread
 * (a mention's notice fades; this stays until it is read).
 */
export function DrawerButton() {
  const summary = drawerUnread.value;
  const words = unreadWords(summary);
  const label = words ? `Open the channel list, ${words}` : "Open the channel list";
  return (
    <button type="button" class="icon-button drawer-button" aria-label={label} title={label} aria-expanded={drawerOpen.value} onClick={() => (drawerOpen.value = true)}>
      <Icon name="menu" />
      {summary.mentionChannels > 0 ? (
        <span class="badge badge-mention drawer-badge" aria-hidden="true">
          {summary.mentionChannels > 99 ? "99+" : summary.mentionChannels}
        </span>
      ) : summary.unreadChannels > 0 ? (
        <span class="drawer-dot" aria-hidden="true" />
      ) : null}
    </button>
  );
}

function Redirect({ to }: { to: string }) {
  useEffect(() => navigate(to, { replace: true }), [to]);
  return null;
}

function Missing() {
  return (
    <div class="empty-page">
      <h1>Nothing here</h1>
      <p class="muted">This address does not lead to a channel or a page of Helm.</p>
      <a class="btn" href={channelPath("main")}>
        Go to #main
      </a>
    </div>
  );
}

function SignedInJoin() {
  return (
    <div class="empty-page">
      <DrawerButton />
      <h1>You are already signed in</h1>
      <p class="muted">
        This invitation is for someone new. You are signed in as <strong>{me.value?.name}</strong>; sign out first to accept it as another person.
      </p>
      <a class="btn" href={channelPath("main")}>
        Go to #main
      </a>
    </div>
  );
}
