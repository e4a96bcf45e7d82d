// Quick Note's rules that need no browser: which channels a note may go to,
// which one the picker starts on, what a draft looks like in storage, and
// how a saved note is named to the person.

/** What the picker needs to know of a channel. */
export interface NoteChannel {
  id: number;
  name: string;
  kind: string;
  status: string;
}

/**
 * The channels a note may go to: active ones the person may use (everyone
 * may use the channels they see, except `#main`, Skipper's host computer,
 * which only the Captain and admins may). `#main` first, then by name.
 */
export function noteTargets<C extends NoteChannel>(all: Iterable<C>, admin: boolean): C[] {
  return [...all]
    .filter((c) => c.status === "active" && (c.kind !== "home" || admin))
    .sort((a, b) => (a.kind === "home" ? -1 : b.kind === "home" ? 1 : a.name.localeCompare(b.name)));
}

/**
 * The channel the picker starts on: the one being viewed, else the last one
 * a note went to, else `#main`, else the first one offered.
 */
export function defaultNoteTarget<C extends NoteChannel>(targets: C[], viewing: string | undefined, lastId: number | undefined): C | undefined {
  const wanted = viewing?.replace(/^#/, "").toLowerCase();
  return (
    (wanted ? targets.find((c) => c.name.toLowerCase() === wanted || String(c.id) === wanted) : undefined) ??
    (lastId !== undefined ? targets.find((c) => c.id === lastId) : undefined) ??
    targets.find((c) => c.kind === "home") ??
    targets[0]
  );
}

/** An unsaved note. */
export interface NoteDraft {
  title: string;
  text: string;
}

/** Where a person's draft and last channel are kept (localStorage). */
export const draftKey = (user: number) => `helm:quick-note:${user}`;
export const lastChannelKey = (user: number) => `helm:quick-note-channel:${user}`;

/** A stored draft, read back leniently (anything else is no draft). */
export function parseDraft(stored: string | null): NoteDraft {
  try {
    const value = stored ? (JSON.parse(stored) as Partial<NoteDraft>) : undefined;
    return { title: typeof value?.title === "string" ? value.title : "", text: typeof value?.text === "string" ? value.text : "" };
  } catch {
    return { title: "", text: "" };
  }
}

/** Whether a draft holds anything worth keeping. */
export function isEmptyDraft(draft: NoteDraft): boolean {
  return draft.title.trim() === "" && draft.text.trim() === "";
}

/** `/workspace/notes/2026-12-07-press-list.md` → `notes/2026-12-07-press-list.md`. */
export function workspaceRelative(path: string): string {
  return path.replace(/^\/workspace\/+/, "");
}

/** The notice after a save: `Saved notes/<file> in #launch`. */
export function savedNoteMessage(path: string, channel: string): string {
  return `Saved ${workspaceRelative(path)} in #${channel}`;
}
