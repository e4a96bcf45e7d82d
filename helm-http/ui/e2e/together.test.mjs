// Several people in one workspace, each in a real browser, meeting what the
// others do: a mention while one is in another view of the channel still
// tells them; losing the channel one is in (removed, left, deleted, a role
// taken back) says so with the way to #main, and the focus lands on it;
// Leave in a private channel is asked first; a thread archived under
// someone's reply box closes the box (keeping the draft) with Unarchive;
// a private channel's @ list offers only those who see it, and a typed
// @name of someone else is flagged; Escape out of a thread's reply box
// puts the focus back on the thread's link in the feed.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { ARTIFACTS, DESKTOP, PASSWORD, call, launchBrowser, openPage, quickStart, screenshot, startStack, waitFor } from "./harness.mjs";

let stack;
let browser;
let token; // the Captain's API token
let ada; // the Captain's page
const people = {}; // name → { id, context, page }

before(async () => {
  stack = await startStack();
  browser = await launchBrowser();
  const started = await quickStart(stack, browser, DESKTOP);
  token = started.token;
  ada = await openPage(started.context, `${stack.url}/c/main`);
  await call(stack, "POST", "/api/channels", { token, body: { name: "launch", purpose: "Planning the launch." } });
  await call(stack, "POST", "/api/channels", { token, body: { name: "secret", purpose: "Not for everyone.", visibility: "private" } });
  for (const [name, role] of [
    ["bob", "member"],
    ["cleo", "admin"],
    ["dan", "member"],
  ]) {
    const user = (await call(stack, "POST", "/api/users", { token, body: { name, password: PASSWORD, role } })).json;
    const login = await call(stack, "POST", "/api/auth/login", { body: { name, password: PASSWORD } });
    const [key, value] = login.response.headers.get("set-cookie").split(";")[0].split("=");
    const context = await browser.newContext({ viewport: DESKTOP });
    await context.addCookies([{ name: key, value, url: stack.url }]);
    const page = await openPage(context);
    // Refusals on purpose: what a page asks of a channel as it goes away
    // (removed, left, deleted) is answered 404, and the check that it is gone is one.
    page.allowErrors(/404 \(Not Found\) \(http:\/\/[^)]*\/api\/channels\/(secret|scratch|\d+)[/)]/);
    people[name] = { id: user.id, context, page };
  }
  await call(stack, "POST", "/api/channels/secret/members", { token, body: { user_id: people.dan.id } });
});

after(async () => {
  await browser?.close();
  await stack?.stop();
  console.log(`screenshots: ${ARTIFACTS}/screenshots`);
});

const sidebar = (p) => p.getByRole("navigation", { name: "Workspace" });
const focused = (p) => p.evaluate(() => `${document.activeElement?.tagName.toLowerCase()} ${document.activeElement?.textContent?.trim()}`);

test("a mention while in another view of the channel tells the person, and stays unread until they see the chat", async () => {
  const bob = people.bob.page;
  await bob.goto(`${stack.url}/c/launch/settings`);
  await bob.getByRole("heading", { name: "Settings" }).waitFor();
  await call(stack, "POST", "/api/channels/launch/messages", { token, body: { text: "@bob please sign off the budget" } });
  const notice = bob.getByRole("button", { name: "Ada Lovelace mentioned you in #launch" });
  await notice.waitFor();
  await sidebar(bob).getByRole("link", { name: /launch.*1 mention/ }).waitFor();
  await screenshot(bob, "together-01-mention-in-settings");
  // Activity is not the conversation either: the mention is still there after a reload.
  await bob.goto(`${stack.url}/c/launch/activity`);
  await sidebar(bob).getByRole("link", { name: /launch.*1 mention/ }).waitFor();
  // The chat shows it: read.
  await bob.getByRole("link", { name: "Chat", exact: true }).click();
  await waitFor("the mention to count as read", async () => (await sidebar(bob).getByRole("link", { name: /launch.*mention/ }).count()) === 0);
  assert.deepEqual(bob.consoleErrors(), []);
});

test("a thread archived under someone's reply box closes it, keeps the draft, and Unarchive brings both back", async () => {
  const bob = people.bob.page;
  const posted = (await call(stack, "POST", "/api/channels/launch/messages", { token, body: { text: "Venue options for the launch" } })).json;
  const id = posted.thread.id;
  await bob.goto(`${stack.url}/c/launch/t/${id}`);
  const panel = bob.getByRole("complementary", { name: /Thread:/ });
  const box = panel.getByLabel("Reply in this thread");
  await box.fill("The hall on Main Street");
  await call(stack, "PUT", `/api/threads/${id}/status`, { token, body: { status: "archived" } });
  await panel.getByText("This thread is archived, so nobody replies here.").waitFor();
  await panel.getByText("Your draft is kept on this page until then.").waitFor();
  assert.equal(await box.count(), 0, "no reply box in an archived thread");
  await screenshot(bob, "together-02-thread-archived-under-reply");
  await panel.getByRole("button", { name: "Unarchive it to reply" }).click();
  await box.waitFor();
  assert.equal(await box.inputValue(), "The hall on Main Street", "the draft is back");

  // Opened while archived: no box from the start.
  await call(stack, "PUT", `/api/threads/${id}/status`, { token, body: { status: "archived" } });
  await bob.goto(`${stack.url}/c/launch/t/${id}`);
  await panel.getByText("This thread is archived, so nobody replies here.").waitFor();
  assert.equal(await box.count(), 0);
  await call(stack, "PUT", `/api/threads/${id}/status`, { token, body: { status: "open" } });
  assert.deepEqual(bob.consoleErrors(), []);
});

test("Escape in a thread's reply box closes it and puts the focus on the thread's link in the feed", async () => {
  const posted = (await call(stack, "POST", "/api/channels/launch/messages", { token, body: { text: "Press kit" } })).json;
  await ada.goto(`${stack.url}/c/launch/t/${posted.thread.id}`);
  const box = ada.getByRole("complementary", { name: /Thread:/ }).getByLabel("Reply in this thread");
  await box.focus();
  await ada.keyboard.press("Escape");
  await waitFor("the thread to close", async () => new URL(ada.url()).pathname === "/c/launch");
  await waitFor("the focus on the thread's link", async () => ada.evaluate((href) => document.activeElement?.getAttribute("href") === href, `/c/launch/t/${posted.thread.id}`));
  assert.deepEqual(ada.consoleErrors(), []);
});

test("a private channel's @ list offers only those who see it; a typed @name of anyone else is flagged", async () => {
  await ada.goto(`${stack.url}/c/secret`);
  const box = ada.getByLabel("Start a thread in #secret");
  await box.click();
  await box.pressSequentially("@");
  const list = ada.getByRole("listbox", { name: "People and agents to mention" });
  await list.getByRole("option", { name: /@dan/ }).waitFor();
  const offered = await list.getByRole("option").allInnerTexts();
  assert.ok(offered.some((o) => o.startsWith("@cleo")), `an admin sees it: ${offered}`);
  assert.ok(!offered.some((o) => o.startsWith("@bob")), `Bob is not in #secret: ${offered}`);
  await box.fill("@bob can you look?");
  await ada.getByText("@bob is not in #secret and will not be told.").waitFor();
  await box.fill("@dan can you look?");
  await waitFor("the flag to go", async () => (await ada.getByText("will not be told").count()) === 0);
  await box.fill("");
  assert.deepEqual(ada.consoleErrors(), []);
});

test("removed from the private channel one is typing in: said, with the way to #main, and the focus on it", async () => {
  const dan = people.dan.page;
  await dan.goto(`${stack.url}/c/secret`);
  const box = dan.getByLabel("Start a thread in #secret");
  await box.fill("half a thought");
  await box.focus();
  await call(stack, "DELETE", `/api/channels/secret/members/${people.dan.id}`, { token });
  await dan.getByRole("heading", { name: "You were removed from #secret" }).waitFor();
  await waitFor("the focus on the way to #main", async () => (await focused(dan)) === "a Go to #main");
  assert.equal(await sidebar(dan).getByRole("link", { name: /secret/ }).count(), 0);
  await screenshot(dan, "together-03-removed");
  await dan.getByRole("link", { name: "Go to #main" }).click();
  await dan.getByRole("heading", { name: "main", exact: true }).waitFor();
});

test("Leave in a private channel is asked first, then says one left", async () => {
  await call(stack, "POST", "/api/channels/secret/members", { token, body: { user_id: people.dan.id } });
  const dan = people.dan.page;
  await sidebar(dan).getByRole("link", { name: /secret/ }).waitFor();
  await dan.goto(`${stack.url}/c/secret/settings`);
  await dan.getByRole("button", { name: "Leave" }).click();
  const dialog = dan.getByRole("dialog", { name: "Leave #secret?" });
  await dialog.waitFor();
  await screenshot(dan, "together-04-leave-asked");
  await dialog.getByRole("button", { name: "Stay" }).click();
  assert.equal((await call(stack, "GET", "/api/channels/secret/members", { token })).json.some((m) => m.user.id === people.dan.id), true, "Stay keeps him in");
  await dan.getByRole("button", { name: "Leave" }).click();
  await dialog.getByRole("button", { name: "Leave #secret" }).click();
  await dan.getByRole("heading", { name: "You left #secret" }).waitFor();
  await dan.getByRole("link", { name: "Go to #main" }).waitFor();
  assert.deepEqual(dan.consoleErrors(), []);
});

test("an admin made a member again loses the private channel on screen, said as such", async () => {
  const cleo = people.cleo.page;
  await cleo.goto(`${stack.url}/c/secret`);
  await cleo.getByLabel("Start a thread in #secret").waitFor();
  await call(stack, "PATCH", `/api/users/${people.cleo.id}`, { token, body: { role: "member" } });
  await cleo.getByRole("heading", { name: "#secret is no longer visible to you" }).waitFor();
  await waitFor("#secret to leave the sidebar", async () => (await sidebar(cleo).getByRole("link", { name: /secret/ }).count()) === 0);
  await screenshot(cleo, "together-05-demoted");
  // Made an admin again: it is back.
  await call(stack, "PATCH", `/api/users/${people.cleo.id}`, { token, body: { role: "admin" } });
  await sidebar(cleo).getByRole("link", { name: /secret/ }).waitFor();
  await cleo.getByLabel("Start a thread in #secret").waitFor();
  assert.deepEqual(cleo.consoleErrors(), []);
});

test("a channel deleted while someone is in it says so", async () => {
  await call(stack, "POST", "/api/channels", { token, body: { name: "scratch", purpose: "For a while." } });
  const bob = people.bob.page;
  await bob.goto(`${stack.url}/c/scratch`);
  await bob.getByLabel("Start a thread in #scratch").waitFor();
  await call(stack, "POST", "/api/channels/scratch/archive", { token });
  await call(stack, "DELETE", "/api/channels/scratch?confirm=scratch", { token });
  await bob.getByRole("heading", { name: "#scratch was deleted" }).waitFor();
  await bob.getByRole("link", { name: "Go to #main" }).waitFor();
  assert.deepEqual(bob.consoleErrors(), []);
});
