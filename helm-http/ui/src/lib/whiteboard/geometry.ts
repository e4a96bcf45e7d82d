// The whiteboard's geometry: bounds, hit-testing, moving, arrows, and
// wrapping a sticky's text. Pure functions over the model (model.ts).
import { STICKY, type Item, type Line } from "./model";

export type Box = { x: number; y: number; w: number; h: number };
export type Point = { x: number; y: number };

/** Average glyph width as a share of the font size (sans-serif, mixed text). */
const GLYPH = 0.56;

/** An estimate of how wide `text` is at `size` (the file is shown by other viewers too, so no exact font is assumed). */
export function textWidth(text: string, size: number): number {
  let w = 0;
  for (const c of text) w += c === " " ? 0.28 : /[MWmw@]/.test(c) ? 0.85 : /[iljtf.,:;'!|]/.test(c) ? 0.3 : /[A-Z]/.test(c) ? 0.66 : GLYPH;
  return w * size;
}

/** `text` wrapped into lines at most `width` wide; a line break in the text starts a new paragraph. */
export function wrapText(text: string, width: number, size: number, measure = textWidth): Line[] {
  const lines: Line[] = [];
  for (const para of text.split("\n")) {
    let line = "";
    let wrap = false;
    const push = () => {
      lines.push({ text: line, wrap });
      line = "";
      wrap = true;
    };
    for (const word of para.split(/ +/)) {
      if (word === "") continue;
      const tryLine = line ? `${line} ${word}` : word;
      if (measure(tryLine, size) <= width) {
        line = tryLine;
        continue;
      }
      if (line) push();
      // A word wider than the line is cut where it has to be.
      let rest = word;
      while (measure(rest, size) > width && rest.length > 1) {
        let cut = rest.length - 1;
        while (cut > 1 && measure(rest.slice(0, cut), size) > width) cut--;
        line = rest.slice(0, cut);
        push();
        rest = rest.slice(cut);
      }
      line = rest;
    }
    lines.push({ text: line, wrap });
  }
  return lines;
}

/** A sticky's height for its text (it grows, never below the minimum). */
export function stickyHeight(text: string, width: number): number {
  const lines = wrapText(text, width - 2 * STICKY.pad, STICKY.size).length;
  return Math.max(STICKY.minH, Math.ceil(2 * STICKY.pad + STICKY.size * 0.3 + lines * STICKY.line));
}

/** Where a text's box is (its `y` is the baseline). */
export function textBox(x: number, y: number, text: string, size: number): Box {
  return { x, y: y - size * 0.9, w: Math.max(textWidth(text, size), size * 0.5), h: size * 1.2 };
}

/** The box an item covers; `measured` overrides it (boxes the browser measured, for foreign items). */
export function bounds(item: Item, measured?: Map<number, Box>): Box | undefined {
  const m = measured?.get(item.id);
  switch (item.kind) {
    case "rect":
      return grow(norm(item.x, item.y, item.w, item.h), item.sw / 2);
    case "ellipse":
      return grow({ x: item.cx - Math.abs(item.rx), y: item.cy - Math.abs(item.ry), w: 2 * Math.abs(item.rx), h: 2 * Math.abs(item.ry) }, item.sw / 2);
    case "pen": {
      const xs = item.pts.filter((_, i) => i % 2 === 0);
      const ys = item.pts.filter((_, i) => i % 2 === 1);
      const x = Math.min(...xs);
      const y = Math.min(...ys);
      return grow({ x, y, w: Math.max(...xs) - x, h: Math.max(...ys) - y }, item.sw / 2);
    }
    case "arrow": {
      const head = arrowHead(item.x1, item.y1, item.x2, item.y2, item.sw);
      const xs = [item.x1, item.x2, ...head.map((p) => p.x)];
      const ys = [item.y1, item.y2, ...head.map((p) => p.y)];
      const x = Math.min(...xs);
      const y = Math.min(...ys);
      return grow({ x, y, w: Math.max(...xs) - x, h: Math.max(...ys) - y }, item.sw / 2);
    }
    case "text":
      return m ?? textBox(item.x, item.y, item.text, item.size);
    case "sticky":
      return { x: item.x, y: item.y, w: item.w, h: item.h };
    case "foreign":
      // Measured where it was drawn, before the editor's move.
      // (Drawing nothing, say display: none, it measures 0 × 0: not pickable.)
      return item.visual && m && (m.w > 0 || m.h > 0) ? foreignBox(m, item.dx, item.dy, item.scale ?? 1) : undefined;
  }
}

/** Where a foreign element measured at `m` is drawn after `translate(dx dy) scale(scale)`. */
export function foreignBox(m: Box, dx: number, dy: number, scale: number): Box {
  return { x: dx + m.x * scale, y: dy + m.y * scale, w: m.w * scale, h: m.h * scale };
}

function norm(x: number, y: number, w: number, h: number): Box {
  return { x: Math.min(x, x + w), y: Math.min(y, y + h), w: Math.abs(w), h: Math.abs(h) };
}

export function grow(b: Box, by: number): Box {
  return { x: b.x - by, y: b.y - by, w: b.w + 2 * by, h: b.h + 2 * by };
}

export function inBox(p: Point, b: Box): boolean {
  return p.x >= b.x && p.x <= b.x + b.w && p.y >= b.y && p.y <= b.y + b.h;
}

export function intersects(a: Box, b: Box): boolean {
  return a.x <= b.x + b.w && b.x <= a.x + a.w && a.y <= b.y + b.h && b.y <= a.y + a.h;
}

/** The box spanned by two corners. */
export function boxOf(a: Point, b: Point): Box {
  return norm(a.x, a.y, b.x - a.x, b.y - a.y);
}

/** Distance from `p` to the segment a–b. */
export function segmentDistance(p: Point, ax: number, ay: number, bx: number, by: number): number {
  const dx = bx - ax;
  const dy = by - ay;
  const len = dx * dx + dy * dy;
  const t = len === 0 ? 0 : Math.max(0, Math.min(1, ((p.x - ax) * dx + (p.y - ay) * dy) / len));
  return Math.hypot(p.x - (ax + t * dx), p.y - (ay + t * dy));
}

/** Whether `p` touches `item`, `tol` board units being close enough. */
export function hits(item: Item, p: Point, tol: number, measured?: Map<number, Box>): boolean {
  switch (item.kind) {
    case "rect":
    case "sticky":
    case "text":
    case "foreign": {
      const b = bounds(item, measured);
      return !!b && inBox(p, grow(b, tol));
    }
    case "ellipse": {
      const rx = Math.abs(item.rx) + item.sw / 2 + tol;
      const ry = Math.abs(item.ry) + item.sw / 2 + tol;
      return ((p.x - item.cx) / rx) ** 2 + ((p.y - item.cy) / ry) ** 2 <= 1;
    }
    case "pen": {
      const reach = item.sw / 2 + tol;
      const pts = item.pts as [number, ...number[]] & number[];
      if (pts.length === 2) return Math.hypot(p.x - pts[0]!, p.y - pts[1]!) <= reach;
      for (let i = 0; i + 3 < pts.length; i += 2) if (segmentDistance(p, pts[i]!, pts[i + 1]!, pts[i + 2]!, pts[i + 3]!) <= reach) return true;
      return false;
    }
    case "arrow":
      return segmentDistance(p, item.x1, item.y1, item.x2, item.y2) <= item.sw / 2 + tol;
  }
}

/** The topmost item at `p` (the last drawn wins). */
export function hitTest(items: Item[], p: Point, tol: number, measured?: Map<number, Box>): Item | undefined {
  for (let i = items.length - 1; i >= 0; i--) if (hits(items[i]!, p, tol, measured)) return items[i];
  return undefined;
}

/** The items whose boxes meet `box` (a rubber band). */
export function itemsIn(items: Item[], box: Box, measured?: Map<number, Box>): Item[] {
  return items.filter((item) => {
    const b = bounds(item, measured);
    return !!b && intersects(b, box);
  });
}

/** `item` moved by (dx, dy). */
export function moved(item: Item, dx: number, dy: number): Item {
  switch (item.kind) {
    case "rect":
    case "text":
    case "sticky":
      return { ...item, x: item.x + dx, y: item.y + dy };
    case "ellipse":
      return { ...item, cx: item.cx + dx, cy: item.cy + dy };
    case "pen":
      return { ...item, pts: item.pts.map((v, i) => v + (i % 2 === 0 ? dx : dy)) };
    case "arrow":
      return { ...item, x1: item.x1 + dx, y1: item.y1 + dy, x2: item.x2 + dx, y2: item.y2 + dy };
    case "foreign":
      return { ...item, dx: item.dx + dx, dy: item.dy + dy };
  }
}

/**
 * The three corners of the arrowhead the marker draws at (x2, y2): the tip
 * and the two barbs (the marker is 4 stroke widths long and wide).
 */
export function arrowHead(x1: number, y1: number, x2: number, y2: number, sw: number): Point[] {
  const len = Math.hypot(x2 - x1, y2 - y1) || 1;
  const ux = (x2 - x1) / len;
  const uy = (y2 - y1) / len;
  const size = 4 * sw;
  // The marker's refX (7 of 10) puts the tip 0.3 × size past the line's end.
  const tip = { x: x2 + ux * size * 0.3, y: y2 + uy * size * 0.3 };
  const back = { x: tip.x - ux * size, y: tip.y - uy * size };
  return [tip, { x: back.x - uy * size * 0.5, y: back.y + ux * size * 0.5 }, { x: back.x + uy * size * 0.5, y: back.y - ux * size * 0.5 }];
}

/** `to` moved so the line from `from` runs at a multiple of 45° (Shift while drawing). */
export function snapAngle(from: Point, to: Point): Point {
  const len = Math.hypot(to.x - from.x, to.y - from.y);
  const step = Math.PI / 4;
  const angle = Math.round(Math.atan2(to.y - from.y, to.x - from.x) / step) * step;
  return { x: from.x + Math.cos(angle) * len, y: from.y + Math.sin(angle) * len };
}

/** Drops points closer than `min` to the one kept before them (a pen stroke's raw samples). */
export function simplify(pts: number[], min: number): number[] {
  if (pts.length <= 4) return pts;
  const at = (k: number) => pts[k] ?? 0;
  const out = [at(0), at(1)];
  for (let i = 2; i < pts.length - 2; i += 2) {
    if (Math.hypot(at(i) - out[out.length - 2]!, at(i + 1) - out[out.length - 1]!) >= min) out.push(at(i), at(i + 1));
  }
  out.push(at(pts.length - 2), at(pts.length - 1));
  return out;
}
