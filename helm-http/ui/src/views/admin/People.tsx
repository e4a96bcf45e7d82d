// People and invitations: who is in the workspace (their roles, and who is
// deactivated), open invitations with their links (shown once, when made),
// and revoking them. The Captain changes roles; the Captain and admins
// deactivate and reactivate members (only the Captain, admins), after a
// confirmation. The server decides; these controls only hide what it would
// refuse.
import { useEffect, useState } from "preact/hooks";
import { api, describeError } from "../../api/client";
import type { Invite, User } from "../../api/types";
import { Dialog } from "../../components/Dialog";
import { ErrorNote } from "../../components/Field";
import { useLatest } from "../../lib/latest";
import { useRetryOnReconnect } from "../../lib/reconnect";
import { Icon } from "../../components/Icon";
import { Time } from "../../components/Time";
import { me } from "../../state/session";
import { toast } from "../../state/toasts";
import { loadUsers, putUser, userById, userList } from "../../state/users";

const ROLE_NAMES = { captain: "Captain", admin: "Admin", member: "Member" } as const;

/** Whether the signed-in person may make `u` an admin or a member. */
function mayChangeRole(u: User): boolean {
  return me.value?.role === "captain" && u.role !== "captain";
}

/** Whether the signed-in person may deactivate or reactivate `u`. */
function mayChangeAccess(u: User): boolean {
  const mine = me.value;
  if (!mine || u.id === mine.id || u.role === "captain") return false;
  return mine.role === "captain" || (mine.role === "admin" && u.role === "member");
}

/** Asks before deactivating or reactivating someone, then does it. */
function AccessDialog({ user, onClose }: { user: User; onClose: () => void }) {
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const deactivating = !user.deactivated;
  const who = user.display_name || user.name;
  const confirm = async () => {
    setBusy(true);
    try {
      const changed = await api.patch("/api/users/{id}", { path: { id: user.id }, body: { active: !deactivating } });
      putUser(changed);
      toast(deactivating ? `${who} is deactivated.` : `${who} is active again.`);
      onClose();
    } catch (err) {
      setError(describeError(err));
      setBusy(false);
    }
  };
  return (
    <Dialog title={deactivating ? `Deactivate ${who}?` : `Reactivate ${who}?`} onClose={onClose}>
      {deactivating ? (
        <p>
          @{user.name} will be signed out everywhere at once, their API tokens will stop working, and they will not be able to sign in. Their
          messages, threads and memory records stay, under their name. You can reactivate them later.
        </p>
      ) : (
        <p>@{user.name} will be able to sign in again, and their API tokens will work again.</p>
      )}
      <ErrorNote error={error} />
      <div class="actions">
        <button type="button" class="btn btn-ghost" onClick={onClose} autoFocus>
          Cancel
        </button>
        <button type="button" class={deactivating ? "btn btn-danger" : "btn btn-primary"} onClick={confirm} disabled={busy}>
          {deactivating ? "Deactivate" : "Reactivate"}
        </button>
      </div>
    </Dialog>
  );
}

/** A person's role: a choice for the Captain, words for everyone else. */
function RoleCell({ user }: { user: User }) {
  const [busy, setBusy] = useState(false);
  if (!mayChangeRole(user)) return <>{ROLE_NAMES[user.role]}</>;
  const who = user.display_name || user.name;
  const change = async (role: "admin" | "member") => {
    setBusy(true);
    try {
      const changed = await api.patch("/api/users/{id}", { path: { id: user.id }, body: { role } });
      putUser(changed);
      toast(`${who} is now ${role === "admin" ? "an admin" : "a member"}.`);
    } catch (err) {
      toast(describeError(err), "error");
    } finally {
      setBusy(false);
    }
  };
  return (
    <select
      aria-label={`Role of ${who}`}
      value={user.role}
      disabled={busy}
      onChange={(e) => void change(e.currentTarget.value as "admin" | "member")}
    >
      <option value="member">Member</option>
      <option value="admin">Admin</option>
    </select>
  );
}

export function People() {
  const [invites, setInvites] = useState<Invite[]>();
  const [role, setRole] = useState<"member" | "admin">("member");
  // The newest invitation's link, with its id: revoking it takes the link off the screen.
  const [link, setLink] = useState<{ id: number; url: string }>();
  const [error, setError] = useState<string>();
  const [confirming, setConfirming] = useState<User>();

  // A failed load is its own note, with Retry, and loads again when the
  // server is back; form errors stay with the form.
  const [loadError, setLoadError] = useState<string>();
  // Read again after each invitation and revocation: an earlier read
  // answering last would show the list without the latest change.
  const latest = useLatest();
  const load = () => {
    const current = latest();
    setLoadError(undefined);
    api.get("/api/invites").then(
      (list) => current() && setInvites(list),
      (e) => current() && setLoadError(describeError(e)),
    );
    loadUsers().catch((e) => current() && setLoadError(describeError(e)));
  };
  useEffect(load, []);
  useRetryOnReconnect(loadError !== undefined, load);

  const invite = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    try {
      const issued = await api.post("/api/invites", { body: { role } });
      setLink({ id: issued.invite.id, url: issued.url ?? `${location.origin}/join#${issued.code}` });
      void load();
    } catch (err) {
      setError(describeError(err));
    }
  };

  const revoke = async (id: number) => {
    try {
      await api.delete("/api/invites/{id}", { path: { id } });
      if (link?.id === id) {
        // A link that no longer works is not offered for copying.
        setLink(undefined);
        toast("The invitation is revoked: its link no longer works.");
      }
      void load();
    } catch (err) {
      toast(describeError(err), "error");
    }
  };

  const copy = async () => {
    if (!link) return;
    try {
      await navigator.clipboard.writeText(link.url);
      toast("The invitation link is copied.");
    } catch {
      toast("Select the link and copy it by hand.", "error");
    }
  };

  const open = (invites ?? []).filter((i) => !i.accepted_at && !i.revoked && Date.parse(i.expires) > Date.now());
  return (
    <div class="stack-lg">
      <section class="settings-section">
        <h3>Invite someone</h3>
        <form class="inline-form invite-form" onSubmit={invite}>
          <label class="sr-only" for="invite-role">
            Role
          </label>
          <select id="invite-role" value={role} onChange={(e) => setRole(e.currentTarget.value as "member" | "admin")}>
            <option value="member">as a member</option>
            {me.value?.role === "captain" && <option value="admin">as an admin</option>}
          </select>
          <button type="submit" class="btn btn-primary">
            <Icon name="link" size={15} /> Make an invitation link
          </button>
        </form>
        {link && (
          <div class="invite-link">
            <label for="invite-url">Send this link to the person you invite. It is shown only now.</label>
            <div class="inline-form">
              <input id="invite-url" readOnly value={link.url} onFocus={(e) => e.currentTarget.select()} />
              <button type="button" class="btn" onClick={copy}>
                Copy
              </button>
            </div>
          </div>
        )}
        <ErrorNote error={loadError} onRetry={load} />
        <ErrorNote error={error} />
      </section>
      <section class="settings-section">
        <h3>People ({userList.value.length})</h3>
        <table class="table people-table">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Mention</th>
              <th scope="col">Role</th>
              <th scope="col">Status</th>
              <th scope="col">Joined</th>
              <th scope="col">
                <span class="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {userList.value.map((u) => (
              <tr key={u.id} class={u.deactivated ? "person-deactivated" : undefined}>
                <td class="person-name">{u.display_name}</td>
                <td class="person-mention">@{u.name}</td>
                <td class="person-role">
                  <RoleCell user={u} />
                </td>
                <td class="person-status">
                  {u.deactivated ? (
                    <span class="pill pill-denied" title={`Deactivated ${new Date(u.deactivated).toLocaleString()}`}>
                      Deactivated
                    </span>
                  ) : (
                    "Active"
                  )}
                </td>
                <td class="person-joined">
                  <Time at={u.created} />
                </td>
                <td class="person-actions">
                  {mayChangeAccess(u) && (
                    <button
                      type="button"
                      class={u.deactivated ? "btn btn-small" : "btn btn-small btn-danger-quiet"}
                      aria-label={`${u.deactivated ? "Reactivate" : "Deactivate"} ${u.display_name || u.name}`}
                      onClick={() => setConfirming(u)}
                    >
                      {u.deactivated ? "Reactivate" : "Deactivate"}
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        <p class="hint">
          {me.value?.role === "captain"
            ? "Only you change roles. Deactivated people cannot sign in; what they wrote stays."
            : "Admins deactivate and reactivate members; the Captain changes roles. Deactivated people cannot sign in; what they wrote stays."}
        </p>
        {confirming && <AccessDialog user={confirming} onClose={() => setConfirming(undefined)} />}
      </section>
      <section class="settings-section">
        <h3>Open invitations</h3>
        {open.length === 0 ? (
          <p class="muted">None.</p>
        ) : (
          <table class="table">
            <thead>
              <tr>
                <th scope="col">Role</th>
                <th scope="col">Made by</th>
                <th scope="col">Expires</th>
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {open.map((i) => (
                <tr key={i.id}>
                  <td>{i.role}</td>
                  <td>{userById(i.created_by)?.display_name ?? "—"}</td>
                  <td>
                    <Time at={i.expires} />
                  </td>
                  <td>
                    <button type="button" class="btn btn-small btn-ghost" onClick={() => void revoke(i.id)}>
                      Revoke
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
    </div>
  );
}
