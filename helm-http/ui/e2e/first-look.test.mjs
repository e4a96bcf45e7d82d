// Fixes from a new user's audit, each seen in a real browser: the first-run
// wizard resumed where the Captain left it when a tab is closed (as the
// server says, not the tab); a failed reply's Retry gone once it was
// retried, and a retry that lost a race said in words; previews keeping
// the characters that are text (#garden, snake_case); a reply whose turn
// waits on an approval saying so, not "Queued"; Save model offered only
// for a change.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { ARTIFACTS, DESKTOP, PASSWORD, SETUP_CODE, call, launchBrowser, openPage, screenshot, startStack, waitFor } from "./harness.mjs";

let stack;
let browser;
let context;
let page; // the Captain's
let token;

before(async () => {
  stack = await startStack();
  browser = await launchBrowser();
  context = await browser.newContext({ viewport: DESKTOP });
});

after(async () => {
  await browser?.close();
  await stack?.stop();
  console.log(`screenshots: ${ARTIFACTS}/screenshots`);
});

/** The Captain closes the tab and opens Helm again (a new tab: nothing of the old one's session storage). */
async function reopen() {
  assert.deepEqual(page.consoleErrors(), [], "no console errors before the tab closed");
  await page.close();
  page = await openPage(context, stack.url);
}

test("first run: a Captain who closes the tab comes back to the next unfinished step, and once done, to #main", async () => {
  page = await openPage(context, stack.url);
  await page.getByRole("heading", { name: "Create the Captain" }).waitFor();
  await page.getByLabel("Setup code").fill(SETUP_CODE);
  await page.getByLabel("Name", { exact: true }).fill("ada");
  await page.getByLabel("Display name").fill("Ada Lovelace");
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Create the Captain" }).click();
  await page.getByRole("heading", { name: "Connect a model" }).waitFor();

  // Closed before a model was connected: the model step again.
  await reopen();
  await page.getByRole("heading", { name: "Connect a model" }).waitFor();
  await screenshot(page, "first-look-01-wizard-resumed");
  await page.getByLabel("Base URL", { exact: true }).fill(stack.mock.modelUrl);
  await page.getByLabel("Default model", { exact: true }).fill("mock-model");
  await page.getByRole("button", { name: "Connect and continue" }).click();
  await page.getByRole("heading", { name: "The computer" }).waitFor();

  // A model is connected: the next step is the computer.
  await reopen();
  await page.getByRole("heading", { name: "The computer" }).waitFor();
  await page.getByRole("button", { name: "Continue" }).click();
  await page.getByLabel("Workspace name").fill("Acme");
  await page.getByRole("button", { name: "Enter #main" }).click();
  await page.getByRole("heading", { name: "main", exact: true }).waitFor();

  // Done: Helm opens in #main from now on.
  await reopen();
  await page.getByRole("heading", { name: "main", exact: true }).waitFor();
  assert.equal(await page.getByRole("heading", { name: /Connect a model|The computer|Name the workspace/ }).count(), 0);

  const cookie = (await context.cookies()).map((c) => `${c.name}=${c.value}`).join("; ");
  token = (await call(stack, "POST", "/api/tokens", { cookie, body: { name: "e2e" } })).json.secret;
  await call(stack, "POST", "/api/channels", { token, body: { name: "notes", purpose: "Notes, drafts and the odd question." } });
});

const failure = { error: { status: 500, message: "upstream exploded" } };

/** A thread in #notes whose reply failed (the first try and Helm's three retries), open in the page. */
async function failedThread(question) {
  await stack.mock.push(failure, failure, failure, failure);
  const posted = await call(stack, "POST", "/api/channels/notes/messages", { token, body: { text: `@notes-agent ${question}` } });
  const id = posted.json.thread.id;
  await page.goto(`${stack.url}/c/notes/t/${id}`);
  const log = page.getByRole("feed", { name: "Messages in this thread" });
  await log.getByText(/^This reply failed\./).waitFor();
  return { id, log };
}

test("a retried failed reply offers no Retry any more; its answer's preview keeps #garden and snake_case", async () => {
  const { log } = await failedThread("what did you set up?");
  await stack.mock.push({ text: "Created #garden, named in snake_case: plant_list.md." });
  await log.getByRole("button", { name: "Retry" }).click();
  await log.getByText("Created #garden, named in snake_case: plant_list.md.").waitFor();
  // The old failed reply is still there, without a Retry that can no longer work.
  await log.getByText(/^This reply failed\./).waitFor();
  assert.equal(await log.getByRole("button", { name: "Retry" }).count(), 0, "no stale Retry after the retry answered");
  await screenshot(page, "first-look-02-retried");

  // The feed's preview of the answer keeps the characters that are text.
  const feed = page.getByRole("region", { name: "Messages in #notes" });
  await feed.locator(".latest-text", { hasText: "Created #garden, named in snake_case: plant_list.md." }).waitFor();

  // Read again from the server (a reload): still no Retry.
  await page.reload();
  await log.getByText("Created #garden, named in snake_case: plant_list.md.").waitFor();
  await log.getByText(/^This reply failed\./).waitFor();
  assert.equal(await log.getByRole("button", { name: "Retry" }).count(), 0, "none after a reload either");
});

test("a Retry that lost the race to another is said in words, and the thread shows what came of it", async () => {
  const { id, log } = await failedThread("what changed this week?");
  await stack.mock.push({ text: "Retried from elsewhere: the docs moved." });
  // Someone else runs the turn again just before this Retry reaches the server.
  await page.route("**/api/threads/*/retry", async (route) => {
    await call(stack, "POST", `/api/threads/${id}/retry`, { token });
    await route.continue();
  });
  page.allowErrors(/status of 409 \(Conflict\)/);
  await log.getByRole("button", { name: "Retry" }).click();
  await log.getByRole("alert").getByText(/^This was already tried again/).waitFor();
  await log.getByText("Retried from elsewhere: the docs moved.").waitFor();
  assert.equal(await log.getByText(/only a failed or interrupted turn|turn \d+ is/).count(), 0, "not the server's raw words");
  assert.equal(await log.getByRole("button", { name: "Retry" }).count(), 0);
  await screenshot(page, "first-look-03-retry-raced");
  await page.unroute("**/api/threads/*/retry");
});

test("Skipper's reply waiting on an approval says so, not that it is queued", async () => {
  const invite = await call(stack, "POST", "/api/invites", { token, body: {} });
  const accepted = await call(stack, "POST", "/api/invites/accept", { body: { code: invite.json.code, name: "bob", display_name: "Bob Builder", password: PASSWORD } });
  const cookie = accepted.response.headers.get("set-cookie").split(";")[0];
  // The channel's agent calls Skipper in, and Skipper's command waits for the Captain.
  await stack.mock.push(
    { tool_calls: [{ name: "call_skipper", arguments: { reason: "I need pandoc installed to export the plan as PDF." } }] },
    { text: "I've asked @skipper for pandoc." },
    { tool_calls: [{ name: "host_command", arguments: { command: "echo disk-ok" } }] },
    { text: "The host's disk is fine." },
  );
  const posted = await call(stack, "POST", "/api/channels/notes/messages", { cookie, body: { text: "@notes-agent export plan.md as PDF please" } });
  await page.goto(`${stack.url}/c/notes/t/${posted.json.thread.id}`);
  const log = page.getByRole("feed", { name: "Messages in this thread" });
  const card = log.getByRole("region", { name: /Approval request: .*echo disk-ok/ });
  await card.waitFor();
  await log.getByText("Waiting for the approval above to be decided.").waitFor();
  assert.equal(await log.getByText(/^Queued/).count(), 0, "the turn runs: not queued");
  await screenshot(page, "first-look-04-waiting-on-approval");
  await card.getByRole("button", { name: "Approve" }).click();
  await log.getByText("The host's disk is fine.").waitFor();
  await waitFor("the note to go", async () => (await log.getByText("Waiting for the approval above to be decided.").count()) === 0);
});

test("Save model is offered only for a change", async () => {
  await page.goto(`${stack.url}/c/notes/settings`);
  const save = page.getByRole("button", { name: "Save model" });
  await save.waitFor();
  const provider = page.getByLabel("Provider", { exact: true });
  await waitFor("the providers to be listed", async () => (await provider.locator("option").count()) > 1);
  assert.equal(await save.isDisabled(), true, "nothing changed yet");
  await provider.selectOption({ index: 1 });
  assert.equal(await save.isDisabled(), false, "a change can be saved");
  await save.click();
  await page.getByText("Model changed. The agent keeps its name, files and memory.").waitFor();
  await waitFor("Save to be off again", () => save.isDisabled());
  const model = page.getByLabel("Model", { exact: true });
  await model.fill("mock-model-2");
  assert.equal(await save.isDisabled(), false);
  await model.fill("");
  assert.equal(await save.isDisabled(), true, "back to what is saved");
  await screenshot(page, "first-look-05-model-saved");
});

test("no console errors", () => {
  assert.deepEqual(page.consoleErrors(), []);
});
