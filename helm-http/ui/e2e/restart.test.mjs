// A server restart in the middle of a reply: the reply keeps what it had
// said, is marked as interrupted (nobody chose to end it), and Retry runs
// the turn again on the restarted server.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { ARTIFACTS, call, launchBrowser, openPage, quickStart, screenshot, startStack } from "./harness.mjs";

const data = mkdtempSync(join(tmpdir(), "helm-ui-restart-"));
let stack;
let browser;

before(async () => {
  stack = await startStack({ dataDir: data });
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await stack?.stop();
  rmSync(data, { recursive: true, force: true });
  console.log(`screenshots: ${ARTIFACTS}/screenshots`);
});

test("a reply interrupted by a restart keeps its text and can be retried", async () => {
  const { token, context } = await quickStart(stack, browser);
  await call(stack, "POST", "/api/channels", { token, body: { name: "launch", purpose: "Planning the launch." } });
  // Two chunks, then the model goes quiet: the reply is mid-stream when the server stops.
  await stack.mock.push({ chunks: ["Half of the plan, ", "and the rest"], hang_after: 2 });
  const posted = (await call(stack, "POST", "/api/channels/launch/messages", { token, body: { text: "@launch-agent plan the launch" } })).json;
  const path = `/c/launch/t/${posted.thread.id}`;
  let page = await openPage(context, `${stack.url}${path}`);
  const thread = (p) => p.getByRole("complementary", { name: /Thread: plan the launch/ });
  await thread(page).getByText("Half of the plan").waitFor();
  // The server goes away under the open page: its reconnect attempts fail meanwhile.
  page.allowErrors(/ERR_CONNECTION_REFUSED|ERR_CONNECTION_RESET|status of 50\d/);
  await page.close();

  await stack.stop();
  stack = await startStack({ dataDir: data });
  // The restarted server's mock listens elsewhere: the provider follows it.
  await call(stack, "POST", "/api/providers", { token, body: { name: "mock", kind: "openai", base_url: stack.mock.modelUrl, default_model: "mock-model", make_default: true, replace: true } });

  page = await openPage(context, `${stack.url}${path}`);
  const shown = thread(page);
  await shown.getByText("Interrupted when the server restarted.").waitFor();
  await shown.getByText("Half of the plan").waitFor();
  await screenshot(page, "restart-interrupted-reply");
  await stack.mock.push({ text: "The whole plan: ship on Tuesday." });
  await shown.getByRole("button", { name: "Retry" }).click();
  await shown.getByText("The whole plan: ship on Tuesday.").waitFor();
  await shown.getByText(/^\w+ asked @launch-agent to try again\.$/).waitFor();
  assert.equal(await shown.getByRole("button", { name: "Retry" }).count(), 0, "no Retry once it was run again");
  assert.deepEqual(page.consoleErrors(), []);
});
