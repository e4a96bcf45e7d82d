// A phone (390×844) in a real browser: the open thread's header keeps its
// title readable, its meta as a line under it and every button on the
// screen, idle and while a reply streams; the People page shows each
// person as a card whose role choice and Deactivate are whole; the menu
// button tells of mentions and unread messages in the closed channel list.
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

test("a phone: the menu button tells of a mention, then of unread messages, in the closed channel list, until they are read", async () => {
  // Bob (from the People test) writes in #launch while Ada reads #main.
  const login = await call(stack, "POST", "/api/auth/login", { body: { name: "bob", password: PASSWORD } });
  const cookie = login.response.headers.get("set-cookie").split(";")[0];
  // The agent may answer Bob: the mock has words for it.
  await stack.mock.fallback({ text: "Noted." });
  await page.goto(`${stack.url}/c/main`);
  await page.getByRole("heading", { name: "main", exact: true }).waitFor();
  const menu = page.getByRole("main").getByRole("button", { name: /^Open the channel list/ });
  await waitFor("nothing unread", async () => (await menu.getAttribute("aria-label")) === "Open the channel list");

  await call(stack, "POST", "/api/channels/launch/messages", { cookie, body: { text: "@ada the budget is ready for your sign-off" } });
  await waitFor("the mention on the menu button", async () => (await menu.getAttribute("aria-label")) === "Open the channel list, 1 mention");
  // The notice drops over the top of the screen, and goes: the button still says it.
  const notice = page.locator(".toast", { hasText: "mentioned you in #launch" });
  await notice.getByRole("button", { name: "Dismiss" }).click();
  await notice.waitFor({ state: "detached" });
  const badge = menu.locator(".drawer-badge");
  assert.equal(await badge.innerText(), "1", "one channel mentions her");
  const seen = await badge.evaluate((el) => {
    const r = el.getBoundingClientRect();
    const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
    return r.width > 0 && r.left >= 0 && r.right <= innerWidth && r.top >= 0 && (el === hit || el.contains(hit)) ? true : { box: [r.left, r.top, r.right, r.bottom], hit: hit?.outerHTML.slice(0, 120) };
  });
  await screenshot(page, "phone-menu-mention");
  assert.equal(seen, true, `the badge is on the screen, not under anything: ${JSON.stringify(seen)}`);
  assert.deepEqual(await axeViolations(page), [], "axe-core on a phone with a mention");

  // Read: the badge goes. A plain message then is a dot, said as unread.
  await menu.click();
  await page.getByRole("navigation", { name: "Workspace" }).getByRole("link", { name: /launch/ }).click();
  await page.getByRole("heading", { name: "launch", exact: true }).waitFor();
  await waitFor("the mention read", async () => (await menu.getAttribute("aria-label")) === "Open the channel list");
  assert.equal(await menu.locator(".drawer-badge, .drawer-dot").count(), 0);
  await page.goto(`${stack.url}/c/main`);
  await page.getByRole("heading", { name: "main", exact: true }).waitFor();
  await call(stack, "POST", "/api/channels/launch/messages", { cookie, body: { text: "and the venue is booked" } });
  await waitFor("the unread dot", async () => (await menu.getAttribute("aria-label")) === "Open the channel list, unread messages");
  await menu.locator(".drawer-dot").waitFor();
  await screenshot(page, "phone-menu-unread");
  await menu.click();
  await page.getByRole("navigation", { name: "Workspace" }).getByRole("link", { name: /launch/ }).click();
  await page.getByRole("heading", { name: "launch", exact: true }).waitFor();
  await waitFor("all read", async () => (await menu.getAttribute("aria-label")) === "Open the channel list");
});
