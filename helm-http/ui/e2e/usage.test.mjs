// What the agent's work cost, in a real browser: a finished reply says its
// tokens beside the model's name ("30 tokens", the exact split in its
// tooltip), live when its turn ends and again after a reload; the thread's
// header sums its turns; a reply whose turn failed with no usage reported
// says none (never 0); the Activity view's turn ends carry theirs, and
// after a reload Activity still tells the channel's story (lifecycle kept). The mock
// model reports 10 input and 5 output tokens per model call. First run is
// done through the API here.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { axeViolations, call, launchBrowser, openPage, quickStart, screenshot, startStack, waitFor } from "./harness.mjs";

let stack;
let browser;
let token;
let page;
let threadUrl;

before(async () => {
  stack = await startStack();
  browser = await launchBrowser();
  const started = await quickStart(stack, browser);
  token = started.token;
  await call(stack, "POST", "/api/channels", { token, body: { name: "costs", purpose: "Where the agent's work is counted." } });
  page = await openPage(started.context, `${stack.url}/c/costs`);
  await page.getByRole("heading", { name: "costs", exact: true }).waitFor();
});

after(async () => {
  await browser?.close();
  await stack?.stop();
});

const thread = () => page.getByRole("complementary", { name: /Thread: Please note the launch date/ });
const log = () => thread().getByRole("feed", { name: "Messages in this thread" });
/** The agent's reply holding `text`. */
const reply = (text) => log().locator(".message-agent", { hasText: text });
const header = () => thread().locator(".thread-header");

/** The count's visible text (without what only screen readers hear) and its tooltip. */
async function count(locator) {
  const el = locator.locator(".token-count");
  await el.waitFor();
  return el.evaluate((node) => ({
    text: [...node.childNodes].filter((n) => n.nodeType === Node.TEXT_NODE).map((n) => n.textContent).join("").trim(),
    title: node.getAttribute("title"),
    spoken: node.textContent.replace(/\s+/g, " ").trim(),
  }));
}

test("a finished reply says its tokens live, the thread sums them, and both are there after a reload", async () => {
  // A tool step, then the answer streamed slowly: two model calls, 20 in and 10 out.
  await stack.mock.push(
    { tool_calls: [{ name: "write_file", arguments: { path: "launch.md", content: "Launch on the 3rd.\n" } }] },
    { chunks: ["Noted: ", "launch on ", "the 3rd, ", "in launch.md."], chunk_delay_ms: 300 },
  );
  const composer = page.getByLabel("Start a thread in #costs");
  await composer.fill("Please note the launch date: the 3rd");
  await composer.press("Enter");
  await thread().waitFor();
  // While it streams: no count on the reply, none in the header.
  await log().getByText(/Noted:/).waitFor();
  assert.equal(await reply("Noted:").locator(".token-count").count(), 0, "no count while the turn runs");
  assert.equal(await header().locator(".token-count").count(), 0, "no total before a turn ended");
  await log().getByText("Noted: launch on the 3rd, in launch.md.").waitFor();

  // The turn ends: the count comes with its event, beside the model's name.
  const live = await count(reply("Noted: launch on the 3rd"));
  assert.equal(live.text, "30 tokens");
  assert.equal(live.title, "20 in · 10 out, over 2 model calls");
  assert.equal(live.spoken, "30 tokens (20 in · 10 out, over 2 model calls)", "screen readers hear the split");
  const meta = await reply("Noted: launch on the 3rd").locator(".message-head").innerText();
  assert.match(meta, /mock-model\s+30 tokens/, `the count follows the model's name: ${meta}`);
  const total = await count(header());
  assert.equal(total.text, "Tokens: 30");
  assert.equal(total.title, "20 in · 10 out, over 2 model calls");
  // The user's own message has none.
  assert.equal(await log().locator(".message-human .token-count").count(), 0);

  // A plain answer in the same thread: 15 more; the header sums both turns.
  await stack.mock.push({ text: "The 3rd is a Tuesday." });
  const box = page.getByLabel("Reply in this thread");
  await box.fill("@costs-agent which weekday is that?");
  await box.press("Enter");
  const second = await count(reply("The 3rd is a Tuesday."));
  assert.equal(second.text, "15 tokens");
  assert.equal(second.title, "10 in · 5 out, over 1 model call");
  await waitFor("the header's total to grow", async () => (await count(header())).text === "Tokens: 45");
  assert.equal((await count(header())).title, "30 in · 15 out, over 3 model calls in 2 turns");

  assert.deepEqual(await axeViolations(page), [], "axe-core on a thread with token counts");
  await screenshot(page, "30-reply-tokens-desktop");

  // After a reload the counts come from the thread's turns.
  threadUrl = page.url();
  await page.reload();
  await log().getByText("The 3rd is a Tuesday.").waitFor();
  assert.deepEqual(await count(reply("Noted: launch on the 3rd")), live);
  assert.deepEqual(await count(reply("The 3rd is a Tuesday.")), second);
  await waitFor("the header's total after the reload", async () => (await count(header())).text === "Tokens: 45");
  assert.equal((await count(header())).title, "30 in · 15 out, over 3 model calls in 2 turns");
  // The API says the same.
  const id = Number(threadUrl.split("/t/")[1]);
  const detail = await call(stack, "GET", `/api/threads/${id}`, { token });
  assert.deepEqual(detail.json.turns.map((t) => t.usage), [{ input_tokens: 20, output_tokens: 10 }, { input_tokens: 10, output_tokens: 5 }]);
});

test("a reply whose turn failed with no usage reported shows no count, and the total stays", async () => {
  // The model fails: the first try and Helm's three retries, no usage reported.
  const failure = { error: { status: 500, message: "upstream exploded" } };
  await stack.mock.push(failure, failure, failure, failure);
  const box = page.getByLabel("Reply in this thread");
  await box.fill("@costs-agent and the press date?");
  await box.press("Enter");
  const failed = log().locator(".message-agent", { hasText: "This reply failed." });
  await failed.waitFor();
  // Its turn has ended (the reply says so); give a late count the chance to show wrongly.
  await page.waitForTimeout(300);
  assert.equal(await failed.locator(".token-count").count(), 0, "no count, not 0, for a turn with no usage");
  assert.equal(await log().locator(".token-count").count(), 2, "the two earlier replies keep theirs");
  assert.equal((await count(header())).text, "Tokens: 45");
  await screenshot(page, "31-failed-reply-no-tokens-desktop");

  // After a reload too.
  await page.reload();
  await log().locator(".message-agent", { hasText: "This reply failed." }).waitFor();
  await log().getByText("The 3rd is a Tuesday.").waitFor();
  await waitFor("the counts after the reload", async () => (await log().locator(".token-count").count()) === 2);
  assert.equal(await log().locator(".message-agent", { hasText: "This reply failed." }).locator(".token-count").count(), 0);
  assert.equal((await count(header())).text, "Tokens: 45");
});

test("the Threads list stays as it was: no counts there", async () => {
  await page.getByRole("link", { name: "Threads" }).click();
  await page.getByRole("link", { name: /Please note the launch date/ }).waitFor();
  assert.equal(await page.locator(".thread-list .token-count").count(), 0);
});

test("Activity: a turn that ends there says what it used, when it was reported", async () => {
  await page.getByRole("link", { name: "Activity" }).click();
  const list = page.getByRole("list", { name: "Activity, newest first" });
  await list.locator("li").first().waitFor();
  // A turn that fails with nothing reported: said, with no count.
  const failure = { error: { status: 500, message: "upstream exploded again" } };
  // An earlier test failed a turn too, and Activity keeps it: this one is the newest, first.
  const failures = list.locator("li", { hasText: "A turn failed" });
  const before = await failures.count();
  await stack.mock.push(failure, failure, failure, failure);
  await call(stack, "POST", "/api/channels/costs/messages", { token, body: { text: "@costs-agent one more thing" } });
  await waitFor("the new failure in Activity", async () => (await failures.count()) === before + 1);
  const failedRow = failures.first();
  await page.waitForTimeout(300);
  assert.equal(await failedRow.locator(".token-count").count(), 0, "no count for a turn with no usage");
  // Said in words, as the chat says it; the server's reason waits behind Details.
  await failedRow.getByText("A turn failed. The model could not be reached (HTTP 500).", { exact: false }).waitFor();
  assert.doesNotMatch(await failedRow.locator("p").first().innerText(), /127\.0\.0\.1|gave up after/);
  await failedRow.getByText("Details").click();
  await failedRow.getByText(/upstream exploded again \(gave up after 3 retries\)/).waitFor();

  // A turn stopped while its answer streams, after a tool step: the step's call reported its usage.
  await stack.mock.push(
    { tool_calls: [{ name: "write_file", arguments: { path: "press.md", content: "Press on the 10th.\n" } }] },
    { chunks: Array.from({ length: 40 }, (_, i) => `slow${i} `), chunk_delay_ms: 500 },
  );
  const posted = await call(stack, "POST", "/api/channels/costs/messages", { token, body: { text: "@costs-agent write the press plan" } });
  const id = posted.json.thread.id;
  await list.locator("li", { hasText: "press.md" }).waitFor();
  await waitFor("the answer to start streaming", async () => (await call(stack, "GET", `/api/threads/${id}/messages`, { token })).json.items.some((m) => m.content.includes("slow1")));
  await call(stack, "POST", `/api/threads/${id}/stop`, { token });
  const stoppedRow = list.locator("li", { hasText: "A turn was stopped." });
  await stoppedRow.waitFor();
  // The tool step's call reported 10 in and 5 out; the answer cut short reported nothing.
  const stopped = (await call(stack, "GET", `/api/threads/${id}`, { token })).json.turns[0];
  assert.deepEqual(stopped.usage, { input_tokens: 10, output_tokens: 5 });
  const shown = await count(stoppedRow);
  assert.equal(shown.text, "15 tokens");
  assert.equal(shown.title, `10 in · 5 out, over ${stopped.steps} model ${stopped.steps === 1 ? "call" : "calls"}`);
  assert.deepEqual(await axeViolations(page), [], "axe-core on Activity");
  await screenshot(page, "32-activity-tokens-desktop");
});

test("Activity after a reload tells the channel's story as it was seen live", async () => {
  await call(stack, "POST", "/api/channels/costs/archive", { token });
  await call(stack, "POST", "/api/channels/costs/restore", { token });
  await page.reload();
  const list = page.getByRole("list", { name: "Activity, newest first" });
  // Kept by the server: the lifecycle lines, newest first, with the turns' ends and what they used.
  const lines = list.locator("li.activity-lifecycle");
  await list.getByText("The channel was restored; its agent is back.").waitFor();
  const texts = await lines.allInnerTexts();
  assert.match(texts[0], /restored/);
  assert.match(texts[1], /archived/);
  assert.ok(texts.some((t) => /A turn was stopped\.[\s\S]*15 tokens/.test(t)), texts.join(" | "));
  assert.ok(texts.some((t) => t.includes("A turn failed. The model could not be reached (HTTP 500).")), texts.join(" | "));
  assert.match(texts[texts.length - 1], /The channel was created\./);
  // Tool calls are still there, between them.
  await list.locator("li", { hasText: "press.md" }).waitFor();
});

test("no console errors", () => {
  assert.deepEqual(page.consoleErrors(), []);
});
