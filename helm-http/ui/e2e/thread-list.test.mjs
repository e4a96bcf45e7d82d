// A channel with a long history, in a real browser: 230 threads made
// through the API. The Threads view loads a page at a time and scrolling to
// the end reaches the oldest; archiving from a row hides the thread, the
// Archived filter shows it and Unarchive brings it back; the search box
// finds a thread by a word said only in one of its messages; the open
// thread's header archives and unarchives it; a hit in a long thread's old
// message opens the thread at that message.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { axeViolations, call, launchBrowser, openPage, quickStart, screenshot, startStack } from "./harness.mjs";

let stack;
let browser;
let token;
let page;
const ids = [];

before(async () => {
  stack = await startStack();
  browser = await launchBrowser();
  const started = await quickStart(stack, browser);
  token = started.token;
  await call(stack, "POST", "/api/channels", { token, body: { name: "history", purpose: "A long history." } });
  for (let i = 0; i < 230; i++) {
    // No mention: nothing wakes the agent, so the order stays as made.
    const posted = await call(stack, "POST", "/api/channels/history/messages", { token, body: { text: `session ${String(i).padStart(3, "0")} notes` } });
    assert.equal(posted.response.status, 201);
    ids.push(posted.json.thread.id);
  }
  await call(stack, "POST", "/api/channels/history/messages", { token, body: { text: "the capybara report is due friday", thread_id: ids[17] } });
  page = await openPage(started.context, `${stack.url}/c/history/threads`);
  await page.getByRole("heading", { name: "Threads", exact: true }).waitFor();
});

after(async () => {
  await browser?.close();
  await stack?.stop();
});

test("scrolling the Threads view pages back to the oldest thread", async () => {
  const list = page.getByRole("list", { name: "Threads" });
  // The newest is first (thread 17 moved up with its new message).
  await list.getByRole("link", { name: "session 229 notes" }).waitFor();
  assert.ok((await list.getByRole("listitem").count()) < 230, "only a first page at first");
  assert.equal(await list.getByRole("link", { name: "session 000 notes" }).count(), 0);
  const older = page.getByRole("button", { name: /older threads/ });
  // Scrolling to the end loads the next page, until none is left.
  for (let i = 0; i < 10 && (await older.count()) > 0; i++) {
    await older.scrollIntoViewIfNeeded().catch(() => undefined);
    await page.waitForTimeout(300);
  }
  await list.getByRole("link", { name: "session 000 notes" }).waitFor();
  assert.equal(await list.getByRole("listitem").count(), 230, "every thread once");
  assert.equal(await older.count(), 0, "no button once everything is loaded");
  await screenshot(page, "70-threads-paged-to-oldest-desktop");
});

test("archiving hides a thread, the Archived filter shows it, Unarchive brings it back", async () => {
  const list = page.getByRole("list", { name: "Threads" });
  await list.getByRole("button", { name: "Archive session 228 notes" }).click();
  await page.getByText("Thread archived. Find it under Archived.").waitFor();
  await list.getByRole("link", { name: "session 228 notes" }).waitFor({ state: "detached" });
  const shown = await call(stack, "GET", `/api/threads/${ids[228]}`, { token });
  assert.equal(shown.json.thread.status, "archived");

  await page.getByRole("button", { name: "Archived", exact: true }).click();
  const archived = page.getByRole("list", { name: "Archived threads" });
  await archived.getByRole("link", { name: "session 228 notes" }).waitFor();
  assert.equal(await archived.getByRole("listitem").count(), 1);
  await screenshot(page, "71-threads-archived-filter-desktop");
  assert.deepEqual(await axeViolations(page), [], "axe-core on the Archived filter");

  await archived.getByRole("button", { name: "Unarchive session 228 notes" }).click();
  await archived.getByRole("link", { name: "session 228 notes" }).waitFor({ state: "detached" });
  await page.getByRole("button", { name: "All", exact: true }).click();
  await page.getByRole("list", { name: "Threads" }).getByRole("link", { name: "session 228 notes" }).waitFor();
  assert.equal((await call(stack, "GET", `/api/threads/${ids[228]}`, { token })).json.thread.status, "open");
});

test("the search box finds a thread by a word only in its messages", async () => {
  await page.getByRole("searchbox", { name: "Search threads and their messages" }).fill("capybara");
  const results = page.getByRole("list", { name: "Search results" });
  const hit = results.getByRole("link", { name: "session 017 notes" });
  await hit.waitFor();
  assert.equal(await results.getByRole("listitem").count(), 1);
  await results.getByText("the capybara report is due friday").waitFor();
  await screenshot(page, "72-threads-search-desktop");
  assert.deepEqual(await axeViolations(page), [], "axe-core on search results");
  await hit.click();
  const panel = page.getByRole("complementary", { name: "Thread: session 017 notes" });
  await panel.waitFor();

  // The open thread's header archives and unarchives it too.
  await panel.getByRole("button", { name: "Archive this thread" }).click();
  await panel.getByRole("button", { name: "Unarchive this thread" }).waitFor();
  assert.equal((await call(stack, "GET", `/api/threads/${ids[17]}`, { token })).json.thread.status, "archived");
  await panel.getByRole("button", { name: "Unarchive this thread" }).click();
  await panel.getByRole("button", { name: "Archive this thread" }).waitFor();
  assert.equal((await call(stack, "GET", `/api/threads/${ids[17]}`, { token })).json.thread.status, "open");
});

test("a search hit in a long thread opens the thread at the message that matched", async () => {
  // 250 replies: the one that matches is older than the first two pages read.
  const long = ids[40];
  let matching;
  for (let i = 0; i < 250; i++) {
    const text = i === 4 ? "the walrus tusk inventory is in the shed" : `reply ${i} in a long session`;
    const posted = await call(stack, "POST", "/api/channels/history/messages", { token, body: { text, thread_id: long } });
    if (i === 4) matching = posted.json.message.id;
  }
  await page.goto(`${stack.url}/c/history/threads`);
  await page.getByRole("searchbox", { name: "Search threads and their messages" }).fill("tusk");
  const results = page.getByRole("list", { name: "Search results" });
  await results.getByRole("link", { name: "The message that matched: the walrus tusk inventory is in the shed" }).click();
  await page.waitForURL(`**/c/history/t/${long}?m=${matching}`);
  const panel = page.getByRole("complementary", { name: "Thread: session 040 notes" });
  const shown = panel.locator(".message.focused");
  await shown.waitFor({ timeout: 10000 });
  assert.match(await shown.innerText(), /the walrus tusk inventory is in the shed/);
  // On screen, not merely rendered: the list rests on it.
  await page.waitForFunction(() => {
    const m = document.querySelector(".message.focused");
    const list = m?.closest(".vl");
    if (!m || !list) return false;
    const a = m.getBoundingClientRect();
    const b = list.getBoundingClientRect();
    return a.top >= b.top - 1 && a.top < b.bottom;
  });
  await screenshot(page, "73-thread-at-matched-message-desktop");

  // A link to a message the thread does not hold says so, once it has read the whole thread.
  await page.goto(`${stack.url}/c/history/t/${long}?m=999999`);
  await page.getByText("The message this link names is not in this thread (any more)").waitFor({ timeout: 10000 });
  assert.equal(await page.locator(".message.focused").count(), 0);
  assert.deepEqual(page.consoleErrors(), []);
});
