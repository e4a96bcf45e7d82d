// Restyling items: the ink (stroke, text colour, a sticky's paper), the
// stroke width and the fill of closed shapes. Each returns the item itself
// when nothing changes, so a restyle that changes nothing adds no undo step.
import type { Item } from "./model";

/** Shapes with an inside to fill (a sticky's paper follows the ink instead). */
export function isClosed(item: Item): item is Extract<Item, { kind: "rect" | "ellipse" }> {
  return item.kind === "rect" || item.kind === "ellipse";
}

/** `item` filled with `fill` (a colour, or "none"); anything but a closed shape as it was. */
export function filled(item: Item, fill: string): Item {
  return isClosed(item) && item.fill !== fill ? { ...item, fill } : item;
}

/** `item` drawn in `ink`; a sticky takes `note`, its paper colour. */
export function inked(item: Item, ink: string, note: string): Item {
  switch (item.kind) {
    case "rect":
    case "ellipse":
    case "pen":
    case "arrow":
      return item.stroke === ink ? item : { ...item, stroke: ink };
    case "text":
      return item.color === ink ? item : { ...item, color: ink };
    case "sticky":
      return item.fill === note ? item : { ...item, fill: note };
    default:
      return item;
  }
}
