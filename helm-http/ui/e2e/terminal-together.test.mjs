// The Terminal with two people, in a real browser: opening the view does
// not take the keyboard, Escape then Tab leaves a shell for its tabs (said
// in a hint and in the shortcut sheet); Bob's new shell appears in Ada's
// tabs without a reload; closing a shell asks first; Ada's shell closed by
// Bob stays on her screen with its scrollback and a note, she is not moved
// into Bob's shell, and the tabs keep their names. At the limit of shells
// the tabs stay one line, and New terminal, refused, is held back with the
// server's reason beside it until a shell closes.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { DESKTOP, PASSWORD, PHONE, axeViolations, call, launchBrowser, openPage, quickStart, screenshot, startStack, waitFor } from "./harness.mjs";

let stack;
let browser;
let ada;
let bob;

before(async () => {
  stack = await startStack();
  browser = await launchBrowser();
  const started = await quickStart(stack, browser, DESKTOP, { provider: false });
  await call(stack, "POST", "/api/channels", { token: started.token, body: { name: "ops", purpose: "Keeping the lights on." } });
  await call(stack, "POST", "/api/users", { token: started.token, body: { name: "bob", password: PASSWORD } });
  ada = await openPage(started.context, `${stack.url}/c/ops`);
  const login = await call(stack, "POST", "/api/auth/login", { body: { name: "bob", password: PASSWORD } });
  const [name, value] = login.response.headers.get("set-cookie").split(";")[0].split("=");
  const bobContext = await browser.newContext({ viewport: DESKTOP });
  await bobContext.addCookies([{ name, value, url: stack.url }]);
  bob = await openPage(bobContext, `${stack.url}/c/ops`);
});

after(async () => {
  for (const page of [ada, bob]) if (page) assert.deepEqual(page.consoleErrors(), [], "no console errors");
  await browser?.close();
  await stack?.stop();
});

/** What has the focus, in words. */
const focused = (page) => page.evaluate(() => `${document.activeElement?.tagName.toLowerCase()} ${document.activeElement?.getAttribute("aria-label") ?? document.activeElement?.textContent?.trim()}`);
const screenOf = (page, label) => page.getByRole("region", { name: `Terminal: ${label}` });

let adaShell; // the name of Ada's first shell, "Shell N"

test("opening the Terminal by keyboard leaves the focus outside the shell; Escape then Tab leaves a shell", async () => {
  await ada.getByRole("heading", { name: "ops", exact: true }).waitFor();
  await ada.getByRole("link", { name: "Terminal" }).focus();
  await ada.keyboard.press("Enter");
  const tab = ada.getByRole("button", { name: /^Shell \d+/ });
  await tab.waitFor();
  adaShell = (await tab.innerText()).match(/Shell \d+/)[0];
  await waitFor("a prompt", async () => (await screenOf(ada, adaShell).innerText()).includes("$"));
  assert.doesNotMatch(await focused(ada), /input/, "the shell did not take the keyboard unasked");
  // Asking for the shell gives it the keyboard.
  await tab.click();
  await waitFor("the focus in the shell", async () => (await focused(ada)) === `textarea ${adaShell} input`);
  await ada.keyboard.type("echo hello-from-ada\n");
  await waitFor("the echo", async () => (await screenOf(ada, adaShell).innerText()).includes("hello-from-ada\n"));
  // A Tab alone stays in the shell (completion); Escape then Tab leaves it.
  await ada.keyboard.press("Tab");
  assert.equal(await focused(ada), `textarea ${adaShell} input`);
  await ada.keyboard.press("Escape");
  await ada.keyboard.press("Tab");
  assert.match(await focused(ada), new RegExp(`^button .*${adaShell}`), "Escape then Tab moves to the shell's tab");
  await ada.getByText("leaves the terminal").waitFor();
  // The way out is in the shortcut sheet too.
  await ada.keyboard.press("?");
  const sheet = ada.getByRole("dialog", { name: "Keyboard shortcuts" });
  await sheet.getByText("Leave the terminal for its tabs").waitFor();
  await ada.keyboard.press("Escape");
  await sheet.waitFor({ state: "detached" });
});

test("Bob's new shell appears in Ada's tabs; his close of her shell asks, and leaves her shell on her screen, ended", async () => {
  await bob.getByRole("link", { name: "Terminal" }).click();
  await bob.getByRole("button", { name: new RegExp(`^${adaShell}`) }).waitFor();
  await bob.getByRole("button", { name: "New terminal" }).click();
  await waitFor("Bob's second tab", async () => (await bob.getByRole("button", { name: /^Shell \d+/ }).count()) === 2);
  const bobShell = (await bob.locator(".terminal-tab.current .terminal-switch").innerText()).match(/Shell \d+/)[0];
  assert.notEqual(bobShell, adaShell);
  // No reload on Ada's side: the list follows.
  await ada.getByRole("button", { name: new RegExp(`^${bobShell}`) }).waitFor();
  assert.equal(await ada.getByRole("button", { name: new RegExp(`^${adaShell}`) }).getAttribute("aria-pressed"), "true", "Ada still looks at her shell");
  await ada.getByRole("button", { name: new RegExp(`^${adaShell}`) }).click();
  await waitFor("the focus in Ada's shell", async () => (await focused(ada)) === `textarea ${adaShell} input`);
  // The Escape that led out never reached the shell: the next keys are plain
  // (sent, it would have made "e" of "echo" Meta+e).
  await ada.keyboard.type("echo still-ada\n");
  await waitFor("Ada's echo", async () => (await screenOf(ada, adaShell).innerText()).includes("still-ada\n"));

  // Bob closes Ada's shell: he is asked first; Cancel keeps it.
  await bob.getByRole("button", { name: `Close ${adaShell.toLowerCase()}` }).click();
  const ask = bob.getByRole("dialog", { name: `Close ${adaShell}?` });
  await ask.getByText(/someone else may be typing in it/).waitFor();
  await ask.getByText(/^Opened by Ada Lovelace\./).waitFor();
  await screenshot(bob, "terminal-close-asks");
  await ask.getByRole("button", { name: "Cancel" }).click();
  assert.equal((await call(stack, "GET", "/api/channels/ops/terminals", { token: undefined, cookie: await cookieOf(bob) })).json.length, 2);
  await bob.getByRole("button", { name: `Close ${adaShell.toLowerCase()}` }).click();
  await ask.getByRole("button", { name: "Close the shell" }).click();
  // Bob closed it on purpose: its tab goes from his page.
  await waitFor("Bob's one tab", async () => (await bob.getByRole("button", { name: /^Shell \d+/ }).count()) === 1);

  // Ada keeps her scrollback, is told, and is not moved into Bob's shell.
  const mine = screenOf(ada, adaShell);
  // The server names who closed it.
  await mine.getByText(/This shell was closed by bob\./).waitFor();
  assert.match(await mine.innerText(), /still-ada/, "her scrollback stays");
  assert.equal(await ada.getByRole("button", { name: new RegExp(`^${adaShell}`) }).getAttribute("aria-pressed"), "true");
  await ada.getByRole("button", { name: new RegExp(`^${adaShell}.*ended`) }).waitFor();
  assert.equal(await ada.getByRole("button", { name: new RegExp(`^${bobShell}`) }).getAttribute("aria-pressed"), "false");
  assert.equal(await ada.getByRole("button", { name: `Close ${bobShell.toLowerCase()}` }).count(), 1, "Bob's shell keeps its name");
  await screenshot(ada, "terminal-closed-under-ada");
  assert.deepEqual(await axeViolations(ada), [], "axe-core on a Terminal with an ended shell");

  // Her ended tab goes when she closes it (nothing to ask), and Bob's is shown.
  await ada.getByRole("button", { name: `Remove the tab of ended ${adaShell.toLowerCase()}` }).click();
  await waitFor("one tab left", async () => (await ada.getByRole("button", { name: /^Shell \d+/ }).count()) === 1);
  assert.equal(await ada.getByRole("button", { name: new RegExp(`^${bobShell}`) }).getAttribute("aria-pressed"), "true");
});

const tabsOf = (page) => page.getByRole("button", { name: /^Shell \d+/ });
const newTerminal = (page) => page.getByRole("button", { name: "New terminal" });

/** The tab strip as laid out: each tab's height against one line of its text, and whether New terminal and its reason are on the screen. */
function measureStrip(page) {
  return page.evaluate(() => {
    const whole = (el) => {
      const r = el.getBoundingClientRect();
      const hit = document.elementFromPoint(Math.min(r.left + r.width / 2, innerWidth - 1), r.top + r.height / 2);
      return r.width > 0 && r.left >= 0 && r.right <= innerWidth && (el === hit || el.contains(hit));
    };
    return {
      tabs: [...document.querySelectorAll(".terminal-switch")].map((el) => ({
        text: el.innerText,
        height: Math.round(el.getBoundingClientRect().height),
        // One line of the tab's text, with its padding; a wrapped label is two.
        oneLine: Math.round(2 * parseFloat(getComputedStyle(el).fontSize) + 8),
      })),
      button: whole([...document.querySelectorAll(".terminals button")].find((b) => b.textContent.trim() === "New terminal")),
      reason: (() => {
        const el = document.getElementById("terminal-refused");
        return el && el.textContent ? whole(el) : false;
      })(),
      overflow: document.documentElement.scrollWidth - innerWidth,
    };
  });
}

function assertOneLine(strip, when) {
  for (const t of strip.tabs) assert.ok(t.height < t.oneLine, `${when}: the tab ${JSON.stringify(t.text)} is one line (${t.height} px, a line is under ${t.oneLine})`);
  assert.ok(strip.overflow <= 0, `${when}: the page does not scroll sideways (${strip.overflow} px)`);
}

test("at the limit the tabs stay one line; a refused New terminal is held back with the server's reason until a shell closes", async () => {
  // Refusals on purpose: the server answers 409 to a shell over the limit.
  for (const page of [ada, bob]) page.allowErrors(/409 \(Conflict\)/);
  await waitFor("one tab each", async () => (await tabsOf(ada).count()) === 1 && (await tabsOf(bob).count()) === 1);
  // Bob, a member, opens shells until the server refuses him one: members
  // leave the channel's last shell to the Captain and admins.
  let opened = 1;
  for (;;) {
    await newTerminal(bob).click();
    const refused = bob.locator("#terminal-refused", { hasText: /close one first/ });
    await waitFor("a new tab or the refusal", async () => (await tabsOf(bob).count()) > opened || (await refused.count()) === 1);
    if ((await refused.count()) === 1) break;
    opened += 1;
    assert.ok(opened < 10, "the server refuses at some limit");
  }
  assert.match(await bob.locator("#terminal-refused").innerText(), /^Members already hold \d+ of this channel's \d+ terminals \(the last is kept for the Captain and admins\); close one first\.$/, "the server's reason, as a sentence");
  assert.equal(await newTerminal(bob).getAttribute("aria-disabled"), "true", "held back after its refusal");
  assert.equal(await focused(bob), "button New terminal", "the refused button keeps the focus");
  assert.equal(await newTerminal(bob).getAttribute("aria-describedby"), "terminal-refused", "its reason describes it");
  assert.ok(await newTerminal(bob).isDisabled(), "disabled to assistive technology and to a click");
  // Held back: another click asks nothing of the server.
  await newTerminal(bob).click({ force: true });
  assert.equal((await call(stack, "GET", "/api/channels/ops/terminals", { cookie: await cookieOf(bob) })).json.filter((t) => t.running).length, opened);
  await screenshot(bob, "terminal-member-refused");

  // Ada, the Captain, may open the last one; the next is refused to her too.
  await waitFor("Bob's shells in Ada's tabs", async () => (await tabsOf(ada).count()) === opened);
  await newTerminal(ada).click();
  await waitFor("Ada's new tab", async () => (await tabsOf(ada).count()) === opened + 1);
  await newTerminal(ada).click();
  await ada.locator("#terminal-refused", { hasText: /close one first/ }).waitFor();
  assert.equal(await newTerminal(ada).getAttribute("aria-disabled"), "true");
  const desktop = await measureStrip(ada);
  await screenshot(ada, "terminal-at-limit-desktop");
  assertOneLine(desktop, "desktop");
  assert.ok(desktop.button && desktop.reason, "New terminal and its reason are on the screen");
  assert.equal(desktop.tabs.length, opened + 1);
  // A phone's width: the tabs scroll sideways, the button and its reason stay on the screen.
  await ada.setViewportSize(PHONE);
  // The sidebar slides away as a closed drawer.
  await waitFor("the phone layout", async () => ada.evaluate(() => innerWidth === 390 && document.querySelector(".sidebar").getBoundingClientRect().right <= 0));
  const phone = await measureStrip(ada);
  await screenshot(ada, "terminal-at-limit-phone");
  assertOneLine(phone, "phone");
  assert.ok(phone.button && phone.reason, `New terminal and its reason are on a phone's screen: ${JSON.stringify(phone)}`);
  assert.deepEqual(await axeViolations(ada), [], "axe-core on a Terminal at its limit");
  await ada.setViewportSize(DESKTOP);

  // Bob closes one of his shells: his button is offered again at once, and
  // Ada's once her list shows the change.
  const bobCurrent = (await bob.locator(".terminal-tab.current .terminal-switch").innerText()).match(/Shell \d+/)[0];
  await bob.getByRole("button", { name: `Close ${bobCurrent.toLowerCase()}` }).click();
  await bob.getByRole("dialog", { name: `Close ${bobCurrent}?` }).getByRole("button", { name: "Close the shell" }).click();
  await waitFor("Bob's button offered again", async () => (await newTerminal(bob).getAttribute("aria-disabled")) === null);
  assert.equal(await bob.locator("#terminal-refused").innerText(), "", "the reason goes with it");
  await waitFor("Ada's button offered again", async () => (await newTerminal(ada).getAttribute("aria-disabled")) === null);
  await newTerminal(ada).click();
  await waitFor("Ada's shell in the freed place", async () => (await ada.getByRole("button", { name: /^Shell \d+/ }).count()) === opened + 2);
});

async function cookieOf(page) {
  const [c] = await page.context().cookies(stack.url);
  return `${c.name}=${c.value}`;
}
