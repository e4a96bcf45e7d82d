// Copies of items (copy and paste, duplicate). A copy is made by writing
// the items as the file would hold them and reading that back, so a copy of
// anything, the agent's markup too, is exactly what a save and a reload
// would give; it gets fresh item ids, and any SVG `id` it carries is
// renamed when the board already uses it (two elements with one id would
// make `#id` references ambiguous).
import { moved } from "./geometry";
import { SVG_NS, itemMarkup, parseBoard, type Item, type Wrap } from "./model";

const ID_ATTR = /(\sid\s*=\s*)(["'])([^"'<]*)\2/g;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** The SVG `id` attributes used in `markup`. */
export function idsIn(markup: string): Set<string> {
  return new Set([...markup.matchAll(ID_ATTR)].map((m) => m[3]!));
}

/**
 * `markup` with each `id` that `taken` holds renamed (`x` → `x-2`, …) and
 * the references inside `markup` to it (`url(#x)`, `href="#x"`) following;
 * the new names are added to `taken`.
 */
export function renameIds(markup: string, taken: Set<string>): string {
  let out = markup;
  for (const id of idsIn(markup)) {
    if (!taken.has(id)) {
      taken.add(id);
      continue;
    }
    let k = 2;
    while (taken.has(`${id}-${k}`)) k++;
    const fresh = `${id}-${k}`;
    taken.add(fresh);
    const name = escapeRegExp(id);
    out = out
      .replace(new RegExp(`(\\sid\\s*=\\s*)(["'])${name}\\2`, "g"), `$1$2${fresh}$2`)
      .replace(new RegExp(`#${name}(?=[)"'])`, "g"), `#${fresh}`);
  }
  return out;
}

/** The items as the file would hold them (what the in-app clipboard keeps). */
export function toMarkup(items: Item[], wrap: Wrap): string {
  return items.map((i) => itemMarkup(i, wrap)).join("\n");
}

/**
 * Items read from `markup` (as `toMarkup` wrote it), with fresh item ids,
 * moved by (dx, dy), their SVG ids kept clear of `taken`. Markup that does
 * not parse gives nothing.
 */
export function fromMarkup(markup: string, dx: number, dy: number, taken: Set<string>): Item[] {
  try {
    const board = parseBoard(`<svg xmlns="${SVG_NS}">${renameIds(markup, taken)}</svg>`);
    return board.items.map((i) => moved(i, dx, dy));
  } catch {
    return [];
  }
}

/** Copies of `items`, moved by (dx, dy), with fresh ids; `board` is everything on the board (its SVG ids are not reused). */
export function cloneItems(items: Item[], dx: number, dy: number, board: Item[], wrap: Wrap): Item[] {
  return fromMarkup(toMarkup(items, wrap), dx, dy, idsIn(toMarkup(board, wrap)));
}
