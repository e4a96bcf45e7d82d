// The workspace's channels: #main first, then the active ones by name,
// each with its agent's live status and what is unread; archived channels
// apart; the admin pages for the Captain and admins; who is signed in.
import { computed } from "@preact/signals";
import { useState } from "preact/hooks";
import { Avatar } from "../../components/Avatar";
import { Icon } from "../../components/Icon";
import { StatusDot } from "../../components/StatusDot";
import { approvals, questionsForCaptain } from "../../state/activity";
import { sidebar, type ChannelEntry } from "../../state/channels";
import { channelPath, route } from "../../state/router";
import { isAdmin, me, signOut, workspaceName } from "../../state/session";
import { unread } from "../../state/unread";
import { overlay } from "./Shell";

/** What waits for the Captain and admins: approvals to decide, and questions Skipper handed to the Captain. */
const waitingForYou = computed(() => [...approvals.value.values()].filter((a) => a.status === "pending").length + questionsForCaptain.value.length);

function ChannelLink({ entry }: { entry: ChannelEntry }) {
  const r = route.value;
  const current = r.name === "channel" && r.channel === entry.channel.name;
  const counts = unread.value.get(entry.channel.id);
  const count = counts?.unread ?? 0;
  const mentions = counts?.mentions ?? 0;
  const note = [
    entry.channel.visibility === "private" ? "private" : "",
    mentions ? `${mentions} mention${mentions === 1 ? "" : "s"}` : "",
    count ? `${count} unread` : "",
  ]
    .filter(Boolean)
    .join(", ");
  return (
    <li>
      <a
        href={channelPath(entry.channel.name)}
        class={["channel-link", current ? "current" : "", count || mentions ? "has-unread" : ""].join(" ")}
        aria-current={current ? "page" : undefined}
      >
        <Icon name={entry.channel.visibility === "private" ? "lock" : "hash"} size={15} class="channel-glyph" />
        <span class="channel-name">{entry.channel.name}</span>
        <StatusDot status={entry.agent.status} label={`@${entry.agent.handle}`} />
        {mentions > 0 ? (
          <span class="badge badge-mention" aria-hidden="true">
            @{mentions > 99 ? "99+" : mentions}
          </span>
        ) : count > 0 ? (
          <span class="badge" aria-hidden="true">
            {count > 99 ? "99+" : count}
          </span>
        ) : null}
        {note && <span class="sr-only">, {note}</span>}
      </a>
    </li>
  );
}

export function Sidebar() {
  const { home, active, archived } = sidebar.value;
  const [showArchived, setShowArchived] = useState(false);
  const r = route.value;
  const user = me.value;
  return (
    <nav class="sidebar" aria-label="Workspace">
      <div class="sidebar-top">
        <span class="brand-mark" aria-hidden="true" />
        <span class="workspace-name" title={workspaceName.value}>
          {workspaceName.value}
        </span>
      </div>
      <button type="button" class="jump" onClick={() => (overlay.value = "palette")}>
        <Icon name="search" size={16} />
        <span>Jump to…</span>
        <kbd>Ctrl K</kbd>
      </button>
      <div class="sidebar-scroll">
        <div class="sidebar-section">
          <div class="section-head">
            <h2 id="channels-heading">Channels</h2>
            <button type="button" class="icon-button small" aria-label="Create a channel" title="Create a channel (c)" onClick={() => (overlay.value = "create")}>
              <Icon name="plus" size={16} />
            </button>
          </div>
          <ul class="channel-list" aria-labelledby="channels-heading">
            {home && <ChannelLink entry={home} />}
            {active.map((e) => (
              <ChannelLink key={e.channel.id} entry={e} />
            ))}
          </ul>
          <button type="button" class="new-channel" onClick={() => (overlay.value = "create")}>
            <Icon name="plus" size={15} /> New channel
          </button>
        </div>
        {archived.length > 0 && (
          <div class="sidebar-section">
            <button type="button" class="section-toggle" aria-expanded={showArchived} onClick={() => setShowArchived(!showArchived)}>
              <Icon name={showArchived ? "down" : "chevron"} size={14} /> Archived ({archived.length})
            </button>
            {showArchived && (
              <ul class="channel-list archived" aria-label="Archived channels">
                {archived.map((e) => (
                  <ChannelLink key={e.channel.id} entry={e} />
                ))}
              </ul>
            )}
          </div>
        )}
        {isAdmin.value && (
          <div class="sidebar-section">
            <div class="section-head">
              <h2 id="admin-heading">Workspace</h2>
            </div>
            <ul class="channel-list" aria-labelledby="admin-heading">
              {(
                [
                  ["people", "users", "People"],
                  ["providers", "sparkle", "Providers"],
                  ["approvals", "shield", "Approvals"],
                  ["audit", "key", "Audit log"],
                  ["settings", "settings", "Settings"],
                ] as const
              ).map(([section, icon, label]) => {
                const current = r.name === "admin" && r.section === section;
                const badge = section === "approvals" ? waitingForYou.value : 0;
                return (
                  <li key={section}>
                    <a href={`/admin/${section}`} class={current ? "channel-link current" : "channel-link"} aria-current={current ? "page" : undefined}>
                      <Icon name={icon === "sparkle" ? "activity" : icon} size={15} class="channel-glyph" />
                      <span class="channel-name">{label}</span>
                      {badge > 0 && (
                        <span class="badge badge-mention" aria-label={`${badge} waiting`}>
                          {badge}
                        </span>
                      )}
                    </a>
                  </li>
                );
              })}
            </ul>
          </div>
        )}
      </div>
      {user && (
        <div class="sidebar-user">
          <a
            href="/account"
            class="who-link"
            title="Your account: your password"
            aria-current={r.name === "account" ? "page" : undefined}
          >
            <Avatar name={user.display_name || user.name} />
            <div class="who">
              <span class="sr-only">Your account: </span>
              <span class="who-name">{user.display_name || user.name}</span>
              <span class="who-role">{user.role === "captain" ? "Captain" : user.role === "admin" ? "Admin" : "Member"}</span>
            </div>
          </a>
          <NotifyButton />
          <button type="button" class="icon-button" aria-label="Keyboard shortcuts" title="Keyboard shortcuts (?)" onClick={() => (overlay.value = "shortcuts")}>
            <Icon name="keyboard" />
          </button>
          <button type="button" class="icon-button" aria-label="Sign out" title="Sign out" onClick={() => void signOut()}>
            <Icon name="logout" />
          </button>
        </div>
      )}
    </nav>
  );
}

/** Asks the browser to show mentions while Helm is in the background. */
function NotifyButton() {
  const supported = typeof Notification !== "undefined";
  const [permission, setPermission] = useState(supported ? Notification.permission : "denied");
  if (!supported || permission !== "default") return null;
  return (
    <button
      type="button"
      class="icon-button"
      aria-label="Notify me of mentions while Helm is in the background"
      title="Notify me of mentions while Helm is in the background"
      onClick={() => void Notification.requestPermission().then(setPermission)}
    >
      <Icon name="bell" />
    </button>
  );
}
