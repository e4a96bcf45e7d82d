// Files the agent writes while it keeps working show up at once, without a
// reload and without waiting for it to be ready again: in Cowork, the open
// doc (with no unsaved edits) takes the agent's text in place, the caret
// where it was, with "Updated by @agent" in its header, and the rail shows
// a new file; with unsaved edits a bar asks (Keep mine keeps the person's
// text and saving writes it; Reload takes the agent's); the person's own
// saves are never taken for the agent's. A whiteboard is mounted again on
// the new file. In Files, the open folder lists a new file, the open
// preview reads its file again, and its editor asks the same way.
//
// The mock model is scripted so that the agent writes with its file tool,
// then holds its last answer back for a few seconds: what is checked
// happens while it is still working.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { axeViolations, call, launchBrowser, openPage, quickStart, screenshot, startStack, waitFor } from "./harness.mjs";

let stack;
let browser;
let token;
let page;

const COWORK = () => `${stack.url}/c/live/cowork`;
const BRIEF = "/workspace/docs/Brief.md";
/** How long the agent's last answer is held back: it is working meanwhile. */
const HOLD_MS = 8000;
const read = async (path) => (await call(stack, "GET", `/api/channels/live/files/read?path=${encodeURIComponent(path)}`, { token })).json.content;
const write = (path, content) => ({ tool_calls: [{ name: "write_file", arguments: { path, content } }] });
const heldBack = (text) => ({ chunks: [text], header_delay_ms: HOLD_MS });

/** Whether the agent has said `text` in any thread of the channel. */
async function agentSaid(text) {
  const threads = (await call(stack, "GET", "/api/channels/live/threads", { token })).json;
  for (const t of threads) {
    const messages = (await call(stack, "GET", `/api/threads/${t.id}/messages`, { token })).json.items;
    if (messages.some((m) => m.author.kind === "agent" && m.status === "complete" && m.content.includes(text))) return true;
  }
  return false;
}

before(async () => {
  stack = await startStack();
  browser = await launchBrowser();
  const started = await quickStart(stack, browser);
  token = started.token;
  await call(stack, "POST", "/api/channels", { token, body: { name: "live", purpose: "Live edits." } });
  await call(stack, "PUT", "/api/channels/live/files", { token, body: { path: "docs/Brief.md", content: "# Brief\n\nFirst draft.\n" } });
  await call(stack, "PUT", "/api/channels/live/files", { token, body: { path: "code/lib/util.py", content: "x = 1\n" } });
  page = await openPage(started.context, `${COWORK()}?path=${encodeURIComponent(BRIEF)}`);
  await page.getByLabel("Text of Brief.md").waitFor();
});

after(async () => {
  await browser?.close();
  await stack?.stop();
});

const rail = () => page.getByRole("navigation", { name: "Cowork folders" });
const panel = () => page.getByRole("complementary", { name: "Agent panel: @live-agent" });
const brief = () => page.getByLabel("Text of Brief.md");
const bar = () => page.getByRole("alert").filter({ hasText: "@live-agent changed this file." });

/** Asks the agent in the panel (the first time starts the thread, then replies in it). */
async function ask(text) {
  const box = panel().getByLabel(/^(Ask @live-agent|Reply to the agent)$/);
  await box.fill(text);
  await box.press("Enter");
}

test("with no unsaved edits, the agent's rewrite shows in place while it works; the rail shows its new file", async () => {
  await page.getByRole("button", { name: "Agent", exact: true }).click();
  await panel().waitFor();
  // A folder of the rail opened by hand stays open as the rail is listed again.
  await rail().getByRole("button", { name: "lib", expanded: false }).click();
  await rail().getByRole("link", { name: "util.py" }).waitFor();
  // The caret on the title line: the agent changes what is below it.
  await brief().evaluate((el) => {
    el.focus();
    el.setSelectionRange(4, 4);
  });
  await stack.mock.push(write("docs/Brief.md", "# Brief\n\nSecond draft, by the agent.\n"), write("notes/Ideas.md", "# Ideas\n\n- one\n"), write("code/lib/more.py", "y = 2\n"), heldBack("Both done."));
  await ask("Rewrite the brief, and start a note of ideas.");
  await waitFor("the agent's text in the editor", async () => (await brief().inputValue()) === "# Brief\n\nSecond draft, by the agent.\n", HOLD_MS - 1000);
  await page.getByText("Updated by @live-agent").waitFor({ timeout: 5000 });
  await rail().getByRole("link", { name: /Ideas\.md/ }).waitFor({ timeout: 5000 });
  await rail().getByRole("link", { name: "more.py" }).waitFor({ timeout: 5000 });
  assert.equal(await rail().getByRole("button", { name: "lib" }).getAttribute("aria-expanded"), "true");
  assert.equal(await panel().getByText("Both done.").count(), 0, "the agent is still working");
  assert.equal(await brief().evaluate((el) => el.selectionStart), 4, "the caret stays where it was");
  assert.equal(await page.getByText("unsaved changes").count(), 0);
  await screenshot(page, "48-cowork-live-updated-desktop");
  await panel().getByText("Both done.").waitFor({ timeout: HOLD_MS + 5000 });
  // "Updated by" goes after a few seconds.
  await page.getByText("Updated by @live-agent").waitFor({ state: "detached", timeout: 8000 });
});

test("with unsaved edits, a bar asks: Keep mine keeps the person's text (and saving writes it), Reload takes the agent's", async () => {
  await brief().fill("# Brief\n\nMy own version.\n");
  await page.getByText("unsaved changes").waitFor();
  await stack.mock.push(write("docs/Brief.md", "# Brief\n\nThe agent's third draft.\n"), heldBack("Third draft written."));
  await ask("Write a third draft.");
  await bar().waitFor({ timeout: HOLD_MS - 1000 });
  assert.equal(await brief().inputValue(), "# Brief\n\nMy own version.\n", "the person's edits are never overwritten");
  assert.deepEqual(await axeViolations(page), [], "axe-core on the bar");
  await screenshot(page, "49-cowork-live-conflict-desktop");
  await bar().getByRole("button", { name: "Keep mine" }).click();
  await bar().waitFor({ state: "detached" });
  assert.equal(await brief().inputValue(), "# Brief\n\nMy own version.\n");
  await page.getByText("unsaved changes").waitFor();
  assert.equal(await read(BRIEF), "# Brief\n\nThe agent's third draft.\n");
  await brief().press("Control+s");
  await page.getByRole("status").getByText("saved").waitFor();
  assert.equal(await read(BRIEF), "# Brief\n\nMy own version.\n");
  await panel().getByText("Third draft written.").waitFor({ timeout: HOLD_MS + 5000 });

  // The person's own save is not the agent's, even when the agent ran a
  // command meanwhile (which may have changed anything).
  await brief().fill("# Brief\n\nMy own version, saved while the agent works.\n");
  await stack.mock.push({ tool_calls: [{ name: "run_command", arguments: { command: "true" } }] }, heldBack("Ran it."));
  await ask("Run something harmless.");
  await brief().press("Control+s");
  await page.getByRole("status").getByText("saved").waitFor();
  await panel().getByText("Ran it.").waitFor({ timeout: HOLD_MS + 5000 });
  assert.equal(await page.getByText("Updated by @live-agent").count(), 0);
  assert.equal(await bar().count(), 0);
  assert.equal(await brief().inputValue(), "# Brief\n\nMy own version, saved while the agent works.\n");

  // Reload (discard your edits) takes what the agent wrote.
  await brief().fill("# Brief\n\nEdits to throw away.\n");
  await stack.mock.push(write("docs/Brief.md", "# Brief\n\nThe agent's fourth draft.\n"), heldBack("Fourth draft written."));
  await ask("A fourth draft, please.");
  await bar().waitFor({ timeout: HOLD_MS - 1000 });
  await bar().getByRole("button", { name: "Reload (discard your edits)" }).click();
  await bar().waitFor({ state: "detached" });
  assert.equal(await brief().inputValue(), "# Brief\n\nThe agent's fourth draft.\n");
  assert.equal(await page.getByText("unsaved changes").count(), 0);
  await panel().getByText("Fourth draft written.").waitFor({ timeout: HOLD_MS + 5000 });
});

test("a whiteboard the agent redraws is opened again on the new file", async () => {
  const svg = (fill) => `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 200 100" width="200" height="100"><rect x="10" y="10" width="80" height="40" fill="${fill}"/></svg>`;
  await call(stack, "PUT", "/api/channels/live/files", { token, body: { path: "whiteboards/flow.svg", content: svg("#2456c9") } });
  await page.goto(`${COWORK()}?path=${encodeURIComponent("/workspace/whiteboards/flow.svg")}`);
  await page.getByRole("heading", { name: "flow.svg" }).waitFor();
  await waitFor("the whiteboard to load", async () => (await page.getByText("Loading the whiteboard…").count()) === 0);
  // Marks what is mounted now: a board mounted again is a new element.
  await page.locator(".cowork-file > :last-child").evaluate((el) => el.setAttribute("data-first-mount", ""));
  await stack.mock.push(write("whiteboards/flow.svg", svg("#1e7a46")), heldBack("Redrawn."));
  await ask("Make the box green.");
  await page.getByText("Updated by @live-agent").waitFor({ timeout: HOLD_MS - 1000 });
  await waitFor("the board mounted again", async () => (await page.locator("[data-first-mount]").count()) === 0);
  await panel().getByText("Redrawn.").waitFor({ timeout: HOLD_MS + 5000 });
  await page.getByRole("button", { name: "Agent", exact: true }).click();
});

test("Files: the open folder lists what the agent writes, the open preview and its editor follow", async () => {
  await page.goto(`${stack.url}/c/live/files?path=${encodeURIComponent("/workspace/notes/Ideas.md")}`);
  const list = page.getByRole("list", { name: "Contents of /workspace/notes" });
  await list.getByRole("link", { name: /Ideas\.md/ }).waitFor();
  const preview = page.locator(".files-preview-pane");
  await preview.getByText("- one").or(preview.getByText("one", { exact: true })).first().waitFor();

  const post = (text) => call(stack, "POST", "/api/channels/live/messages", { token, body: { text } });
  await stack.mock.push(write("notes/Later.md", "# Later\n"), write("notes/Ideas.md", "# Ideas\n\n- one\n- two\n"), heldBack("Noted."));
  await post("@live-agent add a second idea and a note for later");
  await list.getByRole("link", { name: /Later\.md/ }).waitFor({ timeout: HOLD_MS - 1000 });
  await preview.getByText("two", { exact: true }).waitFor({ timeout: 5000 });
  await preview.getByText("Updated by @live-agent").waitFor();
  assert.equal(await agentSaid("Noted."), false, "the agent is still working");
  await screenshot(page, "50-files-live-desktop");
  await waitFor("the agent's answer", () => agentSaid("Noted."), HOLD_MS + 5000);

  // Its editor, with unsaved edits, asks too.
  await preview.getByRole("button", { name: "Edit" }).click();
  const editor = page.getByLabel("Editing /workspace/notes/Ideas.md");
  await editor.fill("# Ideas\n\n- mine\n");
  await stack.mock.push(write("notes/Ideas.md", "# Ideas\n\n- one\n- two\n- three\n"), heldBack("Three now."));
  await post("@live-agent a third idea");
  const editorBar = page.getByRole("alert").filter({ hasText: "@live-agent changed this file." });
  await editorBar.waitFor({ timeout: HOLD_MS - 1000 });
  assert.equal(await editor.inputValue(), "# Ideas\n\n- mine\n");
  assert.deepEqual(await axeViolations(page), [], "axe-core on Files' bar");
  await editorBar.getByRole("button", { name: "Keep mine" }).click();
  await editorBar.waitFor({ state: "detached" });
  assert.equal(await editor.inputValue(), "# Ideas\n\n- mine\n");
  await page.getByRole("button", { name: "Save", exact: true }).click();
  await waitFor("the person's text on disk", async () => (await read("/workspace/notes/Ideas.md")) === "# Ideas\n\n- mine\n");
  await waitFor("the agent's answer", () => agentSaid("Three now."), HOLD_MS + 5000);
  assert.deepEqual(page.consoleErrors(), []);
});
