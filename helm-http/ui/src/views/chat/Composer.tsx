// Writing a message: Enter sends, Shift+Enter breaks the line, `@` offers
// the channel's agent, Skipper and people; files can be attached (or
// dropped on the chat) and land in the channel's /workspace/uploads. In an
// agent channel, "Ask @agent" makes sure the message reaches the agent; in
// a thread, a line under the box says whether this reply wakes the agent
// (the server's rule, lib/wake.ts). A message that fails to send stays in
// the box, with the reason (and, when no model can answer, what to do).
// Unsent text is kept as a draft per person and box (lib/drafts.ts).
import { computed } from "@preact/signals";
import type { ComponentChildren } from "preact";
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { api, describeError } from "../../api/client";
import type { Message } from "../../api/types";
import { Icon } from "../../components/Icon";
import type { ChannelEntry } from "../../state/channels";
import { skipper } from "../../state/channels";
import { messageSignal, putMessage, threadLog } from "../../state/messages";
import { me } from "../../state/session";
import { channelPath, navigate } from "../../state/router";
import { putThread, putTurn } from "../../state/threads";
import { userList } from "../../state/users";
import { members, loadMembers } from "../../state/members";
import { mentionablePeople, unseenMentions, unseenWords } from "../../lib/audience";
import { composerInsert } from "../../state/composer";
import { replyWakes, type Wake } from "../../lib/wake";
import { browserStore, keepDraft, readDraft, type DraftPlace } from "../../lib/drafts";
import { MANAGERS, useManages } from "../channel/manages";
import { NoModelError, isModelUnavailable } from "./NoModel";

interface Candidate {
  handle: string;
  detail: string;
}

const MENTION_BEFORE_CARET = /(^|[\s(])@([a-z0-9._-]*)$/i;

export function Composer({
  entry,
  thread,
  placeholder,
  askByDefault,
  onUploadRequest,
  prepare,
  onStarted,
  closed,
}: {
  entry: ChannelEntry;
  /** The thread to reply in; a new thread without it. */
  thread?: number;
  placeholder: string;
  askByDefault: boolean;
  onUploadRequest?: (files: File[]) => Promise<string[]>;
  /**
   * Makes the text sent from what was typed (Cowork's agent panel addresses
   * the agent and adds the open file's path). With it, the box always
   * addresses the agent this way, so it shows no Ask toggle.
   */
  prepare?: (text: string) => string;
  /** A new thread was started: called instead of opening it in the chat. */
  onStarted?: (thread: number) => void;
  /**
   * Shown in place of the box while nothing can be sent (an archived
   * thread). The box stays mounted behind it, so a draft typed before
   * comes back when it opens again.
   */
  closed?: ComponentChildren;
}) {
  // What was typed and not sent is kept (per person, per box), so a session
  // that ends or a page that reloads loses nothing.
  const user = me.value?.id;
  const place: DraftPlace = thread !== undefined ? { channel: entry.channel.id, thread } : { channel: entry.channel.id, box: prepare ? "panel" : "new" };
  const [text, setText] = useState(() => readDraft(browserStore(), user, place));
  useEffect(() => keepDraft(browserStore(), user, place, text), [text, user]);
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const [ask, setAsk] = useState(askByDefault);
  const [mention, setMention] = useState<{ query: string; start: number } | undefined>();
  const [active, setActive] = useState(0);
  const area = useRef<HTMLTextAreaElement>(null);
  const fileInput = useRef<HTMLInputElement>(null);
  const agent = entry.agent;
  const isHome = entry.channel.kind === "home";
  const archived = entry.channel.status === "archived";
  const listId = `mentions-${thread ?? (prepare ? "panel" : "new")}`;
  const hintId = `wake-${thread ?? (prepare ? "panel" : "new")}`;
  const facts = useThreadFacts(thread, agent.id).value;
  const wake = thread === undefined ? undefined : replyWakes(ask ? `@${agent.handle} ${text}` : text, facts, agent.id, agent.handle, me.value?.id);
  const hint = wake && wakeWords(wake, agent.handle);
  const isPrivate = entry.channel.visibility === "private";
  useEffect(() => {
    if (isPrivate) loadMembers(entry.channel.id);
  }, [entry.channel.id, isPrivate]);
  const memberIds = isPrivate ? members.value.get(entry.channel.id) : undefined;

  // Text another control asked to add (Ask Skipper, dropped files).
  const insert = composerInsert.value;
  useEffect(() => {
    if (!insert || insert.channel !== entry.channel.id) return;
    composerInsert.value = undefined;
    setText((t) => (insert.text.startsWith("@") ? insert.text + t.replace(/^@skipper\s*/, "") : (t ? `${t}\n` : "") + insert.text));
    requestAnimationFrame(() => {
      const el = area.current;
      if (el) {
        el.focus();
        el.selectionStart = el.selectionEnd = el.value.length;
      }
    });
  }, [insert]);

  const candidates = useMemo<Candidate[]>(() => {
    const list: Candidate[] = [];
    list.push({ handle: agent.handle, detail: isHome ? "Skipper, the operator" : `${agent.display_name}, this channel's agent` });
    const sk = skipper.value;
    if (!isHome && sk) list.push({ handle: sk.handle, detail: "Skipper, the workspace operator" });
    // Only people the message can reach (a deactivated person reads nothing
    // any more, and a private channel is seen by its members, the Captain
    // and admins), and not the person typing.
    for (const u of mentionablePeople(userList.value, entry.channel, memberIds, me.value?.id)) list.push({ handle: u.name, detail: u.display_name });
    return list;
  }, [agent.handle, isHome, userList.value, skipper.value, entry.channel, memberIds, me.value?.id]);
  // Someone named who will not be told (not in this private channel): said before sending.
  const unseen = unseenWords(unseenMentions(text, userList.value, entry.channel, memberIds), entry.channel.name);
  const unseenId = `unseen-${thread ?? (prepare ? "panel" : "new")}`;

  const matches = mention ? candidates.filter((c) => c.handle.toLowerCase().startsWith(mention.query.toLowerCase())).slice(0, 6) : [];

  const resize = () => {
    const el = area.current;
    if (!el) return;
    el.style.height = "auto";
    el.style.height = `${Math.min(el.scrollHeight, 240)}px`;
  };
  useEffect(resize, [text]);

  const readMention = (el: HTMLTextAreaElement) => {
    const before = el.value.slice(0, el.selectionStart);
    const m = MENTION_BEFORE_CARET.exec(before);
    if (m) {
      setMention({ query: m[2] ?? "", start: before.length - (m[2]?.length ?? 0) - 1 });
      setActive(0);
    } else setMention(undefined);
  };

  const complete = (c: Candidate) => {
    const el = area.current;
    if (!el || !mention) return;
    const caret = el.selectionStart;
    const next = `${text.slice(0, mention.start)}@${c.handle} ${text.slice(caret)}`;
    setText(next);
    setMention(undefined);
    const position = mention.start + c.handle.length + 2;
    requestAnimationFrame(() => {
      el.focus();
      el.selectionStart = el.selectionEnd = position;
    });
  };

  const send = async () => {
    let body = text.trim();
    if (!body || busy) return;
    const mentioned = new RegExp(`(^|\\s)@(${agent.handle}|skipper)\\b`, "i").test(body);
    if (ask && !mentioned && !prepare) body = `@${agent.handle} ${body}`;
    if (prepare) body = prepare(body);
    setBusy(true);
    setError(undefined);
    try {
      const posted =
        thread === undefined
          ? await api.post("/api/channels/{channel}/messages", { path: { channel: entry.channel.name }, body: { text: body } })
          : await api.post("/api/threads/{id}/messages", { path: { id: thread }, body: { text: body } });
      putThread(posted.thread);
      putMessage(posted.message);
      if (posted.turn) putTurn(posted.turn, posted.ahead);
      setText("");
      if (thread === undefined && onStarted) onStarted(posted.thread.id);
      else if (thread === undefined) navigate(channelPath(entry.channel.name, "chat", posted.thread.id));
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
      area.current?.focus();
    }
  };

  const keys = (e: KeyboardEvent) => {
    if (matches.length > 0) {
      if (e.key === "ArrowDown" || e.key === "ArrowUp") {
        e.preventDefault();
        setActive((a) => (a + (e.key === "ArrowDown" ? 1 : matches.length - 1)) % matches.length);
        return;
      }
      if (e.key === "Enter" || e.key === "Tab") {
        e.preventDefault();
        complete(matches[active]!);
        return;
      }
      if (e.key === "Escape") {
        e.preventDefault();
        setMention(undefined);
        return;
      }
    }
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      void send();
    }
  };

  const attach = async (files: File[]) => {
    if (!onUploadRequest || files.length === 0) return;
    try {
      const paths = await onUploadRequest(files);
      setText((t) => `${t}${t && !t.endsWith("\n") ? "\n" : ""}${paths.map((p) => `Attached \`${p}\``).join("\n")}`);
    } catch (e) {
      setError(e);
    }
  };

  if (archived) return <ArchivedComposer entry={entry} />;
  if (closed) {
    return (
      <div class="composer-closed muted" role="status">
        {closed}
        {text.trim() && <span> Your draft is kept on this page until then.</span>}
      </div>
    );
  }

  return (
    <div class="composer">
      {matches.length > 0 && (
        <ul class="mention-list" id={listId} role="listbox" aria-label="People and agents to mention">
          {matches.map((c, i) => (
            <li
              key={c.handle}
              id={`${listId}-${i}`}
              role="option"
              aria-selected={i === active}
              class={i === active ? "active" : ""}
              onMouseDown={(e) => {
                e.preventDefault();
                complete(c);
              }}
            >
              <strong>@{c.handle}</strong> <span class="muted">{c.detail}</span>
            </li>
          ))}
        </ul>
      )}
      <p class="sr-only" aria-live="polite">
        {matches.length > 0 ? `${matches.length} to mention: up and down to choose, Enter to take one.` : ""}
      </p>
      <div class="composer-box">
        <textarea
          ref={area}
          rows={1}
          value={text}
          placeholder={placeholder}
          aria-label={placeholder}
          aria-controls={matches.length > 0 ? listId : undefined}
          aria-describedby={[unseen ? unseenId : "", hint ? hintId : ""].join(" ").trim() || undefined}
          onInput={(e) => {
            setText(e.currentTarget.value);
            readMention(e.currentTarget);
          }}
          onKeyDown={keys}
          onBlur={() => setTimeout(() => setMention(undefined), 100)}
        />
        <div class="composer-tools">
          {onUploadRequest && (
            <>
              <button type="button" class="icon-button" aria-label="Attach files" title="Attach files (or drop them on the chat)" onClick={() => fileInput.current?.click()}>
                <Icon name="attach" />
              </button>
              <input
                ref={fileInput}
                type="file"
                multiple
                hidden
                aria-hidden="true"
                tabIndex={-1}
                onChange={(e) => {
                  const files = [...(e.currentTarget.files ?? [])];
                  e.currentTarget.value = "";
                  void attach(files);
                }}
              />
            </>
          )}
          {!prepare && <button
            type="button"
            class={ask ? "ask-toggle on" : "ask-toggle"}
            aria-pressed={ask}
            title={ask ? `Your message goes to @${agent.handle}` : (hint ?? `Only a mention wakes @${agent.handle}`)}
            onClick={() => setAsk(!ask)}
          >
            Ask @{agent.handle}
          </button>}
          <button type="button" class="btn btn-primary btn-send" aria-label="Send" disabled={busy || !text.trim()} onClick={() => void send()}>
            <Icon name="send" size={16} />
          </button>
        </div>
      </div>
      {unseen && (
        <p class="composer-hint warn" id={unseenId}>
          {unseen}
        </p>
      )}
      {hint && (
        <p class={wake === "unanswered" || wake === "others" ? "composer-hint quiet" : "composer-hint"} id={hintId}>
          {hint}
        </p>
      )}
      {error !== undefined &&
        (isModelUnavailable(error) ? (
          <NoModelError handle={agent.handle} error={error} />
        ) : (
          <p class="error-text" role="alert">
            {describeError(error)}
          </p>
        ))}
    </div>
  );
}

/** What a reply in a thread will do, in words. */
function wakeWords(wake: Wake, handle: string): string {
  switch (wake) {
    case "mention":
      return `@${handle} will answer this reply.`;
    case "skipper":
      return `This reply calls Skipper; @${handle} stays out of it.`;
    case "continues":
      return `@${handle} will answer this reply: it is in this thread, and only you are talking.`;
    case "unanswered":
      return `@${handle} was not asked in this thread, so this reply reaches only people. Mention it, or turn on Ask, to wake it.`;
    case "others":
      return `Others talk here too, so only a mention wakes @${handle}. Mention it, or turn on Ask, to wake it.`;
  }
}

/**
 * The thread's messages for the wake rule, as a signal that changes only
 * when the answer could: its messages arrive, or one of the agent's replies
 * finishes. A streaming reply's deltas do not redraw the composer.
 */
function useThreadFacts(thread: number | undefined, agentId: number) {
  return useMemo(() => {
    // A string, so an unchanged answer stops here (a computed passes on only changes).
    const key = computed(() => {
      if (thread === undefined) return "";
      const ids = threadLog(thread).value.ids;
      let k = `${ids.length}:${ids[ids.length - 1] ?? 0}`;
      for (const id of ids) {
        const s = messageSignal(id);
        const m = s?.peek();
        if (!s || !m || m.author.kind !== "agent" || m.author.agent_id !== agentId) continue;
        // Only replies still in flight are watched: how they end decides "answered".
        const status = m.status === "pending" || m.status === "streaming" ? s.value.status : m.status;
        k += `,${id}${status}`;
      }
      return k;
    });
    return computed(() => {
      key.value;
      const ids = thread === undefined ? [] : threadLog(thread).peek().ids;
      return ids.map((id) => messageSignal(id)?.peek()).filter((m): m is Message => m !== undefined);
    });
  }, [thread, agentId]);
}

/** In place of the box while the channel is archived: what would open it again. */
function ArchivedComposer({ entry }: { entry: ChannelEntry }) {
  const manages = useManages(entry);
  return (
    <p class="composer-closed muted">
      {manages ? "This channel is archived. Restore it to write here again." : `This channel is archived, so nobody writes here. Only ${MANAGERS} can restore it.`}
    </p>
  );
}
