// Resizing by a handle: boxes stretched, flipped and kept in proportion,
// arrows' ends moved, strokes scaled, notes kept big enough for their text.
import assert from "node:assert/strict";
import { test } from "node:test";
import { foreignMarkup, type Item } from "./model";
import { draggedBox, frame, handleAt, handles, resized } from "./resize";

const rect: Item = { id: 1, kind: "rect", x: 100, y: 100, w: 200, h: 100, stroke: "#000", fill: "none", sw: 4 };

test("a box's corner and side handles sit on its own geometry", () => {
  const at = handles(rect);
  assert.equal(at.length, 8);
  assert.deepEqual(at.find((h) => h.handle === "se"), { handle: "se", x: 300, y: 200 });
  assert.deepEqual(at.find((h) => h.handle === "n"), { handle: "n", x: 200, y: 100 });
  assert.equal(handleAt(rect, { x: 303, y: 198 }, 5), "se");
  assert.equal(handleAt(rect, { x: 200, y: 150 }, 5), undefined, "the middle is no handle");
  const arrow: Item = { id: 2, kind: "arrow", x1: 0, y1: 0, x2: 100, y2: 50, stroke: "#000", sw: 4 };
  assert.deepEqual(handles(arrow).map((h) => h.handle), ["start", "end"]);
  const text: Item = { id: 3, kind: "text", x: 0, y: 30, text: "Hi", color: "#000", size: 20 };
  assert.equal(handles(text).length, 4, "a text scales by its corners only");
  assert.deepEqual(handles({ id: 4, kind: "foreign", raw: "<circle/>", visual: true, dx: 0, dy: 0 }), [], "markup the editor does not own is not resized");
});

test("dragging a corner moves that corner only; past the other side it flips", () => {
  assert.deepEqual(resized(rect, "se", 50, 20), { ...rect, w: 250, h: 120 });
  assert.deepEqual(resized(rect, "nw", 50, 20), { ...rect, x: 150, y: 120, w: 150, h: 80 });
  assert.deepEqual(resized(rect, "e", 30, 99), { ...rect, w: 230 }, "a side moves one way only");
  assert.deepEqual(resized(rect, "e", -250, 0), { ...rect, x: 50, w: 50 }, "flipped, still a positive width");
});

test("Shift keeps a box's proportions", () => {
  assert.deepEqual(draggedBox({ x: 0, y: 0, w: 200, h: 100 }, "se", 200, 10, true), { x: 0, y: 0, w: 400, h: 200 });
  assert.deepEqual(draggedBox({ x: 0, y: 0, w: 200, h: 100 }, "nw", 10, -100, true), { x: -200, y: -100, w: 400, h: 200 });
});

test("an ellipse keeps its box; a stroke's points scale with its box", () => {
  const e: Item = { id: 5, kind: "ellipse", cx: 100, cy: 100, rx: 50, ry: 20, stroke: "#000", fill: "none", sw: 2 };
  assert.deepEqual(resized(e, "se", 100, 40), { ...e, cx: 150, cy: 120, rx: 100, ry: 40 });
  const pen: Item = { id: 6, kind: "pen", pts: [0, 0, 50, 100, 100, 50], stroke: "#000", sw: 2 };
  assert.deepEqual((resized(pen, "se", 100, 100) as { pts: number[] }).pts, [0, 0, 100, 200, 200, 100]);
  assert.deepEqual((resized(pen, "w", 200, 0) as { pts: number[] }).pts, [200, 0, 150, 100, 100, 50], "a flip mirrors the stroke");
  assert.deepEqual(Object.values(frame(resized(pen, "nw", -10, -10))!).map(Math.round), [-10, -10, 110, 110]);
});

test("a sticky stays wide and tall enough for its text", () => {
  const note: Item = { id: 7, kind: "sticky", x: 0, y: 0, w: 200, h: 160, text: "a few words here and there to wrap", fill: "#fde68a" };
  const wide = resized(note, "se", 100, 100) as { w: number; h: number };
  assert.deepEqual([wide.w, wide.h], [300, 260]);
  const small = resized(note, "se", -190, -150) as { w: number; h: number };
  assert.equal(small.w, 80);
  assert.ok(small.h >= 160, "never shorter than its text needs");
  const fromLeft = resized(note, "w", 190, 0) as { x: number; w: number };
  assert.deepEqual([fromLeft.x, fromLeft.w], [120, 80], "its right side stays put");
});

test("a text's corner scales its font, the opposite corner fixed", () => {
  const text: Item = { id: 8, kind: "text", x: 100, y: 100, text: "Plan", color: "#000", size: 20 };
  const b = frame(text)!;
  const big = resized(text, "se", 0, b.h) as Extract<Item, { kind: "text" }>;
  assert.equal(big.size, 40);
  assert.deepEqual([frame(big)!.x, frame(big)!.y], [b.x, b.y]);
  const fromTop = resized(text, "nw", 0, -b.h) as Extract<Item, { kind: "text" }>;
  const f = frame(fromTop)!;
  assert.equal(fromTop.size, 40);
  assert.ok(Math.abs(f.x + f.w - (b.x + b.w)) < 1e-9 && Math.abs(f.y + f.h - (b.y + b.h)) < 1e-9, "bottom right stays");
  assert.equal((resized(text, "se", 0, -1000) as { size: number }).size, 6, "never smaller than 6");
});

test("an arrow's ends move; Shift keeps the moved end at 45°", () => {
  const arrow: Item = { id: 9, kind: "arrow", x1: 0, y1: 0, x2: 100, y2: 0, stroke: "#000", sw: 4 };
  assert.deepEqual(resized(arrow, "end", 10, 30), { ...arrow, x2: 110, y2: 30 });
  assert.deepEqual(resized(arrow, "start", -5, 5), { ...arrow, x1: -5, y1: 5 });
  const snapped = resized(arrow, "end", 0, 8, true) as { x2: number; y2: number };
  assert.ok(Math.abs(snapped.y2) < 1e-9);
});

test("markup the editor does not own scales as a whole from its corners, in proportion", () => {
  const circle: Item = { id: 10, kind: "foreign", raw: '<circle cx="150" cy="150" r="50"/>', el: { name: "circle", attrs: [["cx", "150"], ["cy", "150"], ["r", "50"]], openLength: 34, selfClosing: true }, visual: true, dx: 0, dy: 0 };
  const measured = new Map([[10, { x: 100, y: 100, w: 100, h: 100 }]]);
  assert.deepEqual(handles(circle, measured).map((h) => h.handle), ["nw", "ne", "se", "sw"]);
  assert.deepEqual(handles(circle), [], "not measured yet: no handles");
  const big = resized(circle, "se", 100, 20, false, measured) as Extract<Item, { kind: "foreign" }>;
  assert.equal(big.scale, 2, "the larger pull wins; the shape keeps its proportions");
  assert.deepEqual(frame(big, measured), { x: 100, y: 100, w: 200, h: 200 }, "its top-left corner stays");
  const fromTop = resized(circle, "nw", 50, 50, false, measured) as Extract<Item, { kind: "foreign" }>;
  assert.deepEqual(frame(fromTop, measured), { x: 150, y: 150, w: 50, h: 50 }, "its bottom-right corner stays");
  const again = resized(big, "se", -100, -100, false, measured);
  assert.deepEqual(frame(again, measured), { x: 100, y: 100, w: 100, h: 100 }, "a second resize starts from the first");
  assert.equal(foreignMarkup(big), '<circle cx="150" cy="150" r="50" transform="translate(-100 -100) scale(2)"/>');
  const moved = { ...circle, dx: 10, dy: 5 };
  assert.equal(foreignMarkup(moved), '<circle cx="150" cy="150" r="50" transform="translate(10 5)"/>', "only moved: a translate alone");
});
