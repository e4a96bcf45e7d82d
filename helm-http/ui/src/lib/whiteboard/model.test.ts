// Whiteboard files: read into shapes the editor edits, everything else
// kept exactly as written, and written back as a plain SVG document.
import assert from "node:assert/strict";
import { test } from "node:test";
import { wrapText } from "./geometry";
import { BoardError, EMPTY_BOARD, foreignMarkup, parseBoard, serializeBoard, type Foreign, type Item } from "./model";
import { parseXml } from "./xml";

const wrap = (t: string, w: number, s: number) => wrapText(t, w, s);
const strip = (items: Item[]) => JSON.parse(JSON.stringify(items.map(({ id: _id, ...rest }) => rest)));

test("an empty new whiteboard is a 1600 by 1000 page with nothing on it", () => {
  const board = parseBoard(EMPTY_BOARD);
  assert.deepEqual(board.page, { x: 0, y: 0, w: 1600, h: 1000 });
  assert.equal(board.items.length, 0);
  const out = serializeBoard(board, wrap);
  assert.match(out, /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg" viewBox="0 0 1600 1000" width="1600" height="1000">\n<\/svg>\n$/);
  assert.equal(parseBoard("").items.length, 0, "an empty file is an empty board");
});

test("every kind of shape the editor makes reads back as it was written", () => {
  const board = parseBoard(EMPTY_BOARD);
  board.items.push(
    { id: 1, kind: "rect", x: 10, y: 20, w: 100, h: 50, stroke: "#1d1f23", fill: "none", sw: 4 },
    { id: 2, kind: "ellipse", cx: 300, cy: 200, rx: 40, ry: 20.5, stroke: "#b42318", fill: "none", sw: 2 },
    { id: 3, kind: "pen", pts: [1, 2, 3.5, 4, 10, 12], stroke: "#2456c9", sw: 8 },
    { id: 4, kind: "arrow", x1: 0, y1: 0, x2: 100, y2: 50, stroke: "#2456c9", sw: 4 },
    { id: 5, kind: "text", x: 50, y: 60, text: 'Plan <A> & "B"', color: "#1d1f23", size: 28 },
    { id: 6, kind: "sticky", x: 400, y: 300, w: 200, h: 160, text: "Ship the launch notes before Friday\nthen rest", fill: "#fde68a" },
  );
  const out = serializeBoard(board, wrap);
  assert.match(out, /<defs data-helm="defs"><marker id="helm-arrow-2456c9"/);
  assert.match(out, /marker-end="url\(#helm-arrow-2456c9\)"/);
  assert.match(out, /&lt;A&gt; &amp; &quot;B&quot;|&lt;A&gt; &amp; "B"/);
  assert.match(out, /<tspan x="14" y="\d+" data-wrap="">/, "a long sticky line wraps");
  const again = parseBoard(out);
  assert.deepEqual(strip(again.items), strip(board.items));
  assert.equal(serializeBoard(again, wrap), out, "writing what was read changes nothing");
});

test("what the editor does not understand is kept byte for byte, and scripts are not read as shapes", () => {
  const src = `<?xml version="1.0"?>
<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 800 600" width="800" height="600" data-x='1'>
  <!-- drawn by the agent -->
  <defs><linearGradient id="g"><stop offset="0" stop-color="red"/></linearGradient></defs>
  <polygon points="10,10 50,10 30,40" fill="url(#g)" />
  <circle cx='5' cy='5' r='3'></circle>
  <script>alert(1)</script>
  <rect data-helm="rect" x="1" y="2" width="3" height="4" fill="url(http://evil/x)" stroke="#000"/>
</svg>`;
  const board = parseBoard(src);
  assert.deepEqual(board.page, { x: 0, y: 0, w: 800, h: 600 });
  const kinds = board.items.map((i) => (i.kind === "foreign" ? `${i.el?.name ?? "other"}:${i.visual}` : i.kind));
  assert.deepEqual(kinds, ["other:false", "defs:false", "polygon:true", "circle:true", "script:false", "rect:true"]);
  const out = serializeBoard(board, wrap);
  assert.ok(out.includes(`<polygon points="10,10 50,10 30,40" fill="url(#g)" />`));
  assert.ok(out.includes(`<circle cx='5' cy='5' r='3'></circle>`));
  assert.ok(out.includes(`<!-- drawn by the agent -->`));
  assert.ok(out.startsWith(`<?xml version="1.0"?>\n<svg `), "the XML declaration is kept");
  assert.ok(out.includes(`data-x="1"`));
  assert.ok(out.includes(`fill="url(http://evil/x)"`), "a shape with a colour the editor does not draw stays foreign, untouched");
});

test("a moved foreign element gains a translate in front of its own transform", () => {
  const board = parseBoard(`<svg xmlns="http://www.w3.org/2000/svg"><polygon points="0,0 1,1" transform="rotate(5)"/><g transform="translate(10, 20) scale(2)"><circle r="1"/></g></svg>`);
  const [poly, group] = board.items as Foreign[];
  assert.equal(foreignMarkup({ ...poly!, dx: 5, dy: -3 }), `<polygon points="0,0 1,1" transform="translate(5 -3) rotate(5)"/>`);
  assert.equal(foreignMarkup({ ...group!, dx: 1, dy: 2 }), `<g transform="translate(11 22) scale(2)"><circle r="1"/></g>`);
  assert.equal(foreignMarkup({ ...poly!, dx: 0, dy: 0 }), poly!.raw);
});

test("a file that is not SVG is refused in words", () => {
  assert.throws(() => parseBoard("# Notes\n\nnot a drawing"), (e) => e instanceof BoardError && /not a drawing Helm can open/.test(e.message));
  assert.throws(() => parseBoard(`<html><body></body></html>`), (e) => e instanceof BoardError && /<html>, not <svg>/.test(e.message));
  assert.throws(() => parseBoard(`<svg><rect></svg>`), (e) => e instanceof BoardError && /closes <rect>/.test(e.message));
  assert.throws(() => parseBoard(`{"json": true}`), BoardError);
});

test("the XML reader decodes entities and keeps each node's place", () => {
  const src = `<a x="1 &amp; 2"><b>&lt;hi&#33;&#x21;</b><![CDATA[<raw>]]></a>`;
  const [a] = parseXml(src);
  assert.equal(a?.type, "element");
  if (a?.type !== "element") return;
  assert.deepEqual(a.attrs, [["x", "1 & 2"]]);
  const b = a.children[0]!;
  assert.equal(src.slice(b.start, b.end), "<b>&lt;hi&#33;&#x21;</b>");
  assert.equal(b.type === "element" && b.children[0]?.type === "text" && b.children[0].text, "<hi!!");
  assert.equal(a.children[1]?.type === "text" && a.children[1].text, "<raw>");
});

test("markup drawn in the page loses handlers, scripts, styles, foreignObject and outside references first", async () => {
  const { cleanMarkup } = await import("./clean");
  const out = cleanMarkup(
    `<g onclick="x()" ONLOAD="y()" style="fill:red" fill="url(#g)"><script>alert(1)</script><foreignObject><div>hi</div></foreignObject>` +
      `<image href="http://example.invalid/t.png" xlink:href="javascript:alert(1)"/><use href="#a"/><rect fill="url(http://evil/x)" stroke="red"/><!-- c --><text>a &lt; b</text></g>`,
  );
  assert.equal(out, `<g fill="url(#g)"><image></image><use href="#a"></use><rect stroke="red"></rect><text>a &lt; b</text></g>`);
  assert.equal(cleanMarkup("<g><unclosed></g>"), "");
});
