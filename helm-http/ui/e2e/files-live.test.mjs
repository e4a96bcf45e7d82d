// Another person's saves reach an open file at once (their `file.changed`
// event), without a page reload: Ada has a note open in Cowork; Bob saves
// it through the API. With nothing unsaved, Ada's editor takes Bob's text
// in place and says "Updated by Bob Builder"; with unsaved edits, the
// "Bob Builder changed this file." bar shows at once, before she saves,
// and her edits stay. Ada's own save shows neither in the tab she saved
// in; her other tab takes it, "Updated by you (another tab)". In Files, the open
// folder lists a file Bob makes and drops one he deletes.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { DESKTOP, PASSWORD, axeViolations, call, launchBrowser, openPage, quickStart, screenshot, startStack, waitFor } from "./harness.mjs";

let stack;
let browser;
let token; // Ada's, the Captain's
let bobToken;
let page;
let context; // Ada's browser: a second tab opens in it

const PLAN = "/workspace/notes/plan.md";
const read = async (path) => (await call(stack, "GET", `/api/channels/shared/files/read?path=${encodeURIComponent(path)}`, { token })).json;
/** Bob saves `content` over what is on disk now, as his editor would. */
async function bobSaves(path, content) {
  const { version } = await read(path);
  await call(stack, "PUT", "/api/channels/shared/files", { token: bobToken, body: { path, content, base_version: version } });
}

before(async () => {
  stack = await startStack();
  browser = await launchBrowser();
  const started = await quickStart(stack, browser, DESKTOP, { provider: false });
  token = started.token;
  await call(stack, "POST", "/api/channels", { token, body: { name: "shared", purpose: "Notes we write together." } });
  const invite = await call(stack, "POST", "/api/invites", { token, body: {} });
  const accepted = await call(stack, "POST", "/api/invites/accept", { body: { code: invite.json.code, name: "bob", display_name: "Bob Builder", password: PASSWORD } });
  const cookie = accepted.response.headers.get("set-cookie").split(";")[0];
  bobToken = (await call(stack, "POST", "/api/tokens", { cookie, body: { name: "e2e" } })).json.secret;
  const bob = (await call(stack, "GET", "/api/users", { token })).json.find((u) => u.name === "bob");
  await call(stack, "POST", "/api/channels/shared/members", { token, body: { user_id: bob.id } });
  await call(stack, "PUT", "/api/channels/shared/files", { token, body: { path: "notes/plan.md", content: "# Plan\n\nStep one.\n" } });
  context = started.context;
  page = await openPage(context, `${stack.url}/c/shared/cowork?path=${encodeURIComponent(PLAN)}`);
  await page.getByLabel("Text of plan.md").waitFor();
  // Set once: a page reload would lose it.
  await page.evaluate(() => (window.__sameDocument = true));
});

after(async () => {
  await browser?.close();
  await stack?.stop();
});

const plan = () => page.getByLabel("Text of plan.md");
const bar = () => page.getByRole("alert").filter({ hasText: "Bob Builder changed this file." });

test("with nothing unsaved, Bob's save shows in Ada's open editor in place, saying who", async () => {
  await plan().evaluate((el) => {
    el.focus();
    el.setSelectionRange(3, 3);
  });
  await bobSaves(PLAN, "# Plan\n\nStep one.\nStep two (Bob).\n");
  await waitFor("Bob's text in Ada's editor", async () => (await plan().inputValue()) === "# Plan\n\nStep one.\nStep two (Bob).\n", 5000);
  await page.getByText("Updated by Bob Builder").waitFor();
  assert.equal(await plan().evaluate((el) => el.selectionStart), 3, "the caret stays");
  assert.equal(await page.evaluate(() => window.__sameDocument), true, "no page reload");
  await screenshot(page, "60-files-live-updated-by-person");
});

test("with unsaved edits, the bar shows as soon as Bob saves, and Ada's edits stay", async () => {
  // The note about Bob's last save goes after a few seconds.
  await page.getByText("Updated by").waitFor({ state: "detached", timeout: 10000 });
  await plan().fill("# Plan\n\nStep one.\nStep two (Bob).\nAda's step.\n");
  await bobSaves(PLAN, "# Plan\n\nStep one.\nStep two (Bob).\nStep three (Bob).\n");
  await bar().waitFor({ timeout: 5000 });
  assert.equal(await plan().inputValue(), "# Plan\n\nStep one.\nStep two (Bob).\nAda's step.\n");
  assert.deepEqual(await axeViolations(page), [], "axe-core on the bar");
  await screenshot(page, "61-files-live-person-conflict");
  // Keep mine, then save: her text goes over his, knowingly.
  await bar().getByRole("button", { name: "Keep mine" }).click();
  await bar().waitFor({ state: "detached" });
  await page.getByRole("button", { name: "Save", exact: true }).click();
  await waitFor("Ada's text on disk", async () => (await read(PLAN)).content === "# Plan\n\nStep one.\nStep two (Bob).\nAda's step.\n");
  // Her own save is not news to her: no bar, no "Updated by".
  await new Promise((r) => setTimeout(r, 1500));
  assert.equal(await bar().count(), 0);
  assert.equal(await page.getByText("Updated by").count(), 0);
  assert.equal(await page.evaluate(() => window.__sameDocument), true, "no page reload");
});

test("Ada's other tab takes her save in place, saying it was hers, from another tab", async () => {
  const other = await openPage(context, `${stack.url}/c/shared/cowork?path=${encodeURIComponent(PLAN)}`);
  try {
    const there = other.getByLabel("Text of plan.md");
    await there.waitFor();
    const text = "# Plan\n\nStep one.\nStep two (Bob).\nAda's step.\nAda's second step.\n";
    await plan().fill(text);
    await page.getByRole("button", { name: "Save", exact: true }).click();
    await waitFor("Ada's save in her other tab", async () => (await there.inputValue()) === text, 5000);
    await other.getByText("Updated by you (another tab)").waitFor();
    await screenshot(other, "62-files-live-own-other-tab");
    // The tab she saved in says nothing.
    assert.equal(await page.getByText("Updated by").count(), 0);
    assert.deepEqual(other.consoleErrors(), []);
  } finally {
    await other.close();
  }
});

test("Files: the open folder lists what Bob makes and drops what he deletes", async () => {
  await page.goto(`${stack.url}/c/shared/files?path=${encodeURIComponent("/workspace/notes")}`);
  const list = page.getByRole("list", { name: "Contents of /workspace/notes" });
  await list.getByRole("link", { name: /plan\.md/ }).waitFor();
  await call(stack, "PUT", "/api/channels/shared/files", { token: bobToken, body: { path: "notes/agenda.md", content: "# Agenda\n", create: true } });
  await list.getByRole("link", { name: /agenda\.md/ }).waitFor({ timeout: 5000 });
  await call(stack, "DELETE", `/api/channels/shared/files?path=${encodeURIComponent("/workspace/notes/agenda.md")}`, { token: bobToken });
  await list.getByRole("link", { name: /agenda\.md/ }).waitFor({ state: "detached", timeout: 5000 });
  assert.deepEqual(page.consoleErrors(), []);
});
