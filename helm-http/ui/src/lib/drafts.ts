// Unsent text of the message boxes (a channel's "start a thread" box, a
// thread's reply box, Cowork's agent panel), kept in localStorage so that
// nothing typed is lost when the session ends, the page reloads or the
// person goes elsewhere. Keyed by the signed-in person: another person
// signing in on the same machine never sees them. Cleared once sent.

/** Which box a draft belongs to: a thread's reply box, or a channel's box for a new thread ("new") or Cowork's panel ("panel"). */
export type DraftPlace = { channel: number; thread: number } | { channel: number; box: "new" | "panel" };

/** The storage key of `user`'s draft in `place`. */
export function draftKey(user: number, place: DraftPlace): string {
  return "thread" in place ? `helm:draft:${user}:${place.channel}:t${place.thread}` : `helm:draft:${user}:${place.channel}:${place.box}`;
}

/** What a draft needs of storage (localStorage, or a stand-in in tests). */
export interface DraftStore {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

/** The browser's localStorage, or none where it cannot be used (private modes that refuse it). */
export function browserStore(): DraftStore | undefined {
  try {
    return typeof localStorage === "undefined" ? undefined : localStorage;
  } catch {
    return undefined;
  }
}

/** The draft kept for `user` in `place` ("" without one, or without a person signed in). */
export function readDraft(store: DraftStore | undefined, user: number | undefined, place: DraftPlace): string {
  if (!store || user === undefined) return "";
  try {
    return store.getItem(draftKey(user, place)) ?? "";
  } catch {
    return "";
  }
}

/**
 * Keeps `text` as `user`'s draft in `place`; blank text removes it (a sent
 * message empties the box, which clears its draft). A full or refused
 * storage loses only the keeping, never the text in the box.
 */
export function keepDraft(store: DraftStore | undefined, user: number | undefined, place: DraftPlace, text: string): void {
  if (!store || user === undefined) return;
  try {
    if (text.trim() === "") store.removeItem(draftKey(user, place));
    else store.setItem(draftKey(user, place), text);
  } catch {
    // Storage full or refused: the box still holds the text.
  }
}
