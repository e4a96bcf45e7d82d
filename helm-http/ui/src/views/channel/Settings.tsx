// A channel's settings: purpose and instructions, the model serving its
// agent (a replaceable detail: identity, files and memory stay), what its
// computer may do, who is in it (for a private channel), and its lifecycle:
// archive, restore, and permanent deletion confirmed by typing its name.
import { useEffect, useState } from "preact/hooks";
import { api, describeError } from "../../api/client";
import type { ChannelDetail, Member, Provider } from "../../api/types";
import { Dialog } from "../../components/Dialog";
import { ErrorNote, Field, patternMessage } from "../../components/Field";
import { Icon } from "../../components/Icon";
import { useLatest } from "../../lib/latest";
import { CHANNEL_NAME_PATTERN, CHANNEL_NAME_RULE } from "../../lib/names";
import { loadChannel, markLeaving, type ChannelEntry } from "../../state/channels";
import { composerInsert } from "../../state/composer";
import { channelPath, navigate } from "../../state/router";
import { isAdmin, me } from "../../state/session";
import { toast } from "../../state/toasts";
import { userList } from "../../state/users";
import { MANAGERS, managesChannel } from "./manages";

export function Settings({ entry, detail, onChanged }: { entry: ChannelEntry; detail?: ChannelDetail; onChanged: (d: ChannelDetail) => void }) {
  const channel = entry.channel;
  const isHome = channel.kind === "home";
  const [members, setMembers] = useState<Member[]>();
  const manages = managesChannel(entry, members);

  const reload = async () => {
    const fresh = await api.get("/api/channels/{channel}", { path: { channel: channel.name } });
    onChanged(fresh);
    await loadChannel(channel.name);
  };

  // Another channel's members, answered late, would decide who manages this one.
  useEffect(() => {
    let current = true;
    setMembers(undefined);
    api
      .get("/api/channels/{channel}/members", { path: { channel: channel.name } })
      .then((list) => current && setMembers(list))
      .catch(() => current && setMembers([]));
    return () => {
      current = false;
    };
  }, [channel.id]);

  return (
    <div class="page settings">
      <div class="page-head">
        <h2>Settings</h2>
        {!manages && <p class="muted">Only {MANAGERS} change these.</p>}
      </div>
      {!isHome && <NameSection entry={entry} manages={manages} />}
      <PurposeSection entry={entry} detail={detail} manages={manages} onSaved={reload} />
      <ModelSection channel={channel.name} detail={detail} manages={manages} onSaved={reload} />
      <CapabilitySection entry={entry} detail={detail} />
      {channel.visibility === "private" && <MembersSection channel={channel.name} channelId={channel.id} members={members} manages={manages} onChanged={setMembers} />}
      {!isHome && <LifecycleSection entry={entry} manages={manages} />}
    </div>
  );
}

/** Renames the channel live: its agent keeps its handle, files and memory. */
function NameSection({ entry, manages }: { entry: ChannelEntry; manages: boolean }) {
  const [name, setName] = useState(entry.channel.name);
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  useEffect(() => setName(entry.channel.name), [entry.channel.name]);
  const wanted = name.trim().replace(/^#/, "").toLowerCase();
  const changed = wanted !== "" && wanted !== entry.channel.name;
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      // By id: the old name stops working the moment the rename lands.
      const id = String(entry.channel.id);
      const renamed = await api.patch("/api/channels/{channel}", { path: { channel: id }, body: { name: wanted } });
      await loadChannel(id);
      navigate(channelPath(renamed.channel.name, "settings"), { replace: true });
      toast(`Renamed to #${renamed.channel.name}. The agent keeps its handle, files and memory.`);
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="settings-section" onSubmit={submit}>
      <h3>Name</h3>
      <Field label="Channel name" hint={`${CHANNEL_NAME_RULE} Links to the old name stop working.`}>
        {(p) => (
          <input
            {...p}
            {...patternMessage(CHANNEL_NAME_RULE)}
            value={name}
            disabled={!manages}
            onInput={(e) => {
              setName(e.currentTarget.value.toLowerCase());
              // The last attempt's error is about a name no longer there.
              setError(undefined);
            }}
            pattern={CHANNEL_NAME_PATTERN}
            spellcheck={false}
            required
          />
        )}
      </Field>
      <ErrorNote error={error} />
      {manages && (
        <div class="actions">
          <button type="submit" class="btn btn-primary" disabled={busy || !changed}>
            Rename
          </button>
        </div>
      )}
    </form>
  );
}

function PurposeSection({ entry, detail, manages, onSaved }: { entry: ChannelEntry; detail?: ChannelDetail; manages: boolean; onSaved: () => Promise<void> }) {
  const [purpose, setPurpose] = useState(entry.channel.purpose);
  const [instructions, setInstructions] = useState(detail?.profile.instructions ?? "");
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  useEffect(() => setInstructions(detail?.profile.instructions ?? ""), [detail?.profile.instructions]);
  const changed = purpose.trim() !== entry.channel.purpose || instructions !== (detail?.profile.instructions ?? "");
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await api.patch("/api/channels/{channel}", { path: { channel: entry.channel.name }, body: { purpose: purpose.trim(), instructions } });
      await onSaved();
      toast("Saved. The agent works from the new purpose from its next turn.");
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="settings-section" onSubmit={submit}>
      <h3>Purpose</h3>
      <Field label="What is this channel all about?">
        {(p) => <textarea {...p} rows={3} value={purpose} disabled={!manages} onInput={(e) => setPurpose(e.currentTarget.value)} required />}
      </Field>
      <Field label="Instructions for the agent" hint="How it should work here, beyond the purpose.">
        {(p) => <textarea {...p} rows={4} value={instructions} disabled={!manages} onInput={(e) => setInstructions(e.currentTarget.value)} />}
      </Field>
      <ErrorNote error={error} />
      {manages && (
        <div class="actions">
          <button type="submit" class="btn btn-primary" disabled={busy || !changed}>
            Save
          </button>
        </div>
      )}
    </form>
  );
}

function ModelSection({ channel, detail, manages, onSaved }: { channel: string; detail?: ChannelDetail; manages: boolean; onSaved: () => Promise<void> }) {
  const [providers, setProviders] = useState<Provider[]>([]);
  const [provider, setProvider] = useState("");
  const [model, setModel] = useState("");
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const [own, setOwn] = useState(false);
  // The choice as saved ("provider/model"; "" for the workspace's), so Save
  // is offered only for a change; undefined until it is read.
  const [saved, setSaved] = useState<string>();
  const choice = (p: string, m: string) => (p ? `${p}/${m.trim()}` : "");

  useEffect(() => {
    let current = true;
    setSaved(undefined);
    api.get("/api/providers").then((list) => current && setProviders(list), () => undefined);
    // The channel left before its answer came must not fill this one's form.
    api.get("/api/channels/{channel}/model", { path: { channel } }).then((policy) => {
      if (!current) return;
      setOwn(!!policy.channel);
      setProvider(policy.channel?.provider ?? "");
      setModel(policy.channel?.model ?? "");
      setSaved(choice(policy.channel?.provider ?? "", policy.channel?.model ?? ""));
    }, () => undefined);
    return () => {
      current = false;
    };
  }, [channel]);

  const save = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await api.put("/api/channels/{channel}/model", { path: { channel }, body: { provider: provider || null, model: provider && model.trim() ? model.trim() : null } });
      setOwn(!!provider);
      setSaved(choice(provider, model));
      await onSaved();
      toast(provider ? "Model changed. The agent keeps its name, files and memory." : "The channel now uses the workspace's model.");
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
  };

  const resolved = detail?.model;
  return (
    <form class="settings-section" onSubmit={save}>
      <h3>Model</h3>
      <p class="muted">
        {resolved ? (
          <>
            Serving the next turn: <strong>{resolved.provider}</strong>
            {resolved.model ? ` / ${resolved.model}` : " (its default model)"}, chosen at the {resolved.level} level.
          </>
        ) : (
          "No model serves this channel yet: connect a provider (Workspace → Providers) or choose one here."
        )}
      </p>
      <div class="grid-2">
        <Field label="Provider" hint={own ? "This channel's own choice." : "Empty: use the workspace's model."}>
          {(p) => (
            <select {...p} value={provider} disabled={!manages} onChange={(e) => setProvider(e.currentTarget.value)}>
              <option value="">The workspace's model</option>
              {providers.map((pr) => (
                <option key={pr.name} value={pr.name}>
                  {pr.name}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Model" hint="Empty: the provider's default model.">
          {(p) => <input {...p} value={model} disabled={!manages || !provider} onInput={(e) => setModel(e.currentTarget.value)} />}
        </Field>
      </div>
      <ErrorNote error={error} />
      {manages && (
        <div class="actions">
          <button type="submit" class="btn btn-primary" disabled={busy || saved === undefined || saved === choice(provider, model)}>
            Save model
          </button>
        </div>
      )}
    </form>
  );
}

function CapabilitySection({ entry, detail }: { entry: ChannelEntry; detail?: ChannelDetail }) {
  const policy = detail?.profile.capability_policy ?? entry.profile?.capability_policy;
  const askSkipper = () => {
    composerInsert.value = { channel: entry.channel.id, text: "@skipper " };
    navigate(channelPath(entry.channel.name));
  };
  return (
    <section class="settings-section">
      <h3>What its computer may do</h3>
      {policy ? (
        <ul class="facts compact">
          {policy.computer && (
            <li>
              <Icon name="terminal" />
              <div>
                <strong>Computer</strong>
                <span>Runs on {policy.computer}, chosen when the channel was made.</span>
              </div>
            </li>
          )}
          <li>
            <Icon name="activity" />
            <div>
              <strong>Network</strong>
              <span>{policy.network ? "Commands may reach the network." : "Commands cannot reach the network."}</span>
            </div>
          </li>
          <li>
            <Icon name="key" />
            <div>
              <strong>Credentials</strong>
              <span>{policy.credentials.length ? policy.credentials.map((c) => c.name).join(", ") : "None granted."}</span>
            </div>
          </li>
          <li>
            <Icon name="folder" />
            <div>
              <strong>Extra folders (read-only)</strong>
              <span>{policy.mounts.length ? policy.mounts.map((m) => m.at).join(", ") : "None."}</span>
            </div>
          </li>
          <li>
            <Icon name="archive" />
            <div>
              <strong>Packages</strong>
              <span>{policy.packages.length ? policy.packages.join(", ") : "None installed beyond the base system."}</span>
            </div>
          </li>
        </ul>
      ) : (
        <p class="muted">Loading…</p>
      )}
      <p class="muted">
        To change these, ask Skipper in plain words: it grants capabilities, with the Captain's approval where needed.{" "}
        <button type="button" class="link-like" onClick={askSkipper}>
          Ask @skipper
        </button>
      </p>
    </section>
  );
}

function MembersSection({
  channel,
  channelId,
  members,
  manages,
  onChanged,
}: {
  channel: string;
  channelId: number;
  members?: Member[];
  manages: boolean;
  onChanged: (m: Member[]) => void;
}) {
  const [adding, setAdding] = useState("");
  const [error, setError] = useState<string>();
  // Leaving a private channel one cannot come back to alone is asked first.
  const [confirmLeave, setConfirmLeave] = useState<Member>();
  const inChannel = new Set((members ?? []).map((m) => m.user.id));
  // Two quick changes read the list twice: only the later read is shown.
  const latest = useLatest();
  const refresh = async () => {
    const current = latest();
    const members = await api.get("/api/channels/{channel}/members", { path: { channel } });
    if (current()) onChanged(members);
  };
  const add = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    try {
      await api.post("/api/channels/{channel}/members", { path: { channel }, body: { user_id: Number(adding) } });
      setAdding("");
      await refresh();
    } catch (err) {
      setError(describeError(err));
    }
  };
  const remove = async (member: Member) => {
    const self = member.user.id === me.value?.id;
    // The Captain and admins still see the channel after leaving: their list is read again.
    const staysVisible = isAdmin.value;
    if (self && !staysVisible) markLeaving(channelId);
    try {
      await api.delete("/api/channels/{channel}/members/{user_id}", { path: { channel, user_id: member.user.id } });
      // Gone for them: the channel view says so when the event comes (see state/channels.ts).
      if (!self || staysVisible) await refresh();
    } catch (err) {
      if (self) markLeaving(channelId, false);
      toast(describeError(err), "error");
    }
  };
  const leaveOrRemove = (member: Member) => {
    if (member.user.id === me.value?.id && !isAdmin.value) setConfirmLeave(member);
    else void remove(member);
  };
  return (
    <section class="settings-section">
      <h3>Members</h3>
      <p class="muted">This channel is private: only its members, the Captain and admins see it.</p>
      <ul class="member-list">
        {(members ?? []).map((m) => (
          <li key={m.user.id}>
            <span>
              {m.user.display_name} <span class="muted">@{m.user.name}</span>
            </span>
            <span class="tag">{m.role}</span>
            {(manages || m.user.id === me.value?.id) && (
              <button type="button" class="btn btn-small btn-ghost" onClick={() => leaveOrRemove(m)}>
                {m.user.id === me.value?.id ? "Leave" : "Remove"}
              </button>
            )}
          </li>
        ))}
      </ul>
      {manages && (
        <form class="inline-form" onSubmit={add}>
          <select aria-label="Person to add" value={adding} onChange={(e) => setAdding(e.currentTarget.value)} required>
            <option value="">Add a person…</option>
            {userList.value
              .filter((u) => !inChannel.has(u.id) && !u.deactivated)
              .map((u) => (
                <option key={u.id} value={u.id}>
                  {u.display_name} (@{u.name})
                </option>
              ))}
          </select>
          <button type="submit" class="btn" disabled={!adding}>
            Add
          </button>
        </form>
      )}
      <ErrorNote error={error} />
      {confirmLeave && (
        <Dialog title={`Leave #${channel}?`} onClose={() => setConfirmLeave(undefined)} description="It is private: once you leave, you no longer see it, and only a member who manages it, the Captain or an admin can add you back.">
          <div class="actions">
            <button type="button" class="btn btn-ghost" onClick={() => setConfirmLeave(undefined)} autoFocus>
              Stay
            </button>
            <button
              type="button"
              class="btn btn-danger"
              onClick={() => {
                const member = confirmLeave;
                setConfirmLeave(undefined);
                void remove(member);
              }}
            >
              Leave #{channel}
            </button>
          </div>
        </Dialog>
      )}
    </section>
  );
}

function LifecycleSection({ entry, manages }: { entry: ChannelEntry; manages: boolean }) {
  const channel = entry.channel;
  const archived = channel.status === "archived";
  const [busy, setBusy] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const toggle = async () => {
    setBusy(true);
    try {
      if (archived) {
        await api.post("/api/channels/{channel}/restore", { path: { channel: channel.name } });
        toast(`#${channel.name} is back, with the same agent, files and memory.`);
      } else {
        await api.post("/api/channels/{channel}/archive", { path: { channel: channel.name } });
        toast(`#${channel.name} is archived. Its agent is paused; nothing is lost.`);
      }
    } catch (e) {
      toast(describeError(e), "error");
    } finally {
      setBusy(false);
    }
  };
  if (!manages) return null;
  return (
    <section class="settings-section danger-zone">
      <h3>Lifecycle</h3>
      <div class="lifecycle-row">
        <div>
          <strong>{archived ? "Restore the channel" : "Archive the channel"}</strong>
          <p class="muted">
            {archived
              ? "Brings back the same agent world: its threads, files and memory."
              : "Pauses its agent and keeps everything: threads, files, memory, identity."}
          </p>
        </div>
        <button type="button" class="btn" disabled={busy} onClick={toggle}>
          <Icon name={archived ? "restore" : "archive"} size={15} /> {archived ? "Restore" : "Archive"}
        </button>
      </div>
      {isAdmin.value && (
        <div class="lifecycle-row">
          <div>
            <strong>Delete for good</strong>
            <p class="muted">{archived ? "Removes the agent, its workspace, memory, threads and files. This cannot be undone." : "Archive the channel first; only an archived channel can be deleted."}</p>
          </div>
          <button type="button" class="btn btn-danger" disabled={!archived} onClick={() => setConfirming(true)}>
            <Icon name="trash" size={15} /> Delete…
          </button>
        </div>
      )}
      {confirming && <DeleteChannel name={channel.name} onClose={() => setConfirming(false)} />}
    </section>
  );
}

function DeleteChannel({ name, onClose }: { name: string; onClose: () => void }) {
  const [typed, setTyped] = useState("");
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const remove = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await api.delete("/api/channels/{channel}", { path: { channel: name }, query: { confirm: typed.trim() } });
      navigate(channelPath("main"));
      toast(`#${name} was deleted.`);
    } catch (err) {
      setError(describeError(err));
      setBusy(false);
    }
  };
  return (
    <Dialog title={`Delete #${name} for good?`} onClose={onClose} description="Its agent, workspace, memory, threads and files are removed. This cannot be undone.">
      <form onSubmit={remove} class="stack">
        <Field label={`Type ${name} to confirm`}>
          {(p) => <input {...p} value={typed} onInput={(e) => setTyped(e.currentTarget.value)} autocomplete="off" autoFocus />}
        </Field>
        <ErrorNote error={error} />
        <div class="actions">
          <button type="button" class="btn btn-ghost" onClick={onClose}>
            Keep it
          </button>
          <button type="submit" class="btn btn-danger" disabled={busy || typed.trim() !== name}>
            Delete #{name}
          </button>
        </div>
      </form>
    </Dialog>
  );
}
