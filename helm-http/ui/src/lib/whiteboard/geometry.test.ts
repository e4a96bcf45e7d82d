// The whiteboard's geometry: what a click touches, what a rubber band
// takes, arrowheads, and a sticky's wrapped text.
import assert from "node:assert/strict";
import { test } from "node:test";
import { arrowHead, bounds, hitTest, itemsIn, moved, simplify, snapAngle, stickyHeight, wrapText, type Box } from "./geometry";
import type { Item } from "./model";

const items: Item[] = [
  { id: 1, kind: "rect", x: 0, y: 0, w: 100, h: 100, stroke: "#000", fill: "none", sw: 2 },
  { id: 2, kind: "ellipse", cx: 300, cy: 100, rx: 50, ry: 20, stroke: "#000", fill: "none", sw: 2 },
  { id: 3, kind: "pen", pts: [0, 300, 100, 300, 100, 400], stroke: "#000", sw: 4 },
  { id: 4, kind: "arrow", x1: 200, y1: 300, x2: 400, y2: 300, stroke: "#000", sw: 4 },
  { id: 5, kind: "sticky", x: 50, y: 50, w: 200, h: 160, text: "", fill: "#fde68a" },
  { id: 6, kind: "foreign", raw: "<circle/>", visual: true, dx: 0, dy: 0 },
  { id: 7, kind: "foreign", raw: "<defs/>", visual: false, dx: 0, dy: 0 },
];
const measured = new Map<number, Box>([[6, { x: 500, y: 500, w: 20, h: 20 }]]);

test("a click takes the topmost item under it", () => {
  assert.equal(hitTest(items, { x: 60, y: 60 }, 2)?.id, 5, "the sticky drawn later is on top of the rectangle");
  assert.equal(hitTest(items, { x: 10, y: 10 }, 2)?.id, 1);
  assert.equal(hitTest(items, { x: 340, y: 100 }, 2)?.id, 2);
  assert.equal(hitTest(items, { x: 300, y: 130 }, 2), undefined, "outside the ellipse");
  assert.equal(hitTest(items, { x: 100, y: 350 }, 2)?.id, 3, "on the stroke's second segment");
  assert.equal(hitTest(items, { x: 50, y: 350 }, 2), undefined, "inside the stroke's bend but not on it");
  assert.equal(hitTest(items, { x: 300, y: 303 }, 2)?.id, 4);
  assert.equal(hitTest(items, { x: 510, y: 510 }, 2, measured)?.id, 6, "a foreign element by the box the browser measured");
  assert.equal(hitTest(items, { x: 510, y: 510 }, 2), undefined, "not measured yet: not hit");
});

test("a rubber band takes what it touches, never what draws nothing", () => {
  const taken = itemsIn(items, { x: 250, y: 250, w: 300, h: 300 }, measured).map((i) => i.id);
  assert.deepEqual(taken, [4, 6]);
});

test("moving shifts every kind of item", () => {
  const after = items.map((i) => moved(i, 10, -5));
  assert.deepEqual(bounds(after[0]!), { x: 9, y: -6, w: 102, h: 102 });
  assert.deepEqual((after[2] as { pts: number[] }).pts, [10, 295, 110, 295, 110, 395]);
  assert.equal((after[5] as { dx: number }).dx, 10);
});

test("an arrowhead points along the arrow, its tip past the line's end", () => {
  const [tip, a, b] = arrowHead(0, 0, 100, 0, 5);
  assert.ok(tip!.x > 100 && Math.abs(tip!.y) < 1e-9);
  assert.ok(a!.x < tip!.x && b!.x < tip!.x);
  assert.equal(Math.round(a!.y - b!.y), 20, "as wide as it is long: four stroke widths");
  const box = bounds(items[3]!)!;
  assert.ok(box.x + box.w > 400, "an arrow's box holds its head");
  const snapped = snapAngle({ x: 0, y: 0 }, { x: 100, y: 10 });
  assert.ok(Math.abs(snapped.y) < 1e-9 && Math.abs(snapped.x - Math.hypot(100, 10)) < 1e-9);
});

test("a sticky's text wraps at words, breaks a word too long, and keeps line breaks", () => {
  const lines = wrapText("one two three four five six seven eight", 100, 20);
  assert.ok(lines.length > 1);
  assert.equal(lines[0]!.wrap, false);
  assert.ok(lines.slice(1).every((l) => l.wrap));
  assert.equal(lines.map((l) => l.text).join(" "), "one two three four five six seven eight");
  const long = wrapText("supercalifragilisticexpialidocious", 100, 20);
  assert.ok(long.length > 1 && long.join("") !== "");
  assert.equal(long.map((l) => l.text).join(""), "supercalifragilisticexpialidocious");
  assert.deepEqual(wrapText("a\n\nb", 100, 20), [{ text: "a", wrap: false }, { text: "", wrap: false }, { text: "b", wrap: false }]);
  assert.equal(stickyHeight("short", 200), 160);
  assert.ok(stickyHeight("many words ".repeat(40), 200) > 160, "a long text makes the sticky taller");
});

test("a pen stroke's samples closer than the minimum are dropped, its ends kept", () => {
  assert.deepEqual(simplify([0, 0, 0.5, 0, 1, 0, 5, 0, 5.2, 0, 9, 0], 2), [0, 0, 5, 0, 9, 0]);
});
