// Who may change a channel (rename, settings, archive, restore, delete):
// the Captain and admins, whoever made it, and its owners. The server
// decides; the views ask the same question so they offer only what will
// work, and tell everyone else who can do it instead.
import { useEffect, useState } from "preact/hooks";
import { api } from "../../api/client";
import type { Member } from "../../api/types";
import type { ChannelEntry } from "../../state/channels";
import { isAdmin, me } from "../../state/session";

/** Who can, in words, for those who cannot. */
export const MANAGERS = "the Captain, admins and this channel's owners";

/** Whether the person signed in manages `entry`, given its members (when known). */
export function managesChannel(entry: ChannelEntry, members?: Member[]): boolean {
  if (isAdmin.value || entry.channel.created_by === me.value?.id) return true;
  return members?.find((m) => m.user.id === me.value?.id)?.role === "owner";
}

/** `managesChannel`, reading the members only when the answer depends on them. */
export function useManages(entry: ChannelEntry): boolean {
  const plain = managesChannel(entry);
  const [members, setMembers] = useState<Member[]>();
  useEffect(() => {
    if (plain) return;
    let live = true;
    api
      .get("/api/channels/{channel}/members", { path: { channel: entry.channel.name } })
      .then((list) => live && setMembers(list))
      .catch(() => undefined);
    return () => {
      live = false;
    };
  }, [entry.channel.id, plain]);
  return plain || managesChannel(entry, members);
}
