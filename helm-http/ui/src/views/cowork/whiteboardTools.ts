// The whiteboard editor's tools, inks, fills and stroke widths, and the shapes of
// its state (the view, text being typed, a gesture under way) that the
// component, its toolbar and its pointer handling share.
import { wrapText, type Point } from "../../lib/whiteboard/geometry";
import type { Item } from "../../lib/whiteboard/model";
import type { Handle } from "../../lib/whiteboard/resize";

export type Tool = "select" | "pen" | "rect" | "ellipse" | "arrow" | "text" | "sticky" | "pan";

export const TOOLS: { tool: Tool; label: string; key: string; path: string }[] = [
  { tool: "select", label: "Select and move", key: "V", path: "M6 3l12 8-5.5 1.5L10 18z" },
  { tool: "pen", label: "Pen", key: "P", path: "M4 20l4-1L19 8l-3-3L5 16zM14 7l3 3" },
  { tool: "rect", label: "Rectangle", key: "R", path: "M4 6h16v12H4z" },
  { tool: "ellipse", label: "Ellipse", key: "O", path: "M12 18c4.4 0 8-2.7 8-6s-3.6-6-8-6-8 2.7-8 6 3.6 6 8 6z" },
  { tool: "arrow", label: "Arrow", key: "A", path: "M5 19L19 5M10 5h9v9" },
  { tool: "text", label: "Text", key: "T", path: "M5 7V5h14v2M12 5v14M9 19h6" },
  { tool: "sticky", label: "Sticky note", key: "N", path: "M5 4h14v10l-6 6H5zM13 20v-6h6" },
  { tool: "pan", label: "Pan", key: "H", path: "M12 3v18M3 12h18M9 6l3-3 3 3M9 18l3 3 3-3M6 9l-3 3 3 3M18 9l3 3-3 3" },
];

/** Inks that read on the white page, and the note colour each gives a sticky. */
export const COLORS: { name: string; ink: string; note: string }[] = [
  { name: "Black", ink: "#1d1f23", note: "#fde68a" },
  { name: "Red", ink: "#c0392b", note: "#fecaca" },
  { name: "Orange", ink: "#c26a00", note: "#fed7aa" },
  { name: "Green", ink: "#1e7a46", note: "#bbf7d0" },
  { name: "Blue", ink: "#2456c9", note: "#bfdbfe" },
  { name: "Purple", ink: "#6b3fa0", note: "#e9d5ff" },
];
/** Fills for closed shapes: none, or a light tint (so the stroke and any text on it still read). */
export const FILLS: { name: string; fill: string }[] = [
  { name: "No fill", fill: "none" },
  { name: "Yellow fill", fill: "#fde68a" },
  { name: "Red fill", fill: "#fecaca" },
  { name: "Orange fill", fill: "#fed7aa" },
  { name: "Green fill", fill: "#bbf7d0" },
  { name: "Blue fill", fill: "#bfdbfe" },
  { name: "Purple fill", fill: "#e9d5ff" },
];
export const WIDTHS = [
  { label: "Thin", sw: 2, text: 20 },
  { label: "Medium", sw: 4, text: 28 },
  { label: "Thick", sw: 8, text: 40 },
];
export const textSize = (sw: number) => WIDTHS.find((w) => w.sw === sw)?.text ?? 28;
export const wrap = (text: string, width: number, size: number) => wrapText(text, width, size);
export const HISTORY = 200;
/** How far (board units) a paste or a duplicate lands from what it copies. */
export const PASTE_OFFSET = 20;

export type View = { x: number; y: number; s: number };
export type Editing = { id?: number; kind: "text" | "sticky"; x: number; y: number; value: string };
export type Gesture =
  | { type: "pan"; sx: number; sy: number; view: View }
  | { type: "pinch"; d: number; mx: number; my: number; view: View; before: Item[] }
  | { type: "move"; start: Point; before: Item[]; ids: Set<number>; started: boolean }
  | { type: "resize"; start: Point; before: Item[]; item: Item; handle: Handle; started: boolean }
  | { type: "band"; start: Point; add: Set<number> }
  | { type: "draw"; start: Point; item: Item }
  | { type: "place"; start: Point };

export function isTyping(target: EventTarget | null): boolean {
  const el = target as HTMLElement | null;
  return !!el && ["INPUT", "TEXTAREA", "SELECT"].includes(el.tagName);
}
