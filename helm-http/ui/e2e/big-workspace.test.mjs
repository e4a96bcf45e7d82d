// A workspace used for weeks (audit E): a file too big to show whole opens
// read-only, with Download; a folder of hundreds of files lists a page of
// them at a time; what Bob wrote while Ada was away (new threads, and
// replies in an old thread no loaded feed page holds) is marked where it
// starts and read once she looks, on the server too; and a reply typed when
// the session ends is waiting, in its thread, after she signs in again.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { DESKTOP, PASSWORD, axeViolations, call, launchBrowser, openPage, quickStart, screenshot, startStack, waitFor } from "./harness.mjs";

let stack;
let browser;
let token; // Ada's, the Captain's
let bobToken;
let context;
let page;
let channelId;
/** Ada's old thread, below the feed's first page by the time Bob replies in it. */
let oldThread;

const sidebar = (p) => p.getByRole("navigation", { name: "Workspace" });
/** Whether `locator`'s box is within the window (not only somewhere on the page). */
async function onScreen(p, locator) {
  const box = await locator.boundingBox();
  const height = await p.evaluate(() => innerHeight);
  return !!box && box.y >= 0 && box.y + box.height <= height;
}
const unreadOfBig = async () => (await call(stack, "GET", "/api/unread", { token })).json.find((c) => c.channel_id === channelId);

before(async () => {
  stack = await startStack();
  browser = await launchBrowser();
  const started = await quickStart(stack, browser, DESKTOP, { provider: false });
  token = started.token;
  context = started.context;
  channelId = (await call(stack, "POST", "/api/channels", { token, body: { name: "big", purpose: "A channel used for weeks." } })).json.channel.id;
  const invite = await call(stack, "POST", "/api/invites", { token, body: {} });
  const accepted = await call(stack, "POST", "/api/invites/accept", { body: { code: invite.json.code, name: "bob", display_name: "Bob Builder", password: PASSWORD } });
  const cookie = accepted.response.headers.get("set-cookie").split(";")[0];
  bobToken = (await call(stack, "POST", "/api/tokens", { cookie, body: { name: "e2e" } })).json.secret;
  const bob = (await call(stack, "GET", "/api/users", { token })).json.find((u) => u.name === "bob");
  await call(stack, "POST", "/api/channels/big/members", { token, body: { user_id: bob.id } });
  page = await openPage(context);
});

after(async () => {
  await browser?.close();
  await stack?.stop();
});

test("a file too big to show whole opens read-only, saying why, with Download", async () => {
  // 1.5 MB of lines: files/read gives its first part only.
  const line = "2026-12-07T00:00:00Z INFO a line of a long log, padded to be long enough\n";
  const form = new FormData();
  form.append("file", new Blob([line.repeat(Math.ceil(1_500_000 / line.length))], { type: "text/plain" }), "big.log");
  await call(stack, "POST", "/api/channels/big/files/upload?dir=%2Fworkspace%2Flogs", { token, raw: form });
  const read = (await call(stack, "GET", "/api/channels/big/files/read?path=%2Fworkspace%2Flogs%2Fbig.log", { token })).json;
  assert.equal(read.truncated, true, "the server reads only its first part");
  await page.goto(`${stack.url}/c/big/files?path=${encodeURIComponent("/workspace/logs/big.log")}`);
  await page.getByRole("heading", { name: "big.log" }).waitFor();
  await page.getByText("too big to show whole").waitFor();
  assert.equal(await onScreen(page, page.getByText("too big to show whole")), true, "said above the text, not under a mebibyte of it");
  assert.equal(await page.getByRole("button", { name: "Edit" }).count(), 0, "no Edit: saving the first part would cut the file");
  assert.equal(await page.getByRole("link", { name: "Download it" }).getAttribute("download"), "big.log");
  assert.deepEqual(await axeViolations(page), []);
  await screenshot(page, "big-01-file-read-only");
});

test("a folder of 450 files lists a page at a time; Show more goes on where it ended; a linked file deep in it is shown", async () => {
  const names = Array.from({ length: 450 }, (_, i) => `f${String(i).padStart(4, "0")}.txt`);
  for (let i = 0; i < names.length; i += 25) {
    await Promise.all(names.slice(i, i + 25).map((n) => call(stack, "PUT", "/api/channels/big/files", { token, body: { path: `many/${n}`, content: n } })));
  }
  await page.goto(`${stack.url}/c/big/files?path=${encodeURIComponent("/workspace/many")}`);
  const list = page.getByRole("list", { name: "Contents of /workspace/many" });
  await list.getByRole("link", { name: /f0000\.txt/ }).waitFor();
  const rows = () => list.locator("a.file-row").count();
  assert.equal(await rows(), 1 + 200, "the way up, and the first 200");
  const nodes = await page.evaluate(() => document.querySelectorAll("*").length);
  console.log(`DOM nodes with 450 files listed: ${nodes}`);
  await list.getByText("200 of 450 shown").waitFor();
  await list.getByRole("button", { name: "Show 200 more" }).click();
  await waitFor("the next page", async () => (await rows()) === 1 + 400);
  // The keyboard goes on from the first row added.
  assert.equal(await page.evaluate(() => document.activeElement?.textContent?.trim().startsWith("f0200.txt")), true);
  await list.getByRole("button", { name: "Show 50 more" }).click();
  await waitFor("all of it", async () => (await rows()) === 1 + 450);
  assert.equal(await list.getByRole("button", { name: /more/ }).count(), 0);
  // A link to a file past the first page: its page is listed, the file marked.
  await page.goto(`${stack.url}/c/big/files?path=${encodeURIComponent("/workspace/many/f0333.txt")}`);
  const linked = list.locator('a.file-row[aria-current="true"]', { hasText: "f0333.txt" });
  await linked.waitFor();
  await waitFor("the linked file's row in view", () => onScreen(page, linked));
  assert.equal(await rows(), 1 + 400);
  await screenshot(page, "big-02-files-paged");
});

test("Bob's new threads and his replies in an old thread: marked where they start, and read on the server once Ada's chat shows them", async () => {
  oldThread = (await call(stack, "POST", "/api/channels/big/messages", { token, body: { text: "OLD: the plan from October" } })).json.thread.id;
  // Ada's own threads since: the old one drops below the feed's first page (50).
  for (let i = 0; i < 55; i++) await call(stack, "POST", "/api/channels/big/messages", { token, body: { text: `ADA ${i}: a thread of the weeks since` } });
  const newest = (await call(stack, "GET", "/api/channels/big/messages?newest=true&limit=1", { token })).json.items.at(-1).id;
  await call(stack, "PUT", "/api/channels/big/read", { token, body: { message_id: newest } });
  // Overnight: Bob's new threads, then replies in the old one.
  for (let i = 0; i < 3; i++) await call(stack, "POST", "/api/channels/big/messages", { token: bobToken, body: { text: `BOB-NEW ${i}: overnight item` } });
  for (let i = 0; i < 4; i++) await call(stack, "POST", `/api/threads/${oldThread}/messages`, { token: bobToken, body: { text: `BOB-REPLY ${i} in the old plan` } });
  assert.equal((await unreadOfBig()).unread, 7);

  await page.goto(`${stack.url}/c/main`);
  await sidebar(page).locator('a[href="/c/big"].has-unread').waitFor();
  await sidebar(page).getByRole("link", { name: /big/ }).click();
  const line = page.getByRole("separator", { name: "New since you last read" });
  await line.waitFor();
  // The line is just before Bob's first new thread.
  const next = await line.evaluate((el) => el.nextElementSibling?.textContent ?? "");
  assert.match(next, /BOB-NEW 0: overnight item/);
  await waitFor("the chat open where the unread starts", () => onScreen(page, line));
  await screenshot(page, "big-03-new-since");
  // All of it is read on the server, the old thread's replies too: a reload counts nothing.
  await waitFor("the read marker at the channel's newest message", async () => (await unreadOfBig()).unread === 0);
  await page.goto(`${stack.url}/c/main`);
  await page.getByLabel("Message #main: ask Skipper anything").waitFor();
  assert.equal(await sidebar(page).locator('a[href="/c/big"].has-unread').count(), 0, "nothing unread after a reload");
});

test("opening the thread whose replies are the unread ones clears them", async () => {
  await page.goto(`${stack.url}/c/big/files`);
  await page.getByRole("button", { name: "New folder" }).waitFor();
  for (let i = 4; i < 8; i++) await call(stack, "POST", `/api/threads/${oldThread}/messages`, { token: bobToken, body: { text: `BOB-REPLY ${i} in the old plan` } });
  await sidebar(page).locator('a[href="/c/big"].has-unread').waitFor();
  await page.goto(`${stack.url}/c/big/t/${oldThread}`);
  await page.getByText("BOB-REPLY 7 in the old plan").first().waitFor();
  await waitFor("the thread's replies read on the server", async () => (await unreadOfBig()).unread === 0);
});

test("a reply typed as the session ends is waiting in its thread after signing in again", async () => {
  await page.goto(`${stack.url}/c/big/t/${oldThread}`);
  const reply = page.getByLabel("Reply in this thread");
  await reply.fill("Half a reply I must not lose");
  // The session ends elsewhere (signed out in another tab).
  const cookie = (await context.cookies()).map((c) => `${c.name}=${c.value}`).join("; ");
  await call(stack, "POST", "/api/auth/logout", { cookie });
  page.allowErrors(/401|Unauthorized/);
  // Enter, unless the socket already said the session ended.
  if (!page.url().includes("/login")) await reply.press("Enter").catch(() => undefined);
  await page.getByRole("heading", { name: "Sign in" }).waitFor();
  await page.getByText("Your session ended").waitFor();
  await page.getByLabel("Name").fill("ada");
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Sign in" }).click();
  await waitFor("the thread again", async () => new URL(page.url()).pathname === `/c/big/t/${oldThread}`);
  await waitFor("the draft in its box", async () => (await page.getByLabel("Reply in this thread").inputValue()) === "Half a reply I must not lose");
  await screenshot(page, "big-04-draft-after-sign-in");
  // Sent, the draft is gone: a reload shows an empty box.
  await page.getByLabel("Reply in this thread").press("Enter");
  await page.getByText("Half a reply I must not lose").first().waitFor();
  await waitFor("the box emptied", async () => (await page.getByLabel("Reply in this thread").inputValue()) === "");
  await page.reload();
  await page.getByText("Half a reply I must not lose").first().waitFor();
  assert.equal(await page.getByLabel("Reply in this thread").inputValue(), "");
});

test("a new thread's text is kept per channel across a reload", async () => {
  await page.goto(`${stack.url}/c/big`);
  const box = page.getByLabel("Start a thread in #big");
  await box.fill("An idea for tomorrow");
  await page.goto(`${stack.url}/c/main`);
  assert.equal(await page.getByLabel("Message #main: ask Skipper anything").inputValue(), "", "#main's box is its own");
  await page.reload();
  await page.goto(`${stack.url}/c/big`);
  assert.equal(await page.getByLabel("Start a thread in #big").inputValue(), "An idea for tomorrow");
});

test("no console errors", () => {
  assert.deepEqual(page.consoleErrors(), []);
});
