// A whiteboard is a plain standalone SVG file, so any viewer shows it and
// an agent reads and writes it with its file tools. What the editor made is
// marked `data-helm="…"` (rect, ellipse, pen, arrow, text, sticky) and is
// read back into shapes it can edit; everything else at the top level is
// kept exactly as written (moved with a `translate` when someone moves it).
import { XmlError, attr, escapeAttr, escapeText, parseXml, textContent, type XmlAttr, type XmlElement, type XmlNode } from "./xml";

export const SVG_NS = "http://www.w3.org/2000/svg";
export const EMPTY_BOARD = `<svg xmlns="${SVG_NS}" viewBox="0 0 1600 1000" width="1600" height="1000"></svg>`;

interface Common {
  id: number;
  /** Attributes the editor does not set itself, kept as they were. */
  extra?: XmlAttr[];
}
export type Rect = Common & { kind: "rect"; x: number; y: number; w: number; h: number; stroke: string; fill: string; sw: number };
export type Ellipse = Common & { kind: "ellipse"; cx: number; cy: number; rx: number; ry: number; stroke: string; fill: string; sw: number };
export type Pen = Common & { kind: "pen"; pts: number[]; stroke: string; sw: number };
export type Arrow = Common & { kind: "arrow"; x1: number; y1: number; x2: number; y2: number; stroke: string; sw: number };
export type Text = Common & { kind: "text"; x: number; y: number; text: string; color: string; size: number };
export type Sticky = Common & { kind: "sticky"; x: number; y: number; w: number; h: number; text: string; fill: string };
/** Anything else: kept as written; `dx`/`dy` say how far it was moved, `scale` how much it was resized. */
export type Foreign = Common & {
  kind: "foreign";
  raw: string;
  /** The element's name and attributes (undefined for text and comments). */
  el?: { name: string; attrs: XmlAttr[]; openLength: number; selfClosing: boolean };
  /** Whether it draws something that can be selected (not defs, comments, …). */
  visual: boolean;
  dx: number;
  dy: number;
  /** Resized by a handle: drawn `translate(dx dy) scale(scale)` (1 when absent). */
  scale?: number;
};
export type Item = Rect | Ellipse | Pen | Arrow | Text | Sticky | Foreign;
export type Kind = Item["kind"];

export interface Board {
  /** What came before the root (an XML declaration, a doctype, comments), kept. */
  prolog?: string;
  /** The root's attributes, kept (viewBox, width, height, xmlns, …). */
  rootAttrs: XmlAttr[];
  /** The page: the viewBox (or width and height). */
  page: { x: number; y: number; w: number; h: number };
  items: Item[];
}

let nextId = 1;
export function newId(): number {
  return nextId++;
}

/** Elements that draw nothing themselves: kept, never selectable. */
const NOT_VISUAL = new Set(["defs", "style", "script", "title", "desc", "metadata", "linearGradient", "radialGradient", "pattern", "clipPath", "mask", "marker", "symbol", "filter"]);

/** Colours the editor draws with itself (anything else keeps the element foreign). */
const COLOR = /^(#[0-9a-fA-F]{3,8}|[a-zA-Z]{3,20}|(rgb|hsl)a?\([-\d\s.,%]+\))$/;

function num(value: string | undefined): number | undefined {
  if (value === undefined || value.trim() === "") return undefined;
  const n = Number(value.trim().replace(/px$/, ""));
  return Number.isFinite(n) ? n : undefined;
}

function color(value: string | undefined, fallback?: string): string | undefined {
  if (value === undefined) return fallback;
  const v = value.trim();
  return COLOR.test(v) ? v : undefined;
}

/** Thrown for a file that is not a whiteboard: its message says why in words. */
export class BoardError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "BoardError";
  }
}

/** Reads a whiteboard file. Throws `BoardError` when it is not an SVG document. */
export function parseBoard(src: string): Board {
  if (src.trim() === "") return parseBoard(EMPTY_BOARD);
  let nodes: XmlNode[];
  try {
    nodes = parseXml(src);
  } catch (e) {
    if (e instanceof XmlError) throw new BoardError(`This file is not a drawing Helm can open: it is not well-formed SVG (${e.message}).`);
    throw e;
  }
  const roots = nodes.filter((n): n is XmlElement => n.type === "element");
  const stray = nodes.find((n) => n.type === "text" && n.text.trim() !== "");
  if (roots.length !== 1 || stray) throw new BoardError("This file is not a drawing Helm can open: an SVG file holds exactly one <svg> element.");
  const root = roots[0]!;
  if (root.name.replace(/^svg:/, "") !== "svg") {
    throw new BoardError(`This file is not a drawing Helm can open: it holds <${root.name}>, not <svg>.`);
  }
  const rootAttrs = root.attrs.slice();
  const viewBox = attr(root, "viewBox")?.trim().split(/[\s,]+/).map(Number);
  const page =
    viewBox && viewBox.length === 4 && viewBox.every(Number.isFinite) && viewBox[2]! > 0 && viewBox[3]! > 0
      ? { x: viewBox[0]!, y: viewBox[1]!, w: viewBox[2]!, h: viewBox[3]! }
      : { x: 0, y: 0, w: num(attr(root, "width")) || 1600, h: num(attr(root, "height")) || 1000 };
  const items: Item[] = [];
  for (const child of root.children) {
    if (child.type === "text" && child.text.trim() === "") continue;
    if (child.type === "element" && attr(child, "data-helm") === "defs") continue;
    items.push(readItem(child, src));
  }
  const prolog = src.slice(0, root.start).trim() || undefined;
  return { prolog, rootAttrs, page, items };
}

function rest(el: XmlElement, used: string[]): XmlAttr[] | undefined {
  const extra = el.attrs.filter(([n]) => !used.includes(n) && n !== "data-helm" && !/^on/i.test(n));
  return extra.length ? extra : undefined;
}

function readItem(node: XmlNode, src: string): Item {
  if (node.type === "element") {
    const known = readKnown(node);
    if (known) return known;
  }
  const raw = src.slice(node.start, node.end);
  const el = node.type === "element" ? { name: node.name, attrs: node.attrs, openLength: node.openEnd - node.start, selfClosing: node.selfClosing } : undefined;
  return { id: newId(), kind: "foreign", raw, el, visual: !!el && !NOT_VISUAL.has(el.name.replace(/^svg:/, "")), dx: 0, dy: 0 };
}

function readKnown(el: XmlElement): Item | undefined {
  const kind = attr(el, "data-helm");
  if (!kind || attr(el, "transform") !== undefined && kind !== "sticky") return undefined;
  const id = newId();
  const sw = num(attr(el, "stroke-width")) ?? 2;
  if (kind === "rect" && el.name === "rect") {
    const [x, y, w, h] = ["x", "y", "width", "height"].map((n) => num(attr(el, n)));
    const stroke = color(attr(el, "stroke"), "none");
    const fill = color(attr(el, "fill"), "none");
    if (w === undefined || h === undefined || !stroke || !fill) return undefined;
    return { id, kind, x: x ?? 0, y: y ?? 0, w, h, stroke, fill, sw, extra: rest(el, ["x", "y", "width", "height", "stroke", "fill", "stroke-width"]) };
  }
  if (kind === "ellipse" && el.name === "ellipse") {
    const [cx, cy, rx, ry] = ["cx", "cy", "rx", "ry"].map((n) => num(attr(el, n)));
    const stroke = color(attr(el, "stroke"), "none");
    const fill = color(attr(el, "fill"), "none");
    if (rx === undefined || ry === undefined || !stroke || !fill) return undefined;
    return { id, kind, cx: cx ?? 0, cy: cy ?? 0, rx, ry, stroke, fill, sw, extra: rest(el, ["cx", "cy", "rx", "ry", "stroke", "fill", "stroke-width"]) };
  }
  if (kind === "pen" && el.name === "path") {
    const d = attr(el, "d") ?? "";
    const stroke = color(attr(el, "stroke"));
    if (!/^[\sML0-9.,eE+-]*$/.test(d) || !stroke) return undefined;
    const pts = (d.match(/-?[0-9.]+(?:[eE][-+]?\d+)?/g) ?? []).map(Number);
    if (pts.length < 2 || pts.length % 2 || pts.some((n) => !Number.isFinite(n))) return undefined;
    return { id, kind, pts, stroke, sw, extra: rest(el, ["d", "stroke", "stroke-width", "fill", "stroke-linecap", "stroke-linejoin"]) };
  }
  if (kind === "arrow" && el.name === "line") {
    const [x1 = 0, y1 = 0, x2 = 0, y2 = 0] = ["x1", "y1", "x2", "y2"].map((n) => num(attr(el, n)) ?? 0);
    const stroke = color(attr(el, "stroke"));
    if (!stroke) return undefined;
    return { id, kind, x1, y1, x2, y2, stroke, sw, extra: rest(el, ["x1", "y1", "x2", "y2", "stroke", "stroke-width", "stroke-linecap", "marker-end"]) };
  }
  if (kind === "text" && el.name === "text") {
    const size = num(attr(el, "font-size")) ?? 24;
    const fill = color(attr(el, "fill"), "#1d1f23");
    if (!fill || el.children.some((c) => c.type === "element")) return undefined;
    return { id, kind, x: num(attr(el, "x")) ?? 0, y: num(attr(el, "y")) ?? 0, text: textContent(el), color: fill, size, extra: rest(el, ["x", "y", "font-size", "fill", "font-family"]) };
  }
  if (kind === "sticky" && el.name === "g") {
    const at = /^\s*translate\(\s*(-?[0-9.eE+-]+)[\s,]+(-?[0-9.eE+-]+)\s*\)\s*$/.exec(attr(el, "transform") ?? "translate(0 0)");
    const box = el.children.find((c): c is XmlElement => c.type === "element" && c.name === "rect");
    const text = el.children.find((c): c is XmlElement => c.type === "element" && c.name === "text");
    if (!at || !box) return undefined;
    const w = num(attr(box, "width"));
    const h = num(attr(box, "height"));
    const fill = color(attr(box, "fill"));
    if (!w || !h || !fill) return undefined;
    return { id, kind, x: Number(at[1]), y: Number(at[2]), w, h, fill, text: text ? stickyText(text) : "", extra: rest(el, ["transform"]) };
  }
  return undefined;
}

/** A sticky's text: each `tspan` is a line; `data-wrap` lines continue the one before. */
function stickyText(el: XmlElement): string {
  const spans = el.children.filter((c): c is XmlElement => c.type === "element" && c.name === "tspan");
  if (spans.length === 0) return textContent(el);
  let out = "";
  spans.forEach((s, i) => {
    if (i > 0) out += attr(s, "data-wrap") !== undefined ? " " : "\n";
    out += textContent(s);
  });
  return out;
}

/** A number as written in the file: at most one decimal. */
export function n(value: number): string {
  const r = Math.round(value * 10) / 10;
  return Object.is(r, -0) ? "0" : String(r);
}

function attrs(list: [string, string | number | undefined][], extra?: XmlAttr[]): string {
  let out = "";
  for (const [k, v] of list) if (v !== undefined) out += ` ${k}="${escapeAttr(typeof v === "number" ? n(v) : v)}"`;
  for (const [k, v] of extra ?? []) out += ` ${k}="${escapeAttr(v)}"`;
  return out;
}

/** The id of the arrowhead marker for `stroke`. */
export function markerId(stroke: string): string {
  return `helm-arrow-${stroke.replace(/[^a-zA-Z0-9]/g, "").toLowerCase() || "ink"}`;
}

export const FONT = "sans-serif";
export const STICKY = { pad: 14, size: 20, line: 26, minH: 160 };

/** The lines a sticky shows (wrapped to its width); `wrap` marks a line that continues the one before. */
export type Line = { text: string; wrap: boolean };

/** A wrapping function (text, width, font size) → lines; geometry.ts has the editor's. */
export type Wrap = (text: string, width: number, size: number) => Line[];

/** One item as SVG markup. */
export function itemMarkup(item: Item, wrap: Wrap): string {
  switch (item.kind) {
    case "rect":
      return `<rect${attrs([["data-helm", "rect"], ["x", item.x], ["y", item.y], ["width", item.w], ["height", item.h], ["fill", item.fill], ["stroke", item.stroke], ["stroke-width", item.sw]], item.extra)}/>`;
    case "ellipse":
      return `<ellipse${attrs([["data-helm", "ellipse"], ["cx", item.cx], ["cy", item.cy], ["rx", item.rx], ["ry", item.ry], ["fill", item.fill], ["stroke", item.stroke], ["stroke-width", item.sw]], item.extra)}/>`;
    case "pen":
      return `<path${attrs([["data-helm", "pen"], ["d", penPath(item.pts)], ["fill", "none"], ["stroke", item.stroke], ["stroke-width", item.sw], ["stroke-linecap", "round"], ["stroke-linejoin", "round"]], item.extra)}/>`;
    case "arrow":
      return `<line${attrs([["data-helm", "arrow"], ["x1", item.x1], ["y1", item.y1], ["x2", item.x2], ["y2", item.y2], ["stroke", item.stroke], ["stroke-width", item.sw], ["stroke-linecap", "round"], ["marker-end", `url(#${markerId(item.stroke)})`]], item.extra)}/>`;
    case "text":
      return `<text${attrs([["data-helm", "text"], ["x", item.x], ["y", item.y], ["font-family", FONT], ["font-size", item.size], ["fill", item.color]], item.extra)}>${escapeText(item.text)}</text>`;
    case "sticky": {
      const lines = wrap(item.text, item.w - 2 * STICKY.pad, STICKY.size)
        .map((l, i) => `<tspan x="${STICKY.pad}" y="${n(STICKY.pad + STICKY.size + i * STICKY.line)}"${l.wrap ? ' data-wrap=""' : ""}>${escapeText(l.text)}</tspan>`)
        .join("");
      return (
        `<g${attrs([["data-helm", "sticky"], ["transform", `translate(${n(item.x)} ${n(item.y)})`]], item.extra)}>` +
        `<rect width="${n(item.w)}" height="${n(item.h)}" rx="6" fill="${escapeAttr(item.fill)}" stroke="#00000026" stroke-width="1"/>` +
        `<text font-family="${FONT}" font-size="${STICKY.size}" fill="#1d1f23">${lines}</text></g>`
      );
    }
    case "foreign":
      return foreignMarkup(item);
  }
}

/** A scale as written: finer than a coordinate, as it multiplies them. */
function scaleText(value: number): string {
  return String(Math.round(value * 10000) / 10000);
}

/**
 * A foreign item as written, with a `translate` in front of its transform
 * when it was moved (merged into a `translate` already first), and a
 * `translate(…) scale(…)` in front when it was resized.
 */
export function foreignMarkup(item: Foreign): string {
  const scale = item.scale ?? 1;
  if (!item.el || (item.dx === 0 && item.dy === 0 && scale === 1)) return item.raw;
  const { name, attrs: list, openLength, selfClosing } = item.el;
  const old = list.find(([k]) => k === "transform")?.[1] ?? "";
  const lead = /^\s*translate\(\s*(-?[0-9.eE+-]+)(?:[\s,]+(-?[0-9.eE+-]+))?\s*\)\s*/.exec(old);
  const transform = scale !== 1
    ? `translate(${n(item.dx)} ${n(item.dy)}) scale(${scaleText(scale)})${old ? ` ${old}` : ""}`
    : lead
    ? `translate(${n(Number(lead[1]) + item.dx)} ${n(Number(lead[2] ?? 0) + item.dy)})${old.slice(lead[0].length) ? ` ${old.slice(lead[0].length)}` : ""}`
    : `translate(${n(item.dx)} ${n(item.dy)})${old ? ` ${old}` : ""}`;
  const next: XmlAttr[] = list.some(([k]) => k === "transform") ? list.map(([k, v]) => [k, k === "transform" ? transform : v]) : [...list, ["transform", transform]];
  return `<${name}${attrs(next)}${selfClosing ? "/>" : ">"}${item.raw.slice(openLength)}`;
}

export function penPath(pts: number[]): string {
  let d = "";
  for (let i = 0; i + 1 < pts.length; i += 2) d += `${i === 0 ? "M" : " L"}${n(pts[i]!)} ${n(pts[i + 1]!)}`;
  return d;
}

/** The arrowhead markers the board's arrows need, one per colour. */
export function markers(items: Item[]): string[] {
  return [...new Set(items.filter((i): i is Arrow => i.kind === "arrow").map((a) => a.stroke))];
}

export function markerMarkup(stroke: string): string {
  return `<marker id="${markerId(stroke)}" viewBox="0 0 10 10" refX="7" refY="5" markerWidth="4" markerHeight="4" orient="auto-start-reverse"><path d="M0 0L10 5L0 10z" fill="${escapeAttr(stroke)}"/></marker>`;
}

/** The whole file. */
export function serializeBoard(board: Board, wrap: Wrap): string {
  const root = board.rootAttrs.some(([k]) => k === "xmlns") ? board.rootAttrs : [["xmlns", SVG_NS] as XmlAttr, ...board.rootAttrs];
  const lines = board.prolog ? [board.prolog, `<svg${attrs(root)}>`] : [`<svg${attrs(root)}>`];
  const used = markers(board.items);
  if (used.length) lines.push(`<defs data-helm="defs">${used.map(markerMarkup).join("")}</defs>`);
  for (const item of board.items) lines.push(itemMarkup(item, wrap));
  lines.push("</svg>");
  return `${lines.join("\n")}\n`;
}
