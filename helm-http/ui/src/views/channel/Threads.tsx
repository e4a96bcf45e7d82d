// The channel's sessions, open ones first: status, title, summary, when
// they last moved. Loaded a page at a time, older pages as the list is
// scrolled to its end (or by the button there); archived threads are kept
// apart under their own filter; a search box asks the server, which reads
// titles, summaries and every message. Opening one shows it beside the
// chat; each can be renamed, resolved, reopened, archived or unarchived.
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { useLatest } from "../../lib/latest";
import { describeError } from "../../api/client";
import type { Thread } from "../../api/types";
import { ErrorNote } from "../../components/Field";
import { Icon } from "../../components/Icon";
import { Time } from "../../components/Time";
import { useRetryOnReconnect } from "../../lib/reconnect";
import type { ChannelEntry } from "../../state/channels";
import { channelPath, messagePath } from "../../state/router";
import { archiveThread, loadThreadPage, searchThreads, setThreadStatus, sortedThreads, threadPager } from "../../state/threads";
import { toast } from "../../state/toasts";
import { RenameThreadDialog } from "../chat/RenameThread";

const OPEN = new Set(["open", "waiting", "failed"]);
type Filter = "open" | "finished" | "all" | "archived";
const LABELS: Record<Filter, string> = { all: "All", open: "Open", finished: "Finished", archived: "Archived" };

/** How long typing pauses before the search is asked. */
const SEARCH_DELAY = 250;

export function Threads({ entry }: { entry: ChannelEntry }) {
  const channel = entry.channel;
  const [error, setError] = useState<string>();
  const [filter, setFilter] = useState<Filter>("all");
  const [query, setQuery] = useState("");
  const [results, setResults] = useState<Thread[]>();
  const [searchError, setSearchError] = useState<string>();
  const archivedView = filter === "archived";
  const list = useMemo(() => sortedThreads(channel.id), [channel.id]).value;
  const pager = threadPager(channel.id, archivedView).value;

  const latest = useLatest();
  const load = () => {
    const current = latest();
    setError(undefined);
    // Another channel's failure, heard after a switch, is not this one's.
    loadThreadPage(channel.id, channel.name, false, false).catch((e) => current() && setError(describeError(e)));
  };
  useEffect(load, [channel.id]);
  useRetryOnReconnect(error !== undefined, load);

  const more = () => {
    setError(undefined);
    const first = !threadPager(channel.id, archivedView).value.loaded;
    const current = latest();
    loadThreadPage(channel.id, channel.name, archivedView, !first).catch((e) => current() && setError(describeError(e)));
  };
  // The archived list is read when first shown.
  useEffect(() => {
    if (archivedView && !threadPager(channel.id, true).value.loaded) more();
  }, [archivedView, channel.id]);

  // Search, once typing pauses; a newer query wins over an older answer.
  const asked = useRef(0);
  useEffect(() => {
    const q = query.trim();
    setSearchError(undefined);
    if (!q) {
      setResults(undefined);
      return;
    }
    const n = ++asked.current;
    const timer = setTimeout(() => {
      searchThreads(channel.name, q, archivedView)
        .then((found) => n === asked.current && setResults(found))
        .catch((e) => n === asked.current && setSearchError(describeError(e)));
    }, SEARCH_DELAY);
    return () => clearTimeout(timer);
  }, [query, archivedView, channel.name]);

  // Open sessions first (the work still going), each group by its last move:
  // resolving a thread sends it down among the finished, not to the top.
  const unarchived = list.filter((t) => t.status !== "archived");
  const shown = archivedView
    ? list.filter((t) => t.status === "archived")
    : unarchived
        .filter((t) => filter === "all" || (filter === "open" ? OPEN.has(t.status) : !OPEN.has(t.status)))
        .sort((a, b) => Number(OPEN.has(b.status)) - Number(OPEN.has(a.status)));
  const open = unarchived.filter((t) => OPEN.has(t.status)).length;
  const searching = query.trim() !== "";

  return (
    <div class="page">
      <div class="page-head">
        <h2>Threads</h2>
        <p class="muted">
          Each thread is a focused session with #{channel.name}'s agent. {open} open, {unarchived.length - open} finished
          {pager.done || archivedView ? "" : " among those loaded"}.
        </p>
        <div class="thread-tools">
          <div class="segmented" role="group" aria-label="Show">
            {(["all", "open", "finished", "archived"] as const).map((f) => (
              <button key={f} type="button" aria-pressed={filter === f} onClick={() => setFilter(f)}>
                {LABELS[f]}
              </button>
            ))}
          </div>
          <input
            type="search"
            class="thread-search"
            placeholder={archivedView ? "Search archived threads" : "Search threads and their messages"}
            aria-label={archivedView ? "Search archived threads" : "Search threads and their messages"}
            value={query}
            onInput={(e) => setQuery(e.currentTarget.value)}
          />
        </div>
      </div>
      {searching ? (
        <SearchResults results={results} error={searchError} channel={channel.name} />
      ) : (
        <>
          <ErrorNote error={error} onRetry={pager.loaded ? more : load} />
          {pager.loaded && shown.length === 0 && pager.done && (
            <p class="muted">{archivedView ? "No archived threads." : "No threads here yet. Start one from the chat."}</p>
          )}
          <ul class="thread-list" aria-label={archivedView ? "Archived threads" : "Threads"}>
            {shown.map((t) => (
              <ThreadRow key={t.id} thread={t} channel={channel.name} archived={channel.status === "archived"} />
            ))}
          </ul>
          {pager.loaded && !pager.done && <LoadOlder loading={pager.loading} onLoad={more} />}
        </>
      )}
    </div>
  );
}

/** The list's end: loads older threads when scrolled into view, or when pressed. */
function LoadOlder({ loading, onLoad }: { loading: boolean; onLoad: () => void }) {
  const ref = useRef<HTMLButtonElement>(null);
  const latest = useRef(onLoad);
  latest.current = onLoad;
  useEffect(() => {
    const el = ref.current;
    if (!el || typeof IntersectionObserver === "undefined") return;
    const seen = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting)) latest.current();
    });
    seen.observe(el);
    return () => seen.disconnect();
  }, []);
  return (
    <div class="thread-list-end">
      <button ref={ref} type="button" class="btn btn-small" disabled={loading} aria-busy={loading} onClick={onLoad}>
        {loading ? "Loading older threads…" : "Load older threads"}
      </button>
    </div>
  );
}

function SearchResults({ results, error, channel }: { results?: Thread[]; error?: string; channel: string }) {
  if (error) return <ErrorNote error={error} />;
  if (!results) return <p class="muted" aria-live="polite">Searching…</p>;
  return (
    <>
      <p class="muted small" aria-live="polite">
        {results.length === 0 ? "No thread matches." : `${results.length} ${results.length === 1 ? "thread matches" : "threads match"}.`}
      </p>
      <ul class="thread-list" aria-label="Search results">
        {results.map((t) => (
          <li key={t.id} class="thread-row">
            <div class="thread-row-main">
              <a href={channelPath(channel, "chat", t.id)} class="thread-row-title">
                <Icon name="threads" size={15} />
                {t.title || "Untitled thread"}
              </a>
              <span class={`pill pill-${t.status}`}>{t.status}</span>
              <span class="muted small">
                <Time at={t.updated_at} />
              </span>
            </div>
            {t.matched && (
              <p class="thread-row-summary">
                <span class="muted small">in its {t.matched.in}: </span>
                {/* A message that matched opens the thread at that message. */}
                {typeof t.matched.message_id === "number" ? (
                  <a href={messagePath(channel, t.id, t.matched.message_id)} aria-label={`The message that matched: ${t.matched.snippet}`}>
                    {t.matched.snippet}
                  </a>
                ) : (
                  t.matched.snippet
                )}
              </p>
            )}
          </li>
        ))}
      </ul>
    </>
  );
}

function ThreadRow({ thread, channel, archived }: { thread: Thread; channel: string; archived: boolean }) {
  const [busy, setBusy] = useState(false);
  const [renaming, setRenaming] = useState(false);
  const isArchived = thread.status === "archived";
  const finished = thread.status === "resolved" || isArchived;
  const title = thread.title || "this thread";
  const run = async (work: () => Promise<void>) => {
    setBusy(true);
    try {
      await work();
    } catch (e) {
      toast(describeError(e), "error");
    } finally {
      setBusy(false);
    }
  };
  return (
    <li class="thread-row">
      <div class="thread-row-main">
        <a href={channelPath(channel, "chat", thread.id)} class="thread-row-title">
          <Icon name="threads" size={15} />
          {thread.title || "Untitled thread"}
        </a>
        <span class={`pill pill-${thread.status}`}>{thread.status}</span>
        <span class="muted small">
          <Time at={thread.updated_at} />
        </span>
      </div>
      {thread.summary && <p class="thread-row-summary">{thread.summary}</p>}
      {/* An archived channel is kept as it was: its threads change once it is restored. */}
      <div class="thread-row-actions">
        {!archived && (
          <button type="button" class="btn btn-small btn-ghost" onClick={() => setRenaming(true)} aria-label={`Rename ${title}`}>
            <Icon name="edit" size={14} /> Rename
          </button>
        )}
        {archived ? null : isArchived ? (
          <button type="button" class="btn btn-small btn-ghost" disabled={busy} onClick={() => run(() => setThreadStatus(thread.id, "open"))} aria-label={`Unarchive ${title}`}>
            Unarchive
          </button>
        ) : (
          <>
            <button
              type="button"
              class="btn btn-small btn-ghost"
              disabled={busy}
              onClick={() => run(() => setThreadStatus(thread.id, finished ? "open" : "resolved"))}
              aria-label={`${finished ? "Reopen" : "Resolve"} ${title}`}
            >
              {finished ? "Reopen" : "Resolve"}
            </button>
            <button type="button" class="btn btn-small btn-ghost" disabled={busy} onClick={() => run(() => archiveThread(thread.id))} aria-label={`Archive ${title}`}>
              Archive
            </button>
          </>
        )}
      </div>
      {renaming && <RenameThreadDialog thread={thread} onClose={() => setRenaming(false)} />}
    </li>
  );
}
