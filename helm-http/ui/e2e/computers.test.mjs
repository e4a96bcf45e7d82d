// Choosing a channel's computer in the browser: a server whose config names
// computers offers them under "More options" when a channel is made, and
// the channel keeps the one chosen. (Where commands then run is tested in
// Rust against a real Open Terminal server.) This workspace starts with no
// model provider, so it is also where the first one is connected in the
// browser (Admin → Providers).
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { DESKTOP, axeViolations, call, launchBrowser, openPage, quickStart, screenshot, startStack, waitFor } from "./harness.mjs";

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
  await page.getByRole("link", { name: "Settings" }).click();
  await page.getByText("Runs on gpu-box, chosen when the channel was made.").waitFor();
});
