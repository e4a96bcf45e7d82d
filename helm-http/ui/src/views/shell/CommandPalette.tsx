// Ctrl/Cmd-K: jump to a channel, a thread or a file, or run an action,
// by typing part of its name (lib/match.ts: word starts and runs of letters,
// best first), find the channel's threads whose messages say it (asked of
// the server once typing pauses), or search the channel's memory for what
// was typed. Arrow
// keys move, Enter goes, Escape closes.
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { api } from "../../api/client";
import type { Artifact, Thread } from "../../api/types";
import { Icon, type IconName } from "../../components/Icon";
import { channelById, channelByName, channels } from "../../state/channels";
import { matchScore } from "../../lib/match";
import { channelPath, coworkPath, filesPath, messagePath, navigate, recallPath, route } from "../../state/router";
import { isAdmin } from "../../state/session";
import { channelThreadIds, knownThreads, loadThreads, searchThreads } from "../../state/threads";
import { openQuickNote } from "./QuickNote";
import { overlay } from "./Shell";

interface Entry {
  id: string;
  icon: IconName;
  title: string;
  detail?: string;
  run: () => void;
}

export function CommandPalette({ onClose }: { onClose: () => void }) {
  const [query, setQuery] = useState("");
  const [active, setActive] = useState(0);
  const [files, setFiles] = useState<Artifact[]>([]);
  const [said, setSaid] = useState<Thread[]>([]);
  const input = useRef<HTMLInputElement>(null);
  const r = route.value;
  const currentChannel = r.name === "channel" ? r.channel : undefined;

  useEffect(() => {
    input.current?.focus();
    if (!currentChannel) return;
    const entry = [...channels.value.values()].find((e) => e.channel.name === currentChannel);
    if (!entry) return;
    void loadThreads(entry.channel.id, entry.channel.name).catch(() => undefined);
    api
      .get("/api/channels/{channel}/artifacts", { path: { channel: currentChannel } })
      .then(setFiles)
      .catch(() => undefined);
  }, []);

  // Threads found by what was said in them, beyond the titles known here.
  useEffect(() => {
    const q = query.trim();
    if (!q || !currentChannel) {
      setSaid([]);
      return;
    }
    let current = true;
    const timer = setTimeout(() => {
      searchThreads(currentChannel, q, false)
        .then((found) => current && setSaid(found))
        .catch(() => undefined);
    }, 250);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [query, currentChannel]);

  // Read here, not only inside the memo below: the channel's threads are
  // read as the palette opens, and a title typed before they arrive must
  // find them when they do (a memo read alone would keep the list before).
  const here = currentChannel === undefined ? undefined : channelByName(currentChannel)?.channel.id;
  const threadsHere = here === undefined ? undefined : channelThreadIds(here).value;
  const admin = isAdmin.value;
  const entries = useMemo(() => {
    const all: Entry[] = [];
    for (const e of channels.value.values()) {
      all.push({
        id: `c${e.channel.id}`,
        icon: e.channel.visibility === "private" ? "lock" : "hash",
        title: e.channel.name,
        detail: e.channel.status === "archived" ? "archived channel" : e.channel.purpose,
        run: () => navigate(channelPath(e.channel.name)),
      });
    }
    for (const t of knownThreads()) {
      const channel = channelById(t.channel_id)?.channel.name;
      if (!channel) continue;
      all.push({ id: `t${t.id}`, icon: "threads", title: t.title || "Untitled thread", detail: `thread in #${channel} · ${t.status}`, run: () => navigate(channelPath(channel, "chat", t.id)) });
    }
    for (const f of files) {
      if (f.kind === "link" || !currentChannel) continue;
      all.push({ id: `f${f.id}`, icon: "file", title: f.path.replace(/^\/workspace\//, ""), detail: `file in #${currentChannel}`, run: () => navigate(filesPath(currentChannel, f.path)) });
    }
    if (currentChannel) {
      all.push({ id: "a-cowork", icon: "cowork", title: `Cowork in #${currentChannel}`, detail: "notes, whiteboards, code, docs, presentations", run: () => navigate(coworkPath(currentChannel)) });
    }
    all.push({ id: "a-create", icon: "plus", title: "Create a channel", run: () => (overlay.value = "create") });
    all.push({ id: "a-note", icon: "note", title: "Write a quick note", run: openQuickNote });
    all.push({ id: "a-keys", icon: "keyboard", title: "Keyboard shortcuts", run: () => (overlay.value = "shortcuts") });
    if (admin) {
      all.push({ id: "a-people", icon: "users", title: "People and invitations", run: () => navigate("/admin/people") });
      all.push({ id: "a-providers", icon: "activity", title: "Model providers", run: () => navigate("/admin/providers") });
      all.push({ id: "a-approvals", icon: "shield", title: "Approvals", run: () => navigate("/admin/approvals") });
      all.push({ id: "a-audit", icon: "key", title: "Audit log", run: () => navigate("/admin/audit") });
      all.push({ id: "a-settings", icon: "settings", title: "Workspace settings", run: () => navigate("/admin/settings") });
    }
    // The title decides; a word of the detail (a channel's purpose) only
    // lists it after every title that matched. Ties keep the order above.
    const found = all
      .map((e) => ({ e, s: Math.max(matchScore(e.title, query), matchScore(e.detail ?? "", query) >= 60 ? 10 : 0) }))
      .filter((x) => x.s > 0)
      .sort((a, b) => b.s - a.s)
      .slice(0, 30)
      .map((x) => x.e);
    const listed = new Set(found.map((e) => e.id));
    for (const t of said) {
      if (listed.has(`t${t.id}`) || !currentChannel || found.length >= 40) continue;
      found.push({ id: `t${t.id}`, icon: "threads", title: t.title || "Untitled thread", detail: t.matched?.snippet ?? `thread in #${currentChannel}`, run: () => navigate(typeof t.matched?.message_id === "number" ? messagePath(currentChannel, t.id, t.matched.message_id) : channelPath(currentChannel, "chat", t.id)) });
    }
    // Whatever was typed can also be asked of the channel's memory.
    const asked = query.trim();
    if (asked && currentChannel) {
      found.push({ id: "a-recall", icon: "memory", title: `Search #${currentChannel}'s memory for “${asked}”`, run: () => navigate(recallPath(currentChannel, asked)) });
    }
    return found;
  }, [query, files, said, channels.value, threadsHere, admin]);

  const choose = (entry: Entry | undefined) => {
    if (!entry) return;
    onClose();
    entry.run();
  };

  const keys = (e: KeyboardEvent) => {
    if (e.key === "ArrowDown") {
      e.preventDefault();
      setActive((a) => Math.min(entries.length - 1, a + 1));
    } else if (e.key === "ArrowUp") {
      e.preventDefault();
      setActive((a) => Math.max(0, a - 1));
    } else if (e.key === "Enter") {
      e.preventDefault();
      choose(entries[active]);
    } else if (e.key === "Escape") {
      e.preventDefault();
      onClose();
    }
  };

  useEffect(() => {
    document.getElementById(`palette-${entries[active]?.id}`)?.scrollIntoView({ block: "nearest" });
  }, [active, entries]);

  return (
    <div class="palette-scrim" onClick={(e) => e.target === e.currentTarget && onClose()}>
      <div class="palette" role="dialog" aria-modal="true" aria-label="Jump to">
        <div class="palette-input">
          <Icon name="search" />
          <input
            ref={input}
            role="combobox"
            aria-expanded="true"
            aria-controls="palette-results"
            aria-activedescendant={entries[active] ? `palette-${entries[active].id}` : undefined}
            aria-label="Jump to a channel, thread or file"
            placeholder="Jump to a channel, thread or file…"
            value={query}
            onInput={(e) => {
              setQuery(e.currentTarget.value);
              setActive(0);
            }}
            onKeyDown={keys}
          />
        </div>
        <ul id="palette-results" class="palette-results" role="listbox" aria-label="Results">
          {entries.length === 0 && <li class="palette-empty">Nothing matches “{query}”.</li>}
          {entries.map((entry, i) => (
            <li
              key={entry.id}
              id={`palette-${entry.id}`}
              role="option"
              aria-selected={i === active}
              class={i === active ? "active" : ""}
              onMouseMove={() => setActive(i)}
              onClick={() => choose(entry)}
            >
              <Icon name={entry.icon} size={16} />
              <span class="palette-title">{entry.title}</span>
              {entry.detail && <span class="palette-detail">{entry.detail}</span>}
            </li>
          ))}
        </ul>
      </div>
    </div>
  );
}
