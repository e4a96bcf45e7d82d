// Choosing a channel's computer in the browser: a server whose config names
// computers offers them under "More options" when a channel is made, and
// the channel keeps the one chosen. (Where commands then run is tested in
// Rust against a real Open Terminal server.) This workspace starts with no
// model provider (as when the first-run wizard's model step was skipped),
// so it is also where "no model yet" is seen, and where the first one is
// connected in the browser (Workspace → Providers).
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { DESKTOP, PASSWORD, axeViolations, call, launchBrowser, openPage, quickStart, screenshot, startStack, waitFor } from "./harness.mjs";

let stack;
let browser;
let token;
let page;

before(async () => {
  const data = mkdtempSync(join(tmpdir(), "helm-ui-computers-"));
  // Nothing listens there: choosing a computer makes no call to it.
  writeFileSync(join(data, "helm.toml"), '[computers.gpu-box]\nat = "http://127.0.0.1:9"\nkey_env = "HELM_E2E_GPU_KEY"\n');
  process.env.HELM_E2E_GPU_KEY = "e2e-key";
  stack = await startStack({ dataDir: data });
  browser = await launchBrowser();
  const started = await quickStart(stack, browser, DESKTOP, { provider: false });
  token = started.token;
  page = await openPage(started.context, stack.url);
});

after(async () => {
  await browser?.close();
  await stack?.stop();
});

test("with no model yet: the Captain is shown the way to connect one, a member whom to ask", async () => {
  // A message no model can serve is refused (409 model_unavailable).
  page.allowErrors(/status of 409 \(Conflict\) \(.*\/api\/channels\/main\/messages\)/);
  await page.goto(`${stack.url}/c/main`);
  // Landing in #main with no provider: a banner, not just "no model yet".
  const banner = page.getByRole("status").filter({ hasText: "No model is connected yet, so @skipper cannot answer." });
  await banner.getByRole("link", { name: "Connect a model" }).waitFor();
  // Posting anyway: plain words and the way forward; the server's own text behind Details.
  const composer = page.getByLabel("Message #main: ask Skipper anything");
  await composer.fill("hello, anyone there?");
  await composer.press("Enter");
  const refused = page.getByRole("alert").filter({ hasText: "No model can answer @skipper yet" });
  await refused.waitFor();
  assert.doesNotMatch(await refused.innerText(), /no session, channel or workspace choice/, "the raw reason is not in the way");
  await refused.getByText("Details").click();
  await refused.getByText(/no session, channel or workspace choice names a provider/).waitFor();
  assert.equal(await composer.inputValue(), "hello, anyone there?", "the message stays in the box");
  // The header's chip leads the Captain to where a model is chosen.
  await page.locator(".agent-card").getByRole("link", { name: "no model yet" }).waitFor();
  assert.equal(await page.locator(".agent-card").getByRole("link", { name: "no model yet" }).getAttribute("href"), "/c/main/settings");
  assert.deepEqual(await axeViolations(page), [], "axe-core on #main with no model");
  await screenshot(page, "no-model-captain");
  await refused.getByRole("link", { name: "Connect a model" }).click();
  await page.waitForURL(`${stack.url}/admin/providers`);
  await page.getByRole("heading", { name: "Model providers" }).waitFor();

  // A member cannot connect one: told whom to ask, with no link that would not work.
  const invite = await call(stack, "POST", "/api/invites", { token, body: {} });
  const accepted = await call(stack, "POST", "/api/invites/accept", { body: { code: invite.json.code, name: "bob", display_name: "Bob Builder", password: PASSWORD } });
  const [name, value] = accepted.response.headers.get("set-cookie").split(";")[0].split("=");
  const context = await browser.newContext({ viewport: DESKTOP });
  await context.addCookies([{ name, value, url: stack.url }]);
  const bob = await openPage(context, `${stack.url}/c/main`);
  bob.allowErrors(/status of 409 \(Conflict\)/);
  await bob.getByRole("status").filter({ hasText: "No model is connected yet" }).getByText("Ask the Captain to connect a model.").waitFor();
  // The header's chip too: no link to a Settings page where Bob could not change it, but whom to ask.
  await bob.locator(".agent-card").getByText("no model yet: ask the Captain").waitFor();
  assert.equal(await bob.locator(".agent-card").getByRole("link", { name: /no model/ }).count(), 0);
  const bobComposer = bob.getByLabel("Message #main: ask Skipper anything");
  await bobComposer.fill("hello?");
  await bobComposer.press("Enter");
  const bobRefused = bob.getByRole("alert").filter({ hasText: "No model can answer @skipper yet" });
  await bobRefused.getByText("Ask the Captain to connect a model.").waitFor();
  assert.equal(await bob.getByRole("link", { name: "Connect a model" }).count(), 0);
  await screenshot(bob, "no-model-member");
  assert.deepEqual(bob.consoleErrors(), []);
  await context.close();
});

test("the first provider connected is the default; the next one gets a name of its own", async () => {
  await page.goto(`${stack.url}/admin/providers`);
  await page.getByText("No provider yet").waitFor();
  const form = page.locator("form.provider-form");
  await form.getByLabel("Base URL", { exact: true }).fill(stack.mock.modelUrl);
  await form.getByLabel("Default model", { exact: true }).fill("mock-model");
  await form.getByText("More options").click();
  const name = form.getByLabel("Name in Helm");
  const asDefault = form.getByLabel("Make it the workspace's default model");
  // The list had not loaded when the form first drew; the box follows it.
  await waitFor("the first provider to be offered as the default", () => asDefault.isChecked());
  assert.equal(await name.inputValue(), "openai");
  await form.getByRole("button", { name: "Save provider" }).click();
  await page.getByText("openai is connected.").waitFor();
  await page.locator(".provider-list li").filter({ hasText: "openai" }).getByText("workspace default").waitFor();
  const policy = await call(stack, "GET", "/api/model", { token });
  assert.equal(policy.json.workspace?.provider, "openai");

  // The next one: a name not taken, and not the default unless asked.
  await waitFor("a name of its own", async () => (await name.inputValue()) === "openai-2");
  assert.equal(await asDefault.isChecked(), false);
  // A name that breaks the rules says which characters are allowed.
  await name.fill(".hidden");
  await form.getByRole("button", { name: "Save provider" }).click();
  assert.match(await name.evaluate((el) => el.validationMessage), /Letters, digits, '\.', '-' and '_' only/);
  // A name taken since the page read the list: the server's 409, on the field.
  await call(stack, "POST", "/api/providers", { token, body: { name: "spare", kind: "openai", base_url: stack.mock.modelUrl, default_model: "mock-model" } });
  await name.fill("spare");
  await form.getByRole("button", { name: "Save provider" }).click();
  await form.getByText("A provider named spare is connected already.", { exact: false }).waitFor();
  assert.equal(await name.getAttribute("aria-invalid"), "true");
  await screenshot(page, "providers-name-taken");
  assert.equal(await form.locator(".error-note").count(), 0, "said on the name, not as a general error");
  // Typing again clears it.
  await name.fill("spare-2");
  assert.equal(await name.getAttribute("aria-invalid"), null);
  assert.deepEqual(await axeViolations(page), [], "axe-core on Providers");
});

test("a channel made on a named computer keeps it", async () => {
  await page.getByRole("button", { name: "Create a channel" }).click();
  const dialog = page.getByRole("dialog", { name: "Create a channel" });
  await dialog.getByLabel("Name", { exact: true }).fill("training");
  await dialog.getByLabel("What is this channel all about?").fill("Training runs on the GPU box.");
  await dialog.getByText("More options").click();
  const computer = dialog.getByLabel("Computer");
  await computer.waitFor();
  assert.deepEqual(await computer.locator("option").allTextContents(), ["The workspace's default", "gpu-box"]);
  await computer.selectOption("gpu-box");
  assert.deepEqual(await axeViolations(page), [], "axe-core on the create dialog with a computer");
  await screenshot(page, "computers-create-dialog");
  await dialog.getByRole("button", { name: "Create channel" }).click();
  await page.getByRole("heading", { name: "training", exact: true }).waitFor();
  const made = await call(stack, "GET", "/api/channels/training", { token });
  assert.equal(made.json.profile.capability_policy.computer, "gpu-box");
  await page.getByRole("navigation", { name: "#training views" }).getByRole("link", { name: "Settings" }).click();
  await page.getByText("Runs on gpu-box, chosen when the channel was made.").waitFor();
});
