// Cowork's whiteboard in a real browser: a board the agent wrote (with a
// shape the editor does not know, and a script that must never run) opened,
// drawn on with the mouse and the keyboard (rectangle, pen, arrow, text,
// sticky note), a shape moved, undo and redo, saved with Ctrl-S and read
// back through the files API; text edited by double-click; a save over the
// agent's newer version asked twice; a finger drawing and two pinching on a
// phone; a file that is not SVG said in words; an archived channel's board
// read-only. Until the Cowork view lands, the
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

  await page.getByRole("button", { name: "Blue" }).click();
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
  await new Promise((r) => setTimeout(r, 1100));
  await call(stack, "PUT", "/api/channels/studio/files", { token, body: { path: PATH, content: theirs } });
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

test("on a phone, a finger draws and two fingers pinch to zoom", async () => {
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
    assert.deepEqual(touch.consoleErrors(), []);
  } finally {
    await phone.close();
  }
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
  await canvas().focus();
  await page.keyboard.press("Delete");
  await page.keyboard.press("Control+s");
  assert.equal(await page.locator(".wb-canvas polygon").count(), 1);
  await screenshot(page, "whiteboard-archived-desktop");
  assert.deepEqual(page.consoleErrors(), []);
});
