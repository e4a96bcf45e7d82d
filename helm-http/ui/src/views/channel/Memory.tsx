// The channel's memory: decisions, facts, summaries, preferences and
// references, each with where it came from (a link to its thread). Recall
// searches it as the agent does. Anyone who sees the channel adds records;
// a record is edited (the new text supersedes the old, which is kept),
// pinned, or forgotten (after a confirmation) only by its author or the
// channel's managers, who may also restore it; a forgotten record says who
// forgot it. Records the agent or Helm wrote are the managers' to change.
import { useEffect, useMemo, useState } from "preact/hooks";
import { describeError } from "../../api/client";
import type { MemoryItem, MemoryKind, RecallHit } from "../../api/types";
import { Dialog } from "../../components/Dialog";
import { ErrorNote, Field } from "../../components/Field";
import { Icon } from "../../components/Icon";
import { Time } from "../../components/Time";
import { plainText } from "../../lib/markdown";
import { useLatest } from "../../lib/latest";
import { useRetryOnReconnect } from "../../lib/reconnect";
import type { ChannelEntry } from "../../state/channels";
import { addMemory, editMemory, forgetMemory, loadMemory, loadOlderMemory, memoryOf, memoryPaging, memoryRecord, pinMemory, recall, restoreMemory } from "../../state/memory";
import { channelPath, messagePath } from "../../state/router";
import { me } from "../../state/session";
import { toast } from "../../state/toasts";
import { MANAGERS, useManages } from "./manages";

const KINDS: { id: MemoryKind; label: string; plural: string }[] = [
  { id: "decision", label: "Decision", plural: "Decisions" },
  { id: "fact", label: "Fact", plural: "Facts" },
  { id: "summary", label: "Summary", plural: "Summaries" },
  { id: "preference", label: "Preference", plural: "Preferences" },
  { id: "artifact_ref", label: "Reference", plural: "References" },
];
const LABEL = Object.fromEntries(KINDS.map((k) => [k.id, k.label])) as Record<MemoryKind, string>;
type Addable = Exclude<MemoryKind, "summary">;

export function Memory({ entry, recall: asked }: { entry: ChannelEntry; recall?: string }) {
  const channel = entry.channel;
  const items = memoryOf(channel.id).value;
  const paging = memoryPaging(channel.id).value;
  const [kind, setKind] = useState<MemoryKind | "all">("all");
  const [history, setHistory] = useState(false);
  const [error, setError] = useState<string>();
  const [editing, setEditing] = useState<MemoryItem>();
  const [forgetting, setForgetting] = useState<MemoryItem>();
  const manages = useManages(entry);
  // The server decides; this only offers Edit, Pin, Forget and Restore where they will work.
  const mayChange = (m: MemoryItem) => manages || (m.author_type === "human" && m.author_name === me.value?.name);

  const latest = useLatest();
  const load = () => {
    const current = latest();
    setError(undefined);
    // Another channel's failure, heard after a switch, is not this one's.
    loadMemory(channel.id, channel.name).catch((e) => current() && setError(describeError(e)));
  };
  useEffect(load, [channel.id]);
  useRetryOnReconnect(error !== undefined, load);

  const shown = useMemo(
    () => (items ?? []).filter((m) => (kind === "all" || m.kind === kind) && (history || m.status === "current")).sort((a, b) => Number(b.pinned) - Number(a.pinned) || b.id - a.id),
    [items, kind, history],
  );
  const counts = useMemo(() => {
    const c = new Map<string, number>();
    for (const m of items ?? []) if (m.status === "current") c.set(m.kind, (c.get(m.kind) ?? 0) + 1);
    return c;
  }, [items]);

  return (
    <div class="page memory">
      <div class="page-head">
        <h2>Memory</h2>
        <p class="muted">What #{channel.name} knows. It belongs to the channel and stays when the model changes.</p>
      </div>
      <Recall key={channel.id} channel={channel.name} channelId={channel.id} asked={asked} mayChange={mayChange} onEdit={setEditing} onForget={setForgetting} />
      <AddRecord channel={channel.name} />
      <div class="memory-filters">
        <div class="segmented" role="group" aria-label="Kind">
          <button type="button" aria-pressed={kind === "all"} onClick={() => setKind("all")}>
            All
          </button>
          {KINDS.map((k) => (
            <button key={k.id} type="button" aria-pressed={kind === k.id} onClick={() => setKind(k.id)}>
              {k.plural}{" "}
              {counts.get(k.id) ? (
                <span class="count">
                  {counts.get(k.id)}
                  {paging.more ? "+" : ""}
                </span>
              ) : null}
            </button>
          ))}
        </div>
        <label class="check">
          <input type="checkbox" checked={history} onChange={(e) => setHistory(e.currentTarget.checked)} />
          Show superseded and forgotten
        </label>
      </div>
      <ErrorNote error={error} onRetry={load} />
      {items !== undefined && shown.length === 0 && !paging.more && <p class="muted">Nothing recorded here yet.</p>}
      <ul class="memory-list">
        {shown.map((m) => (
          <MemoryRow key={m.id} item={m} channel={channel.name} mayChange={mayChange(m)} onEdit={() => setEditing(m)} onForget={() => setForgetting(m)} />
        ))}
      </ul>
      {items !== undefined && <OlderRecords channel={channel.id} channelName={channel.name} loaded={items.length} />}
      {editing && <EditDialog item={editing} onClose={() => setEditing(undefined)} />}
      {forgetting && <ForgetDialog item={forgetting} onClose={() => setForgetting(undefined)} />}
    </div>
  );
}

/**
 * Says how many records are loaded and, while older ones remain, loads
 * the next page of them: a long-used channel's oldest records stay
 * reachable (and the list never ends as if they did not exist).
 */
function OlderRecords({ channel, channelName, loaded }: { channel: number; channelName: string; loaded: number }) {
  const paging = memoryPaging(channel).value;
  const [error, setError] = useState<string>();
  const latest = useLatest();
  const more = () => {
    const current = latest();
    setError(undefined);
    loadOlderMemory(channel, channelName).catch((e) => current() && setError(describeError(e)));
  };
  if (!paging.more && loaded === 0) return null;
  const records = loaded === 1 ? "record" : "records";
  return (
    <div class="memory-more" aria-live="polite">
      <p class="muted small">{paging.more ? `The newest ${loaded} ${records} are loaded; older ones are not shown yet.` : `All ${loaded} ${records} are loaded.`}</p>
      {paging.more && (
        <button type="button" class="btn" disabled={paging.loading} onClick={more}>
          {paging.loading ? "Loading…" : "Show older records"}
        </button>
      )}
      <ErrorNote error={error} onRetry={more} />
    </div>
  );
}

/**
 * A recall hit's record offers what its row in the list offers (Edit,
 * Pin, Forget), however old it is: read by itself when it is older than
 * the pages loaded.
 */
function HitActions({ channel, id, mayChange, onEdit, onForget }: { channel: number; id: number; mayChange: (m: MemoryItem) => boolean; onEdit: (m: MemoryItem) => void; onForget: (m: MemoryItem) => void }) {
  const item = memoryRecord(channel, id).value;
  if (!item) return null;
  // Under the hit's text (the hit is a two-column grid; views.css is shared).
  const under = { gridColumn: 2 };
  if (item.status !== "current")
    return (
      <span class="pill pill-archived" style={under}>
        {item.status}
      </span>
    );
  if (!mayChange(item)) return null;
  return (
    <div class="memory-actions" style={under}>
      <button type="button" class="btn btn-small btn-ghost" onClick={() => onEdit(item)}>
        <Icon name="edit" size={14} /> Edit
      </button>
      <button
        type="button"
        class="btn btn-small btn-ghost"
        onClick={() =>
          pinMemory(item.id, !item.pinned).then(
            () => toast(item.pinned ? "Unpinned." : "Pinned: the agent always sees it."),
            (e) => toast(describeError(e), "error"),
          )
        }
      >
        <Icon name="pin" size={14} /> {item.pinned ? "Unpin" : "Pin"}
      </button>
      <button type="button" class="btn btn-small btn-ghost" onClick={() => onForget(item)}>
        <Icon name="trash" size={14} /> Forget
      </button>
    </div>
  );
}

function MemoryRow({ item, channel, mayChange, onEdit, onForget }: { item: MemoryItem; channel: string; mayChange: boolean; onEdit: () => void; onForget: () => void }) {
  const current = item.status === "current";
  const forgotten = item.status === "forgotten";
  const act = async (what: () => Promise<void>, done: string) => {
    try {
      await what();
      toast(done);
    } catch (e) {
      toast(describeError(e), "error");
    }
  };
  return (
    <li class={`memory-row status-${item.status}`}>
      <div class="memory-head">
        <span class={`kind-badge kind-${item.kind}`}>{LABEL[item.kind]}</span>
        {item.pinned && (
          <span class="tag" title="Always offered to the agent">
            <Icon name="pin" size={12} /> pinned
          </span>
        )}
        {!current && <span class="pill pill-archived">{item.status}</span>}
        <span class="muted small">
          {item.author_name ? `${item.author_name} · ` : ""}
          <Time at={item.created} />
          {item.thread_id && (
            <>
              {" · "}
              <a href={channelPath(channel, "chat", item.thread_id)}>from its thread</a>
            </>
          )}
        </span>
      </div>
      <p class="memory-content">{item.content}</p>
      {current && mayChange && (
        <div class="memory-actions">
          <button type="button" class="btn btn-small btn-ghost" onClick={onEdit}>
            <Icon name="edit" size={14} /> Edit
          </button>
          <button type="button" class="btn btn-small btn-ghost" onClick={() => act(() => pinMemory(item.id, !item.pinned), item.pinned ? "Unpinned." : "Pinned: the agent always sees it.")}>
            <Icon name="pin" size={14} /> {item.pinned ? "Unpin" : "Pin"}
          </button>
          <button type="button" class="btn btn-small btn-ghost" onClick={onForget}>
            <Icon name="trash" size={14} /> Forget
          </button>
        </div>
      )}
      {forgotten && (
        <p class="memory-forgotten muted small">
          {item.forgotten_by ? `Forgotten by ${item.forgotten_by}` : "Forgotten"}
          {item.forgotten_at && (
            <>
              {" · "}
              <Time at={item.forgotten_at} />
            </>
          )}
          {!mayChange && ` · its author, ${MANAGERS} may restore it`}
        </p>
      )}
      {forgotten && mayChange && (
        <div class="memory-actions">
          <button type="button" class="btn btn-small btn-ghost" onClick={() => act(() => restoreMemory(item.id), "Restored: it is recalled again.")}>
            <Icon name="restore" size={14} /> Restore
          </button>
        </div>
      )}
    </li>
  );
}

function AddRecord({ channel }: { channel: string }) {
  const [kind, setKind] = useState<Addable>("decision");
  const [content, setContent] = useState("");
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await addMemory(channel, kind, content.trim());
      setContent("");
      toast(`${LABEL[kind]} recorded.`);
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="memory-add" onSubmit={submit} aria-label="Record something">
      <select aria-label="Kind of record" value={kind} onChange={(e) => setKind(e.currentTarget.value as Addable)}>
        {KINDS.filter((k) => k.id !== "summary").map((k) => (
          <option key={k.id} value={k.id}>
            {k.label}
          </option>
        ))}
      </select>
      <input aria-label="What to record" placeholder="We launch on 12 March." value={content} onInput={(e) => setContent(e.currentTarget.value)} required />
      <button type="submit" class="btn btn-primary" disabled={busy || !content.trim()}>
        Record
      </button>
      <ErrorNote error={error} />
    </form>
  );
}

/**
 * Recall; `asked` (from the address: the command palette's "Search
 * memory") is filled in and run. A record it finds offers its actions.
 */
function Recall({
  channel,
  channelId,
  asked,
  mayChange,
  onEdit,
  onForget,
}: {
  channel: string;
  channelId: number;
  asked?: string;
  mayChange: (m: MemoryItem) => boolean;
  onEdit: (m: MemoryItem) => void;
  onForget: (m: MemoryItem) => void;
}) {
  const [q, setQ] = useState(asked ?? "");
  const [hits, setHits] = useState<RecallHit[]>();
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  // Only the newest recall is shown: an earlier one (another question, or
  // another channel's) answering last would show its hits under this one.
  const latest = useLatest();
  const run = async (query: string) => {
    if (!query.trim()) return;
    const current = latest();
    setBusy(true);
    setError(undefined);
    try {
      const found = await recall(channel, query.trim());
      if (current()) setHits(found);
    } catch (err) {
      if (current()) setError(describeError(err));
    } finally {
      if (current()) setBusy(false);
    }
  };
  useEffect(() => {
    if (!asked?.trim()) return;
    setQ(asked);
    void run(asked);
  }, [asked, channel]);
  const submit = (e: Event) => {
    e.preventDefault();
    void run(q);
  };
  return (
    <section class="recall" aria-label="Recall">
      <form class="recall-form" onSubmit={submit} role="search">
        <Icon name="search" />
        <input aria-label="Recall: ask what the channel knows" placeholder="Ask what the channel knows: when do we launch?" value={q} onInput={(e) => setQ(e.currentTarget.value)} />
        <button type="submit" class="btn" disabled={busy}>
          {busy ? "Recalling…" : "Recall"}
        </button>
      </form>
      <ErrorNote error={error} />
      {hits && (
        <ol class="recall-hits" aria-label="What recall found">
          {hits.length === 0 && <li class="muted">Nothing found for that.</li>}
          {hits.map((h) => (
            <li key={`${h.kind}-${h.id}`} class="recall-hit">
              <span class={`kind-badge kind-${h.kind}`}>{h.kind === "message" ? "Message" : (LABEL[h.kind as MemoryKind] ?? h.kind)}</span>
              <span class="recall-content">{h.kind === "message" ? plainText(h.content, 400) : h.content}</span>
              <span class="muted small">
                {h.author ? `${h.author} · ` : ""}
                <Time at={h.created} />
                {h.thread && (
                  <>
                    {" · "}
                    {/* A message opens its thread at it; a record, the thread it came from. */}
                    <a href={h.kind === "message" ? messagePath(channel, h.thread.id, h.id) : channelPath(channel, "chat", h.thread.id)}>{h.thread.title || "its thread"}</a>
                  </>
                )}
              </span>
              {h.kind !== "message" && <HitActions channel={channelId} id={h.id} mayChange={mayChange} onEdit={onEdit} onForget={onForget} />}
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}

function ForgetDialog({ item, onClose }: { item: MemoryItem; onClose: () => void }) {
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const label = LABEL[item.kind].toLowerCase();
  const forget = async () => {
    setBusy(true);
    setError(undefined);
    try {
      await forgetMemory(item.id);
      toast("Forgotten: kept for the record, never recalled. Restore it from “Show superseded and forgotten”.");
      onClose();
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog title={`Forget this ${label}?`} onClose={onClose} description="The agent will no longer recall it. It stays in the record, marked forgotten by you, and can be restored.">
      <div class="stack">
        <blockquote class="memory-quote">{item.content}</blockquote>
        <ErrorNote error={error} />
        <div class="actions">
          <button type="button" class="btn btn-ghost" onClick={onClose} autoFocus>
            Keep it
          </button>
          <button type="button" class="btn btn-danger" disabled={busy} onClick={forget}>
            Forget
          </button>
        </div>
      </div>
    </Dialog>
  );
}

function EditDialog({ item, onClose }: { item: MemoryItem; onClose: () => void }) {
  const [content, setContent] = useState(item.content);
  const [error, setError] = useState<string>();
  const submit = async (e: Event) => {
    e.preventDefault();
    try {
      await editMemory(item.id, content.trim());
      toast("Updated. The earlier text is kept as superseded.");
      onClose();
    } catch (err) {
      setError(describeError(err));
    }
  };
  return (
    <Dialog title={`Edit this ${LABEL[item.kind].toLowerCase()}`} onClose={onClose} description="The new text replaces it; the old one stays in the record, marked superseded.">
      <form onSubmit={submit} class="stack">
        <Field label="Text">{(p) => <textarea {...p} rows={4} value={content} onInput={(e) => setContent(e.currentTarget.value)} required autoFocus />}</Field>
        <ErrorNote error={error} />
        <div class="actions">
          <button type="button" class="btn btn-ghost" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" class="btn btn-primary" disabled={!content.trim() || content.trim() === item.content}>
            Save
          </button>
        </div>
      </form>
    </Dialog>
  );
}
