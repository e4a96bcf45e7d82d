// Fixes from a new user's audit, each seen in a real browser: first run's
// wrong setup code said for a person, a slow model URL said while it is
// tried, one that does not answer said before it is saved; the channel header naming the agent by its handle (and at phone
// width inside its card, the icon-only tabs titled); a member in #main told
// once that Skipper's host computer is not theirs (no refused requests, no
// dead buttons); Activity linking threads by title; Cowork's agent panel
// keeping its tool cards over a reload, a new note's editor taking the
// focus, the file's path visible beside the panel; the panel's exchange kept
// read, a thread started elsewhere unread until the chat shows it; folders renamed and deleted in Files, and
// Files on a phone showing the list, then the file; a revoked invitation's
// link taken off the screen; no "Ask @skipper" in an archived channel.
import assert from "node:assert/strict";
import { createServer } from "node:net";
import { after, before, test } from "node:test";
import { ARTIFACTS, DESKTOP, PASSWORD, PHONE, SETUP_CODE, axeViolations, call, launchBrowser, openPage, screenshot, startStack, waitFor } from "./harness.mjs";

let stack;
let browser;
let context;
let page; // the Captain's
let token;
let bob; // a member's page
let bobContext;

before(async () => {
  stack = await startStack();
  browser = await launchBrowser();
  context = await browser.newContext({ viewport: DESKTOP });
  page = await openPage(context, stack.url);
});

after(async () => {
  await browser?.close();
  await stack?.stop();
  console.log(`screenshots: ${ARTIFACTS}/screenshots`);
});

async function noAxeProblems(p, where) {
  assert.deepEqual(await axeViolations(p), [], `axe-core on ${where}`);
}

const sidebar = (p) => p.getByRole("navigation", { name: "Workspace" });

test("first run: a wrong setup code is said for a person; a model URL that does not answer says it is being tried", async () => {
  await page.getByRole("heading", { name: "Create the Captain" }).waitFor();
  await page.getByLabel("Setup code").fill("not-the-code-at-all");
  await page.getByLabel("Name", { exact: true }).fill("ada");
  await page.getByLabel("Display name").fill("Ada Lovelace");
  await page.getByLabel("Password").fill(PASSWORD);
  page.allowErrors(/status of 403 \(Forbidden\) \(.*\/api\/setup\)/);
  await page.getByRole("button", { name: "Create the Captain" }).click();
  await page.getByText(/^That setup code is not right\. The server prints it in its log when it starts/).waitFor();
  assert.equal(await page.getByText("setup_code").count(), 0, "no API field names");
  await screenshot(page, "fix-10-wrong-setup-code");
  await page.getByLabel("Setup code").fill(SETUP_CODE);
  await page.getByRole("button", { name: "Create the Captain" }).click();

  // A provider that accepts the connection and never answers.
  const held = new Set();
  const silent = createServer((s) => held.add(s));
  await new Promise((done) => silent.listen(0, "127.0.0.1", done));
  const slowUrl = `http://127.0.0.1:${silent.address().port}/v1`;
  await page.getByRole("heading", { name: "Connect a model" }).waitFor();
  await page.getByLabel("Base URL", { exact: true }).fill(slowUrl);
  await page.getByRole("button", { name: "Test connection" }).click();
  await page.getByRole("status").getByText(`Trying to reach ${slowUrl}…`).waitFor();
  await screenshot(page, "fix-10-trying-model-url");
  page.allowErrors(/status of 502|status of 504|status of 422|status of 400/);
  for (const s of held) s.destroy();
  silent.close();
  await waitFor("the attempt to end", async () => (await page.getByText(/^Trying to reach/).count()) === 0, 60_000);

  // An address nothing answers at is said before anything is saved, and
  // may then be saved anyway (a local model server not started yet).
  const closed = createServer();
  await new Promise((resolve) => closed.listen(0, "127.0.0.1", resolve));
  const closedUrl = `http://127.0.0.1:${closed.address().port}/v1`;
  await new Promise((resolve) => closed.close(resolve));
  await page.getByLabel("Base URL", { exact: true }).fill(closedUrl);
  await page.getByRole("button", { name: "Connect and continue" }).click();
  await page.getByText(/^The model could not be reached: its server did not answer\. Check the address and the key, or save it anyway and connect it later\./).waitFor({ timeout: 60_000 });
  await page.getByRole("button", { name: "Save anyway" }).waitFor();
  assert.equal(await page.getByRole("heading", { name: "Connect a model" }).count(), 1, "still on the model step");
  const saved = await page.evaluate(() => fetch("/api/providers").then((r) => r.json()));
  assert.deepEqual(saved, [], "nothing saved");
  await screenshot(page, "fix-10-model-url-unreached");

  await page.getByLabel("Base URL", { exact: true }).fill(stack.mock.modelUrl);
  await page.getByLabel("Default model", { exact: true }).fill("mock-model");
  await page.getByRole("button", { name: "Connect and continue" }).click();
  await page.getByRole("heading", { name: "The computer" }).waitFor();
  await page.getByRole("button", { name: "Continue" }).click();
  await page.getByLabel("Workspace name").fill("Acme");
  await page.getByRole("button", { name: "Enter #main" }).click();
  await page.getByRole("heading", { name: "main", exact: true }).waitFor();

  const cookie = (await context.cookies()).map((c) => `${c.name}=${c.value}`).join("; ");
  token = (await call(stack, "POST", "/api/tokens", { cookie, body: { name: "e2e" } })).json.secret;
  await call(stack, "POST", "/api/channels", { token, body: { name: "launch", purpose: "Planning and coordinating the product launch." } });
});

test("the header names the agent by its handle, as its messages are signed; at phone width it stays in its card and the tabs have titles", async () => {
  await page.goto(`${stack.url}/c/launch`);
  const card = page.getByLabel("Resident agent");
  await card.getByText("@launch-agent", { exact: true }).waitFor();
  assert.equal((await card.locator(".agent-name").textContent()).trim(), "@launch-agent");
  const tabs = page.getByRole("navigation", { name: "#launch views" });
  for (const label of ["Chat", "Threads", "Files", "Cowork", "Terminal", "Memory", "Activity", "Settings"]) {
    assert.equal(await tabs.getByRole("link", { name: label, exact: true }).getAttribute("title"), label);
  }
  await page.setViewportSize(PHONE);
  try {
    await page.waitForTimeout(200);
    // The model's name never paints past the card: it fits or it is cut with an ellipsis.
    const status = await card.locator(".agent-status").evaluate((el) => {
      const s = getComputedStyle(el);
      return { fits: el.scrollWidth <= el.clientWidth, clipped: s.overflowX === "hidden" && s.textOverflow === "ellipsis" };
    });
    assert.ok(status.fits || status.clipped, "the status line stays inside the agent card");
    const cardBox = await card.boundingBox();
    assert.ok(cardBox.x + cardBox.width <= PHONE.width, "the card is on screen");
    await screenshot(page, "fix-11-header-phone");
  } finally {
    await page.setViewportSize(DESKTOP);
  }
});

test("a member in #main: Files, Cowork and Terminal say once that Skipper's host computer is not theirs", async () => {
  const invite = await call(stack, "POST", "/api/invites", { token, body: {} });
  const accepted = await call(stack, "POST", "/api/invites/accept", { body: { code: invite.json.code, name: "bob", display_name: "Bob Builder", password: PASSWORD } });
  const cookie = accepted.response.headers.get("set-cookie").split(";")[0];
  bobContext = await browser.newContext({ viewport: DESKTOP });
  const [name, value] = cookie.split("=");
  await bobContext.addCookies([{ name, value, url: stack.url }]);
  bob = await openPage(bobContext, `${stack.url}/c/main/files`);
  const sentence = /^#main runs on Skipper's host computer, so only the Captain and admins work on its/;
  for (const [view, what] of [
    ["files", "files"],
    ["cowork", "notes, docs and whiteboards"],
    ["terminal", "terminals"],
  ]) {
    await bob.goto(`${stack.url}/c/main/${view}`);
    await bob.getByText(`#main runs on Skipper's host computer, so only the Captain and admins work on its ${what}.`).waitFor();
    assert.equal(await bob.getByText(sentence).count(), 1, `said once in ${view}`);
    await bob.waitForTimeout(300);
    assert.equal(await bob.getByText(/not allowed/).count(), 0, `no server text in ${view}`);
    for (const control of ["Upload", "New folder", "Retry", "New terminal", "New note", "Agent"]) {
      assert.equal(await bob.getByRole("button", { name: control, exact: true }).count(), 0, `no ${control} in ${view}`);
    }
    await bob.getByRole("link", { name: "Chat", exact: true }).last().waitFor();
    await noAxeProblems(bob, `a member in #main's ${view}`);
    await screenshot(bob, `fix-03-member-main-${view}-desktop`);
  }
  await bob.setViewportSize(PHONE);
  await bob.waitForTimeout(200);
  await screenshot(bob, "fix-03-member-main-terminal-phone");
  // Nor an Attach button in #main's chat (uploads go into that computer).
  await bob.goto(`${stack.url}/c/main`);
  await bob.getByLabel("Message #main: ask Skipper anything").waitFor();
  assert.equal(await bob.getByRole("button", { name: "Attach files" }).count(), 0);
  await bob.setViewportSize(DESKTOP);
  // Nothing was asked of the server that it refuses (each refusal is a console error).
  assert.deepEqual(bob.consoleErrors(), []);
  // The Captain still has them.
  await page.goto(`${stack.url}/c/main/files`);
  await page.getByRole("button", { name: "New folder" }).waitFor();
  assert.equal(await page.getByText(/runs on Skipper's host computer, so only/).count(), 0);
  await page.goto(`${stack.url}/c/main`);
  await page.getByRole("button", { name: "Attach files" }).first().waitFor();
});

test("Cowork's agent panel: tool cards come back after a reload; Activity links the thread by its title", async () => {
  await page.goto(`${stack.url}/c/launch/cowork?path=${encodeURIComponent("/workspace/notes/Retro.md")}`);
  await call(stack, "PUT", "/api/channels/launch/files", { token, body: { path: "notes/Retro.md", content: "# Retro\n" } });
  await page.reload();
  await page.getByLabel("Text of Retro.md").waitFor();
  await page.getByRole("button", { name: "Agent", exact: true }).click();
  const panel = page.getByRole("complementary", { name: "Agent panel: @launch-agent" });
  // The panel names the agent by its handle too.
  await panel.locator(".agent-head-text strong").getByText("@launch-agent", { exact: true }).waitFor();
  await stack.mock.push(
    { tool_calls: [{ name: "write_file", arguments: { path: "notes/Retro.md", content: "# Retro\n\n- went well: beta\n" } }] },
    { text: "Filled in the retro." },
  );
  const ask = panel.getByLabel("Ask @launch-agent");
  await ask.fill("fill in this retro");
  await ask.press("Enter");
  await panel.getByText("Filled in the retro.").waitFor();
  const card = panel.locator(".tool-card");
  await card.getByText("done", { exact: true }).waitFor();

  // The file's name and path stay readable beside the panel.
  const pathBox = await page.locator(".cowork-path").boundingBox();
  assert.ok(pathBox && pathBox.width > 120, `the path is shown (${pathBox?.width}px wide)`);
  await screenshot(page, "fix-12-cowork-head-with-panel");

  await page.reload();
  await panel.getByText("Filled in the retro.").waitFor();
  await panel.locator(".tool-card").getByText("done", { exact: true }).waitFor();
  assert.equal(await panel.locator(".tool-card").count(), 1);
  await screenshot(page, "fix-02-cowork-panel-after-reload");

  const thread = (await call(stack, "GET", "/api/channels/launch/threads", { token })).json.find((t) => /retro/.test(t.title));
  assert.ok(thread, "the panel's thread, with a title");
  await page.goto(`${stack.url}/c/launch/activity`);
  const list = page.getByRole("list", { name: "Activity, newest first" });
  await list.getByRole("link", { name: thread.title }).first().waitFor();
  assert.equal(await list.getByRole("link", { name: "thread", exact: true }).count(), 0);
  await noAxeProblems(page, "Activity");
  await screenshot(page, "fix-06-activity-thread-titles");
});

test("the exchange in Cowork's panel stays read; a thread started elsewhere counts until the chat shows it", async () => {
  // Ada's exchange in Cowork's panel above: the agent's reply did not count (the panel showed it).
  await page.goto(`${stack.url}/c/launch/files`);
  await page.getByRole("button", { name: "New folder" }).waitFor();
  await page.waitForTimeout(1000);
  assert.equal(await sidebar(page).locator('a[href="/c/launch"].has-unread').count(), 0, "nothing unread after the exchange in Cowork's panel");
  await stack.mock.push({ text: "Noted, thanks." });
  // A thread started elsewhere (another tab, say) while Ada is in the Files view: Files does not show it, so it is unread.
  const posted = (await call(stack, "POST", "/api/channels/launch/messages", { token, body: { text: "@launch-agent note that the beta moved" } })).json;
  const threadId = posted.thread_id ?? posted.message?.thread_id;
  await waitFor("the agent's reply", async () => {
    const items = (await call(stack, "GET", `/api/threads/${threadId}/messages`, { token })).json.items;
    return items.some((m) => m.content === "Noted, thanks.");
  });
  await sidebar(page).locator('a[href="/c/launch"].has-unread').waitFor();
  await page.reload();
  await sidebar(page).locator('a[href="/c/launch"].has-unread').waitFor();
  // The chat shows it: read, after a reload too.
  await page.getByRole("link", { name: "Chat", exact: true }).click();
  await waitFor("the channel to be read", async () => (await sidebar(page).locator('a[href="/c/launch"].has-unread').count()) === 0);
  await waitFor("the read marker to be kept", async () => {
    const counts = (await call(stack, "GET", "/api/unread", { token })).json;
    return counts.find((c) => c.channel_id === posted.thread.channel_id)?.unread === 0;
  });
  await page.goto(`${stack.url}/c/launch/files`);
  await page.getByRole("button", { name: "New folder" }).waitFor();
  assert.equal(await sidebar(page).locator('a[href="/c/launch"].has-unread').count(), 0, "nothing unread after a reload");
});

test("a new note's editor takes the focus: typing at once writes in it", async () => {
  await page.goto(`${stack.url}/c/launch/cowork`);
  const rail = page.getByRole("navigation", { name: "Cowork folders" });
  await rail.getByRole("button", { name: "New note", exact: true }).first().click();
  const dialog = page.getByRole("dialog", { name: "New note" });
  await dialog.getByLabel("Name").fill("Standup");
  await dialog.getByRole("button", { name: "Create note" }).click();
  await dialog.waitFor({ state: "detached" });
  const text = page.getByLabel("Text of Standup.md");
  await text.waitFor();
  await waitFor("the editor to have the focus", async () => await text.evaluate((el) => el === document.activeElement), 5000);
  await page.keyboard.type("standup notes");
  assert.match(await text.inputValue(), /standup notes$/);
  assert.equal(await page.getByRole("dialog").count(), 0, "no dialog opened again");
  await screenshot(page, "fix-05-new-note-focus");
  await text.press("Control+s");
  await page.getByRole("status").getByText("saved").waitFor();
  // A new whiteboard: the board takes the focus once drawn.
  await rail.getByRole("button", { name: "New whiteboard", exact: true }).first().click();
  const board = page.getByRole("dialog", { name: "New whiteboard" });
  await board.getByLabel("Name").fill("Flow");
  await board.getByRole("button", { name: "Create whiteboard" }).click();
  await board.waitFor({ state: "detached" });
  await waitFor("the board to have the focus", async () => await page.evaluate(() => document.activeElement?.classList.contains("wb-canvas") ?? false), 8000);
});

test("Files: a folder is renamed and deleted from inside it", async () => {
  await call(stack, "PUT", "/api/channels/launch/files", { token, body: { path: "drafts/one.md", content: "# One\n" } });
  await page.goto(`${stack.url}/c/launch/files`);
  await page.getByRole("link", { name: /drafts/ }).click();
  await page.waitForURL(/path=%2Fworkspace%2Fdrafts$/);
  await page.getByRole("button", { name: "Rename folder drafts" }).click();
  const rename = page.getByRole("dialog", { name: "Rename drafts" });
  await rename.getByLabel("New name").fill("final");
  await screenshot(page, "fix-04-rename-folder");
  await rename.getByRole("button", { name: "Rename" }).click();
  await page.waitForURL(/path=%2Fworkspace%2Ffinal$/);
  await page.getByRole("list", { name: "Contents of /workspace/final" }).getByText("one.md").waitFor();
  await noAxeProblems(page, "Files in a folder");
  await page.getByRole("button", { name: "Delete folder final" }).click();
  const remove = page.getByRole("dialog", { name: "Delete final?" });
  await remove.getByText("with everything in it").waitFor();
  await remove.getByRole("button", { name: "Delete", exact: true }).click();
  const root = page.getByRole("list", { name: "Contents of /workspace", exact: true });
  await root.waitFor();
  await root.getByRole("link", { name: /notes/ }).waitFor();
  assert.equal(await root.getByRole("link", { name: /^final/ }).count(), 0);
  const listing = (await call(stack, "GET", "/api/channels/launch/files?path=/workspace", { token })).json;
  assert.ok(!listing.some((e) => e.name === "final" || e.name === "drafts"));
});

test("Files on a phone: the list alone, then the chosen file alone with a way back", async () => {
  await page.setViewportSize(PHONE);
  try {
    await page.goto(`${stack.url}/c/launch/files`);
    const list = page.getByRole("list", { name: "Contents of /workspace", exact: true });
    await list.waitFor();
    assert.equal(await page.getByText(/^Choose a file to see it here/).isVisible(), false, "no empty preview on a phone");
    const listBox = await list.boundingBox();
    assert.ok(listBox.height > 500, `the list has the screen (${listBox.height}px)`);
    await screenshot(page, "fix-11-files-phone-list");
    await list.getByRole("link", { name: /notes/ }).click();
    await page.getByRole("list", { name: "Contents of /workspace/notes" }).getByRole("link", { name: /Retro\.md/ }).click();
    await page.getByRole("heading", { name: "Retro.md" }).waitFor();
    assert.equal(await page.getByRole("list", { name: "Contents of /workspace/notes" }).isVisible(), false, "the file has the screen");
    await screenshot(page, "fix-11-files-phone-file");
    await page.locator(".files-back").click();
    await page.getByRole("list", { name: "Contents of /workspace/notes" }).waitFor();
    await noAxeProblems(page, "Files on a phone");
  } finally {
    await page.setViewportSize(DESKTOP);
  }
});

test("a revoked invitation's link leaves the screen", async () => {
  await page.goto(`${stack.url}/admin/people`);
  await page.getByRole("button", { name: "Make an invitation link" }).click();
  await page.getByLabel("Send this link to the person you invite. It is shown only now.").waitFor();
  await page.getByRole("button", { name: "Revoke" }).click();
  await page.getByText("The invitation is revoked: its link no longer works.").waitFor();
  assert.equal(await page.getByLabel("Send this link to the person you invite. It is shown only now.").count(), 0);
  assert.equal(await page.getByRole("button", { name: "Copy" }).count(), 0);
  await screenshot(page, "fix-09-invite-revoked");
});

test("an archived channel offers no Ask @skipper", async () => {
  await page.goto(`${stack.url}/c/launch`);
  await page.getByRole("button", { name: "Ask @skipper" }).waitFor();
  await call(stack, "POST", "/api/channels/launch/archive", { token });
  await page.getByText("This channel is archived: its agent is paused").waitFor();
  assert.equal(await page.getByRole("button", { name: "Ask @skipper" }).count(), 0);
  await screenshot(page, "fix-07-archived-no-skipper");
  assert.deepEqual(page.consoleErrors(), []);
  assert.deepEqual(bob.consoleErrors(), []);
});
