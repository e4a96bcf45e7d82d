// The product, used in a real browser as people use it: first run, a
// channel, an agent that streams a plan and writes a file, a terminal, a
// second person invited in, an approval, memory and recall, archive and
// restore, a dropped connection mid-stream, permanent deletion; every main
// view checked by axe-core and photographed at desktop and phone width; no
// console errors anywhere. The steps run in order and share one workspace.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { ARTIFACTS, DESKTOP, PASSWORD, PHONE, SETUP_CODE, axeViolations, launchBrowser, openPage, screenshot, startStack, waitFor } from "./harness.mjs";

const PURPOSE = "This channel owns planning and coordinating the product launch.";
let stack;
let browser;
let ada; // the Captain's page
let bob; // a member's page, in a second browser context
let adaContext;
let bobContext;
const views = []; // [name, page, path] photographed by the views test

before(async () => {
  stack = await startStack();
  browser = await launchBrowser();
  adaContext = await browser.newContext({ viewport: DESKTOP });
  ada = await openPage(adaContext, stack.url);
});

after(async () => {
  await browser?.close();
  await stack?.stop();
  console.log(`screenshots: ${ARTIFACTS}/screenshots`);
});

async function expectNoAxeProblems(page, where) {
  const problems = await axeViolations(page);
  assert.deepEqual(problems, [], `axe-core on ${where}`);
}

async function photograph(page, name) {
  await screenshot(page, `${name}-desktop`);
  const size = page.viewportSize();
  await page.setViewportSize(PHONE);
  await page.waitForTimeout(250);
  await screenshot(page, `${name}-phone`);
  await page.setViewportSize(size ?? DESKTOP);
  await page.waitForTimeout(150);
}

function heading(page, name) {
  return page.getByRole("heading", { name, exact: true });
}

test("first run: the Captain, a model, the computer, the workspace's name, then #main with Skipper ready", async () => {
  await heading(ada, "Create the Captain").waitFor();
  await expectNoAxeProblems(ada, "first run");
  await photograph(ada, "01-first-run");
  await ada.getByLabel("Setup code").fill(SETUP_CODE);
  await ada.getByLabel("Name", { exact: true }).fill("ada");
  await ada.getByLabel("Display name").fill("Ada Lovelace");
  await ada.getByLabel("Password").fill(PASSWORD);
  await ada.getByRole("button", { name: "Create the Captain" }).click();

  await heading(ada, "Connect a model").waitFor();
  // Where to connect one later, in the words the sidebar uses.
  await ada.getByText("Agents will answer once a model is connected (Workspace → Providers, in the sidebar).").waitFor();
  await ada.getByLabel("Base URL", { exact: true }).fill(stack.mock.modelUrl);
  await ada.getByLabel("Default model", { exact: true }).fill("mock-model");
  await ada.getByLabel("API key").fill("sk-e2e-key");
  // The connection test answers before anything is saved.
  await ada.getByRole("button", { name: "Test connection" }).click();
  await ada.getByRole("status").filter({ hasText: /^Connected/ }).waitFor();
  await expectNoAxeProblems(ada, "first run: the model");
  await photograph(ada, "02-first-run-model");
  await ada.getByRole("button", { name: "Connect and continue" }).click();

  await heading(ada, "The computer").waitFor();
  await ada.getByText("One workspace per channel").waitFor();
  // What channel computers are here, said plainly (this machine has bubblewrap).
  await ada.getByText("Each channel's computer runs in a bubblewrap sandbox", { exact: false }).waitFor();
  await ada.getByRole("button", { name: "Continue" }).click();

  await ada.getByLabel("Workspace name").fill("Acme");
  await ada.getByRole("button", { name: "Enter #main" }).click();
  await heading(ada, "main").waitFor();
  await ada.getByRole("navigation", { name: "Workspace" }).getByText("Acme").waitFor();
  const agent = ada.getByLabel("Resident agent");
  await agent.getByText("@skipper", { exact: true }).waitFor();
  await agent.getByText(/^ready ·/).waitFor();
  await agent.getByText("openai / mock-model").waitFor();
  await ada.getByText(/I'm @skipper, the workspace operator/).waitFor();
});

test("create #launch by name and purpose; it ends on the ready announcement", async () => {
  await ada.getByRole("button", { name: "Create a channel" }).click();
  const dialog = ada.getByRole("dialog", { name: "Create a channel" });
  await dialog.getByLabel("Name", { exact: true }).fill("launch");
  await dialog.getByLabel("What is this channel all about?").fill(PURPOSE);
  await expectNoAxeProblems(ada, "create channel");
  await photograph(ada, "03-create-channel");
  await dialog.getByRole("button", { name: "Create channel" }).click();
  await heading(ada, "launch").waitFor();
  await ada.getByText(/@launch-agent is ready\. This channel is about/).waitFor();
  await ada.getByLabel("Resident agent").getByText("@launch-agent", { exact: true }).waitFor();
  const link = ada.getByRole("navigation", { name: "Workspace" }).getByRole("link", { name: /^launch/ });
  await link.waitFor();
});

test("ask the agent for a plan: the reply streams in, and the file appears in Files", async () => {
  await stack.mock.push(
    { tool_calls: [{ name: "run_command", arguments: { command: "echo 'no plan yet' && date +%Y >/dev/null" } }] },
    { tool_calls: [{ name: "write_file", arguments: { path: "plan.md", content: "# Launch plan\n\n1. Beta on the 3rd\n2. Press on the 10th\n" } }] },
    { chunks: ["Here is ", "the plan. ", "It is in **plan.md**:\n\n", "- Beta on the 3rd\n", "- Press on the 10th"], chunk_delay_ms: 400 },
  );
  const composer = ada.getByLabel("Start a thread in #launch");
  await composer.fill("Please write a launch plan in plan.md");
  await composer.press("Enter");
  const thread = ada.getByRole("complementary", { name: /Thread: Please write a launch plan/ });
  await thread.waitFor();
  // Part of the reply is there while the rest is still coming.
  await thread.getByText(/Here is the plan/).waitFor();
  assert.equal(await thread.getByText("Press on the 10th").count(), 0, "the end is not there yet");
  await thread.locator('[aria-busy="true"]').first().waitFor();
  await photograph(ada, "04-chat-streaming");
  await thread.getByText("Press on the 10th").waitFor();
  await waitFor("the reply to settle", async () => (await thread.locator('[aria-busy="true"]').count()) === 0);
  await thread.getByText("Wrote a file").waitFor();
  // A command's card shows what it printed, not only its exit code.
  const ran = thread.locator(".tool-card", { hasText: "Ran a command" });
  await ran.locator("summary").click();
  await ran.locator("pre.tool-output").getByText(/exit code 0\s+stdout:\s+no plan yet/).waitFor();
  await expectNoAxeProblems(ada, "the thread");
  await photograph(ada, "05-chat-thread");
  views.push(["chat", "/c/launch"]);

  await ada.getByRole("link", { name: "Files" }).click();
  await ada.getByRole("link", { name: /plan\.md/ }).click();
  await ada.getByText("Beta on the 3rd").waitFor();
  await ada.getByRole("link", { name: /“Please write a launch plan/ }).waitFor();
  await expectNoAxeProblems(ada, "Files");
  await photograph(ada, "06-files");
});

test("open a terminal in the channel's computer: pwd is /workspace", async () => {
  await ada.getByRole("link", { name: "Terminal" }).click();
  const screen = ada.locator(".xterm-rows");
  await waitFor("a shell prompt", async () => (await screen.innerText()).includes("$"));
  await ada.locator(".xterm-helper-textarea").focus();
  await ada.keyboard.type("pwd\n");
  await waitFor("pwd's answer", async () => (await screen.innerText()).includes("/workspace"));
  await photograph(ada, "07-terminal");
  // A reload reconnects to the same shell and replays its scrollback.
  await ada.reload();
  await waitFor("the scrollback after a reload", async () => (await ada.locator(".xterm-rows").innerText()).includes("/workspace"));
  await expectNoAxeProblems(ada, "Terminal");
});

test("a second person joins by invitation and sees the same thread, live", async () => {
  await ada.goto(`${stack.url}/admin/people`);
  await ada.getByRole("button", { name: "Make an invitation link" }).click();
  const link = await ada.getByLabel(/Send this link/).inputValue();
  assert.match(link, /\/join#/);
  await expectNoAxeProblems(ada, "People");
  await photograph(ada, "08-people");

  bobContext = await browser.newContext({ viewport: DESKTOP });
  bob = await openPage(bobContext, link.replace(/^https?:\/\/[^/]+/, stack.url));
  await heading(bob, "Join Acme").waitFor();
  // The link was checked as the page opened: it says what it makes Bob.
  await bob.getByText("You were invited as a member.", { exact: false }).waitFor();
  await expectNoAxeProblems(bob, "Join");
  await bob.getByLabel("Name", { exact: true }).fill("bob");
  await bob.getByLabel("Display name").fill("Bob Builder");
  await bob.getByLabel("Password").fill(PASSWORD);
  await bob.getByRole("button", { name: "Join the workspace" }).click();
  await heading(bob, "main").waitFor();
  // The same link again says at once that it was used, with no form to fill.
  const again = await browser.newContext({ viewport: DESKTOP });
  const stale = await openPage(again, link.replace(/^https?:\/\/[^/]+/, stack.url));
  await heading(stale, "This invitation cannot be used").waitFor();
  await stale.getByText(/was used already/).waitFor();
  assert.equal(await stale.getByLabel("Password").count(), 0);
  await again.close();

  await bob.getByRole("navigation", { name: "Workspace" }).getByRole("link", { name: /^launch/ }).click();
  await bob.getByRole("link", { name: /1 reply/ }).click();
  const bobThread = bob.getByRole("complementary", { name: /Thread: Please write a launch plan/ });
  await bobThread.getByText("Press on the 10th").waitFor();

  // Ada continues the thread; Bob watches the reply stream in.
  await ada.goto(`${stack.url}/c/launch`);
  await ada.getByRole("link", { name: /1 reply/ }).click();
  await stack.mock.push({ chunks: ["Yes: ", "the beta ", "moves to ", "the 4th."], chunk_delay_ms: 300 });
  const reply = ada.getByLabel("Reply in this thread");
  await reply.fill("@launch-agent can the beta move a day later?");
  await reply.press("Enter");
  await bobThread.getByText("can the beta move a day later?").waitFor();
  await bobThread.getByText(/Yes: the beta/).waitFor();
  await bobThread.getByText("Yes: the beta moves to the 4th.").waitFor();
});

test("an approval card: Skipper asks, the Captain approves in the thread", async () => {
  await stack.mock.push(
    { tool_calls: [{ name: "host_command", arguments: { command: "echo disk-ok" } }] },
    { text: "The host's disk is fine." },
  );
  await bob.getByRole("navigation", { name: "Workspace" }).getByRole("link", { name: /^main/ }).click();
  const composer = bob.getByLabel("Message #main: ask Skipper anything");
  await composer.fill("how much disk is free on the host?");
  await composer.press("Enter");
  const bobThread = bob.getByRole("complementary", { name: /Thread: how much disk/ });
  const bobCard = bobThread.getByRole("region", { name: /Approval request/ });
  await bobCard.getByText("Waiting for the Captain or an admin to decide.").waitFor();

  // The Captain sees it waiting, in the inbox and in the thread.
  await ada.goto(`${stack.url}/admin/approvals`);
  await ada.getByRole("region", { name: /Approval request: .*echo disk-ok/ }).waitFor();
  await expectNoAxeProblems(ada, "Approvals");
  await photograph(ada, "09-approvals");
  await ada.getByRole("link", { name: "#main" }).first().click();
  const card = ada.getByRole("region", { name: /Approval request: .*echo disk-ok/ });
  await photograph(ada, "10-approval-card");
  await card.getByRole("button", { name: "Approve" }).click();
  await card.getByText(/Approved by Ada Lovelace/).waitFor();
  await bobCard.getByText(/Approved by Ada Lovelace/).waitFor();
  await bobThread.getByText("The host's disk is fine.").waitFor();
});

test("the Captain renames the workspace in Workspace → Settings; everyone sees the new name", async () => {
  await ada.getByRole("navigation", { name: "Workspace" }).getByRole("link", { name: "Settings" }).click();
  await heading(ada, "Workspace settings").waitFor();
  const name = ada.getByLabel("Workspace name");
  assert.equal(await name.inputValue(), "Acme");
  // Only spaces is no name (as in the wizard, the server trims it): nothing to send.
  await name.fill("   ");
  assert.equal(await ada.getByRole("button", { name: "Rename" }).isDisabled(), true, "nothing to rename to");
  assert.equal(await name.getAttribute("maxlength"), "64");
  await name.fill("Acme Launch Co");
  await ada.getByRole("button", { name: "Rename" }).click();
  await ada.locator(".toast").filter({ hasText: "The workspace is now called Acme Launch Co." }).waitFor();
  await ada.getByRole("navigation", { name: "Workspace" }).getByText("Acme Launch Co").waitFor();
  // Bob's sidebar follows, live.
  await bob.getByRole("navigation", { name: "Workspace" }).getByText("Acme Launch Co").waitFor();
  assert.equal(await bob.getByRole("navigation", { name: "Workspace" }).getByRole("link", { name: "Settings" }).count(), 0, "not for members");
  await expectNoAxeProblems(ada, "Workspace settings");
  await photograph(ada, "08-workspace-settings");
  await name.fill("Acme");
  await ada.getByRole("button", { name: "Rename" }).click();
  await ada.getByRole("navigation", { name: "Workspace" }).getByText("Acme", { exact: true }).waitFor();
});

test("record a decision in Memory, then find it with recall", async () => {
  await ada.goto(`${stack.url}/c/launch/memory`);
  const form = ada.getByRole("form", { name: "Record something" });
  await form.getByLabel("Kind of record").selectOption("decision");
  await form.getByLabel("What to record").fill("Launch date: 12 March.");
  await form.getByRole("button", { name: "Record" }).click();
  await ada.locator(".memory-list").getByText("Launch date: 12 March.").waitFor();
  await ada.getByLabel("Recall: ask what the channel knows").fill("what is the launch date?");
  await ada.getByRole("button", { name: "Recall", exact: true }).click();
  const hits = ada.getByRole("list", { name: "What recall found" });
  await hits.getByText("Launch date: 12 March.").waitFor();
  // Recorded a moment ago (perhaps not embedded yet), it still answers first;
  // messages show as plain text, not Markdown source.
  assert.match(await hits.getByRole("listitem").first().innerText(), /Launch date: 12 March\./);
  assert.doesNotMatch(await hits.innerText(), /\*\*/);
  await expectNoAxeProblems(ada, "Memory");
  await photograph(ada, "11-memory");
});

test("on a phone: the channel list is a drawer that holds the focus, and a notice leaves the form in view", async () => {
  await ada.setViewportSize(PHONE);
  try {
    await ada.goto(`${stack.url}/c/launch/memory`);
    await heading(ada, "Memory").waitFor();
    const opener = ada.getByRole("main").getByRole("button", { name: "Open the channel list" });
    await opener.click();
    const focused = () => ada.evaluate(() => [document.activeElement?.getAttribute("aria-current"), document.activeElement?.getAttribute("aria-label"), document.activeElement?.textContent]);
    // The focus moves into the drawer, onto the channel being read.
    await waitFor("the current channel to take the focus", async () => (await focused())[0] === "page");
    assert.match((await focused())[2] ?? "", /launch/);
    assert.equal(await opener.getAttribute("aria-expanded"), "true");
    assert.equal(await ada.getByRole("main").getAttribute("inert"), "", "the page behind the drawer is inert");
    await ada.waitForTimeout(300); // the slide-in
    await expectNoAxeProblems(ada, "the open drawer");
    await screenshot(ada, "18-drawer-phone");
    await ada.keyboard.press("Escape");
    await waitFor("the focus to go back to the button", async () => /^Open the channel list\b/.test((await focused())[1] ?? ""));
    assert.equal(await opener.getAttribute("aria-expanded"), "false");
    assert.equal(await ada.getByRole("main").getAttribute("inert"), null);

    // A notice drops from the top, clear of the record form: with recall's
    // hits above it, the form is at the bottom of the screen, where notices
    // used to show.
    await ada.getByLabel("Recall: ask what the channel knows").fill("what is the launch date?");
    await ada.getByRole("button", { name: "Recall", exact: true }).click();
    await ada.getByRole("list", { name: "What recall found" }).getByText("Launch date: 12 March.").waitFor();
    const form = ada.getByRole("form", { name: "Record something" });
    await form.getByLabel("Kind of record").selectOption("decision");
    await form.getByLabel("What to record").fill("Press kit owner: bob.");
    await form.getByRole("button", { name: "Record" }).click();
    const notice = ada.locator(".toast").filter({ hasText: "Decision recorded." });
    await notice.waitFor();
    const [a, b] = [await notice.boundingBox(), await form.boundingBox()];
    assert.ok(a && b, "the notice and the form are on screen");
    const overlap = a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
    assert.ok(!overlap, `the notice ${JSON.stringify(a)} covers the form ${JSON.stringify(b)}`);
    await screenshot(ada, "18-notice-phone");
  } finally {
    await ada.setViewportSize(DESKTOP);
  }
});

test("every main view passes axe-core and is photographed at desktop and phone width", async () => {
  for (const [view, name] of [
    ["threads", "12-threads"],
    ["activity", "13-activity"],
    ["settings", "14-settings"],
  ]) {
    await ada.goto(`${stack.url}/c/launch/${view}`);
    await heading(ada, view[0].toUpperCase() + view.slice(1)).waitFor();
    await ada.waitForTimeout(300);
    await expectNoAxeProblems(ada, view);
    await photograph(ada, name);
  }
  for (const [section, title, name] of [
    ["providers", "Model providers", "15-providers"],
    ["audit", "Audit log", "16-audit"],
  ]) {
    await ada.goto(`${stack.url}/admin/${section}`);
    await heading(ada, title).waitFor();
    await ada.waitForTimeout(300);
    await expectNoAxeProblems(ada, section);
    await photograph(ada, name);
  }
  await ada.getByRole("button", { name: "Verify chain" }).click();
  await ada.getByText(/Intact: all \d+ rows check out/).waitFor();
  // An agent's handle is shown once marked: "bob via @skipper".
  const audit = await ada.locator(".audit-table").innerText();
  assert.match(audit, /via @skipper/);
  assert.doesNotMatch(audit, /@@/);
  // The palette and the shortcut sheet.
  await ada.goto(`${stack.url}/c/launch`);
  await heading(ada, "launch").waitFor();
  await ada.keyboard.press("Control+k");
  const palette = ada.getByRole("dialog", { name: "Jump to" });
  await palette.getByRole("combobox").fill("lau");
  await palette.getByRole("option", { name: /launch/ }).first().waitFor();
  await expectNoAxeProblems(ada, "the command palette");
  await photograph(ada, "17-palette");
  await ada.keyboard.press("Escape");
  await ada.keyboard.press("?");
  await ada.getByRole("dialog", { name: "Keyboard shortcuts" }).waitFor();
  await ada.keyboard.press("Escape");
});

test("archive and restore: the same agent world comes back", async () => {
  await ada.goto(`${stack.url}/c/launch/settings`);
  await ada.getByRole("button", { name: "Archive" }).click();
  await ada.getByText("This channel is archived: its agent is paused").waitFor();
  await ada.getByRole("button", { name: /Archived \(1\)/ }).waitFor();
  // A member sees that it is archived and who can restore it; no button
  // that would only answer "not allowed".
  await bob.goto(`${stack.url}/c/launch`);
  await bob.getByText("This channel is archived: its agent is paused").waitFor();
  await bob.getByText("Only the Captain, admins and this channel's owners can restore it.").first().waitFor();
  await bob.getByText("This channel is archived, so nobody writes here.").waitFor();
  assert.equal(await bob.getByRole("button", { name: "Restore" }).count(), 0, "no Restore button for a member");
  assert.equal(await bob.getByText("Restore it to write here again").count(), 0);
  await screenshot(bob, "12-archived-member-desktop");
  await ada.getByRole("link", { name: "Chat" }).click();
  await ada.getByText("This channel is archived. Restore it to write here again.").waitFor();
  await ada.getByRole("status").getByRole("button", { name: "Restore" }).click();
  await waitFor("the archived note to go", async () => (await ada.getByText("This channel is archived: its agent is paused").count()) === 0);
  await ada.getByLabel("Start a thread in #launch").waitFor();
  await ada.getByRole("link", { name: /3 replies/ }).waitFor();
});

test("the connection drops mid-stream and comes back: no message missing or doubled", async () => {
  const words = Array.from({ length: 24 }, (_, i) => `w${i + 1}`);
  await stack.mock.push({ chunks: words.map((w) => `${w} `), chunk_delay_ms: 200 });
  await ada.getByRole("link", { name: /3 replies/ }).click();
  const thread = ada.getByRole("complementary", { name: /Thread: Please write a launch plan/ });
  await thread.getByText("Yes: the beta moves to the 4th.").waitFor();
  const before = await thread.getByRole("article").count();
  const reply = ada.getByLabel("Reply in this thread");
  await reply.fill("@launch-agent count to twenty-four, slowly");
  await reply.press("Enter");
  await thread.getByText(/w3 w4/).waitFor();
  // The network drops: every connection of this browser dies, and new ones
  // are refused for a few seconds.
  for (const page of [ada, bob]) page.allowErrors(/WebSocket connection to .* failed|ERR_CONNECTION_(RESET|REFUSED)|net::ERR_/);
  stack.relay.cut(4000);
  await ada.getByText(/Reconnecting/).waitFor();
  await thread.getByText("w24").waitFor({ timeout: 30_000 });
  await waitFor("the banner to go", async () => (await ada.getByText(/Reconnecting/).count()) === 0);
  const text = await thread.getByRole("article").last().innerText();
  assert.ok(text.includes(words.join(" ")), `the reply reads once, whole: ${text}`);
  assert.equal((text.match(/w12 /g) ?? []).length, 1, "no word is doubled");
  assert.equal(await thread.getByRole("article").count(), before + 2, "one question, one answer");
});

test("rename #launch live: the agent keeps its handle, everyone sees the new name", async () => {
  await ada.goto(`${stack.url}/c/launch/settings`);
  const name = ada.getByLabel("Channel name");
  // A name the rule refuses says which characters are allowed.
  await name.fill("lift off!");
  await ada.getByRole("button", { name: "Rename" }).click();
  assert.match(await name.evaluate((el) => el.validationMessage), /lowercase letters, digits, '-' and '_', starting with a letter or digit/);
  // A name taken already: the server's answer stays only until the name changes.
  ada.allowErrors(/status of 409 \(Conflict\) \(.*\/api\/channels\/\d+\)/);
  await name.fill("main");
  await ada.getByRole("button", { name: "Rename" }).click();
  const refused = ada.locator("form.settings-section").first().getByRole("alert");
  await refused.waitFor();
  await name.fill("liftoff");
  assert.equal(await refused.count(), 0, "the old error goes once the name is fixed");
  await ada.getByRole("button", { name: "Rename" }).click();
  await ada.waitForURL(`${stack.url}/c/liftoff/settings`);
  await ada.getByRole("heading", { name: "liftoff", exact: true }).waitFor();
  await bob.getByRole("link", { name: /liftoff/ }).first().waitFor();
  await ada.getByRole("link", { name: "Chat" }).click();
  await ada.getByLabel("Start a thread in #liftoff").waitFor();
  await ada.getByText("@launch-agent").first().waitFor();
  await photograph(ada, "19-renamed");
  await ada.getByRole("navigation", { name: "#liftoff views" }).getByRole("link", { name: "Settings" }).click();
  await ada.getByLabel("Channel name").fill("launch");
  await ada.getByRole("button", { name: "Rename" }).click();
  await ada.waitForURL(`${stack.url}/c/launch/settings`);
  assert.deepEqual(ada.consoleErrors(), []);
});

test("delete #launch for good, confirmed by typing its name", async () => {
  await ada.goto(`${stack.url}/c/launch/settings`);
  await ada.getByRole("button", { name: "Archive" }).click();
  await ada.getByText("This channel is archived: its agent is paused").waitFor();
  await ada.getByRole("button", { name: "Delete…" }).click();
  const dialog = ada.getByRole("dialog", { name: "Delete #launch for good?" });
  const confirm = dialog.getByRole("button", { name: "Delete #launch" });
  await dialog.getByLabel("Type launch to confirm").fill("lunch");
  assert.equal(await confirm.isDisabled(), true, "a wrong name does not confirm");
  await expectNoAxeProblems(ada, "the delete dialog");
  await dialog.getByLabel("Type launch to confirm").fill("launch");
  await confirm.click();
  await heading(ada, "main").waitFor();
  await ada.getByText("#launch was deleted.").waitFor();
  assert.equal(await ada.getByRole("navigation", { name: "Workspace" }).getByRole("link", { name: /^launch/ }).count(), 0);
});

test("no console errors on any page", () => {
  assert.deepEqual(ada.consoleErrors(), [], "the Captain's page");
  assert.deepEqual(bob?.consoleErrors() ?? [], [], "the member's page");
});
