// Choosing a channel's computer in the browser: a server whose config names
// computers offers them under "More options" when a channel is made, and
// the channel keeps the one chosen. (Where commands then run is tested in
// Rust against a real Open Terminal server.)
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { axeViolations, call, launchBrowser, openPage, quickStart, screenshot, startStack } from "./harness.mjs";

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
  const started = await quickStart(stack, browser);
  token = started.token;
  page = await openPage(started.context, stack.url);
});

after(async () => {
  await browser?.close();
  await stack?.stop();
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
