// Copies: fresh item ids (from newId, as every item's), moved, exactly what the file would hold, and no
// SVG id used twice.
import assert from "node:assert/strict";
import { test } from "node:test";
import { wrapText } from "./geometry";
import { cloneItems, fromMarkup, idsIn, renameIds, toMarkup } from "./clone";
import { EMPTY_BOARD, newId, parseBoard, serializeBoard, type Item } from "./model";

const wrap = (t: string, w: number, s: number) => wrapText(t, w, s);

const items: Item[] = [
  { id: newId(), kind: "rect", x: 10, y: 20, w: 100, h: 50, stroke: "#1d1f23", fill: "#bfdbfe", sw: 4 },
  { id: newId(), kind: "arrow", x1: 0, y1: 0, x2: 100, y2: 50, stroke: "#2456c9", sw: 4 },
  { id: newId(), kind: "sticky", x: 400, y: 300, w: 200, h: 160, text: "Ship it", fill: "#fde68a" },
];

test("copies get fresh ids and land offset, the originals untouched", () => {
  const copies = cloneItems(items, 20, 20, items, wrap);
  assert.equal(copies.length, 3);
  const ids = new Set([...items, ...copies].map((i) => i.id));
  assert.equal(ids.size, 6, "every id is new");
  assert.deepEqual(copies.map((c) => c.kind), ["rect", "arrow", "sticky"]);
  assert.equal((copies[0] as { x: number }).x, 30);
  assert.equal((copies[0] as { fill: string }).fill, "#bfdbfe", "the fill is copied");
  assert.deepEqual([(copies[1] as { x2: number }).x2, (copies[1] as { y2: number }).y2], [120, 70]);
  assert.equal((copies[2] as { text: string }).text, "Ship it");
  assert.equal((items[0] as { x: number }).x, 10);
});

test("markup the agent wrote is copied as written, moved with a translate, its ids renamed", () => {
  const board = parseBoard(`<svg xmlns="http://www.w3.org/2000/svg"><g id="box" fill="url(#grad)"><use href="#box-part"/><rect id="box-part" width="5" height="5"/></g></svg>`);
  const copies = cloneItems(board.items, 10, 0, board.items, wrap);
  assert.equal(copies.length, 1);
  const out = serializeBoard({ ...board, items: [...board.items, ...copies] }, wrap);
  assert.match(out, /<g id="box-2" fill="url\(#grad\)" transform="translate\(10 0\)"><use href="#box-part-2"\/><rect id="box-part-2"/);
  assert.match(out, /<g id="box" fill="url\(#grad\)"><use href="#box-part"\/>/, "the original keeps its ids");
  assert.deepEqual([...idsIn(out)].sort(), ["box", "box-2", "box-part", "box-part-2"]);
});

test("ids are renamed only when taken, and a second copy takes the next name", () => {
  const taken = new Set(["a", "a-2"]);
  assert.equal(renameIds(`<rect id="a"/><rect id='b'/>`, taken), `<rect id="a-3"/><rect id='b'/>`);
  assert.ok(taken.has("a-3") && taken.has("b"));
});

test("the clipboard's markup pastes again and again, each time new", () => {
  const clip = toMarkup(items, wrap);
  const one = fromMarkup(clip, 20, 20, new Set());
  const two = fromMarkup(clip, 40, 40, new Set());
  assert.equal(one.length, 3);
  assert.notDeepEqual(one.map((i) => i.id), two.map((i) => i.id));
  assert.deepEqual(fromMarkup("<rect", 0, 0, new Set()), [], "markup that does not parse pastes nothing");
  assert.equal(parseBoard(EMPTY_BOARD).items.length, 0);
});
