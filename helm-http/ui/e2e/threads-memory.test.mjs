// Renaming threads and forgetting memory, in a real browser, with two
// people: Ada (the Captain) and Nol (a member) watching the same channel.
// A thread is renamed from its header and from the Threads list, and the
// other person's page follows live (thread.updated). Editing, pinning and
// forgetting are offered only to a record's author and the channel's
// managers; forgetting asks first, says who forgot it, and is undone with
// Restore.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { DESKTOP, PASSWORD, axeViolations, call, launchBrowser, openPage, quickStart, screenshot, startStack, waitFor } from "./harness.mjs";

let stack;
let browser;
let token;
let ada;
let nol;
let nolToken;

before(async () => {
  stack = await startStack();
  browser = await launchBrowser();
  const started = await quickStart(stack, browser);
  token = started.token;
  await call(stack, "POST", "/api/channels", { token, body: { name: "launch", purpose: "Everything about the launch." } });
  ada = await openPage(started.context, `${stack.url}/c/launch`);
  await ada.getByRole("heading", { name: "launch", exact: true }).waitFor();

  const invite = await call(stack, "POST", "/api/invites", { token, body: {} });
  const accepted = await call(stack, "POST", "/api/invites/accept", { body: { code: invite.json.code, name: "nol", display_name: "Nol Member", password: PASSWORD } });
  const cookie = accepted.response.headers.get("set-cookie").split(";")[0];
  nolToken = (await call(stack, "POST", "/api/tokens", { cookie, body: { name: "e2e" } })).json.secret;
  const context = await browser.newContext({ viewport: DESKTOP });
  const [name, value] = cookie.split("=");
  await context.addCookies([{ name, value, url: stack.url }]);
  nol = await openPage(context, `${stack.url}/c/launch`);
  await nol.getByRole("heading", { name: "launch", exact: true }).waitFor();
});

after(async () => {
  await browser?.close();
  await stack?.stop();
});

test("a thread is renamed from its header and from the list, and the other page follows live", async () => {
  const posted = await call(stack, "POST", "/api/channels/launch/messages", { token, body: { text: "what is still missing before we ship" } });
  const id = posted.json.thread.id;
  // Nol watches the Threads list; Ada opens the thread.
  await nol.getByRole("link", { name: "Threads" }).click();
  await nol.getByRole("link", { name: /what is still missing before we ship/ }).waitFor();
  await ada.goto(`${stack.url}/c/launch/t/${id}`);
  const panel = ada.getByRole("complementary", { name: /Thread: what is still missing/ });
  await panel.getByRole("heading", { name: "what is still missing before we ship" }).waitFor();

  await panel.getByRole("button", { name: "Rename this thread" }).click();
  const dialog = ada.getByRole("dialog", { name: "Rename this thread" });
  const title = dialog.getByLabel("Title");
  assert.equal(await title.inputValue(), "what is still missing before we ship");
  await title.fill("Launch checklist");
  await screenshot(ada, "60-thread-rename-dialog-desktop");
  await dialog.getByRole("button", { name: "Rename" }).click();
  await ada.getByRole("complementary", { name: "Thread: Launch checklist" }).getByRole("heading", { name: "Launch checklist" }).waitFor();
  assert.equal(await dialog.count(), 0, "the dialog closes");
  // Nol's list has the new title without a reload.
  await nol.getByRole("link", { name: /Launch checklist/ }).waitFor();
  assert.equal(await nol.getByRole("link", { name: /what is still missing/ }).count(), 0);

  // Nol renames it from the list; Ada's open header follows.
  await nol.getByRole("button", { name: "Rename Launch checklist" }).click();
  const fromList = nol.getByRole("dialog", { name: "Rename this thread" });
  await fromList.getByLabel("Title").fill("Launch checklist, final");
  await fromList.getByRole("button", { name: "Rename" }).click();
  await nol.getByRole("link", { name: /Launch checklist, final/ }).waitFor();
  await screenshot(nol, "61-threads-list-renamed-desktop");
  await ada.getByRole("complementary", { name: "Thread: Launch checklist, final" }).getByRole("heading", { name: "Launch checklist, final" }).waitFor();
  const shown = await call(stack, "GET", `/api/threads/${id}`, { token });
  assert.equal(shown.json.thread.title, "Launch checklist, final");
  await screenshot(ada, "61-thread-header-renamed-desktop");
  assert.deepEqual(await axeViolations(ada), [], "axe-core on a thread with Rename");
  await ada.getByRole("button", { name: "Close the thread" }).click();
});

test("an empty title is not offered, and Cancel changes nothing", async () => {
  await nol.getByRole("button", { name: "Rename Launch checklist, final" }).click();
  const dialog = nol.getByRole("dialog", { name: "Rename this thread" });
  await dialog.getByLabel("Title").fill("   ");
  assert.equal(await dialog.getByRole("button", { name: "Rename" }).isDisabled(), true, "an empty title is not offered");
  await dialog.getByRole("button", { name: "Cancel" }).click();
  assert.equal(await dialog.count(), 0);
});

test("editing, pinning and forgetting are offered to the author and managers; forgetting asks first, says who, and is undone", async () => {
  const decision = await call(stack, "POST", "/api/channels/launch/memory", { token, body: { kind: "decision", content: "We ship on Friday the 13th." } });
  await call(stack, "POST", "/api/channels/launch/memory", { token: nolToken, body: { kind: "fact", content: "The press kit is in the shared drive." } });
  await ada.getByRole("link", { name: "Memory" }).click();
  await nol.getByRole("link", { name: "Memory" }).click();
  const nolList = nol.locator(".memory-list");
  const adaList = ada.locator(".memory-list");
  const nolsFact = nolList.getByRole("listitem").filter({ hasText: "The press kit is in the shared drive." });
  const adasDecision = nolList.getByRole("listitem").filter({ hasText: "We ship on Friday the 13th." });
  await nolsFact.waitFor();
  await adasDecision.waitFor();
  // Nol may not edit, pin or forget the Captain's decision, so none is
  // offered; her own fact offers all three, and Ada sees them on both.
  await nolsFact.getByRole("button", { name: "Edit" }).waitFor();
  await nolsFact.getByRole("button", { name: "Pin" }).waitFor();
  for (const name of ["Edit", "Pin", "Forget"]) {
    assert.equal(await adasDecision.getByRole("button", { name }).count(), 0, `${name} is not offered to Nol`);
  }
  await screenshot(nol, "61-memory-others-record-desktop");
  const adasView = ada.locator(".memory-list").getByRole("listitem").filter({ hasText: "The press kit is in the shared drive." });
  await adasView.getByRole("button", { name: "Edit" }).waitFor();
  await adasView.getByRole("button", { name: "Pin" }).waitFor();
  // What the page does not offer, the server refuses.
  await assert.rejects(call(stack, "POST", `/api/memory/${decision.json.id}/pin`, { token: nolToken, body: {} }), /: 403 .*may pin/);
  // Nol pins her own fact.
  await nolsFact.getByRole("button", { name: "Pin" }).click();
  await nolsFact.getByRole("button", { name: "Unpin" }).waitFor();

  // Her own fact: Forget asks, and "Keep it" changes nothing.
  await nolsFact.getByRole("button", { name: "Forget" }).click();
  const confirm = nol.getByRole("dialog", { name: "Forget this fact?" });
  await confirm.getByText("The press kit is in the shared drive.").waitFor();
  await screenshot(nol, "62-memory-forget-confirm-desktop");
  await confirm.getByRole("button", { name: "Keep it" }).click();
  assert.equal(await confirm.count(), 0);
  await nolsFact.waitFor();
  await nolsFact.getByRole("button", { name: "Forget" }).click();
  await confirm.getByRole("button", { name: "Forget" }).click();
  await waitFor("the fact to leave the current list", async () => (await nolsFact.count()) === 0);

  // Shown with the history: who forgot it, and Restore; Ada's page says so too, live.
  await nol.getByLabel("Show superseded and forgotten").check();
  await nolsFact.getByText("Forgotten by nol").waitFor();
  await ada.getByLabel("Show superseded and forgotten").check();
  const onAdas = adaList.getByRole("listitem").filter({ hasText: "The press kit is in the shared drive." });
  await onAdas.getByText("Forgotten by nol").waitFor();
  await onAdas.getByRole("button", { name: "Restore" }).waitFor();
  await screenshot(ada, "63-memory-forgotten-by-desktop");

  // Ada forgets her decision; Nol is told who may restore it, not offered it.
  const adas = adaList.getByRole("listitem").filter({ hasText: "We ship on Friday the 13th." });
  await adas.getByRole("button", { name: "Forget" }).click();
  await ada.getByRole("dialog", { name: "Forget this decision?" }).getByRole("button", { name: "Forget" }).click();
  await adas.getByText("Forgotten by ada").waitFor();
  await adasDecision.getByText("Forgotten by ada").waitFor();
  assert.equal(await adasDecision.getByRole("button", { name: "Restore" }).count(), 0);
  await adasDecision.getByText(/may restore it/).waitFor();
  await screenshot(nol, "64-memory-restore-not-offered-desktop");
  assert.deepEqual(await axeViolations(ada), [], "axe-core on Memory with forgotten records");

  // Nol restores her own fact; both pages see it current again.
  await nolsFact.getByRole("button", { name: "Restore" }).click();
  await waitFor("the fact to be current on Ada's page", async () => (await onAdas.getByText("Forgotten by").count()) === 0 && (await onAdas.getByRole("button", { name: "Forget" }).count()) === 1);
  await adas.getByRole("button", { name: "Restore" }).click();
  await waitFor("the decision to be current for Nol", async () => (await adasDecision.getByText("Forgotten by").count()) === 0);
  const all = await call(stack, "GET", "/api/channels/launch/memory?all=true", { token });
  assert.deepEqual(all.json.map((m) => m.status), ["current", "current"]);
  assert.equal(all.json.find((m) => m.id === decision.json.id).forgotten_by, null);
});

test("the Threads list: open sessions first; a resolved one goes down among the finished", async () => {
  await nol.getByRole("link", { name: "Threads" }).click();
  await call(stack, "POST", "/api/channels/launch/messages", { token, body: { text: "second topic: the press list" } });
  const list = await call(stack, "GET", "/api/channels/launch/threads", { token });
  const checklist = list.json.find((t) => t.title === "Launch checklist, final");
  await call(stack, "PUT", `/api/threads/${checklist.id}/status`, { token, body: { status: "resolved" } });
  const titles = () => nol.locator(".thread-list a.thread-title, .thread-list li a").allInnerTexts();
  await waitFor("the resolved thread below the open one", async () => {
    const shown = (await titles()).join("\n");
    const open = shown.indexOf("second topic");
    const done = shown.indexOf("Launch checklist, final");
    return open >= 0 && done > open;
  });
  // Nol's own page, her avatar in it: every tint is dark enough for its white initials.
  assert.deepEqual(await axeViolations(nol), [], "axe-core on a member's Threads list");
});

test("no console errors", () => {
  assert.deepEqual(ada.consoleErrors(), []);
  assert.deepEqual(nol.consoleErrors(), []);
});

test("a summary's decisions can be kept as decision records, each once", async () => {
  // A thread whose agent answered once, then summarised (as resolving does).
  await stack.mock.push({ text: "Noted: the beta opens on March 3rd." });
  const posted = await call(stack, "POST", "/api/channels/launch/messages", { token, body: { text: "@launch-agent when does the beta open?" } });
  const id = posted.json.thread.id;
  await waitFor("the agent's answer", async () => JSON.stringify((await call(stack, "GET", `/api/threads/${id}/messages`, { token })).json).includes("opens on March 3rd"));
  await stack.mock.push({
    text: JSON.stringify({ goal: "Date the beta", work_done: "Agreed a date", result: "The beta is dated", open_items: ["Book the venue"], decisions: ["The beta opens on March 3rd", "Invites go out a week before"] }),
  });
  const written = await call(stack, "POST", `/api/threads/${id}/summary`, { token });
  assert.equal(written.response.status, 201, JSON.stringify(written.json));

  await ada.goto(`${stack.url}/c/launch/t/${id}`);
  const panel = ada.getByRole("complementary", { name: /Thread: when does the beta open/ });
  await panel.locator("summary", { hasText: "Summary" }).click();
  await panel.getByText("Goal: Date the beta").waitFor();
  const keep = panel.getByRole("button", { name: "Record as a decision: The beta opens on March 3rd" });
  await keep.click();
  await panel.getByText("recorded").waitFor();
  assert.equal(await keep.count(), 0, "kept once: its button is gone");
  await panel.getByRole("button", { name: "Record as a decision: Invites go out a week before" }).waitFor();
  await screenshot(ada, "63-summary-decisions-desktop");

  const records = (await call(stack, "GET", "/api/channels/launch/memory?kind=decision", { token })).json;
  const kept = records.filter((r) => r.content === "The beta opens on March 3rd");
  assert.equal(kept.length, 1, JSON.stringify(records));
  assert.equal(kept[0].thread_id, id, "sourced to its thread");
  // Nol, a member, sees the decision recorded too.
  await nol.goto(`${stack.url}/c/launch/t/${id}`);
  const nols = nol.getByRole("complementary", { name: /Thread: when does the beta open/ });
  await nols.locator("summary", { hasText: "Summary" }).click();
  await nols.getByText("recorded").waitFor();
  assert.deepEqual(await axeViolations(ada), [], "axe-core on a thread with its summary open");
});
