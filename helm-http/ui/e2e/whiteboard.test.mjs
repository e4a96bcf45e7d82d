// Cowork's whiteboard in a real browser: a board the agent wrote (with a
// shape the editor does not know, and a script that must never run) opened,
// drawn on with the mouse and the keyboard (rectangle, pen, arrow, text,
// sticky note), a shape moved, undo and redo, saved with Ctrl-S and read
// back through the files API; text edited by double-click; a save over the
// agent's newer version asked twice; a finger drawing and two pinching on a
// phone; a shape resized by its handle, filled, copied, pasted, duplicated
// and nudged, then saved; the toolbar at phone width (no sideways scroll,
// More unfolding the rest); a file that is not SVG said in words; an
// archived channel's board read-only. Until the Cowork view lands, the
// board is mounted at /c/<channel>/cowork?path=….
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { DESKTOP, PHONE, axeViolations, call, launchBrowser, openPage, quickStart, screenshot, startStack, waitFor } from "./harness.mjs";

let stack;
let browser;
let token;
let page;
let context;

const PATH = "/workspace/whiteboards/plan.svg";
const POLYGON = `<polygon points="1200,150 1350,150 1275,280" fill="#7c3aed" stroke="#1d1f23" stroke-width="3"/>`;
const AGENT_BOARD = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 1600 1000" width="1600" height="1000" onload="window.__pwned = 'onload'">
  <title>Launch plan</title>
  <script>window.__pwned = 'script'</script>
  ${POLYGON}
  <circle cx="1400" cy="800" r="60" fill="#bfdbfe" onclick="window.__pwned = 'click'"/>
  <foreignObject x="0" y="0" width="200" height="50"><div xmlns="http://www.w3.org/1999/xhtml">html inside</div></foreignObject>
  <image href="http://example.invalid/tracker.png" x="0" y="0" width="10" height="10"/>
</svg>
`;

before(async () => {
  stack = await startStack();
  browser = await launchBrowser();
  const started = await quickStart(stack, browser);
  token = started.token;
  await call(stack, "POST", "/api/channels", { token, body: { name: "studio", purpose: "Sketches and plans." } });
  await call(stack, "PUT", "/api/channels/studio/files", { token, body: { path: PATH, content: AGENT_BOARD } });
  context = started.context;
  page = await openPage(context);
});

after(async () => {
  await browser?.close();
  await stack?.stop();
});

const canvas = () => page.getByRole("application", { name: /^Whiteboard plan\.svg/ });

/** The screen point of board point (x, y), read from the canvas's own transform. */
async function at(x, y) {
  return page.locator(".wb-canvas").evaluate((svg, [x, y]) => {
    const p = new DOMPoint(x, y).matrixTransform(svg.getScreenCTM());
    return { x: p.x, y: p.y };
  }, [x, y]);
}

async function drag(from, to, steps = 8) {
  const a = await at(...from);
  const b = await at(...to);
  await page.mouse.move(a.x, a.y);
  await page.mouse.down();
  await page.mouse.move(b.x, b.y, { steps });
  await page.mouse.up();
}

async function clickAt(x, y) {
  const p = await at(x, y);
  await page.mouse.click(p.x, p.y);
}

async function readBoard() {
  return (await call(stack, "GET", `/api/channels/studio/files/read?path=${encodeURIComponent(PATH)}`, { token })).json.content;
}

test("a board the agent wrote opens with its own shapes shown and its script stripped", async () => {
  await page.goto(`${stack.url}/c/studio/cowork?path=${encodeURIComponent(PATH)}`);
  await canvas().waitFor();
  const board = page.locator(".wb-canvas");
  await board.locator("polygon").waitFor();
  assert.equal(await board.locator("circle").count(), 1);
  assert.equal(await board.locator("script").count(), 0, "no script is drawn");
  assert.equal(await board.locator("foreignObject").count(), 0, "no foreignObject is drawn");
  assert.equal(await board.locator("[onload], [onclick]").count(), 0, "no event handler is drawn");
  assert.equal(await board.locator("image").evaluateAll((els) => els.filter((e) => e.getAttribute("href")).length), 0, "no outside reference");
  await board.locator("circle").click();
  assert.equal(await page.evaluate(() => window.__pwned), undefined, "nothing the file held ran");
  await page.getByRole("status").filter({ hasText: "Saved" }).waitFor();
  assert.equal(await page.getByRole("button", { name: "Save" }).isDisabled(), true, "nothing to save yet");
});

test("draw a rectangle, a pen stroke, an arrow, a text and a sticky; move, undo, redo; save with Ctrl-S", async () => {
  const board = page.locator(".wb-canvas");
  await page.getByRole("button", { name: "Rectangle" }).click();
  assert.equal(await page.getByRole("button", { name: "Rectangle" }).getAttribute("aria-pressed"), "true");
  await drag([100, 100], [400, 300]);
  await board.locator('rect[data-wb]').first().waitFor();

  await canvas().focus();
  await page.keyboard.press("p");
  const a = await at(150, 500);
  await page.mouse.move(a.x, a.y);
  await page.mouse.down();
  for (let i = 1; i <= 12; i++) {
    const p = await at(150 + i * 25, 500 + Math.sin(i / 2) * 60);
    await page.mouse.move(p.x, p.y);
  }
  await page.mouse.up();
  await board.locator("path[data-wb]").waitFor();

  await page.keyboard.press("a");
  await drag([500, 200], [800, 350]);
  await board.locator("line[data-wb]").waitFor();
  assert.match(await board.locator("line[data-wb]").getAttribute("marker-end"), /^url\(#helm-arrow-/);

  await page.getByRole("button", { name: "Blue", exact: true }).click();
  await page.keyboard.press("t");
  await clickAt(500, 600);
  const text = page.getByLabel(/^Text \(Enter to finish/);
  await text.waitFor();
  await text.pressSequentially("Launch on Friday");
  await text.press("Enter");
  await board.locator("text[data-wb]", { hasText: "Launch on Friday" }).waitFor();

  await page.keyboard.press("n");
  await clickAt(1000, 600);
  const note = page.getByLabel(/^Sticky note text/);
  await note.waitFor();
  await note.pressSequentially("Ask the agent to draft the release notes for the launch");
  await note.press("Enter");
  const sticky = board.locator("g[data-wb]", { hasText: "Ask the agent" });
  await sticky.waitFor();
  assert.ok((await sticky.locator("tspan").count()) > 1, "the sticky's text wraps");
  await page.getByRole("status").filter({ hasText: "Unsaved changes" }).waitFor();

  // Move the rectangle by dragging it with the select tool.
  await page.keyboard.press("v");
  const rect = board.locator("rect[data-wb]").first();
  const x0 = Number(await rect.getAttribute("x"));
  await drag([250, 200], [350, 260]);
  await waitFor("the rectangle to move", async () => Math.round(Number(await rect.getAttribute("x"))) === Math.round(x0 + 100));
  await page.keyboard.press("Control+z");
  await waitFor("undo to put it back", async () => Math.round(Number(await rect.getAttribute("x"))) === Math.round(x0));
  await page.keyboard.press("Control+Shift+z");
  await waitFor("redo to move it again", async () => Math.round(Number(await rect.getAttribute("x"))) === Math.round(x0 + 100));

  // The agent's polygon: selected and nudged as a whole with the keyboard.
  await clickAt(1275, 200);
  await waitFor("the polygon selected", async () => /1 selected/.test(await canvas().getAttribute("aria-label")));
  await page.keyboard.press("Shift+ArrowRight");

  // A rubber band over the left half takes the rectangle, the stroke and the arrow.
  await drag([40, 40], [820, 470]);
  await waitFor("a rubber band selection", async () => /3 selected/.test(await canvas().getAttribute("aria-label")));
  await page.keyboard.press("Escape");

  await screenshot(page, "whiteboard-desktop");
  assert.deepEqual(await axeViolations(page), [], "axe-core on the whiteboard");

  await page.keyboard.press("Control+s");
  await page.getByRole("status").filter({ hasText: /^Saved$/ }).waitFor();
  const saved = await readBoard();
  assert.match(saved, /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg" viewBox="0 0 1600 1000" width="1600" height="1000"/);
  for (const kind of ["rect", "pen", "arrow", "text", "sticky"]) assert.match(saved, new RegExp(`data-helm="${kind}"`), `the ${kind} is in the file`);
  assert.match(saved, /<text data-helm="text"[^>]*fill="#2456c9"[^>]*>Launch on Friday<\/text>/);
  assert.match(saved, /<rect data-helm="rect" x="\d+(\.\d)?" y="\d+(\.\d)?" width="\d+/);
  assert.match(saved, /<marker id="helm-arrow-/);
  assert.match(saved, /<g data-helm="sticky" transform="translate\([-0-9. ]+\)"><rect width="200" height="\d+" rx="6" fill="#bfdbfe"/);
  assert.match(saved, /<tspan x="14" y="34">Ask the agent to<\/tspan>/);
  assert.ok(saved.includes(POLYGON.replace("/>", ` transform="translate(10 0)"/>`)), `the polygon is kept, moved by 10:\n${saved}`);
  assert.ok(saved.includes(`<circle cx="1400" cy="800" r="60"`), "the circle is kept");
  assert.deepEqual(page.consoleErrors(), []);
});

test("the saved board reads back; a text is edited; a save over the agent's change asks first; phone width", async () => {
  await page.reload();
  await canvas().waitFor();
  const board = page.locator(".wb-canvas");
  await board.locator("text[data-wb]", { hasText: "Launch on Friday" }).waitFor();
  assert.equal(await board.locator("[data-wb]").count() >= 7, true);
  await page.getByRole("status").filter({ hasText: /^Saved$/ }).waitFor();
  // Double-click the text to edit it.
  const t = board.locator("text[data-wb]", { hasText: "Launch on Friday" });
  const box = await t.boundingBox();
  await page.mouse.dblclick(box.x + box.width / 2, box.y + box.height / 2);
  const input = page.getByLabel(/^Text \(Enter to finish/);
  await input.fill("Launch on Monday");
  await input.press("Enter");
  await board.locator("text[data-wb]", { hasText: "Launch on Monday" }).waitFor();
  await page.getByRole("button", { name: "Save" }).click();
  await page.getByRole("status").filter({ hasText: /^Saved$/ }).waitFor();
  assert.match(await readBoard(), />Launch on Monday<\/text>/);

  // The agent changes the file meanwhile: the first Save says so, the second replaces it.
  await clickAt(1000, 620);
  await waitFor("the sticky selected", async () => /1 selected/.test(await canvas().getAttribute("aria-label")));
  await page.keyboard.press("ArrowDown");
  await page.getByRole("status").filter({ hasText: "Unsaved changes" }).waitFor();
  const theirs = (await readBoard()).replace("</svg>", `<circle data-by="agent" cx="100" cy="900" r="20"/>\n</svg>`);
  await call(stack, "PUT", "/api/channels/studio/files", { token, body: { path: PATH, content: theirs } });
  // The server refuses the save over the version the board was read at.
  page.allowErrors(/status of 409 \(Conflict\) \(.*\/api\/channels\/studio\/files\)/);
  await page.keyboard.press("Control+s");
  await page.getByRole("alert").filter({ hasText: "was changed by someone else" }).waitFor();
  assert.match(await readBoard(), /data-by="agent"/, "their version is still there");
  await page.keyboard.press("Control+s");
  await page.getByRole("status").filter({ hasText: /^Saved$/ }).waitFor();
  assert.doesNotMatch(await readBoard(), /data-by="agent"/);

  await page.setViewportSize(PHONE);
  // Fitted again to the narrower stage (nobody panned or zoomed since the
  // last fit); the sidebar's slide into a drawer has ended.
  await page.waitForTimeout(400);
  await screenshot(page, "whiteboard-phone");
  assert.deepEqual(await axeViolations(page), [], "axe-core on the whiteboard at phone width");
  await page.setViewportSize(DESKTOP);
  assert.deepEqual(page.consoleErrors(), []);
});

test("on a phone, a finger draws, two fingers pinch to zoom, and a finger drags a handle", async () => {
  const phone = await browser.newContext({ viewport: PHONE, hasTouch: true, isMobile: true });
  await phone.addCookies(await context.cookies());
  const touch = await openPage(phone, `${stack.url}/c/studio/cowork?path=${encodeURIComponent(PATH)}`);
  try {
    const svg = touch.locator(".wb-canvas");
    await svg.locator("text[data-wb]").first().waitFor();
    const strokes = await svg.locator("path[data-wb]").count();
    await touch.getByRole("button", { name: "Pen", exact: true }).tap();
    const cdp = await phone.newCDPSession(touch);
    const box = await svg.boundingBox();
    const cx = box.x + box.width / 2;
    const cy = box.y + box.height / 2;
    const send = (type, touchPoints) => cdp.send("Input.dispatchTouchEvent", { type, touchPoints });
    await send("touchStart", [{ x: cx - 60, y: cy + 150 }]);
    for (let i = 1; i <= 10; i++) await send("touchMove", [{ x: cx - 60 + i * 12, y: cy + 150 + (i % 2) * 10 }]);
    await send("touchEnd", []);
    await waitFor("a stroke drawn with a finger", async () => (await svg.locator("path[data-wb]").count()) === strokes + 1);
    await touch.getByRole("status").filter({ hasText: "Unsaved changes" }).waitFor();

    const zoom = async () => Number((await touch.locator(".wb-zoom").innerText()).replace("%", ""));
    const before = await zoom();
    await send("touchStart", [{ x: cx - 20, y: cy }, { x: cx + 20, y: cy }]);
    for (let i = 1; i <= 8; i++) await send("touchMove", [{ x: cx - 20 - i * 10, y: cy }, { x: cx + 20 + i * 10, y: cy }]);
    await send("touchEnd", []);
    await waitFor("a pinch to zoom in", async () => (await zoom()) > before * 2);
    assert.equal(await svg.locator("path[data-wb]").count(), strokes + 1, "a pinch draws nothing");

    // A finger takes a rectangle's corner handle and drags it (the board fitted again first, from behind More).
    await touch.getByRole("button", { name: "More tools" }).tap();
    await touch.getByRole("button", { name: /^Fit/ }).tap();
    await touch.getByRole("button", { name: "More tools" }).tap();
    await touch.getByRole("button", { name: "Select and move" }).tap();
    const rect = svg.locator("rect[data-wb]").first();
    const width = Number(await rect.getAttribute("width"));
    const screen = (x, y) => svg.evaluate((el, [x, y]) => {
      const p = new DOMPoint(x, y).matrixTransform(el.getScreenCTM());
      return { x: p.x, y: p.y };
    }, [x, y]);
    const [rx, ry, rh] = ["x", "y", "height"].map(async (k) => Number(await rect.getAttribute(k)));
    const inside = await screen((await rx) + width / 2, (await ry) + 4);
    await touch.touchscreen.tap(inside.x, inside.y);
    await waitFor("the rectangle's handles", async () => (await svg.locator(".wb-handle").count()) === 8);
    const corner = await screen((await rx) + width, (await ry) + (await rh));
    // A little off the corner: a finger's reach is wider than a mouse's.
    await send("touchStart", [{ x: corner.x + 6, y: corner.y + 6 }]);
    for (let i = 1; i <= 6; i++) await send("touchMove", [{ x: corner.x + 6 + i * 5, y: corner.y + 6 }]);
    await send("touchEnd", []);
    await waitFor("the rectangle widened by a finger", async () => Number(await rect.getAttribute("width")) > width + 10);
    assert.deepEqual(touch.consoleErrors(), []);
  } finally {
    await phone.close();
  }
});

/** Whether the page or the whiteboard's toolbar is wider than the window. */
async function overflow(p) {
  return p.evaluate(() => {
    const bar = document.querySelector(".wb-bar");
    const wider = [...document.querySelectorAll(".wb-bar *")].filter((el) => el.getBoundingClientRect().right > window.innerWidth + 0.5 && el.getClientRects().length);
    return {
      page: document.documentElement.scrollWidth > window.innerWidth,
      bar: !!bar && bar.scrollWidth > bar.clientWidth,
      outside: wider.map((el) => el.getAttribute("aria-label") ?? el.className),
    };
  });
}

test("a rectangle resized by its handle, filled, copied, pasted, duplicated and nudged; saved", async () => {
  await page.goto(`${stack.url}/c/studio/cowork?path=${encodeURIComponent(PATH)}`);
  await canvas().waitFor();
  const board = page.locator(".wb-canvas");
  const rects = board.locator("rect[data-wb]");
  await rects.first().waitFor();
  assert.equal(await rects.count(), 1);
  const geometry = async (r) => Object.fromEntries(await Promise.all(["x", "y", "width", "height"].map(async (k) => [k, Number(await r.getAttribute(k))])));
  const g0 = await geometry(rects.first());
  await page.keyboard.press("v");
  await clickAt(g0.x + g0.width / 2, g0.y + 6);
  await waitFor("the rectangle selected", async () => /1 selected/.test(await canvas().getAttribute("aria-label")));
  assert.equal(await board.locator(".wb-handle").count(), 8, "a rectangle has eight handles");

  // Its bottom-right handle dragged 100 right, 50 down; the top-left corner stays.
  await drag([g0.x + g0.width, g0.y + g0.height], [g0.x + g0.width + 100, g0.y + g0.height + 50]);
  const near = (a, b) => Math.abs(a - b) <= 3;
  await waitFor("the rectangle resized", async () => {
    const g = await geometry(rects.first());
    return near(g.width, g0.width + 100) && near(g.height, g0.height + 50) && g.x === g0.x && g.y === g0.y;
  });
  const g1 = await geometry(rects.first());
  await page.keyboard.press("Control+z");
  await waitFor("undo to take the resize back", async () => (await geometry(rects.first())).width === g0.width);
  await page.keyboard.press("Control+Shift+z");
  await waitFor("redo to resize it again", async () => (await geometry(rects.first())).width === g1.width);

  // The arrow's end dragged by its handle.
  const line = board.locator("line[data-wb]");
  const [x2, y2] = [Number(await line.getAttribute("x2")), Number(await line.getAttribute("y2"))];
  await clickAt((Number(await line.getAttribute("x1")) + x2) / 2, (Number(await line.getAttribute("y1")) + y2) / 2);
  await waitFor("the arrow selected", async () => (await board.locator(".wb-handle").count()) === 2);
  await drag([x2, y2], [x2 + 60, y2 + 80]);
  await waitFor("the arrow's end moved", async () => near(Number(await line.getAttribute("x2")), x2 + 60) && near(Number(await line.getAttribute("y2")), y2 + 80));

  // A fill from the toolbar.
  await clickAt(g0.x + g0.width / 2, g0.y + 6);
  await waitFor("the rectangle selected again", async () => (await board.locator(".wb-handle").count()) === 8);
  await page.getByRole("button", { name: "Blue fill" }).click();
  await waitFor("the rectangle filled", async () => (await rects.first().getAttribute("fill")) === "#bfdbfe");
  assert.equal(await page.getByRole("button", { name: "Blue fill" }).getAttribute("aria-pressed"), "true");

  // Copy and paste: a copy 20 off, selected; Ctrl-D duplicates that one 20 further.
  await canvas().focus();
  await page.keyboard.press("Control+c");
  await page.keyboard.press("Control+v");
  await waitFor("a pasted rectangle", async () => (await rects.count()) === 2);
  const pasted = await geometry(rects.nth(1));
  // (Copies go through the file's format, one decimal.)
  const tenth = (v) => Math.round(v * 10) / 10;
  assert.deepEqual([pasted.x, pasted.y, pasted.width], [g1.x + 20, g1.y + 20, g1.width].map(tenth));
  assert.equal(await rects.nth(1).getAttribute("fill"), "#bfdbfe", "the copy keeps the fill");
  assert.match(await canvas().getAttribute("aria-label"), /1 selected/, "the copy is selected");
  await page.keyboard.press("Control+d");
  await waitFor("a duplicate", async () => (await rects.count()) === 3);
  assert.deepEqual([Number(await rects.nth(2).getAttribute("x")), Number(await rects.nth(2).getAttribute("y"))], [g1.x + 40, g1.y + 40].map(tenth));
  const ids = await board.locator("[data-wb]").evaluateAll((els) => els.map((e) => e.getAttribute("data-wb")));
  assert.equal(new Set(ids).size, ids.length, "every item has its own id");

  // Arrow keys nudge the duplicate: 1 step, 10 with Shift.
  await page.keyboard.press("ArrowRight");
  await page.keyboard.press("Shift+ArrowDown");
  await waitFor("the duplicate nudged", async () => Number(await rects.nth(2).getAttribute("x")) === tenth(g1.x + 41) && Number(await rects.nth(2).getAttribute("y")) === tenth(g1.y + 50));

  // The agent's polygon copied with the toolbar's buttons.
  await clickAt(1275, 200);
  await waitFor("the polygon selected", async () => /1 selected/.test(await canvas().getAttribute("aria-label")));
  await page.getByRole("button", { name: "Copy", exact: true }).click();
  await page.getByRole("button", { name: "Paste", exact: true }).click();
  await waitFor("a pasted polygon", async () => (await board.locator("polygon").count()) === 2);

  // The agent's circle (r 60 at 1400, 800) scaled by its corner, in proportion.
  // (Widths as a share of the page's, so a different zoom after the reload does not matter.)
  const share = async () => (await board.locator("circle").boundingBox()).width / (await board.locator(".wb-page").boundingBox()).width;
  const circleWidth = await share();
  await clickAt(1400, 800);
  await waitFor("the circle's four corner handles", async () => (await board.locator(".wb-handle").count()) === 4);
  await drag([1460, 860], [1520, 900]);
  await waitFor("the circle scaled", async () => Math.abs((await share()) / circleWidth - 1.5) < 0.05);

  await clickAt(g0.x + g0.width / 2, g0.y + 6);
  await waitFor("the rectangle's handles", async () => (await board.locator(".wb-handle").count()) === 8);
  await screenshot(page, "whiteboard-handles-desktop");
  assert.deepEqual(await axeViolations(page), [], "axe-core with the handles shown");

  await page.keyboard.press("Control+s");
  await page.getByRole("status").filter({ hasText: /^Saved$/ }).waitFor();
  const saved = await readBoard();
  const written = [...saved.matchAll(/<rect data-helm="rect" x="([-\d.]+)" y="([-\d.]+)" width="([-\d.]+)" height="([-\d.]+)" fill="([^"]+)"/g)].map((m) => [...m.slice(1, 5).map(Number), m[5]]);
  assert.equal(written.length, 3, saved);
  assert.deepEqual(written[0], [...[g1.x, g1.y, g1.width, g1.height].map(tenth), "#bfdbfe"], "the resized, filled rectangle");
  assert.deepEqual(written[1].slice(0, 3), [g1.x + 20, g1.y + 20, g1.width].map(tenth));
  assert.deepEqual(written[2].slice(0, 2), [g1.x + 41, g1.y + 50].map(tenth));
  const arrowEnd = /<line data-helm="arrow"[^>]* x2="([-\d.]+)" y2="([-\d.]+)"/.exec(saved);
  assert.ok(arrowEnd && near(Number(arrowEnd[1]), x2 + 60) && near(Number(arrowEnd[2]), y2 + 80), "the arrow's new end is saved");
  assert.equal(saved.split("<polygon").length - 1, 2, "the agent's polygon and its copy");
  assert.ok(saved.includes(POLYGON.replace("/>", ` transform="translate(30 20)"/>`)), `the copy sits 20 off the original (moved 10 before):\n${saved}`);

  const scaled = /<circle cx="1400" cy="800" r="60"[^>]* transform="translate\(([-\d.]+) ([-\d.]+)\) scale\(([\d.]+)\)"/.exec(saved);
  assert.ok(scaled, `the circle is written scaled:\n${saved}`);
  const [tx, ty, k] = scaled.slice(1).map(Number);
  assert.ok(Math.abs(k - 1.5) < 0.03, `scaled by about 1.5 (${k})`);
  assert.ok(near(tx + 1340 * k, 1340) && near(ty + 740 * k, 740), "its top-left corner stays");

  // Read back: the fill and the new size are the file's.
  await page.reload();
  await canvas().waitFor();
  await waitFor("three rectangles read back", async () => (await rects.count()) === 3);
  assert.equal(await rects.first().getAttribute("fill"), "#bfdbfe");
  assert.equal(Number(await rects.first().getAttribute("width")), tenth(g1.width));
  assert.ok(Math.abs((await share()) / circleWidth - k) < 0.01, "the circle read back at its new size");
  assert.deepEqual(page.consoleErrors(), []);
});

test("at phone width the toolbar fits: no sideways scroll; More unfolds fill, clipboard and zoom", async () => {
  await page.setViewportSize(PHONE);
  await page.waitForTimeout(400);
  assert.deepEqual(await overflow(page), { page: false, bar: false, outside: [] });
  assert.equal(await page.getByRole("button", { name: "Blue fill" }).isVisible(), false, "fill waits behind More");
  for (const name of ["Save", "Undo", "Rectangle", "Pan", "Purple"]) assert.ok(await page.getByRole("button", { name, exact: true }).isVisible(), `${name} is in reach`);
  await screenshot(page, "whiteboard-toolbar-phone");
  const more = page.getByRole("button", { name: "More tools" });
  await more.click();
  assert.equal(await more.getAttribute("aria-expanded"), "true");
  await page.getByRole("button", { name: "Blue fill" }).waitFor();
  assert.ok(await page.getByRole("button", { name: "Zoom in" }).isVisible());
  assert.deepEqual(await overflow(page), { page: false, bar: false, outside: [] });
  await screenshot(page, "whiteboard-toolbar-phone-more");
  assert.deepEqual(await axeViolations(page), [], "axe-core on the phone toolbar, unfolded");
  await more.click();
  await page.setViewportSize(DESKTOP);
  assert.equal(await page.getByRole("button", { name: "More tools" }).isVisible(), false, "no More on a wide screen");
  assert.deepEqual(page.consoleErrors(), []);
});

test("a file that is not SVG is said in words", async () => {
  await call(stack, "PUT", "/api/channels/studio/files", { token, body: { path: "/workspace/whiteboards/notes.svg", content: "# Not a drawing\n" } });
  await page.goto(`${stack.url}/c/studio/cowork?path=${encodeURIComponent("/workspace/whiteboards/notes.svg")}`);
  await page.getByRole("alert").filter({ hasText: "not a drawing Helm can open" }).waitFor();
  assert.deepEqual(page.consoleErrors(), []);
});

test("an archived channel's board is read-only, with the reason", async () => {
  await call(stack, "POST", "/api/channels/studio/archive", { token });
  await page.goto(`${stack.url}/c/studio/cowork?path=${encodeURIComponent(PATH)}`);
  await canvas().waitFor();
  await page.getByRole("note").filter({ hasText: "is archived" }).waitFor();
  assert.equal(await page.getByRole("button", { name: "Save" }).count(), 0);
  assert.equal(await page.getByRole("button", { name: "Rectangle" }).isDisabled(), true);
  await page.locator(".wb-canvas polygon").first().waitFor();
  const count = await page.locator(".wb-canvas [data-wb]").count();
  await clickAt(1275, 200);
  await waitFor("the polygon selected", async () => /1 selected/.test(await canvas().getAttribute("aria-label")));
  assert.equal(await page.locator(".wb-canvas .wb-handle").count(), 0, "no resize handles");
  await page.keyboard.press("Delete");
  await page.keyboard.press("Control+c");
  await page.keyboard.press("Control+v");
  await page.keyboard.press("Control+d");
  await page.keyboard.press("ArrowRight");
  await page.keyboard.press("Control+s");
  assert.equal(await page.locator(".wb-canvas polygon").count(), 2);
  assert.equal(await page.locator(".wb-canvas [data-wb]").count(), count, "nothing deleted, pasted or duplicated");
  assert.equal(await page.locator(".wb-canvas g[data-wb]:has(polygon)").first().getAttribute("transform"), null, "nor nudged");
  await screenshot(page, "whiteboard-archived-desktop");
  assert.deepEqual(page.consoleErrors(), []);
});
