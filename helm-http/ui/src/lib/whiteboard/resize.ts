// Resizing one item by a handle: where an item's handles are, which one a
// pointer is on, and the item after its handle moved. Boxes here are the
// item's own geometry (a rectangle's x, y, width and height), not its drawn
// bounds, so the corner under the pointer stays under it. Markup the editor
// does not own is scaled as a whole, in proportion (an image or a drawing
// stretched one way looks broken), from the box the browser measured.
import { bounds, snapAngle, stickyHeight, textBox, type Box, type Point } from "./geometry";
import type { Item } from "./model";

export type Handle = "nw" | "n" | "ne" | "e" | "se" | "s" | "sw" | "w" | "start" | "end";
export type HandleAt = { handle: Handle; x: number; y: number };

const CORNERS: Handle[] = ["nw", "ne", "se", "sw"];
const SIDES: Handle[] = ["n", "e", "s", "w"];

/** Smallest a sticky may be made, so its text has room for a word. */
export const MIN_STICKY_W = 80;
/** Smallest text size a drag makes. */
export const MIN_TEXT = 6;

/** The box an item's handles sit on; undefined for what cannot be resized (an arrow, markup not measured or drawing nothing). */
export function frame(item: Item, measured?: Map<number, Box>): Box | undefined {
  switch (item.kind) {
    case "rect":
      return { x: Math.min(item.x, item.x + item.w), y: Math.min(item.y, item.y + item.h), w: Math.abs(item.w), h: Math.abs(item.h) };
    case "ellipse":
      return { x: item.cx - Math.abs(item.rx), y: item.cy - Math.abs(item.ry), w: 2 * Math.abs(item.rx), h: 2 * Math.abs(item.ry) };
    case "sticky":
      return { x: item.x, y: item.y, w: item.w, h: item.h };
    case "pen": {
      const xs = item.pts.filter((_, i) => i % 2 === 0);
      const ys = item.pts.filter((_, i) => i % 2 === 1);
      const x = Math.min(...xs);
      const y = Math.min(...ys);
      return { x, y, w: Math.max(...xs) - x, h: Math.max(...ys) - y };
    }
    case "text":
      return textBox(item.x, item.y, item.text, item.size);
    case "foreign":
      return bounds(item, measured);
    default:
      return undefined;
  }
}

function pointOf(b: Box, h: Handle): Point {
  const x = h.includes("w") ? b.x : h.includes("e") ? b.x + b.w : b.x + b.w / 2;
  const y = h.includes("n") ? b.y : h.includes("s") ? b.y + b.h : b.y + b.h / 2;
  return { x, y };
}

/** The handles an item shows: an arrow's two ends; corners for a text or markup not the editor's (they scale as a whole); corners and sides for the rest. */
export function handles(item: Item, measured?: Map<number, Box>): HandleAt[] {
  if (item.kind === "arrow") {
    return [
      { handle: "start", x: item.x1, y: item.y1 },
      { handle: "end", x: item.x2, y: item.y2 },
    ];
  }
  const b = frame(item, measured);
  if (!b) return [];
  const which = item.kind === "text" || item.kind === "foreign" ? CORNERS : [...CORNERS, ...SIDES];
  return which.map((handle) => ({ handle, ...pointOf(b, handle) }));
}

/** The handle within `tol` of `p` (the nearest), if any. */
export function handleAt(item: Item, p: Point, tol: number, measured?: Map<number, Box>): Handle | undefined {
  let best: Handle | undefined;
  let dist = tol;
  for (const h of handles(item, measured)) {
    const d = Math.max(Math.abs(h.x - p.x), Math.abs(h.y - p.y));
    if (d <= dist) {
      best = h.handle;
      dist = d;
    }
  }
  return best;
}

/**
 * The box `b` after `handle` moved by (dx, dy), the opposite side staying
 * put. Its width or height may come out negative (dragged past the other
 * side): a flip. With `keepRatio` a corner keeps the box's proportions.
 */
export function draggedBox(b: Box, handle: Handle, dx: number, dy: number, keepRatio = false): Box {
  let x0 = b.x;
  let y0 = b.y;
  let x1 = b.x + b.w;
  let y1 = b.y + b.h;
  if (handle.includes("w")) x0 += dx;
  if (handle.includes("e")) x1 += dx;
  if (handle.includes("n")) y0 += dy;
  if (handle.includes("s")) y1 += dy;
  if (keepRatio && CORNERS.includes(handle) && b.w > 0 && b.h > 0) {
    const sx = (x1 - x0) / b.w;
    const sy = (y1 - y0) / b.h;
    const k = Math.max(Math.abs(sx), Math.abs(sy));
    const w = Math.sign(sx || 1) * k * b.w;
    const h = Math.sign(sy || 1) * k * b.h;
    if (handle.includes("w")) x0 = x1 - w;
    else x1 = x0 + w;
    if (handle.includes("n")) y0 = y1 - h;
    else y1 = y0 + h;
  }
  return { x: x0, y: y0, w: x1 - x0, h: y1 - y0 };
}

function normal(b: Box): Box {
  return { x: Math.min(b.x, b.x + b.w), y: Math.min(b.y, b.y + b.h), w: Math.abs(b.w), h: Math.abs(b.h) };
}

/** Smallest (board units) a drag makes markup not the editor's. */
export const MIN_FOREIGN = 4;

/**
 * `item` with `handle` dragged by (dx, dy) from where it was; `keepRatio`
 * (Shift) keeps a box's proportions, or an arrow's end at a multiple of 45°.
 * `measured` holds the boxes of markup not the editor's, as drawn unmoved.
 */
export function resized(item: Item, handle: Handle, dx: number, dy: number, keepRatio = false, measured?: Map<number, Box>): Item {
  if (item.kind === "arrow") {
    if (handle === "start") {
      const p = { x: item.x1 + dx, y: item.y1 + dy };
      const q = keepRatio ? snapAngle({ x: item.x2, y: item.y2 }, p) : p;
      return { ...item, x1: q.x, y1: q.y };
    }
    if (handle === "end") {
      const p = { x: item.x2 + dx, y: item.y2 + dy };
      const q = keepRatio ? snapAngle({ x: item.x1, y: item.y1 }, p) : p;
      return { ...item, x2: q.x, y2: q.y };
    }
    return item;
  }
  const b = frame(item, measured);
  if (!b || handle === "start" || handle === "end") return item;
  const raw = draggedBox(b, handle, dx, dy, keepRatio || item.kind === "text" || item.kind === "foreign");
  const box = normal(raw);
  switch (item.kind) {
    case "rect":
      return { ...item, ...box };
    case "ellipse":
      return { ...item, cx: box.x + box.w / 2, cy: box.y + box.h / 2, rx: box.w / 2, ry: box.h / 2 };
    case "sticky": {
      const w = Math.max(MIN_STICKY_W, box.w);
      const x = handle.includes("w") && box.w < MIN_STICKY_W ? b.x + b.w - w : box.x;
      const h = Math.max(box.h, stickyHeight(item.text, w));
      const y = handle.includes("n") && h > box.h ? b.y + b.h - h : box.y;
      return { ...item, x, y, w, h };
    }
    case "pen": {
      // Points are mapped from the old box to the new one (a flip mirrors them).
      const sx = b.w > 0 ? raw.w / b.w : 1;
      const sy = b.h > 0 ? raw.h / b.h : 1;
      const ox = b.w > 0 ? raw.x : raw.x + (handle.includes("e") ? raw.w : 0);
      const oy = b.h > 0 ? raw.y : raw.y + (handle.includes("s") ? raw.h : 0);
      return { ...item, pts: item.pts.map((v, i) => (i % 2 === 0 ? ox + (v - b.x) * sx : oy + (v - b.y) * sy)) };
    }
    case "text": {
      // Dragged past the other corner: as small as text gets, never mirrored.
      const size = Math.max(MIN_TEXT, (item.size * raw.h) / b.h);
      const k = size / item.size;
      // The corner opposite the handle stays where it was.
      const fx = handle.includes("w") ? b.x + b.w - b.w * k : b.x;
      const fy = handle.includes("n") ? b.y + b.h - b.h * k : b.y;
      return { ...item, size, x: item.x + (fx - b.x), y: fy + (item.y - b.y) * k };
    }
    case "foreign": {
      const m = measured?.get(item.id);
      const side = Math.max(b.w, b.h);
      if (!m || side <= 0) return item;
      // As for a text: never mirrored, never smaller than a few units, the opposite corner fixed.
      const k = Math.max(MIN_FOREIGN / side, (b.w >= b.h ? raw.w / b.w : raw.h / b.h) || 0);
      const fx = handle.includes("w") ? b.x + b.w - b.w * k : b.x;
      const fy = handle.includes("n") ? b.y + b.h - b.h * k : b.y;
      const scale = (item.scale ?? 1) * k;
      return { ...item, scale, dx: fx - m.x * scale, dy: fy - m.y * scale };
    }
    default:
      return item;
  }
}
