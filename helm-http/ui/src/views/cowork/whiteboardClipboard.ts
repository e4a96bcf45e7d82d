// The whiteboard's clipboard: in memory, for this tab, so copying never
// asks for a permission and a paste works on any board opened meanwhile.
// It holds the items as the file would (lib/whiteboard/clone.ts), not the
// items themselves, so later edits to the originals do not reach it.
import { fromMarkup, idsIn, toMarkup } from "../../lib/whiteboard/clone";
import type { Item } from "../../lib/whiteboard/model";
import { PASTE_OFFSET, wrap } from "./whiteboardTools";

let held: { markup: string; pastes: number } | undefined;

/** Keeps `items` (does nothing for none). */
export function copyItems(items: Item[]): void {
  if (items.length) held = { markup: toMarkup(items, wrap), pastes: 0 };
}

export function canPaste(): boolean {
  return held !== undefined;
}

/** Fresh copies of what was copied, each paste a step further off, their SVG ids kept clear of `board`'s. */
export function pasteItems(board: Item[]): Item[] {
  if (!held) return [];
  held.pastes++;
  const d = PASTE_OFFSET * held.pastes;
  return fromMarkup(held.markup, d, d, idsIn(toMarkup(board, wrap)));
}
