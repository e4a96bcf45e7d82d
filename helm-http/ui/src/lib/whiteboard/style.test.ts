// Fill and ink: closed shapes take a fill (saved as their fill attribute and
// read back), other items are left alone, and an unchanged item is the same
// object (no undo step).
import assert from "node:assert/strict";
import { test } from "node:test";
import { wrapText } from "./geometry";
import { EMPTY_BOARD, parseBoard, serializeBoard, type Item } from "./model";
import { filled, inked } from "./style";

const wrap = (t: string, w: number, s: number) => wrapText(t, w, s);
const rect: Item = { id: 1, kind: "rect", x: 0, y: 0, w: 10, h: 10, stroke: "#000", fill: "none", sw: 2 };
const ellipse: Item = { id: 2, kind: "ellipse", cx: 0, cy: 0, rx: 5, ry: 5, stroke: "#000", fill: "#fecaca", sw: 2 };
const pen: Item = { id: 3, kind: "pen", pts: [0, 0, 1, 1], stroke: "#000", sw: 2 };

test("a fill goes on closed shapes only", () => {
  assert.equal((filled(rect, "#bfdbfe") as { fill: string }).fill, "#bfdbfe");
  assert.equal((filled(ellipse, "none") as { fill: string }).fill, "none");
  assert.equal(filled(pen, "#bfdbfe"), pen);
  assert.equal(filled(ellipse, "#fecaca"), ellipse, "unchanged: the same item");
});

test("a fill is written to the file and read back, none included", () => {
  const board = parseBoard(EMPTY_BOARD);
  board.items.push(filled(rect, "#bfdbfe"), filled(ellipse, "none"));
  const out = serializeBoard(board, wrap);
  assert.match(out, /<rect data-helm="rect"[^>]* fill="#bfdbfe"/);
  assert.match(out, /<ellipse data-helm="ellipse"[^>]* fill="none"/);
  const again = parseBoard(out).items;
  assert.deepEqual(again.map((i) => (i as { fill: string }).fill), ["#bfdbfe", "none"]);
});

test("ink colours strokes and text, and a sticky's paper", () => {
  assert.equal((inked(rect, "#c0392b", "#fecaca") as { stroke: string }).stroke, "#c0392b");
  const note: Item = { id: 4, kind: "sticky", x: 0, y: 0, w: 200, h: 160, text: "", fill: "#fde68a" };
  assert.equal((inked(note, "#c0392b", "#fecaca") as { fill: string }).fill, "#fecaca");
  assert.equal(inked(pen, "#000", "#fde68a"), pen);
});
