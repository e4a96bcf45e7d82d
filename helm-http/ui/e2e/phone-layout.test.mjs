// A phone (390×844) in a real browser: the open thread's header keeps its
// title readable, its meta as a line under it and every button on the
// screen, idle and while a reply streams; the People page shows each
// person as a card whose role choice and Deactivate are whole.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { PASSWORD, PHONE, axeViolations, call, launchBrowser, openPage, quickStart, screenshot, startStack, waitFor } from "./harness.mjs";

let stack;
let browser;
let token;
let page;

before(async () => {
  stack = await startStack();
  browser = await launchBrowser();
  const started = await quickStart(stack, browser, PHONE);
  token = started.token;
  await call(stack, "POST", "/api/channels", { token, body: { name: "launch", purpose: "This channel owns planning and coordinating the product launch." } });
  page = await openPage(started.context, `${stack.url}/c/launch`);
});

after(async () => {
  if (page) assert.deepEqual(page.consoleErrors(), [], "no console errors");
  await browser?.close();
  await stack?.stop();
});

/** The thread header's boxes, rounded, and whether anything in it leaves the screen. */
function measureHeader() {
  return page.evaluate(() => {
    const head = document.querySelector("aside.thread-panel header.thread-header");
    const box = (el) => {
      const r = el.getBoundingClientRect();
      return { left: Math.round(r.left), right: Math.round(r.right), width: Math.round(r.width), height: Math.round(r.height) };
    };
    return {
      head: box(head),
      title: box(head.querySelector(".thread-title h2")),
      meta: box(head.querySelector(".thread-meta")),
      metaLines: head.querySelector(".thread-meta").getClientRects().length,
      buttons: [...head.querySelectorAll("button")].map((b) => ({ name: (b.getAttribute("aria-label") || b.textContent).trim(), ...box(b) })),
      width: innerWidth,
    };
  });
}

function assertHeaderFits(m, when) {
  assert.ok(m.title.width >= 300, `${when}: the title gets the line (${m.title.width} px)`);
  assert.ok(m.meta.height <= 40, `${when}: the meta wraps as a line or two, not a word per line (${m.meta.height} px)`);
  assert.ok(m.head.height < 120, `${when}: the header stays short (${m.head.height} px)`);
  for (const b of m.buttons) assert.ok(b.left >= 0 && b.right <= m.width, `${when}: ${b.name} is on the screen (${b.left}..${b.right})`);
}

test("a phone: the open thread's header, idle and while a reply streams", async () => {
  const words = Array.from({ length: 24 }, (_, i) => `word${i} `);
  await stack.mock.push({ chunks: words, chunk_delay_ms: 500 });
  const posted = await call(stack, "POST", "/api/channels/launch/messages", {
    token,
    body: { text: "@launch-agent please draft the launch plan with owners, dates and the press kit" },
  });
  await page.goto(`${stack.url}/c/launch/t/${posted.json.thread.id}`);
  const thread = page.getByRole("complementary", { name: /^Thread: / });
  await thread.getByRole("button", { name: "Stop" }).waitFor();
  const streaming = await measureHeader();
  await screenshot(page, "phone-thread-head-streaming");
  assertHeaderFits(streaming, "streaming");
  assert.ok(streaming.buttons.some((b) => b.name === "Close the thread"));

  await thread.getByRole("button", { name: "Stop" }).waitFor({ state: "detached", timeout: 60_000 });
  await waitFor("the tokens in the meta", async () => (await thread.locator(".thread-meta").innerText()).includes("Tokens"));
  const idle = await measureHeader();
  await screenshot(page, "phone-thread-head-idle");
  assertHeaderFits(idle, "idle");
  assert.deepEqual(await axeViolations(page), [], "axe-core on a phone's thread");
});

test("a phone: the People page shows every person's controls whole", async () => {
  await call(stack, "POST", "/api/users", { token, body: { name: "bob", password: PASSWORD } });
  await call(stack, "POST", "/api/users", { token, body: { name: "cleo", password: PASSWORD, role: "admin" } });
  await page.goto(`${stack.url}/admin/people`);
  await waitFor("both role choices", async () => (await page.getByLabel(/^Role of /).count()) === 2);
  await screenshot(page, "phone-people");
  const m = await page.evaluate(() => {
    const whole = (el) => {
      const r = el.getBoundingClientRect();
      // On the screen, and not cut by a scrolling or clipping box around it.
      const hit = document.elementFromPoint(Math.min(r.right - 2, innerWidth - 1), r.top + r.height / 2);
      return { left: Math.round(r.left), right: Math.round(r.right), width: Math.round(r.width), onScreen: r.left >= 0 && r.right <= innerWidth, reached: el === hit || el.contains(hit) };
    };
    return {
      overflow: document.documentElement.scrollWidth - innerWidth,
      selects: [...document.querySelectorAll(".people-table select")].map((s) => ({ label: s.getAttribute("aria-label"), ...whole(s) })),
      buttons: [...document.querySelectorAll(".people-table button")].map((b) => ({ label: b.getAttribute("aria-label"), ...whole(b) })),
    };
  });
  assert.ok(m.overflow <= 0, `the page does not scroll sideways (${m.overflow} px)`);
  assert.equal(m.selects.length, 2);
  assert.equal(m.buttons.length, 2);
  for (const s of m.selects) {
    assert.ok(s.onScreen && s.reached, `${s.label} is whole on the screen (${s.left}..${s.right})`);
    assert.ok(s.width >= 90, `${s.label} shows its choice, not one letter (${s.width} px)`);
  }
  for (const b of m.buttons) assert.ok(b.onScreen && b.reached, `${b.label} is whole on the screen (${b.left}..${b.right})`);
  assert.deepEqual(await axeViolations(page), [], "axe-core on a phone's People page");
});
