// Managing people in a real browser: the Captain makes a member an admin
// and back, deactivates them (after a confirmation), which signs them out at
// once and keeps them out, then reactivates them; the member changes their
// own password on their account page. Every page checked by axe-core and
// photographed.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { ARTIFACTS, DESKTOP, PASSWORD, axeViolations, call, launchBrowser, openPage, quickStart, screenshot, startStack, waitFor } from "./harness.mjs";

const NEW_PASSWORD = "a fresh password for bob";
let stack;
let browser;
let ada; // the Captain's page
let bob; // a member's page
let bobContext;
let token; // the Captain's API token

before(async () => {
  stack = await startStack();
  browser = await launchBrowser();
  const started = await quickStart(stack, browser, DESKTOP, { provider: false });
  token = started.token;
  await call(stack, "POST", "/api/users", { token, body: { name: "bob", password: PASSWORD } });
  ada = await openPage(started.context, `${stack.url}/admin/people`);
  bobContext = await browser.newContext({ viewport: DESKTOP });
  bob = await openPage(bobContext, `${stack.url}/login`);
  // Refusals on purpose: a sign-in while deactivated, and the stream and
  // requests of the session that deactivation ended.
  bob.allowErrors(/401|Unauthorized/);
  // The wrong current password, typed on purpose.
  bob.allowErrors(/422 \(Unprocessable Entity\) \(http:\/\/[^)]*\/api\/auth\/password\)/);
});

after(async () => {
  await browser?.close();
  await stack?.stop();
  console.log(`screenshots: ${ARTIFACTS}/screenshots`);
});

function heading(page, name) {
  return page.getByRole("heading", { name, exact: true });
}

async function signIn(page, password) {
  await heading(page, "Sign in").waitFor();
  await page.getByLabel("Name", { exact: true }).fill("bob");
  await page.getByLabel("Password", { exact: true }).fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
}

async function role(name) {
  const { json } = await call(stack, "GET", "/api/users", { token });
  return json.find((u) => u.name === name);
}

function row(page, name) {
  return page.getByRole("row").filter({ hasText: `@${name}` });
}

test("the Captain makes a member an admin and back; the Captain's own row offers nothing", async () => {
  await signIn(bob, PASSWORD);
  await heading(bob, "main").waitFor();

  await heading(ada, "People (2)").waitFor();
  assert.equal(await ada.getByLabel("Role of Ada Lovelace").count(), 0, "the Captain's role is not a choice");
  assert.equal(await ada.getByRole("button", { name: "Deactivate Ada Lovelace" }).count(), 0, "nobody deactivates the Captain");
  await ada.getByLabel("Role of bob").selectOption("admin");
  await ada.getByText("bob is now an admin.").waitFor();
  assert.equal((await role("bob")).role, "admin");
  // Bob's page follows at once: the admin pages appear in his sidebar.
  await bob.getByRole("link", { name: "People" }).waitFor();
  await ada.getByLabel("Role of bob").selectOption("member");
  await ada.getByText("bob is now a member.").waitFor();
  assert.equal((await role("bob")).role, "member");
  await waitFor("bob's admin links to go", async () => (await bob.getByRole("link", { name: "People" }).count()) === 0);
  assert.deepEqual(await axeViolations(ada), [], "axe-core on People");
  await screenshot(ada, "people-01-roles");
});

test("deactivating asks first, signs the person out at once and keeps them out", async () => {
  await row(ada, "bob").getByRole("button", { name: "Deactivate bob" }).click();
  const dialog = ada.getByRole("dialog", { name: "Deactivate bob?" });
  await dialog.getByText("signed out everywhere at once").waitFor();
  assert.deepEqual(await axeViolations(ada), [], "axe-core on the confirmation");
  await screenshot(ada, "people-02-confirm-deactivate");
  await dialog.getByRole("button", { name: "Cancel" }).click();
  assert.equal((await role("bob")).deactivated, undefined, "cancelled: nothing changed");

  await row(ada, "bob").getByRole("button", { name: "Deactivate bob" }).click();
  await ada.getByRole("dialog", { name: "Deactivate bob?" }).getByRole("button", { name: "Deactivate" }).click();
  await ada.getByText("bob is deactivated.").waitFor();
  await row(ada, "bob").getByText("Deactivated", { exact: true }).waitFor();
  await row(ada, "bob").getByRole("button", { name: "Reactivate bob" }).waitFor();
  await screenshot(ada, "people-03-deactivated");

  // Bob's open page is signed out without his doing anything.
  await heading(bob, "Sign in").waitFor({ timeout: 15_000 });
  await bob.getByText("Your session ended").waitFor();
  await signIn(bob, PASSWORD);
  await bob.getByText(/account @bob is deactivated/).waitFor();
  assert.deepEqual(await axeViolations(bob), [], "axe-core on the refused sign-in");
  await screenshot(bob, "people-04-deactivated-sign-in");

  // Nobody is offered a deactivated person to mention.
  await ada.goto(`${stack.url}/c/main`);
  const composer = ada.getByLabel("Message #main: ask Skipper anything");
  await composer.fill("@");
  const list = ada.getByRole("listbox", { name: "People and agents to mention" });
  await list.getByRole("option", { name: /@skipper/ }).waitFor();
  assert.equal(await list.getByRole("option", { name: /@bob/ }).count(), 0, "bob is not offered");
  await composer.fill("");
  await ada.goto(`${stack.url}/admin/people`);
  await row(ada, "bob").waitFor();
});

test("reactivating lets the person back in", async () => {
  await row(ada, "bob").getByRole("button", { name: "Reactivate bob" }).click();
  await ada.getByRole("dialog", { name: "Reactivate bob?" }).getByRole("button", { name: "Reactivate" }).click();
  await ada.getByText("bob is active again.").waitFor();
  await row(ada, "bob").getByRole("button", { name: "Deactivate bob" }).waitFor();
  await bob.getByRole("button", { name: "Sign in" }).click();
  await heading(bob, "main").waitFor();
});

test("a person changes their own password on their account page", async () => {
  await bob.getByRole("link", { name: /^Your account/ }).click();
  await heading(bob, "Your account").waitFor();
  await bob.getByText("At least 10 characters", { exact: false }).first().waitFor();
  assert.deepEqual(await axeViolations(bob), [], "axe-core on Your account");
  await screenshot(bob, "people-05-account");

  await bob.getByLabel("Current password").fill("not my password at all");
  await bob.getByLabel("New password", { exact: true }).fill(NEW_PASSWORD);
  await bob.getByLabel("Repeat the new password").fill(NEW_PASSWORD);
  await bob.getByRole("button", { name: "Change password" }).click();
  await bob.getByText(/current password: it does not match/).waitFor();
  await heading(bob, "Your account").waitFor(); // still signed in
  await screenshot(bob, "people-06-wrong-current-password");

  await bob.getByLabel("Repeat the new password").fill("something else entirely");
  await bob.getByLabel("Current password").fill(PASSWORD);
  await bob.getByRole("button", { name: "Change password" }).click();
  await bob.getByText("The two new passwords differ").waitFor();

  await bob.getByLabel("Repeat the new password").fill(NEW_PASSWORD);
  await bob.getByRole("button", { name: "Change password" }).click();
  await bob.getByText("Your password is changed.", { exact: false }).waitFor();
  const login = await fetch(`${stack.directUrl}/api/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: stack.url },
    body: JSON.stringify({ name: "bob", password: NEW_PASSWORD }),
  });
  assert.equal(login.status, 200, "the new password signs in");
});

test("a member sees no controls over people", async () => {
  await bob.goto(`${stack.url}/admin/people`);
  await bob.getByText("Only the Captain and admins see this page.").waitFor();
  assert.equal(await bob.getByRole("button", { name: /Deactivate/ }).count(), 0);
});

test("no console errors on any page", () => {
  assert.deepEqual(ada.consoleErrors(), [], "the Captain's page");
  assert.deepEqual(bob.consoleErrors(), [], "the member's page");
});
