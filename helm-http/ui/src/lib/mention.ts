// What a mention's notice says. Most name who wrote: "Ada mentioned you in
// #launch". Helm's own note for a call Skipper hands to the Captain
// (helm-core's `call_settled_note`) mentions her too, and it is Skipper
// asking her, not Helm merely naming her.
import type { Message } from "../api/types";

/** The opening of the note a call handed to the Captain posts. */
const HANDED_TO_CAPTAIN = "@skipper asks the Captain: ";

/** The notice for a mention of me in `message`, written by `who`, in `channel`. */
export function mentionNotice(message: Message, who: string, channel: string): string {
  if (message.author.kind === "system" && message.content.startsWith(HANDED_TO_CAPTAIN)) {
    return `@skipper asks you in #${channel}`;
  }
  return `${who} mentioned you in #${channel}`;
}
