// Who a message in a channel can reach: everyone in a public channel; in a
// private one, its members, the Captain and admins (the server's rule for
// who sees it). The composer offers only them to mention (less the person
// typing), and says when a typed @name is someone the message will not reach.
import type { Channel, User } from "../api/types";

/** Whether `user` sees `channel`, given its members' ids (undefined until they are read). */
export function seesChannel(user: User, channel: Channel, members: ReadonlySet<number> | undefined): boolean {
  if (user.deactivated) return false;
  if (channel.visibility !== "private") return true;
  if (user.role === "captain" || user.role === "admin") return true;
  return members?.has(user.id) ?? false;
}

/**
 * The people the composer offers after @ in `channel`: those the message
 * reaches, less the person typing (`me`), whom a mention of themselves
 * would tell nothing.
 */
export function mentionablePeople(users: readonly User[], channel: Channel, members: ReadonlySet<number> | undefined, me: number | undefined): User[] {
  return users.filter((u) => u.id !== me && seesChannel(u, channel, members));
}

const MENTION = /(^|[\s(])@([a-z0-9._-]+)/gi;

/** The names `text` mentions (`@bob` → `bob`), lower-cased, each once, trailing dots left off. */
export function mentionedNames(text: string): string[] {
  const names = new Set<string>();
  for (const m of text.matchAll(MENTION)) names.add(m[2]!.replace(/\.+$/, "").toLowerCase());
  return [...names];
}

/**
 * The people `text` mentions who do not see `channel`, so will not be told.
 * Nothing until the members are read: a guess would flag members.
 */
export function unseenMentions(text: string, users: readonly User[], channel: Channel, members: ReadonlySet<number> | undefined): User[] {
  if (channel.visibility !== "private" || members === undefined) return [];
  const byName = new Map(users.map((u) => [u.name.toLowerCase(), u]));
  return mentionedNames(text)
    .map((name) => byName.get(name))
    .filter((u): u is User => u !== undefined && !u.deactivated && !seesChannel(u, channel, members));
}

/** The composer's words for them: "@bob is not in #secret and will not be told." */
export function unseenWords(unseen: readonly User[], channel: string): string | undefined {
  if (unseen.length === 0) return undefined;
  const names = unseen.map((u) => `@${u.name}`);
  const list = names.length === 1 ? names[0] : `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`;
  return `${list} ${names.length === 1 ? "is" : "are"} not in #${channel} and will not be told.`;
}
