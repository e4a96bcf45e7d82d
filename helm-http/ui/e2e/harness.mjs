// The browser suite's stage: a real helm-http (the debug binary) on a
// temporary data directory and a free loopback port, the mock model server
// speaking OpenAI's wire format on 127.0.0.1, a TCP relay in front of the
// server (so a test can drop the browser's connections, as a network blip
// would), and Debian's Chromium driven by playwright-core.
//
// The binaries come from `cargo build -p helm-http -p helm-tests` (the
// suite's runner builds them); HELM_HTTP_BIN and HELM_MOCK_BIN override.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, connect } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { createInterface } from "node:readline";
import { chromium } from "playwright-core";

const here = fileURLToPath(new URL(".", import.meta.url));
export const repo = resolve(here, "../../..");
const target = process.env.CARGO_TARGET_DIR ?? join(repo, "target");
const HELM_HTTP = process.env.HELM_HTTP_BIN ?? join(target, "debug/helm-http");
const MOCK = process.env.HELM_MOCK_BIN ?? join(target, "debug/helm-mock-model");
const CHROMIUM = process.env.HELM_CHROMIUM ?? "/usr/bin/chromium";
/** The setup code the server is started with (the first-run wizard asks for it). */
export const SETUP_CODE = "e2e-setup-code-4711";
export const PASSWORD = "correct horse battery staple";

/** Where screenshots go; printed by the suite. */
export const ARTIFACTS = process.env.HELM_UI_ARTIFACTS ?? join(repo, "target/ui-e2e");

const CHROMIUM_FLAGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

function freePort() {
  return new Promise((done, fail) => {
    const server = createServer();
    server.unref();
    server.on("error", fail);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => done(port));
    });
  });
}

async function waitFor(what, check, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  let last;
  while (Date.now() < deadline) {
    try {
      if (await check()) return;
    } catch (e) {
      last = e;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${last.message}` : ""}`);
}

/** The mock model: its URL for a provider, and its script. */
async function startMock() {
  const child = spawn(MOCK, [], { stdio: ["pipe", "pipe", "inherit"] });
  const lines = createInterface({ input: child.stdout });
  const first = await new Promise((done, fail) => {
    child.once("error", fail);
    child.once("exit", (code) => fail(new Error(`helm-mock-model exited (${code}); build it with cargo build -p helm-tests`)));
    lines.once("line", done);
  });
  const { model_url: modelUrl, control_url: control } = JSON.parse(first);
  const call = async (method, path, body) => {
    const response = await fetch(`${control}${path}`, {
      method,
      headers: body === undefined ? {} : { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`mock ${path}: ${response.status} ${await response.text()}`);
    return response.status === 204 ? undefined : response.json();
  };
  return {
    modelUrl,
    push: (...behaviours) => call("POST", "/push", behaviours),
    fallback: (behaviour) => call("POST", "/fallback", behaviour),
    requests: () => call("GET", "/requests"),
    remaining: async () => (await call("GET", "/remaining")).remaining,
    /** Waits until every queued answer was taken. */
    drained: (timeoutMs = 30_000) => waitFor("the mock's queue to drain", async () => (await call("GET", "/remaining")).remaining === 0, timeoutMs),
    stop: () => {
      child.stdin.end();
      child.kill("SIGTERM");
    },
  };
}

/**
 * A TCP relay to `port`. `cut()` drops every connection through it (the
 * browser sees its sockets die, as in a network blip) and refuses new ones
 * for `ms`.
 */
async function startRelay(port) {
  const sockets = new Set();
  let refuseUntil = 0;
  const server = createServer((client) => {
    if (Date.now() < refuseUntil) {
      client.destroy();
      return;
    }
    const upstream = connect(port, "127.0.0.1");
    sockets.add(client);
    sockets.add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on("error", drop);
    upstream.on("error", drop);
    client.on("close", drop);
    upstream.on("close", drop);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  const relayPort = await freePort();
  await new Promise((done) => server.listen(relayPort, "127.0.0.1", done));
  return {
    port: relayPort,
    cut(ms = 1500) {
      refuseUntil = Date.now() + ms;
      for (const s of sockets) s.destroy();
      sockets.clear();
    },
    stop: () => new Promise((done) => {
      for (const s of sockets) s.destroy();
      server.close(() => done());
    }),
  };
}

/** A fresh server, mock model and relay. */
export async function startStack({ dataDir } = {}) {
  const mock = await startMock();
  const data = dataDir ?? mkdtempSync(join(tmpdir(), "helm-ui-e2e-"));
  const port = await freePort();
  const relay = await startRelay(port);
  const publicUrl = `http://127.0.0.1:${relay.port}`;
  const log = join(data, "..", `${data.split("/").pop()}-server.log`);
  const env = {
    ...process.env,
    HELM_LOG: process.env.HELM_LOG ?? "warn,helm_http=info",
    HELM_SETUP_CODE: SETUP_CODE,
    HELM_UI_DIR: join(here, "../dist"),
    HELM_PUBLIC_URL: publicUrl,
    // The suites also call the API directly, past the relay.
    HELM_PUBLIC_ORIGINS: `http://127.0.0.1:${port}`,
    HELM_ISOLATION: process.env.HELM_ISOLATION ?? "auto",
  };
  const server = spawn(HELM_HTTP, ["--data", data, "--listen", `127.0.0.1:${port}`], { env, stdio: ["ignore", "pipe", "pipe"] });
  const output = [];
  server.stdout.on("data", (d) => output.push(d));
  server.stderr.on("data", (d) => output.push(d));
  server.once("error", (e) => {
    throw new Error(`helm-http did not start (${e.message}); build it with cargo build -p helm-http`);
  });
  await waitFor("helm-http to answer /healthz", async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok);
  return {
    url: publicUrl,
    directUrl: `http://127.0.0.1:${port}`,
    data,
    mock,
    relay,
    serverLog: () => Buffer.concat(output).toString(),
    async stop() {
      server.kill("SIGTERM");
      await new Promise((done) => {
        const timer = setTimeout(() => {
          server.kill("SIGKILL");
          done();
        }, 10_000);
        server.once("exit", () => {
          clearTimeout(timer);
          done();
        });
      });
      mock.stop();
      await relay.stop();
      writeFileSync(log, Buffer.concat(output));
      if (!dataDir && !process.env.HELM_UI_KEEP) rmSync(data, { recursive: true, force: true });
    },
  };
}

/** Chromium with a fresh profile. */
export async function launchBrowser() {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS });
}

/**
 * A page that records console errors and page errors; `errors()` returns
 * them (the suite fails on any). `expected` filters ones a test causes on
 * purpose (a dropped socket logs a failed WebSocket).
 */
export async function openPage(context, url) {
  const page = await context.newPage();
  const errors = [];
  const allowed = [];
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(`${m.text()} (${m.location()?.url ?? "?"})`);
  });
  page.on("pageerror", (e) => errors.push(`page error: ${e.message}`));
  page.allowErrors = (pattern) => allowed.push(pattern);
  page.consoleErrors = () => errors.filter((e) => !allowed.some((p) => p.test(e)));
  if (url) await page.goto(url);
  return page;
}

const axeSource = readFileSync(join(here, "../node_modules/axe-core/axe.min.js"), "utf8");

/** axe-core's serious and critical violations on the page as it is now. */
export async function axeViolations(page) {
  // Evaluated over the DevTools protocol, so the page's CSP (no inline
  // script) does not stop it.
  await page.evaluate(axeSource);
  const result = await page.evaluate(async () => {
    // eslint-disable-next-line no-undef
    return axe.run(document, { resultTypes: ["violations"] });
  });
  return result.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.impact}: ${v.id} (${v.help}) at ${v.nodes.map((n) => `${n.target.join(" ")} [${n.failureSummary?.replace(/\s+/g, " ")}] ${n.html.slice(0, 160)}`).slice(0, 3).join(", ")}`);
}

/** A screenshot in ARTIFACTS/screenshots/<name>.png. */
export async function screenshot(page, name) {
  const dir = join(ARTIFACTS, "screenshots");
  mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: join(dir, `${name}.png`), fullPage: false });
}

export const DESKTOP = { width: 1360, height: 860 };
export const PHONE = { width: 390, height: 844 };
export { waitFor };

/** Calls the API directly (not through the browser), as the holder of `auth`. */
export async function call(stack, method, path, { token, cookie, body, raw } = {}) {
  const headers = { origin: stack.url };
  if (token) headers.authorization = `Bearer ${token}`;
  if (cookie) headers.cookie = cookie;
  if (body !== undefined && raw === undefined) headers["content-type"] = "application/json";
  const response = await fetch(`${stack.directUrl}${path}`, { method, headers, body: raw ?? (body === undefined ? undefined : JSON.stringify(body)) });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
  return { response, json: text ? JSON.parse(text) : undefined };
}

/**
 * First run done through the API (for suites that are not about it): the
 * Captain `ada`, the mock model as the workspace's provider (unless
 * `provider` is false), #main read (so the wizard is done); returns an API token and a browser context signed
 * in as Ada.
 */
export async function quickStart(stack, browser, viewport = DESKTOP, { provider = true } = {}) {
  const setup = await call(stack, "POST", "/api/setup", { body: { name: "ada", display_name: "Ada Lovelace", password: PASSWORD, setup_code: SETUP_CODE } });
  const session = setup.response.headers.get("set-cookie").split(";")[0];
  const token = (await call(stack, "POST", "/api/tokens", { cookie: session, body: { name: "e2e" } })).json.secret;
  if (provider) await call(stack, "POST", "/api/providers", { token, body: { name: "mock", kind: "openai", base_url: stack.mock.modelUrl, default_model: "mock-model", make_default: true } });
  // Ada has been in #main, as the wizard's end leaves her: the browser does not resume the wizard.
  const feed = (await call(stack, "GET", "/api/channels/main/feed", { token })).json;
  await call(stack, "PUT", "/api/channels/main/read", { token, body: { message_id: feed.items.at(-1).message.id } });
  const context = await browser.newContext({ viewport });
  const [name, value] = session.split("=");
  await context.addCookies([{ name, value, url: stack.url }]);
  return { token, context };
}
