// Everyday work in a channel, in a real browser: mentions offered as you
// type (not the person typing), files uploaded (by button and by drop), edited, renamed and
// deleted, threads resolved and reopened, memory edited and forgotten, a
// queued turn and Stop, a mention notifying the person named, several
// terminals, a failed reply (said once, in words) retried, the reply box
// saying whether a reply wakes the agent (and the feed counting only the
// replies the thread shows), the command palette. First run is done through the API here (the journey suite
// covers it in the browser).
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { DESKTOP, PASSWORD, axeViolations, call, launchBrowser, openPage, quickStart, screenshot, startStack, waitFor } from "./harness.mjs";

let stack;
let browser;
let token;
let page;

before(async () => {
  stack = await startStack();
  browser = await launchBrowser();
  const started = await quickStart(stack, browser);
  token = started.token;
  await call(stack, "POST", "/api/channels", { token, body: { name: "notes", purpose: "Notes, drafts and the odd question." } });
  // Someone else to mention: the person typing is not offered.
  await call(stack, "POST", "/api/users", { token, body: { name: "grace", password: PASSWORD } });
  page = await openPage(started.context, `${stack.url}/c/notes`);
  await page.getByRole("heading", { name: "notes", exact: true }).waitFor();
});

after(async () => {
  await browser?.close();
  await stack?.stop();
});

async function noAxeProblems(where) {
  assert.deepEqual(await axeViolations(page), [], `axe-core on ${where}`);
}

test("typing @ offers the channel's agent, Skipper and people", async () => {
  const composer = page.getByLabel("Start a thread in #notes");
  await composer.fill("");
  await composer.pressSequentially("hey @");
  const list = page.getByRole("listbox", { name: "People and agents to mention" });
  await list.getByRole("option", { name: /@notes-agent/ }).waitFor();
  await list.getByRole("option", { name: /@skipper/ }).waitFor();
  await list.getByRole("option", { name: /@grace/ }).waitFor();
  assert.equal(await list.getByRole("option", { name: /@ada/ }).count(), 0, "Ada is not offered to mention herself");
  await composer.pressSequentially("sk");
  assert.equal(await list.getByRole("option").count(), 1, "the list narrows as you type");
  await composer.press("Enter");
  assert.equal(await composer.inputValue(), "hey @skipper ");
  await composer.fill("");
});

test("a thread link naming the wrong channel opens the thread in its own; a missing thread says so", async () => {
  await call(stack, "POST", "/api/channels", { token, body: { name: "ops", purpose: "Keeping the lights on." } });
  const posted = await call(stack, "POST", "/api/channels/notes/messages", { token, body: { text: "Where do the release notes live?" } });
  const id = posted.json.thread.id;
  // #ops in the address, a #notes thread: the address is corrected, so the
  // header, the agent and any reply are #notes'.
  await page.goto(`${stack.url}/c/ops/t/${id}`);
  await page.waitForURL(`${stack.url}/c/notes/t/${id}`);
  await page.getByRole("heading", { name: "notes", exact: true }).waitFor();
  const thread = page.getByRole("complementary", { name: /Thread: Where do the release notes live/ });
  await thread.getByRole("feed", { name: "Messages in this thread" }).getByText("Where do the release notes live?").waitFor();
  await thread.getByRole("button", { name: "Ask @notes-agent" }).waitFor();
  assert.equal(await page.getByRole("button", { name: "Ask @ops-agent" }).count(), 0);
  // The wrong address was replaced, not stacked: Back leaves the thread.
  await page.goBack();
  await waitFor("Back to leave the thread", async () => !/\/t\//.test(page.url()));

  await page.goto(`${stack.url}/c/notes/t/999999`);
  const missing = page.getByRole("complementary", { name: /^Thread/ });
  await missing.getByText("This thread does not exist.").waitFor();
  assert.equal(await page.getByLabel("Reply in this thread").count(), 0, "no reply box for a thread that is not there");
  assert.doesNotMatch(await missing.innerText(), /not found/);
  await screenshot(page, "22-thread-missing-desktop");
  await missing.getByRole("link", { name: "Back to #notes" }).click();
  await page.waitForURL(`${stack.url}/c/notes`);
  await page.getByLabel("Start a thread in #notes").waitFor();
});

test("files: upload, new folder, edit and save, rename, delete", async () => {
  await page.getByRole("link", { name: "Files" }).click();
  await page.getByText("This folder is empty").waitFor();
  await page.locator('label:has-text("Upload") input[type="file"]').setInputFiles({ name: "draft.md", mimeType: "text/markdown", buffer: Buffer.from("# Draft\n\nFirst words.\n") });
  const row = page.getByRole("link", { name: /draft\.md/ });
  await row.waitFor();
  // Uploaded by a person: tagged as an upload (the API's kind), not an artifact.
  await waitFor("the file's tag", async () => (await row.locator(".tag").allTextContents()).join() === "upload");

  // The same name again is never replaced unasked: keep both, or replace.
  page.allowErrors(/status of 409 \(Conflict\) \(.*\/api\/channels\/notes\/files\/upload/);
  const uploadAgain = (text) => page.locator('label:has-text("Upload") input[type="file"]').setInputFiles({ name: "draft.md", mimeType: "text/markdown", buffer: Buffer.from(text) });
  await uploadAgain("# Someone else's draft\n");
  const clash = page.getByRole("dialog", { name: "Replace the file?" });
  await clash.getByText("/workspace/draft.md", { exact: true }).waitFor();
  await noAxeProblems("the upload clash dialog");
  await clash.getByRole("button", { name: "Keep both" }).click();
  await page.getByRole("link", { name: /draft-2\.md/ }).waitFor();
  assert.equal((await call(stack, "GET", "/api/channels/notes/files/read?path=draft.md", { token })).json.content, "# Draft\n\nFirst words.\n");
  await call(stack, "DELETE", "/api/channels/notes/files?path=draft-2.md", { token });
  await uploadAgain("# Draft\n\nReplaced words.\n");
  await clash.getByRole("button", { name: "Replace" }).click();
  await clash.waitFor({ state: "detached" });
  const readDraft = async () => (await call(stack, "GET", "/api/channels/notes/files/read?path=draft.md", { token })).json.content;
  await waitFor("the upload to replace the file", async () => (await readDraft()) === "# Draft\n\nReplaced words.\n");
  // Back to the first words, which the rest of this test reads.
  await call(stack, "PUT", "/api/channels/notes/files", { token, body: { path: "draft.md", content: "# Draft\n\nFirst words.\n" } });

  await page.getByRole("button", { name: "New folder" }).click();
  const mkdir = page.getByRole("dialog", { name: "New folder" });
  await mkdir.getByLabel("Folder name").fill("archive");
  await mkdir.getByRole("button", { name: "Create folder" }).click();
  await page.getByText("This folder is empty").waitFor();
  await page.getByRole("link", { name: "..", exact: true }).click();

  await row.click();
  await page.getByText("First words.").waitFor();
  const head = page.locator(".preview-head");
  assert.match(await head.innerText(), /22 B/);
  await head.getByText("uploaded by ada").waitFor();
  await page.getByRole("button", { name: "Edit" }).click();
  const editor = page.getByLabel("Editing /workspace/draft.md");
  await editor.fill("# Draft\n\nSecond words.\n");
  // Someone saves the file meanwhile (no live event says so): the save is refused, theirs or mine.
  page.allowErrors(/status of 409 \(Conflict\) \(.*\/api\/channels\/notes\/files\)/);
  await call(stack, "PUT", "/api/channels/notes/files", { token, body: { path: "draft.md", content: "# Draft\n\nBob's words.\n" } });
  await page.getByRole("button", { name: "Save" }).click();
  const bar = page.getByRole("alert").filter({ hasText: "Someone changed this file." });
  await bar.waitFor();
  assert.equal((await call(stack, "GET", "/api/channels/notes/files/read?path=draft.md", { token })).json.content, "# Draft\n\nBob's words.\n");
  await bar.getByRole("button", { name: "Keep mine" }).click();
  await page.getByRole("button", { name: "Save" }).click();
  await page.getByText("Second words.").waitFor();
  // The header reads the file again: its new size.
  await waitFor("the new size in the header", async () => /23 B/.test(await head.innerText()));
  const read = await call(stack, "GET", "/api/channels/notes/files/read?path=draft.md", { token });
  assert.equal(read.json.content, "# Draft\n\nSecond words.\n");
  await noAxeProblems("Files with a file open");

  await page.getByRole("button", { name: "Rename" }).click();
  const rename = page.getByRole("dialog", { name: "Rename draft.md" });
  await rename.getByLabel("New name").fill("final.md");
  await rename.getByRole("button", { name: "Rename" }).click();
  await page.getByRole("heading", { name: "final.md" }).waitFor();
  assert.equal(await page.getByRole("link", { name: /draft\.md/ }).count(), 0);

  await page.getByRole("button", { name: "Delete" }).click();
  const confirm = page.getByRole("dialog", { name: "Delete final.md?" });
  await confirm.getByRole("button", { name: "Delete" }).click();
  await waitFor("the file to go", async () => (await page.getByRole("link", { name: /final\.md/ }).count()) === 0);
  await page.getByRole("link", { name: /archive/ }).waitFor();
});

test("files dropped on the chat are uploaded and attached to the message", async () => {
  await page.getByRole("link", { name: "Chat" }).click();
  await page.getByLabel("Start a thread in #notes").waitFor();
  const transfer = await page.evaluateHandle(() => {
    const data = new DataTransfer();
    data.items.add(new File(["quarterly numbers\n"], "q3.txt", { type: "text/plain" }));
    return data;
  });
  const chat = page.getByRole("region", { name: "Messages in #notes" });
  await chat.dispatchEvent("dragover", { dataTransfer: transfer });
  await chat.dispatchEvent("drop", { dataTransfer: transfer });
  await page.getByText("Uploaded 1 file to /workspace/uploads.").waitFor();
  await waitFor("the attachment in the composer", async () => (await page.getByLabel("Start a thread in #notes").inputValue()).includes("Attached `/workspace/uploads/q3.txt`"));
  const listed = await call(stack, "GET", "/api/channels/notes/files?path=uploads", { token });
  assert.deepEqual(listed.json.map((f) => f.name), ["q3.txt"]);
  await page.getByLabel("Start a thread in #notes").fill("");
  // The same name dropped again never replaces the first attachment (a thread may point at it).
  await chat.dispatchEvent("drop", { dataTransfer: transfer });
  await waitFor("the second attachment", async () => (await page.getByLabel("Start a thread in #notes").inputValue()).includes("Attached `/workspace/uploads/q3-2.txt`"));
  const both = await call(stack, "GET", "/api/channels/notes/files?path=uploads", { token });
  assert.deepEqual(both.json.map((f) => f.name), ["q3-2.txt", "q3.txt"]);
  await page.getByLabel("Start a thread in #notes").fill("");
});

test("views that failed while the server was away load again when it is back", async () => {
  page.allowErrors(/WebSocket connection to .* failed|ERR_CONNECTION_(RESET|REFUSED|CLOSED)|net::ERR_|Failed to load resource/);
  await page.getByRole("link", { name: "Memory" }).click();
  await page.getByText("Nothing recorded here yet.").waitFor();
  // The server goes away; Files, opened meanwhile, cannot load.
  stack.relay.cut(4000);
  await page.getByRole("link", { name: "Files" }).click();
  const files = page.getByRole("region", { name: "Files" });
  await files.getByRole("alert").getByText("Helm did not answer").waitFor();
  await files.getByRole("button", { name: "Retry" }).waitFor();
  assert.equal(await files.getByText("Loading…").count(), 0, "no Loading… beside the error");
  await screenshot(page, "23-files-offline-desktop");
  // It comes back: the listing loads with no click.
  await files.getByRole("link", { name: /archive/ }).waitFor({ timeout: 30_000 });
  assert.equal(await files.getByRole("alert").count(), 0);
  await waitFor("the banner to go", async () => (await page.getByText(/Reconnecting/).count()) === 0);

  // Memory the same way, with its Retry button.
  stack.relay.cut(4000);
  await page.getByRole("link", { name: "Memory" }).click();
  const memory = page.getByRole("region", { name: "Memory" });
  await memory.getByRole("alert").getByText("Helm did not answer").waitFor();
  await memory.getByRole("button", { name: "Retry" }).waitFor();
  await waitFor("Memory to load again", async () => (await memory.getByRole("alert").count()) === 0 && (await memory.getByText("Nothing recorded here yet.").count()) === 1, 30_000);

  // The admin pages too: the audit log.
  stack.relay.cut(4000);
  await page.getByRole("link", { name: "Audit log" }).click();
  const audit = page.getByRole("main");
  await audit.getByRole("button", { name: "Retry" }).waitFor();
  await waitFor("the audit log to load again", async () => (await audit.getByRole("alert").count()) === 0 && (await audit.getByRole("button", { name: "Retry" }).count()) === 0, 30_000);
  await page.getByRole("navigation", { name: "Workspace" }).getByRole("link", { name: /^notes/ }).click();
  await page.getByRole("link", { name: "Chat" }).click();
  await page.getByLabel("Start a thread in #notes").waitFor();
});

test("a queued turn says how many are ahead, and Stop ends the work", async () => {
  await stack.mock.push({ chunks: Array.from({ length: 40 }, (_, i) => `slow${i} `), chunk_delay_ms: 500 });
  const composer = page.getByLabel("Start a thread in #notes");
  await composer.fill("write something long");
  await composer.press("Enter");
  const thread = page.getByRole("complementary", { name: /Thread: write something long/ });
  await thread.getByText(/slow1/).waitFor();
  const reply = page.getByLabel("Reply in this thread");
  await reply.fill("@notes-agent and then a summary");
  await reply.press("Enter");
  await thread.getByText("Queued, 1 ahead").waitFor();
  await screenshot(page, "20-queued-desktop");
  await thread.getByRole("button", { name: "Stop" }).click();
  await thread.getByText("Stopped.").first().waitFor();
  await waitFor("the Stop button to go", async () => (await thread.getByRole("button", { name: "Stop" }).count()) === 0);
  await page.getByRole("button", { name: "Close the thread" }).click();
});

test("threads are resolved and reopened from the list", async () => {
  await stack.mock.fallback({ text: "Summary: a long answer was started, then stopped." });
  await page.getByRole("link", { name: "Threads" }).click();
  await page.getByRole("link", { name: /write something long/ }).waitFor();
  await page.getByRole("button", { name: "Resolve write something long" }).click();
  await page.getByRole("button", { name: "Reopen write something long" }).waitFor();
  await page.getByRole("button", { name: "Finished" }).click();
  await page.getByRole("link", { name: /write something long/ }).waitFor();
  await page.getByRole("button", { name: "Reopen write something long" }).click();
  await waitFor("it to leave the finished ones", async () => (await page.getByRole("link", { name: /write something long/ }).count()) === 0);
  await page.getByRole("button", { name: "Open", exact: true }).click();
  await page.getByRole("button", { name: "Resolve write something long" }).waitFor();
  await noAxeProblems("Threads");
});

test("memory: an edit supersedes the record, forgetting keeps it for the record", async () => {
  await page.getByRole("link", { name: "Memory" }).click();
  const form = page.getByRole("form", { name: "Record something" });
  await form.getByLabel("Kind of record").selectOption("fact");
  await form.getByLabel("What to record").fill("The office is closed on Fridays.");
  await form.getByRole("button", { name: "Record" }).click();
  const list = page.locator(".memory-list");
  await list.getByText("The office is closed on Fridays.").waitFor();
  await list.getByRole("button", { name: "Edit" }).first().click();
  const dialog = page.getByRole("dialog", { name: "Edit this fact" });
  await dialog.getByLabel("Text").fill("The office is closed on Fridays and Mondays.");
  await dialog.getByRole("button", { name: "Save" }).click();
  await list.getByText("The office is closed on Fridays and Mondays.").waitFor();
  assert.equal(await list.getByText("The office is closed on Fridays.", { exact: true }).count(), 0, "the old text is not current");
  await page.getByLabel("Show superseded and forgotten").check();
  await list.getByText("The office is closed on Fridays.", { exact: true }).waitFor();
  await page.getByLabel("Show superseded and forgotten").uncheck();
  await list.getByRole("button", { name: "Forget" }).first().click();
  await page.getByRole("dialog", { name: "Forget this fact?" }).getByRole("button", { name: "Forget" }).click();
  await waitFor("the record to be forgotten", async () => (await list.getByText("The office is closed on Fridays and Mondays.").count()) === 0);
  const all = await call(stack, "GET", "/api/channels/notes/memory?all=true", { token });
  assert.deepEqual(all.json.map((m) => m.status).sort(), ["forgotten", "superseded"]);
});

test("a mention notifies the person named, and their sidebar says so", async () => {
  const invite = await call(stack, "POST", "/api/invites", { token, body: {} });
  const accepted = await call(stack, "POST", "/api/invites/accept", { body: { code: invite.json.code, name: "bob", display_name: "Bob Builder", password: PASSWORD } });
  const cookie = accepted.response.headers.get("set-cookie").split(";")[0];
  const context = await browser.newContext({ viewport: DESKTOP });
  const [name, value] = cookie.split("=");
  await context.addCookies([{ name, value, url: stack.url }]);
  const bob = await openPage(context, `${stack.url}/c/main`);
  await bob.getByRole("heading", { name: "main", exact: true }).waitFor();
  await call(stack, "POST", "/api/channels/notes/messages", { token, body: { text: "@bob could you read the final draft?" } });
  const notice = bob.getByRole("button", { name: "Ada Lovelace mentioned you in #notes" });
  await notice.waitFor();
  await bob.getByRole("link", { name: /notes.*1 mention/ }).waitFor();
  await notice.click();
  const thread = bob.getByRole("complementary", { name: /Thread: could you read the final draft/ });
  await thread.waitFor();
  // At the message that named him.
  await thread.locator(".message.focused", { hasText: "could you read the final draft?" }).waitFor();
  await waitFor("the mention to count as read", async () => (await bob.getByRole("link", { name: /notes.*mention/ }).count()) === 0);
  assert.deepEqual(bob.consoleErrors(), []);
  await context.close();
});

test("Skipper is called into a thread, answers there, and hands back", async () => {
  await stack.mock.push(
    { text: "On it: cowsay is a harmless package, nothing else needs changing." },
  );
  await page.getByRole("link", { name: "Chat" }).click();
  await page.getByRole("button", { name: "Ask @skipper" }).click();
  const composer = page.getByLabel("Start a thread in #notes");
  // The button fills the composer on its next render, not before click() returns.
  await waitFor("the composer to hold @skipper", async () => (await composer.inputValue()) === "@skipper ");
  await composer.pressSequentially("please check whether cowsay may be installed here");
  await composer.press("Enter");
  const thread = page.getByRole("complementary", { name: /Thread: please check whether cowsay/ });
  await thread.getByRole("note").getByText("Skipper was called in").waitFor();
  await thread.getByText("On it: cowsay is a harmless package").waitFor();
  await thread.getByText("operator").first().waitFor();
  // Skipper ends the call; the channel's agent hears the outcome.
  await stack.mock.push(
    { tool_calls: [{ name: "resolve_escalation", arguments: { outcome: "cowsay may be installed; nothing else changes." } }] },
    { text: "Handing back to @notes-agent." },
  );
  await stack.mock.fallback({ text: "Thanks, Skipper: noted." });
  const reply = page.getByLabel("Reply in this thread");
  await reply.fill("@skipper go ahead and settle it");
  await reply.press("Enter");
  await thread.getByText("Skipper handed back").waitFor();
  await thread.getByText("cowsay may be installed; nothing else changes.").first().waitFor();
  await screenshot(page, "21-skipper-desktop");
  await noAxeProblems("a thread with Skipper");
  await page.getByRole("button", { name: "Close the thread" }).click();
});

test("a question Skipper hands to the Captain waits in her inbox until she answers it in its thread", async () => {
  await stack.mock.push(
    { tool_calls: [{ name: "hand_to_captain", arguments: { question: "May we spend 40 euros a month on analytics?" } }] },
    { text: "I have asked the Captain." },
  );
  await page.getByRole("link", { name: "Chat" }).click();
  const composer = page.getByLabel("Start a thread in #notes");
  await composer.fill("@skipper can we buy the analytics service?");
  await composer.press("Enter");
  const thread = page.getByRole("complementary", { name: /Thread: .*can we buy the analytics/ });
  await thread.getByText("Skipper handed this to the Captain").waitFor();
  await page.getByRole("button", { name: "Close the thread" }).click();
  // The inbox counts it and shows the question, with the way to answer.
  const inbox = page.getByRole("link", { name: /Approvals/ });
  await inbox.getByLabel("1 waiting").waitFor();
  await inbox.click();
  const questions = page.getByRole("region", { name: /Questions for the Captain/ });
  await questions.getByText("May we spend 40 euros a month on analytics?").waitFor();
  await screenshot(page, "21b-question-for-the-captain");
  await noAxeProblems("the inbox with a question");
  await questions.getByRole("link", { name: "Answer in the thread" }).click();
  await stack.mock.fallback({ text: "Noted: analytics is approved." });
  const reply = page.getByLabel("Reply in this thread");
  await reply.fill("Yes, 40 euros a month is fine.");
  await reply.press("Enter");
  await thread.getByText("answered by ada").waitFor();
  await page.getByRole("button", { name: "Close the thread" }).click();
  // Answered: it leaves the count and the questions, and is kept below.
  await waitFor("the inbox count to go", async () => (await inbox.getByLabel(/waiting/).count()) === 0);
  await inbox.click();
  await page.getByRole("heading", { name: "Questions for the Captain (0)" }).waitFor();
  await page.getByText("Answered by ada").waitFor();
  await page.goto(`${stack.url}/c/notes`);
  await page.getByRole("heading", { name: "notes", exact: true }).waitFor();
});

test("several terminals, one per tab", async () => {
  await page.getByRole("link", { name: "Terminal" }).click();
  await page.getByRole("button", { name: /Shell 1/ }).waitFor();
  await page.getByRole("button", { name: "New terminal" }).click();
  const second = page.getByRole("button", { name: /Shell 2/ });
  await second.waitFor();
  assert.equal(await second.getAttribute("aria-pressed"), "true");
  const shell = page.getByRole("region", { name: /Terminal: Shell \d+/ }).last();
  await waitFor("a prompt in the second shell", async () => (await shell.innerText()).includes("$"));
  await page.keyboard.type("echo second-shell\n");
  await waitFor("its output", async () => (await shell.innerText()).includes("second-shell\n") || (await shell.innerText()).match(/second-shell\s*\n.*\$/s));
  await page.getByRole("button", { name: "Close shell 2" }).click();
  await page.getByRole("dialog", { name: "Close Shell 2?" }).getByRole("button", { name: "Close the shell" }).click();
  await waitFor("one shell left", async () => (await page.getByRole("button", { name: /Shell \d/ }).count()) === 1);
  await noAxeProblems("Terminal with tabs");
});

test("a failed reply is said once, in words; Retry asks again; the reply box says what a reply will do", async () => {
  // The model fails: the first try and Helm's three retries.
  const failure = { error: { status: 500, message: "upstream exploded" } };
  await stack.mock.push(failure, failure, failure, failure);
  await page.getByRole("link", { name: "Chat" }).click();
  const composer = page.getByLabel("Start a thread in #notes");
  await composer.fill("@notes-agent what changed this week?");
  await composer.press("Enter");
  const thread = page.getByRole("complementary", { name: /Thread: .*what changed this week/ });
  const log = thread.getByRole("feed", { name: "Messages in this thread" });
  await log.getByText(/^This reply failed\. The model could not be reached \(HTTP 500\)\./).waitFor();
  // Helm's note about the failure is in the thread (the API says so), but not shown twice.
  const id = Number(page.url().split("/t/")[1]);
  await waitFor("Helm's note", async () => (await call(stack, "GET", `/api/threads/${id}/messages`, { token })).json.items.some((m) => m.author.kind === "system"));
  await page.waitForTimeout(300);
  const shown = await log.innerText();
  assert.equal(shown.match(/failed/g)?.length, 1, `the failure shows once: ${shown}`);
  assert.doesNotMatch(shown, /gave up after|127\.0\.0\.1/, "the raw reason waits behind Details");
  assert.equal(await log.getByRole("link").count(), 0, "no provider URL made into a link");
  await log.getByText("Details").click();
  await log.getByText(/HTTP 500 Internal Server Error from http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions: upstream exploded \(gave up after 3 retries\)/).waitFor();
  // The feed says it in words too.
  await page.getByRole("region", { name: "Messages in #notes" }).getByText("A reply failed. The model could not be reached (HTTP 500).").waitFor();
  // …and counts only what the thread shows: the failed reply, not Helm's hidden note.
  const feedLink = page.getByRole("region", { name: "Messages in #notes" }).getByRole("link", { name: /what changed this week/ });
  assert.match(await feedLink.innerText(), /^1 reply\b/, "Helm's hidden failure note is not counted as a reply");
  // The agent is in this thread though its reply failed: a plain reply tries again, and the box says so.
  await thread.getByText("@notes-agent will answer this reply: it is in this thread, and only you are talking.").waitFor();
  await noAxeProblems("a thread with a failed reply");
  await screenshot(page, "24-failed-reply-desktop");

  // Retry runs the failed turn again on the server; the question is in the thread already.
  await stack.mock.push({ text: "This week the docs moved to /workspace/docs." });
  await log.getByRole("button", { name: "Retry" }).click();
  await log.getByText("This week the docs moved to /workspace/docs.").waitFor();
  assert.equal(await log.getByText("@notes-agent what changed this week?").count(), 1, "the question once");
  // Nothing is posted in Ada's name: Helm notes who asked.
  assert.equal(await log.getByText(/^\w+ asked @notes-agent to try again\.$/).count(), 1);
  assert.equal(await log.getByText("Please try that again.").count(), 0);
  await waitFor("the feed to count the retry and its answer", async () => /^3 replies\b/.test(await feedLink.innerText()));
  // Now the agent answered and only Ada speaks: a plain reply wakes it, and the box says so.
  await thread.getByText("@notes-agent will answer this reply: it is in this thread, and only you are talking.").waitFor();
  await stack.mock.push({ text: "Nothing else changed." });
  const reply = page.getByLabel("Reply in this thread");
  await reply.fill("anything else?");
  await reply.press("Enter");
  await log.getByText("Nothing else changed.").waitFor();
  // A second person speaks: from then on only a mention wakes the agent.
  const bob = await call(stack, "POST", "/api/auth/login", { body: { name: "bob", password: PASSWORD } });
  const cookie = bob.response.headers.get("set-cookie").split(";")[0];
  await call(stack, "POST", `/api/threads/${id}/messages`, { cookie, body: { text: "the docs moved on Tuesday" } });
  await thread.getByText("Others talk here too, so only a mention wakes @notes-agent.", { exact: false }).waitFor();
  await reply.pressSequentially("@notes-agent ");
  await thread.getByText("@notes-agent will answer this reply.").waitFor();
  await reply.fill("");
  await page.getByRole("button", { name: "Close the thread" }).click();
});

test("the command palette matches word starts, best first, and searches the channel's memory", async () => {
  await call(stack, "POST", "/api/channels/notes/messages", { token, body: { text: "Just a note for the team: the office opens late on Monday." } });
  await page.getByRole("link", { name: "Threads" }).click();
  await page.getByRole("link", { name: /Just a note for the team/ }).waitFor();
  await page.keyboard.press("Control+k");
  const palette = page.getByRole("dialog", { name: "Jump to" });
  const search = palette.getByRole("combobox");
  // Letters scattered through a title are no match.
  await search.fill("Jane");
  await palette.getByRole("option", { name: "Search #notes's memory for “Jane”" }).waitFor();
  assert.equal(await palette.getByRole("option", { name: /Just a note/ }).count(), 0, "“Jane” does not find “Just a note…”");
  // A word's start finds it, after the channel whose name starts so.
  await search.fill("note");
  await palette.getByRole("option", { name: /Just a note for the team/ }).waitFor();
  const options = await palette.getByRole("option").allInnerTexts();
  assert.match(options[0], /^notes/, `the channel first: ${options.join(" | ")}`);
  // The memory entry opens recall with the words filled in, and runs it.
  await search.fill("office closed");
  await palette.getByRole("option", { name: "Search #notes's memory for “office closed”" }).click();
  await page.waitForURL(`${stack.url}/c/notes/memory?q=office%20closed`);
  assert.equal(await page.getByLabel("Recall: ask what the channel knows").inputValue(), "office closed");
  await page.getByRole("list", { name: "What recall found" }).waitFor();
});

test("no console errors", () => {
  assert.deepEqual(page.consoleErrors(), []);
});
