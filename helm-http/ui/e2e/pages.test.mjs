// A channel used for weeks outgrows one page, in a real browser: the
// Memory page says how many records it shows and loads older ones to the
// very first, a recall hit of a record older than the pages loaded offers
// Edit, Pin and Forget, and Activity shows nothing older than its oldest
// loaded action (not the channel's creation right below 200 actions) until
// "Show older" brings the rest.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { call, launchBrowser, openPage, quickStart, screenshot, startStack, waitFor } from "./harness.mjs";

let stack;
let browser;
let token;
let page;

before(async () => {
  stack = await startStack();
  browser = await launchBrowser();
  const started = await quickStart(stack, browser);
  token = started.token;
  await call(stack, "POST", "/api/channels", { token, body: { name: "big", purpose: "A channel used for weeks." } });
  page = await openPage(started.context, `${stack.url}/c/big`);
  await page.getByRole("heading", { name: "big", exact: true }).waitFor();
});

after(async () => {
  await browser?.close();
  await stack?.stop();
});

test("the Memory page reaches its oldest record, and recall offers an old record's actions", async () => {
  // Record 0 first, with a word no other record has; 104 after it.
  await call(stack, "POST", "/api/channels/big/memory", { token, body: { kind: "decision", content: "Record 0: the zebra crossing is settled." } });
  for (let n = 1; n <= 104; n++) await call(stack, "POST", "/api/channels/big/memory", { token, body: { kind: "fact", content: `Record ${n}: noted.` } });

  await page.goto(`${stack.url}/c/big/memory`);
  await page.getByText("Record 104: noted.").waitFor();
  await page.getByText("The newest 100 records are loaded; older ones are not shown yet.").waitFor();
  assert.equal(await page.getByText("Record 0: the zebra crossing is settled.").count(), 0);
  await screenshot(page, "90-memory-newest-page");
  await page.getByRole("button", { name: "Show older records" }).click();
  await page.getByText("Record 0: the zebra crossing is settled.").waitFor();
  await page.getByText("All 105 records are loaded.").waitFor();
  assert.equal(await page.getByRole("button", { name: "Show older records" }).count(), 0);

  // Opened afresh (its first page only), recall finds Record 0 and offers what its row offers.
  await page.reload();
  await page.getByText("Record 104: noted.").waitFor();
  await page.getByLabel("Recall: ask what the channel knows").fill("zebra crossing");
  await page.keyboard.press("Enter");
  const hits = page.getByRole("list", { name: "What recall found" });
  const hit = hits.getByRole("listitem").filter({ hasText: "Record 0: the zebra crossing is settled." });
  await hit.getByRole("button", { name: "Forget" }).waitFor();
  await hit.getByRole("button", { name: "Edit" }).waitFor();
  await screenshot(page, "91-memory-recall-old-record");
  await hit.getByRole("button", { name: "Pin" }).click();
  await hit.getByRole("button", { name: "Unpin" }).waitFor();
  const pinned = await call(stack, "GET", "/api/channels/big/memory?kind=decision", { token });
  assert.equal(pinned.json[0].pinned, true, "the old record is pinned");
  await hit.getByRole("button", { name: "Forget" }).click();
  const dialog = page.getByRole("dialog", { name: "Forget this decision?" });
  await dialog.getByRole("button", { name: "Forget" }).click();
  await hit.getByText("forgotten").waitFor();
});

test("Activity past a page ends at its oldest loaded action until Show older loads the rest", async () => {
  // 205 tool actions in two model steps, then a reply.
  const calls = (n) => Array.from({ length: n }, () => ({ name: "list_files", arguments: { path: "." } }));
  await stack.mock.push({ tool_calls: calls(103) }, { tool_calls: calls(102) }, { text: "All 205 checks ran." });
  const posted = await call(stack, "POST", "/api/channels/big/messages", { token, body: { text: "@big-agent run the checks" } });
  const thread = posted.json.thread.id;
  await waitFor("the turn to end", async () => {
    const t = (await call(stack, "GET", `/api/threads/${thread}`, { token })).json;
    return t.turns.length > 0 && t.turns.every((x) => !["queued", "running"].includes(x.state));
  });
  const journal = (await call(stack, "GET", "/api/channels/big/activity?limit=500", { token })).json;
  assert.equal(journal.length, 205);

  await page.goto(`${stack.url}/c/big/activity`);
  const list = page.getByRole("list", { name: "Activity, newest first" });
  await page.getByText("Older activity is not shown yet.").waitFor();
  await waitFor("a page of actions", async () => (await list.getByRole("listitem").count()) === 200);
  assert.equal(await list.getByText("The channel was created.").count(), 0, "not right below the 200th action");
  await screenshot(page, "92-activity-newest-page");
  await page.getByRole("button", { name: "Show older" }).click();
  await list.getByText("The channel was created.").waitFor();
  await waitFor("every action", async () => (await list.getByRole("listitem").count()) > 205);
  assert.equal(await page.getByRole("button", { name: "Show older" }).count(), 0);
  assert.equal(await page.getByText("Older activity is not shown yet.").count(), 0);
  // The creation is the last row, after the first action.
  const last = list.getByRole("listitem").last();
  assert.match(await last.innerText(), /The channel was created\./);
});
