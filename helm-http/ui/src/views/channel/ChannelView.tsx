// One channel: its header (purpose, resident agent and its status, the
// model as a replaceable detail, the way to Skipper) and its views, which
// all show the same world: chat, threads, files, cowork, terminal, memory,
// activity, settings.
import { lazy, Suspense } from "preact/compat";
import { useEffect, useRef, useState } from "preact/hooks";
import { api, describeError } from "../../api/client";
import type { ChannelDetail } from "../../api/types";
import { Icon, type IconName } from "../../components/Icon";
import { StatusDot, statusWord } from "../../components/StatusDot";
import { isAdmin } from "../../state/session";
import { channelByName, goneChannel, loadChannel, type ChannelEntry, type GoneChannel } from "../../state/channels";
import { composerInsert } from "../../state/composer";
import { CHANNEL_VIEWS, channelPath, navigate, route, type ChannelViewName } from "../../state/router";
import { toast } from "../../state/toasts";
import { Chat } from "../chat/Chat";
import { NoModelBanner, NO_MODEL_ASK } from "../chat/NoModel";
import { QuickNoteButton } from "../shell/QuickNote";
import { DrawerButton } from "../shell/Shell";
import { Activity } from "./Activity";
import { Files } from "./Files";
import { Memory } from "./Memory";
import { Settings } from "./Settings";
import { MANAGERS, useManages } from "./manages";
import { Threads } from "./Threads";
import { HostComputerNote, offHostComputer } from "./hostComputer";

// The terminal (xterm.js) is loaded only when opened.
const Terminal = lazy(() => import("./Terminal").then((m) => ({ default: m.Terminal })));
// Cowork (its editors, and the agent panel) too.
const Cowork = lazy(() => import("../cowork/Cowork").then((m) => ({ default: m.Cowork })));


const VIEW_META: Record<ChannelViewName, { label: string; icon: IconName }> = {
  chat: { label: "Chat", icon: "chat" },
  threads: { label: "Threads", icon: "threads" },
  files: { label: "Files", icon: "files" },
  cowork: { label: "Cowork", icon: "cowork" },
  terminal: { label: "Terminal", icon: "terminal" },
  memory: { label: "Memory", icon: "memory" },
  activity: { label: "Activity", icon: "activity" },
  settings: { label: "Settings", icon: "settings" },
};

export function ChannelView() {
  const r = route.value;
  if (r.name !== "channel") return null;
  const entry = channelByName(r.channel);
  const [detail, setDetail] = useState<ChannelDetail>();
  const [missing, setMissing] = useState<string>();
  // Gone from this person's list while the page was open: said, not fetched.
  const lost = entry ? undefined : goneChannel(r.channel);

  useEffect(() => {
    let live = true;
    setDetail(undefined);
    // A channel looked for before (one that does not exist) says nothing of this one.
    setMissing(undefined);
    if (lost) return;
    api
      .get("/api/channels/{channel}", { path: { channel: r.channel } })
      .then((d) => {
        if (!live) return;
        setDetail(d);
        void loadChannel(r.channel).catch(() => undefined);
      })
      .catch((e) => live && setMissing(describeError(e)));
    return () => {
      live = false;
    };
  }, [r.channel, entry?.channel.status, entry?.profile?.purpose, lost?.reason]);

  useEffect(() => {
    document.title = `#${r.channel} · Helm`;
  }, [r.channel]);

  if (!entry && lost) return <Gone lost={lost} />;
  if (!entry) {
    return (
      <div class="empty-page">
        <DrawerButton />
        <h1>{missing ? "No such channel" : "Opening…"}</h1>
        {missing && <p class="muted">{missing}</p>}
        {missing && (
          <a class="btn" href={channelPath("main")}>
            Go to #main
          </a>
        )}
      </div>
    );
  }

  const view = r.view;
  // A member in #main: Skipper's host computer is not theirs to use.
  const offComputer = offHostComputer(entry);
  return (
    <div class="channel">
      <Header entry={entry} detail={detail} />
      <nav class="tabs" aria-label={`#${entry.channel.name} views`}>
        {CHANNEL_VIEWS.map((v) => (
          // title: on a phone the tabs are icons only; the name shows on hover and long-press.
          <a key={v} href={channelPath(entry.channel.name, v)} class={v === view ? "tab current" : "tab"} aria-current={v === view ? "page" : undefined} title={VIEW_META[v].label}>
            <Icon name={VIEW_META[v].icon} size={16} />
            <span>{VIEW_META[v].label}</span>
          </a>
        ))}
      </nav>
      {entry.channel.status === "archived" && <ArchivedNote entry={entry} />}
      {/* No model to answer (the wizard's model step skipped, say): the way to one, not just a chip. */}
      {entry.channel.status !== "archived" && detail && !detail.model && <NoModelBanner handle={entry.agent.handle} />}
      <section class="view" aria-label={VIEW_META[view].label}>
        {view === "chat" && <Chat entry={entry} thread={r.thread} message={r.message} />}
        {view === "threads" && <Threads entry={entry} />}
        {offComputer && view === "files" && <HostComputerNote entry={entry} what="files" />}
        {offComputer && view === "cowork" && <HostComputerNote entry={entry} what="notes, docs and whiteboards" />}
        {offComputer && view === "terminal" && <HostComputerNote entry={entry} what="terminals" />}
        {!offComputer && view === "files" && <Files entry={entry} path={r.path} />}
        {!offComputer && view === "cowork" && (
          <Suspense fallback={<p class="muted pad">Loading Cowork…</p>}>
            <Cowork key={entry.channel.id} entry={entry} path={r.path} mode={r.mode} />
          </Suspense>
        )}
        {!offComputer && view === "terminal" && (
          <Suspense fallback={<p class="muted pad">Loading the terminal…</p>}>
            <Terminal entry={entry} />
          </Suspense>
        )}
        {view === "memory" && <Memory entry={entry} recall={r.recall} />}
        {view === "activity" && <Activity entry={entry} />}
        {view === "settings" && <Settings entry={entry} detail={detail} onChanged={setDetail} />}
      </section>
    </div>
  );
}

function Header({ entry, detail }: { entry: ChannelEntry; detail?: ChannelDetail }) {
  const { channel, agent } = entry;
  const isHome = channel.kind === "home";
  const model = detail?.model;
  const askSkipper = () => {
    composerInsert.value = { channel: channel.id, text: "@skipper " };
    const r = route.value;
    // Through navigate, so a view with unsaved work (Cowork) can ask first.
    if (r.name === "channel" && r.view !== "chat") navigate(channelPath(channel.name));
    else route.value = { name: "channel", channel: channel.name, view: "chat", thread: r.name === "channel" ? r.thread : undefined };
  };
  return (
    <header class="channel-header">
      <DrawerButton />
      <div class="channel-title">
        <h1>
          <Icon name={channel.visibility === "private" ? "lock" : "hash"} size={20} class="channel-glyph" />
          {channel.name}
        </h1>
        <p class="purpose" title={channel.purpose}>
          {channel.purpose}
        </p>
      </div>
      <div class="agent-card" aria-label="Resident agent">
        <StatusDot status={agent.status} label={`@${agent.handle}`} />
        <div class="agent-text">
          {/* The handle, as the agent's messages are signed and as it is mentioned; the display name in the tooltip. Skipper is Skipper everywhere. */}
          <span class="agent-name" title={isHome ? undefined : agent.display_name}>
            {isHome ? (
              <>
                {agent.display_name} <span class="handle">@{agent.handle}</span>
              </>
            ) : (
              `@${agent.handle}`
            )}
          </span>
          <span class="agent-status">
            {statusWord(agent.status)}
            {model && (
              <>
                {" · "}
                <a href={channelPath(channel.name, "settings")} class="model-chip" title="The model is a replaceable detail: change it in Settings">
                  {model.provider}
                  {model.model ? ` / ${model.model}` : ""}
                </a>
              </>
            )}
            {/* No model: the Captain and admins go where one is chosen; others are told whom to ask (as NoModel.tsx says it). */}
            {detail && !model && (
              <>
                {" · "}
                {isAdmin.value ? (
                  <a href={channelPath(channel.name, "settings")} class="model-chip warn" title="Choose a model in Settings, or connect one under Workspace → Providers">
                    no model yet
                  </a>
                ) : (
                  <span class="model-chip warn" title={NO_MODEL_ASK}>
                    no model yet: ask the Captain
                  </span>
                )}
              </>
            )}
          </span>
        </div>
      </div>
      {/* Not in an archived channel: nothing can be posted there (the archived note says why). */}
      {!isHome && channel.status !== "archived" && (
        <button type="button" class="btn btn-small skipper-button" onClick={askSkipper} title="Call Skipper, the workspace operator, into the conversation">
          <Icon name="skipper" size={16} /> Ask @skipper
        </button>
      )}
      <QuickNoteButton />
    </header>
  );
}

function ArchivedNote({ entry }: { entry: ChannelEntry }) {
  const manages = useManages(entry);
  const [busy, setBusy] = useState(false);
  const restore = async () => {
    setBusy(true);
    try {
      await api.post("/api/channels/{channel}/restore", { path: { channel: entry.channel.name } });
      toast(`#${entry.channel.name} is back, with the same agent, files and memory.`);
    } catch (e) {
      toast(describeError(e), "error");
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="archived-note" role="status">
      <Icon name="archive" />
      <span>
        This channel is archived: its agent is paused, and its threads, files and memory are kept.
        {!manages && ` Only ${MANAGERS} can restore it.`}
      </span>
      {manages && (
        <button type="button" class="btn btn-small" onClick={restore} disabled={busy}>
          Restore
        </button>
      )}
    </div>
  );
}

/** What happened to a channel gone from this person's list, as a reload would say it, and the way on. */
export function goneWords(lost: GoneChannel): { title: string; detail: string } {
  const name = `#${lost.name}`;
  switch (lost.reason) {
    case "removed":
      return { title: `You were removed from ${name}`, detail: "It is a private channel: only its members, the Captain and admins see it. A member who manages it can add you back." };
    case "left":
      return { title: `You left ${name}`, detail: "It is a private channel: only its members, the Captain and admins see it. A member who manages it can add you back." };
    case "deleted":
      return { title: `${name} was deleted`, detail: "Its threads, files and memory are gone with it." };
    case "hidden":
      return { title: `${name} is no longer visible to you`, detail: "Your role changed, and this private channel is for its members, the Captain and admins. A member who manages it can add you." };
  }
}

function Gone({ lost }: { lost: GoneChannel }) {
  const link = useRef<HTMLAnchorElement>(null);
  // The focus was in the channel (its composer, its terminal) and went with it: it comes here,
  // so typing goes on somewhere rather than into the page's shortcuts.
  useEffect(() => {
    const at = document.activeElement;
    if (!at || at === document.body || !at.isConnected) link.current?.focus();
  }, [lost.id]);
  const words = goneWords(lost);
  return (
    <div class="empty-page" role="status">
      <DrawerButton />
      <h1>{words.title}</h1>
      <p class="muted">{words.detail}</p>
      <a class="btn" href={channelPath("main")} ref={link}>
        Go to #main
      </a>
    </div>
  );
}
