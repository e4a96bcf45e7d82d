// Cowork in a real browser: a note made from the rail and saved (seen in
// the rail and on disk), a new note refused over a file made meanwhile, a
// save refused over a version someone else saved (theirs or mine), a doc formatted with the toolbar, a code file
// saved with Ctrl-S (and the question before leaving it unsaved), a
// presentation of three slides presented full screen and paged by the
// keyboard, a whiteboard opened by the route contract, the agent panel
// starting an ordinary thread that carries the open file's path (and the
// same thread in Chat), read-only while archived; each mode photographed
// at desktop and phone width and checked by axe-core.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { DESKTOP, PHONE, axeViolations, call, launchBrowser, openPage, quickStart, screenshot, startStack, waitFor } from "./harness.mjs";

let stack;
let browser;
let token;
let page;

const COWORK = () => `${stack.url}/c/studio/cowork`;
const read = async (path) => (await call(stack, "GET", `/api/channels/studio/files/read?path=${encodeURIComponent(path)}`, { token })).json.content;

before(async () => {
  stack = await startStack();
  browser = await launchBrowser();
  const started = await quickStart(stack, browser);
  token = started.token;
  await call(stack, "POST", "/api/channels", { token, body: { name: "studio", purpose: "Drafts, slides and sketches." } });
  page = await openPage(started.context, COWORK());
  await page.getByRole("heading", { name: "Cowork", exact: true }).waitFor();
});

after(async () => {
  await browser?.close();
  await stack?.stop();
});

async function noAxeProblems(where) {
  assert.deepEqual(await axeViolations(page), [], `axe-core on ${where}`);
}

const rail = () => page.getByRole("navigation", { name: "Cowork folders" });

async function newFile(noun, name) {
  await rail().getByRole("button", { name: `New ${noun}`, exact: true }).first().click();
  const dialog = page.getByRole("dialog", { name: `New ${noun}` });
  await dialog.getByLabel("Name").fill(name);
  await dialog.getByRole("button", { name: `Create ${noun}` }).click();
  await dialog.waitFor({ state: "detached" });
}

test("Cowork is a tab of the channel; every mode shows in the rail, empty at first", async () => {
  await page.getByRole("link", { name: "Cowork", exact: true }).waitFor();
  for (const label of ["Notes", "Whiteboard", "Code", "Docs", "Presentations"]) {
    await rail().getByRole("link", { name: label }).waitFor();
  }
  await rail().getByText("No notes yet.").waitFor();
  await noAxeProblems("Cowork's front page");
  await screenshot(page, "40-cowork-home-desktop");
});

test("a note: made from the rail, written, saved with Ctrl-S, in the rail and on disk", async () => {
  await newFile("note", "Standup");
  await page.waitForURL(`${COWORK()}?path=${encodeURIComponent("/workspace/notes/Standup.md")}`);
  const text = page.getByLabel("Text of Standup.md");
  await text.fill("# Standup\n\n- shipped the **rail**\n- next: slides\n");
  await page.getByText("unsaved changes").waitFor();
  await text.press("Control+s");
  await page.getByRole("status").getByText("saved").waitFor();
  assert.equal(await read("notes/Standup.md"), "# Standup\n\n- shipped the **rail**\n- next: slides\n");
  await rail().getByRole("link", { name: /Standup\.md/ }).waitFor();
  assert.equal(await rail().getByRole("link", { name: /Standup\.md/ }).getAttribute("aria-current"), "page");
  await page.getByRole("button", { name: "Preview" }).click();
  await page.locator(".note-preview strong", { hasText: "rail" }).waitFor();
  await noAxeProblems("a note");
  await screenshot(page, "41-cowork-note-desktop");
  await page.getByRole("button", { name: "Write" }).click();
});

test("New note never replaces a file made meanwhile: the name is said to be taken", async () => {
  await rail().getByRole("button", { name: "New note", exact: true }).first().click();
  const dialog = page.getByRole("dialog", { name: "New note" });
  await dialog.getByLabel("Name").fill("Retro");
  page.allowErrors(/status of 409 \(Conflict\) \(.*\/api\/channels\/studio\/files\)/);
  // The agent (here, the API) writes that very file while the dialog is open.
  await call(stack, "PUT", "/api/channels/studio/files", { token, body: { path: "notes/Retro.md", content: "# Retro by the agent\n" } });
  await dialog.getByRole("button", { name: "Create note" }).click();
  await dialog.getByText("There is already Retro.md in /workspace/notes. Choose another name.").waitFor();
  assert.equal(await read("notes/Retro.md"), "# Retro by the agent\n");
  await dialog.getByRole("button", { name: "Cancel" }).click();
  await dialog.waitFor({ state: "detached" });
  await call(stack, "DELETE", `/api/channels/studio/files?path=${encodeURIComponent("notes/Retro.md")}`, { token });
});

test("two people on one note: a save over a version someone else replaced is refused, theirs or mine", async () => {
  await page.goto(`${COWORK()}?path=${encodeURIComponent("/workspace/notes/Standup.md")}`);
  const text = page.getByLabel("Text of Standup.md");
  await text.waitFor();
  const before = await text.inputValue();
  await text.fill(`${before}- ADA: slides done\n`);
  // Bob saves the same note from his own browser (no live event reaches Ada).
  await call(stack, "PUT", "/api/channels/studio/files", { token, body: { path: "notes/Standup.md", content: `${before}- BOB: venue booked\n` } });
  page.allowErrors(/status of 409 \(Conflict\) \(.*\/api\/channels\/studio\/files\)/);
  await text.press("Control+s");
  const bar = page.getByRole("alert").filter({ hasText: "Someone changed this file." });
  await bar.waitFor();
  assert.match(await read("notes/Standup.md"), /BOB: venue booked/, "Bob's save is kept");
  await screenshot(page, "41b-cowork-note-conflict-desktop");
  // Keep mine, then save: Ada's text replaces Bob's, knowingly.
  await bar.getByRole("button", { name: "Keep mine" }).click();
  await text.press("Control+s");
  await page.getByRole("status").getByText("saved").waitFor();
  assert.equal(await read("notes/Standup.md"), `${before}- ADA: slides done\n`);
  // Back to the note as the other tests expect it.
  await text.fill(before);
  await text.press("Control+s");
  await page.getByRole("status").getByText("saved").waitFor();
});

test("a doc: the toolbar's Bold acts on the selection, the preview follows, Save writes it", async () => {
  await newFile("doc", "Plan");
  const text = page.getByLabel("Text of Plan.md");
  await text.fill("# Plan\n\nThis part is important.\n");
  await text.evaluate((el) => {
    const at = el.value.indexOf("important");
    el.focus();
    el.setSelectionRange(at, at + "important".length);
  });
  await page.getByRole("toolbar", { name: "Formatting" }).getByRole("button", { name: "Bold" }).click();
  assert.equal(await text.inputValue(), "# Plan\n\nThis part is **important**.\n");
  await page.getByRole("region", { name: "Preview" }).locator("strong", { hasText: "important" }).waitFor();
  await page.getByRole("toolbar", { name: "Formatting" }).getByRole("button", { name: "Heading" }).click();
  assert.equal(await text.inputValue(), "# Plan\n\n## This part is **important**.\n");
  await page.getByRole("button", { name: "Save", exact: true }).click();
  await page.getByRole("status").getByText("saved").waitFor();
  assert.equal(await read("docs/Plan.md"), "# Plan\n\n## This part is **important**.\n");
  await noAxeProblems("a doc");
  await screenshot(page, "42-cowork-doc-desktop");
});

test("code: a file in a folder, Tab indents, Ctrl-S saves; leaving unsaved asks first", async () => {
  await newFile("code file", "src/app.py");
  await page.waitForURL(/path=%2Fworkspace%2Fcode%2Fsrc%2Fapp\.py/);
  const code = page.getByLabel("Code of app.py");
  await code.click();
  await page.keyboard.type("def greet(name):\n");
  await page.keyboard.press("Tab");
  // Enter keeps the indentation; Shift-Tab takes it off.
  await page.keyboard.type("word = 'hello'\nreturn f'{word} {name}'\n");
  await page.keyboard.press("Shift+Tab");
  await page.keyboard.type("# end");
  await page.keyboard.press("Control+s");
  await page.getByRole("status").getByText("saved").waitFor();
  assert.equal(await read("code/src/app.py"), "def greet(name):\n  word = 'hello'\n  return f'{word} {name}'\n# end");
  // Highlighted, with line numbers; the folder shows as a tree.
  await page.locator(".code-layer .hljs-keyword", { hasText: "def" }).first().waitFor();
  assert.match(await page.locator(".code-gutter").innerText(), /1\s+2\s+3\s+4/);
  await rail().getByRole("button", { name: "src", expanded: true }).waitFor();
  await noAxeProblems("a code file");
  await screenshot(page, "43-cowork-code-desktop");

  // Unsaved changes: going to another file asks; "Save and go" saves, then goes.
  await code.press("Control+End");
  await page.keyboard.type("\n# more");
  await page.getByText("unsaved changes").waitFor();
  await rail().getByRole("link", { name: /Standup\.md/ }).click();
  const leave = page.getByRole("dialog", { name: "Unsaved changes" });
  await leave.getByRole("button", { name: "Keep editing" }).click();
  assert.match(page.url(), /app\.py/);
  // Back asks too, and staying keeps the address.
  await page.goBack();
  await leave.getByRole("button", { name: "Keep editing" }).click();
  await waitFor("the address to stay", async () => /app\.py/.test(page.url()));
  assert.match(await code.inputValue(), /# more/);
  await rail().getByRole("link", { name: /Standup\.md/ }).click();
  await leave.getByRole("button", { name: "Save and go" }).click();
  await page.getByLabel("Text of Standup.md").waitFor();
  assert.match(await read("code/src/app.py"), /# more/);
});

test("a presentation: three slides, thumbnails, Present pages with the keyboard, Escape leaves", async () => {
  await newFile("presentation", "Launch");
  const text = page.getByLabel("Slides of Launch.md");
  await text.fill("# Launch\n\nThe plan in three slides\n\n---\n\n## Beta\n\n- on the 3rd\n\n---\n\n## Press\n\n- on the 10th\n");
  const strip = page.getByRole("list", { name: "Slides" });
  await waitFor("three thumbnails", async () => (await strip.getByRole("button").count()) === 3);
  await strip.getByRole("button", { name: "Slide 2" }).click();
  await page.getByRole("region", { name: "Slide 2 of 3" }).getByRole("heading", { name: "Beta" }).waitFor();
  await text.press("Control+s");
  await page.getByRole("status").getByText("saved").waitFor();
  await noAxeProblems("a presentation");
  await screenshot(page, "44-cowork-slides-desktop");

  await strip.getByRole("button", { name: "Slide 1" }).click();
  await page.getByRole("button", { name: "Present", exact: true }).click();
  const show = page.getByRole("dialog", { name: "Presenting Launch.md" });
  const count = show.locator(".presenter-count");
  await waitFor("slide 1", async () => (await count.innerText()) === "1 / 3");
  await show.getByRole("heading", { name: "Launch" }).waitFor();
  await screenshot(page, "45-cowork-presenting-desktop");
  await page.keyboard.press("ArrowRight");
  await waitFor("slide 2", async () => (await count.innerText()) === "2 / 3");
  await page.keyboard.press("Space");
  await waitFor("slide 3", async () => (await count.innerText()) === "3 / 3");
  await show.getByRole("heading", { name: "Press" }).waitFor();
  await page.keyboard.press("PageDown");
  assert.equal(await count.innerText(), "3 / 3", "the last slide stays");
  await page.keyboard.press("PageUp");
  await waitFor("back to slide 2", async () => (await count.innerText()) === "2 / 3");
  await page.keyboard.press("ArrowLeft");
  await waitFor("back to slide 1", async () => (await count.innerText()) === "1 / 3");
  await page.keyboard.press("Escape");
  await show.waitFor({ state: "detached" });
  await page.getByRole("button", { name: "Present", exact: true }).waitFor();
});

test("whiteboards: New writes an empty SVG; ?path= opens one, ?mode= opens a folder", async () => {
  await newFile("whiteboard", "flow");
  assert.equal(await read("whiteboards/flow.svg"), '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 1600 1000" width="1600" height="1000"></svg>');
  await call(stack, "PUT", "/api/channels/studio/files", {
    token,
    body: { path: "whiteboards/sketch.svg", content: '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 200 100" width="200" height="100"><rect x="10" y="10" width="80" height="40" fill="#2456c9"/></svg>' },
  });
  // The route contract: the path as the Files view writes it.
  await page.goto(`${COWORK()}?path=${encodeURIComponent("/workspace/whiteboards/sketch.svg")}`);
  await page.getByRole("heading", { name: "sketch.svg" }).waitFor();
  await waitFor("the whiteboard to load", async () => (await page.getByText("Loading the whiteboard…").count()) === 0);
  assert.equal(await rail().getByRole("link", { name: "sketch.svg" }).getAttribute("aria-current"), "page");
  await noAxeProblems("a whiteboard");
  await screenshot(page, "46-cowork-whiteboard-desktop");

  await page.goto(`${COWORK()}?mode=code`);
  await page.getByRole("heading", { name: "Code" }).waitFor();
  assert.equal(await rail().getByRole("link", { name: "Code" }).getAttribute("aria-current"), "page");
});

test("the agent panel starts an ordinary thread ending with the open file's path; it is in Chat too", async () => {
  await page.goto(`${COWORK()}?path=${encodeURIComponent("/workspace/docs/Plan.md")}`);
  await page.getByLabel("Text of Plan.md").waitFor();
  await page.getByRole("button", { name: "Agent", exact: true }).click();
  const panel = page.getByRole("complementary", { name: "Agent panel: @studio-agent" });
  await panel.getByText("/workspace/docs/Plan.md").waitFor();
  await stack.mock.push({ chunks: ["Read it: ", "the plan ", "reads well."], chunk_delay_ms: 150 });
  const ask = panel.getByLabel("Ask @studio-agent");
  await ask.fill("Can you review this doc?");
  await ask.press("Enter");
  await panel.getByText("Read it: the plan reads well.").waitFor();

  const threads = (await call(stack, "GET", "/api/channels/studio/threads", { token })).json;
  assert.equal(threads.length, 1);
  const id = threads[0].id;
  const messages = (await call(stack, "GET", `/api/threads/${id}/messages`, { token })).json.items;
  const first = messages.find((m) => m.author.kind === "human");
  assert.equal(first.content, "@studio-agent Can you review this doc?\n\n/workspace/docs/Plan.md");
  assert.ok(first.content.endsWith("/workspace/docs/Plan.md"));
  await noAxeProblems("the agent panel");
  await screenshot(page, "47-cowork-agent-desktop");

  // Later messages reply in the same thread; what the agent writes to the
  // open file (unchanged here) shows in the editor once it is done.
  await stack.mock.push(
    { tool_calls: [{ name: "write_file", arguments: { path: "docs/Plan.md", content: "# Plan\n\nReviewed: ship it.\n" } }] },
    { text: "Glad to help." },
  );
  const reply = panel.getByLabel("Reply to the agent");
  await reply.fill("@studio-agent please add your verdict");
  await reply.press("Enter");
  await panel.getByText("Glad to help.").waitFor();
  assert.equal((await call(stack, "GET", "/api/channels/studio/threads", { token })).json.length, 1);
  await waitFor("the agent's edit in the editor", async () => (await page.getByLabel("Text of Plan.md").inputValue()) === "# Plan\n\nReviewed: ship it.\n");

  await panel.getByRole("link", { name: "Open in Chat" }).click();
  await page.waitForURL(`${stack.url}/c/studio/t/${id}`);
  const thread = page.getByRole("complementary", { name: /^Thread:/ });
  await thread.getByText("Glad to help.").waitFor();
  await thread.getByText("/workspace/docs/Plan.md", { exact: true }).waitFor();

  // Back in Cowork the panel is still open, on the same thread.
  await page.goBack();
  await page.getByRole("complementary", { name: "Agent panel: @studio-agent" }).getByText("Glad to help.").waitFor();
  await page.getByRole("button", { name: "Agent", exact: true }).click();
  await page.getByRole("complementary", { name: "Agent panel: @studio-agent" }).waitFor({ state: "detached" });
});

test("at phone width: the rail, then the file full width with a way back", async () => {
  await page.setViewportSize(PHONE);
  try {
    await page.goto(COWORK());
    await rail().getByRole("link", { name: /Standup\.md/ }).waitFor();
    await noAxeProblems("Cowork on a phone");
    await screenshot(page, "40-cowork-home-phone");
    const shots = [
      ["notes/Standup.md", "41-cowork-note-phone", "Text of Standup.md"],
      ["docs/Plan.md", "42-cowork-doc-phone", "Text of Plan.md"],
      ["code/src/app.py", "43-cowork-code-phone", "Code of app.py"],
      ["presentations/Launch.md", "44-cowork-slides-phone", "Slides of Launch.md"],
    ];
    for (const [path, name, label] of shots) {
      await page.goto(`${COWORK()}?path=${encodeURIComponent(`/workspace/${path}`)}`);
      await page.getByLabel(label).waitFor();
      assert.equal(await rail().isVisible(), false, "the file has the screen");
      await screenshot(page, name);
    }
    await page.goto(`${COWORK()}?path=${encodeURIComponent("/workspace/whiteboards/sketch.svg")}`);
    await page.getByRole("heading", { name: "sketch.svg" }).waitFor();
    await screenshot(page, "46-cowork-whiteboard-phone");
    await page.getByRole("button", { name: "Agent", exact: true }).click();
    await page.getByRole("complementary", { name: "Agent panel: @studio-agent" }).getByText("Glad to help.").waitFor();
    await noAxeProblems("the agent panel on a phone");
    await screenshot(page, "47-cowork-agent-phone");
    await page.getByRole("button", { name: "Close the agent panel" }).click();
    await page.getByRole("link", { name: "Back to Whiteboard" }).click();
    await rail().waitFor();
  } finally {
    await page.setViewportSize(DESKTOP);
  }
});

test("rename and delete, through the files API, with a confirmation", async () => {
  await page.goto(`${COWORK()}?path=${encodeURIComponent("/workspace/notes/Standup.md")}`);
  await page.getByLabel("Text of Standup.md").waitFor();
  await page.getByRole("button", { name: "Rename" }).click();
  const rename = page.getByRole("dialog", { name: "Rename Standup.md" });
  await rename.getByLabel("New name").fill("what/ever");
  await rename.getByRole("button", { name: "Rename" }).click();
  await rename.getByText("A name cannot contain '/'.").waitFor();
  await rename.getByLabel("New name").fill("Daily");
  await rename.getByRole("button", { name: "Rename" }).click();
  await page.waitForURL(`${COWORK()}?path=${encodeURIComponent("/workspace/notes/Daily.md")}`);
  await rail().getByRole("link", { name: /Daily\.md/ }).waitFor();
  assert.equal(await rail().getByRole("link", { name: /Standup\.md/ }).count(), 0);
  assert.match(await read("notes/Daily.md"), /shipped the \*\*rail\*\*/);

  // The open editor may be reading the file (its first read, or a look at
  // the disk after the rename's change) as it is deleted: that read's 404
  // is expected, and the view handles it (the file is gone).
  page.allowErrors(/status of 404 \(Not Found\) \(.*\/files\/read\?path=%2Fworkspace%2Fnotes%2FDaily\.md\)/);
  await page.getByRole("button", { name: "Delete Daily.md" }).click();
  const confirm = page.getByRole("dialog", { name: "Delete Daily.md?" });
  await confirm.getByRole("button", { name: "Keep it" }).click();
  await rail().getByRole("link", { name: /Daily\.md/ }).waitFor();
  await page.getByRole("button", { name: "Delete Daily.md" }).click();
  await confirm.getByRole("button", { name: "Delete" }).click();
  await page.waitForURL(`${COWORK()}?mode=notes`);
  await rail().getByText("No notes yet.").waitFor();
  const listed = (await call(stack, "GET", "/api/channels/studio/files?path=notes", { token })).json;
  assert.deepEqual(listed, []);
});

test("an archived channel's files are read-only in Cowork", async () => {
  await call(stack, "POST", "/api/channels/studio/archive", { token });
  await page.goto(`${COWORK()}?path=${encodeURIComponent("/workspace/docs/Plan.md")}`);
  await page.getByText("read-only: the channel is archived").waitFor();
  assert.equal(await page.getByLabel("Text of Plan.md").getAttribute("readonly"), "");
  assert.ok(await page.getByRole("toolbar", { name: "Formatting" }).getByRole("button", { name: "Bold" }).isDisabled());
  assert.equal(await rail().getByRole("button", { name: "New doc" }).count(), 0);
  assert.equal(await page.getByRole("button", { name: "Rename" }).count(), 0);
  assert.equal(await page.getByRole("button", { name: "Save", exact: true }).count(), 0);
  await call(stack, "POST", "/api/channels/studio/restore", { token });
  assert.deepEqual(page.consoleErrors(), []);
});
