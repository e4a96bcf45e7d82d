// Quick Note, in a real browser: the top bar's note button (and `n`) opens a
// compact overlay; saving writes a new Markdown file under /workspace/notes
// (a second one with the same title gets `-2`) and changes nothing else: the
// address, the open thread, the chat's scroll position and the focus stay
// as they were. The toast names the file and opens it; a draft survives a
// reload; the server's refusal is said in words with the text kept; a note
// goes to another channel through the picker (never to an archived one);
// on a phone the overlay is a sheet along the bottom. First run is done
// through the API.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { DESKTOP, PHONE, axeViolations, call, launchBrowser, openPage, quickStart, screenshot, startStack, waitFor } from "./harness.mjs";

let stack;
let browser;
let token;
let page;
let threadId;

const DAY = /\d{4}-\d{2}-\d{2}/.source;

before(async () => {
  stack = await startStack();
  browser = await launchBrowser();
  const started = await quickStart(stack, browser);
  token = started.token;
  // Nothing here should wake the agent; if something does, it answers briefly.
  await stack.mock.fallback({ text: "Noted." });
  await call(stack, "POST", "/api/channels", { token, body: { name: "launch", purpose: "Planning the product launch." } });
  await call(stack, "POST", "/api/channels", { token, body: { name: "attic", purpose: "Old things." } });
  await call(stack, "POST", "/api/channels/attic/archive", { token });
  // A chat long enough to scroll, and a thread with replies to open.
  for (let i = 1; i <= 30; i++) {
    const posted = await call(stack, "POST", "/api/channels/launch/messages", {
      token,
      body: { text: `Launch item ${i}: ${"a line of planning that takes some room in the feed, ".repeat(3)}` },
    });
    if (i === 12) threadId = posted.json.thread.id;
  }
  for (let i = 1; i <= 8; i++) {
    await call(stack, "POST", "/api/channels/launch/messages", { token, body: { text: `Reply ${i} in the thread about item 12.`, thread_id: threadId } });
  }
  page = await openPage(started.context, `${stack.url}/c/launch`);
  await page.getByRole("heading", { name: "launch", exact: true }).waitFor();
});

after(async () => {
  await browser?.close();
  await stack?.stop();
});

const feed = () => page.getByRole("region", { name: "Messages in #launch" });
const overlay = () => page.getByRole("dialog", { name: "Quick note" });

/** What saving must leave alone. */
async function snapshot() {
  return {
    url: page.url(),
    thread: await page.getByRole("complementary", { name: /^Thread: / }).getAttribute("aria-label"),
    feedTop: await feed().evaluate((el) => el.scrollTop),
    threadTop: await page.getByRole("region", { name: "Messages in this thread" }).evaluate((el) => el.scrollTop),
    focus: await page.evaluate(() => {
      const el = document.activeElement;
      return { label: el?.getAttribute("aria-label") ?? el?.id ?? el?.tagName, value: el?.value, start: el?.selectionStart, end: el?.selectionEnd };
    }),
  };
}

async function readNote(channel, path) {
  return (await call(stack, "GET", `/api/channels/${channel}/files/read?path=${encodeURIComponent(path)}`, { token })).json.content;
}

test("saving a note writes a new file and changes nothing else: address, thread, scroll, focus", async () => {
  // Scroll the chat up to the middle, then open a thread from there.
  await feed().getByRole("paragraph").filter({ hasText: "Launch item 30:" }).waitFor();
  await feed().evaluate((el) => (el.scrollTop = el.scrollHeight / 2));
  const link = feed().getByRole("link", { name: /8 replies/ });
  await waitFor("the thread's item in view", async () => {
    if ((await link.count()) === 0) await feed().evaluate((el) => (el.scrollTop -= 200));
    return (await link.count()) === 1;
  });
  // The feed is virtualized and may still be settling from the scroll: a
  // click that lands while the item moves is tried again.
  const target = `${stack.url}/c/launch/t/${threadId}`;
  await waitFor("the thread to open", async () => {
    if (page.url() !== target && (await link.count()) === 1) await link.click({ timeout: 2_000 }).catch(() => {});
    return page.url() === target;
  });
  const thread = page.getByRole("complementary", { name: /Thread: Launch item 12/ });
  await thread.getByText("Reply 8 in the thread about item 12.").waitFor();
  // Half a reply typed, the caret in its middle.
  const reply = page.getByLabel("Reply in this thread");
  await reply.fill("half a thought");
  await reply.evaluate((el) => el.setSelectionRange(5, 5));
  await page.waitForTimeout(400); // the panel's layout settles
  const before = await snapshot();
  assert.ok(before.feedTop > 200, `the chat is scrolled away from the top: ${before.feedTop}`);
  assert.equal(before.focus.label, "Reply in this thread");

  await page.getByRole("button", { name: "Quick note" }).click();
  const note = overlay();
  await note.waitFor();
  assert.equal(await note.getByLabel("Save to").evaluate((el) => el.selectedOptions[0].textContent), "#launch", "the channel being viewed");
  assert.deepEqual(
    await note.getByLabel("Save to").locator("option").allTextContents(),
    ["#main", "#launch"],
    "active channels only: the archived #attic is not offered",
  );
  // The focus is in the note: the text, with a trap around the overlay.
  assert.equal(await page.evaluate(() => document.activeElement?.id), "quick-note-text");
  await note.getByLabel("Title (optional)").fill("Press list");
  await note.getByLabel("Note (Markdown)").fill("- Call the Herald\n- Send the **kit** to the Gazette");
  await page.keyboard.press("Tab");
  await page.keyboard.press("Tab");
  await page.keyboard.press("Tab");
  await page.keyboard.press("Tab");
  assert.ok(await note.evaluate((el) => el.contains(document.activeElement)), "Tab stays in the overlay");
  assert.deepEqual(await axeViolations(page), [], "axe-core with Quick Note open");
  await screenshot(page, "quicknote-open-desktop");
  await note.getByLabel("Note (Markdown)").focus();
  await page.keyboard.press("Control+Enter");

  const toast = page.getByRole("button", { name: new RegExp(`^Saved notes/${DAY}-press-list\\.md in #launch$`) });
  await toast.waitFor();
  await waitFor("the overlay to close", async () => (await overlay().count()) === 0);
  const afterSave = await snapshot();
  assert.deepEqual(afterSave, before, "the address, the open thread, the scroll positions and the focus are as they were");
  await screenshot(page, "quicknote-saved-desktop");

  const name = (await toast.innerText()).match(/notes\/(\S+\.md)/)[1];
  const content = await readNote("launch", `/workspace/notes/${name}`);
  assert.match(content, /Press list/);
  assert.match(content, /- Call the Herald\n- Send the \*\*kit\*\* to the Gazette/);

  // The same title again: a new file beside it, never a replaced one.
  await page.getByRole("button", { name: "Quick note" }).click();
  assert.equal(await overlay().getByLabel("Note (Markdown)").inputValue(), "", "the draft went with the save");
  await overlay().getByLabel("Title (optional)").fill("Press list");
  await overlay().getByLabel("Note (Markdown)").fill("Second round of calls.");
  await overlay().getByRole("button", { name: "Save" }).click();
  const second = page.getByRole("button", { name: new RegExp(`^Saved notes/${DAY}-press-list-2\\.md in #launch$`) });
  await second.waitFor();
  const listed = await call(stack, "GET", "/api/channels/launch/files?path=notes", { token });
  assert.deepEqual(listed.json.map((f) => f.name).sort(), [name, name.replace(/\.md$/, "-2.md")].sort());
  assert.match(await readNote("launch", `/workspace/notes/${name}`), /Call the Herald/, "the first note is untouched");
  assert.equal(page.url(), before.url);

  // The toast's link opens the note in Cowork's Notes, where it can be edited.
  await second.click();
  await page.waitForURL(/\/c\/launch\/cowork\?path=/);
  const opened = page.getByLabel(`Text of ${name.replace(/\.md$/, "-2.md")}`);
  await opened.waitFor();
  assert.match(await opened.inputValue(), /Second round of calls\./);
});

test("n opens it; Escape closes it and gives the focus back; a draft survives a reload", async () => {
  await page.goto(`${stack.url}/c/launch/t/${threadId}`);
  await page.getByRole("complementary", { name: /Thread: Launch item 12/ }).getByText("Reply 8 in the thread about item 12.").waitFor();
  await feed().focus();
  await page.keyboard.press("n");
  const note = overlay();
  await note.waitFor();
  await note.getByLabel("Title (optional)").fill("Venue ideas");
  await note.getByLabel("Note (Markdown)").fill("The old boathouse?");
  await page.keyboard.press("Escape");
  await waitFor("the overlay to close", async () => (await overlay().count()) === 0);
  assert.equal(await page.evaluate(() => document.activeElement?.getAttribute("aria-label")), "Messages in #launch", "the focus is back on the chat");
  assert.match(page.url(), new RegExp(`/t/${threadId}$`), "Escape closed the note, not the thread");

  await page.reload();
  await page.getByRole("heading", { name: "launch", exact: true }).waitFor();
  await page.locator("body").press("n");
  await overlay().waitFor();
  assert.equal(await overlay().getByLabel("Title (optional)").inputValue(), "Venue ideas");
  assert.equal(await overlay().getByLabel("Note (Markdown)").inputValue(), "The old boathouse?");
  await overlay().getByRole("button", { name: "Close", exact: true }).click();
  await waitFor("the overlay to close", async () => (await overlay().count()) === 0);

  // The shortcut sheet lists it.
  await page.locator("body").press("?");
  const sheet = page.getByRole("dialog", { name: "Keyboard shortcuts" });
  await sheet.getByText("Write a quick note", { exact: false }).waitFor();
  await page.keyboard.press("Escape");
});

test("the server's refusal is said in words, and the note is kept", async () => {
  page.allowErrors(/status of 422/);
  await page.getByRole("button", { name: "Quick note" }).click();
  const note = overlay();
  // An empty note.
  await note.getByLabel("Title (optional)").fill("");
  await note.getByLabel("Note (Markdown)").fill("");
  await note.getByRole("button", { name: "Save" }).click();
  const alert = note.getByRole("alert");
  await alert.waitFor();
  const empty = await alert.innerText();
  assert.ok(empty.length > 10 && !/^\{|422|unprocessable/i.test(empty), `in words: ${empty}`);
  // A title too long for a file name: refused, and what was written stays.
  const long = "Venue ideas ".repeat(20);
  await note.getByLabel("Title (optional)").fill(long);
  await note.getByLabel("Note (Markdown)").fill("The old boathouse?");
  await page.keyboard.press("Control+Enter");
  await waitFor("the refusal of the long title", async () => (await alert.innerText()) !== empty);
  assert.ok(!/^\{|422|unprocessable/i.test(await alert.innerText()), `in words: ${await alert.innerText()}`);
  assert.equal(await overlay().count(), 1, "still open");
  assert.equal(await note.getByLabel("Title (optional)").inputValue(), long, "the title is kept");
  assert.equal(await note.getByLabel("Note (Markdown)").inputValue(), "The old boathouse?", "the text is kept");
  assert.deepEqual(await axeViolations(page), [], "axe-core with the refusal");
  await screenshot(page, "quicknote-refused-desktop");
  await note.getByLabel("Title (optional)").fill("Venue ideas");
  await page.keyboard.press("Control+Enter");
  await page.getByRole("button", { name: new RegExp(`^Saved notes/${DAY}-venue-ideas\\.md in #launch$`) }).waitFor();
});

test("from #main's view to #launch through the picker; the next note starts on the last channel", async () => {
  await page.goto(`${stack.url}/c/main`);
  await page.getByRole("heading", { name: "main", exact: true }).waitFor();
  await page.getByRole("button", { name: "Quick note" }).click();
  const picker = overlay().getByLabel("Save to");
  assert.equal(await picker.evaluate((el) => el.selectedOptions[0].textContent), "#main", "the channel being viewed");
  await picker.selectOption({ label: "#launch" });
  await overlay().getByLabel("Note (Markdown)").fill("Budget: ask finance on Monday.");
  await page.keyboard.press("Control+Enter");
  const toast = page.getByRole("button", { name: new RegExp(`^Saved notes/${DAY}-budget-ask-finance-on-monday\\.md in #launch$`) });
  await toast.waitFor();
  assert.equal(page.url(), `${stack.url}/c/main`, "still in #main");
  const name = (await toast.innerText()).match(/notes\/(\S+\.md)/)[1];
  assert.match(await readNote("launch", `/workspace/notes/${name}`), /Budget: ask finance on Monday\./);

  // Where no channel is viewed, the last one a note went to.
  await page.goto(`${stack.url}/admin/people`);
  await page.getByRole("heading", { name: "People", exact: true }).waitFor();
  await page.getByRole("button", { name: "Quick note" }).click();
  assert.equal(await overlay().getByLabel("Save to").evaluate((el) => el.selectedOptions[0].textContent), "#launch");
  await page.keyboard.press("Escape");
});

test("on a phone it is a sheet along the bottom", async () => {
  await page.setViewportSize(PHONE);
  await page.goto(`${stack.url}/c/launch`);
  await page.getByRole("heading", { name: "launch", exact: true }).waitFor();
  await page.getByRole("button", { name: "Quick note" }).click();
  const note = overlay();
  await note.waitFor();
  await note.getByLabel("Title (optional)").fill("Photos");
  await note.getByLabel("Note (Markdown)").fill("Ask for the launch photos by Friday.");
  const box = await note.boundingBox();
  assert.equal(Math.round(box.x), 0);
  assert.equal(Math.round(box.width), PHONE.width);
  assert.equal(Math.round(box.y + box.height), PHONE.height, "along the bottom");
  const save = await note.getByRole("button", { name: "Save" }).boundingBox();
  assert.ok(save.y + save.height <= PHONE.height, "Save is on screen");
  assert.deepEqual(await axeViolations(page), [], "axe-core on the phone sheet");
  await screenshot(page, "quicknote-open-phone");
  await note.getByRole("button", { name: "Save" }).click();
  await page.getByRole("button", { name: new RegExp(`^Saved notes/${DAY}-photos\\.md in #launch$`) }).waitFor();
  await page.setViewportSize(DESKTOP);
});

test("no console errors", () => {
  assert.deepEqual(page.consoleErrors(), []);
});
