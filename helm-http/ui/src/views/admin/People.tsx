// People and invitations: who is in the workspace, open invitations with
// their links (shown once, when made), and revoking them.
import { useEffect, useState } from "preact/hooks";
import { api, describeError } from "../../api/client";
import type { Invite } from "../../api/types";
import { ErrorNote } from "../../components/Field";
import { useRetryOnReconnect } from "../../lib/reconnect";
import { Icon } from "../../components/Icon";
import { Time } from "../../components/Time";
import { me } from "../../state/session";
import { toast } from "../../state/toasts";
import { loadUsers, userById, userList } from "../../state/users";

export function People() {
  const [invites, setInvites] = useState<Invite[]>();
  const [role, setRole] = useState<"member" | "admin">("member");
  // The newest invitation's link, with its id: revoking it takes the link off the screen.
  const [link, setLink] = useState<{ id: number; url: string }>();
  const [error, setError] = useState<string>();

  // A failed load is its own note, with Retry, and loads again when the
  // server is back; form errors stay with the form.
  const [loadError, setLoadError] = useState<string>();
  const load = () => {
    setLoadError(undefined);
    api.get("/api/invites").then(setInvites, (e) => setLoadError(describeError(e)));
    loadUsers().catch((e) => setLoadError(describeError(e)));
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
        <form class="inline-form" onSubmit={invite}>
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
        <table class="table">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Mention</th>
              <th scope="col">Role</th>
              <th scope="col">Joined</th>
            </tr>
          </thead>
          <tbody>
            {userList.value.map((u) => (
              <tr key={u.id}>
                <td>{u.display_name}</td>
                <td>@{u.name}</td>
                <td>{u.role === "captain" ? "Captain" : u.role === "admin" ? "Admin" : "Member"}</td>
                <td>
                  <Time at={u.created} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
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
