// The web UI's benchmark (a measurement, not a test: it asserts nothing and
// prints figures). Against the debug or release helm-http (HELM_HTTP_BIN)
// with the mock model, in Debian's Chromium:
//
//   1. JavaScript shipped on first load: what the browser fetched before the
//      channel view was interactive, as sent (brotli) and gzipped, and which
//      chunks stayed unloaded (terminal, editor, highlighting);
//   2. navigation → interactive channel view on loopback, cold and warm;
//   3. a channel of 10,000 messages (1,000 threads of 10) and one thread of
//      10,000: opened and scrolled from newest to oldest, with the long
//      tasks (over 50 ms) the page had meanwhile;
//   4. a reply streaming at 100 tokens/s: frame intervals while it streams.
//
// Run: npm run bench (after `npm run build` and `cargo build -p helm-http
// -p helm-tests`); figures go to stdout and target/ui-bench.json.
import { gzipSync } from "node:zlib";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { DESKTOP, PASSWORD, SETUP_CODE, launchBrowser, repo, startStack, waitFor } from "../e2e/harness.mjs";

const here = fileURLToPath(new URL(".", import.meta.url));
const dist = join(here, "../dist");
const RUNS = Number(process.env.HELM_BENCH_RUNS ?? 10);

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

const kib = (n) => `${(n / 1024).toFixed(1)} KiB`;

async function api(stack, method, path, { token, body, cookie, raw } = {}) {
  const headers = { origin: stack.url };
  if (token) headers.authorization = `Bearer ${token}`;
  if (cookie) headers.cookie = cookie;
  if (body !== undefined && !raw) headers["content-type"] = "application/json";
  const response = await fetch(`${stack.directUrl}${path}`, { method, headers, body: raw ?? (body === undefined ? undefined : JSON.stringify(body)) });
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  return { response, json: response.status === 204 ? undefined : await response.json() };
}

const SENTENCES = [
  "Let's move the beta to Thursday so QA has the full week.",
  "I pushed the draft of the press release to `press/draft.md`; comments welcome.",
  "**Decision:** we ship the onboarding checklist in the first release.",
  "Can you compare the three pricing options and list the trade-offs?",
  "Here is the outline:\n\n- goals\n- audience\n- channels\n- timeline",
  "The logs show a spike at 14:02; it lines up with the cron job.",
  "```sh\nnpm run build && ./scripts/deploy --dry-run\n```",
  "Thanks, that works. One more thing: the footer links are broken on mobile.",
];

function history({ threads, perThread, prefix }) {
  const lines = [];
  let t0 = Date.parse("2026-06-01T08:00:00Z") / 1000;
  for (let t = 0; t < threads; t++) {
    const id = `${prefix}${t}`;
    lines.push(JSON.stringify({ type: "thread", id, title: `Topic ${t + 1}`, opened_at: t0 }));
    for (let m = 0; m < perThread; m++) {
      t0 += 37;
      const text = SENTENCES[(t * 7 + m) % SENTENCES.length];
      lines.push(JSON.stringify({ type: "message", thread: id, external_id: `${id}:${m}`, author: m % 2 ? "Grace" : "Linus", text: `${text} (${t + 1}.${m + 1})`, at: t0 }));
    }
  }
  return lines.join("\n") + "\n";
}

async function seed(stack) {
  const setup = await api(stack, "POST", "/api/setup", { body: { name: "ada", password: PASSWORD, setup_code: SETUP_CODE } }).catch(async () =>
    api(stack, "POST", "/api/setup", { body: { name: "ada", password: PASSWORD } }),
  );
  const cookie = setup.response.headers.get("set-cookie").split(";")[0];
  const token = (await api(stack, "POST", "/api/tokens", { cookie, body: { name: "bench" } })).json.secret;
  await api(stack, "POST", "/api/providers", { token, body: { name: "mock", kind: "openai", base_url: stack.mock.modelUrl, default_model: "mock-model", make_default: true } });
  for (const name of ["bench", "big", "long"]) {
    await api(stack, "POST", "/api/channels", { token, body: { name, purpose: `The ${name} channel, for measuring the web UI.` } });
  }
  const started = Date.now();
  await api(stack, "POST", "/api/channels/big/import", { token, raw: history({ threads: 1000, perThread: 10, prefix: "b" }) });
  await api(stack, "POST", "/api/channels/long/import", { token, raw: history({ threads: 1, perThread: 10000, prefix: "l" }) });
  return { token, importMs: Date.now() - started };
}

async function signIn(browser) {
  const context = await browser.newContext({ viewport: DESKTOP });
  const page = await context.newPage();
  return { context, page };
}

async function login(page, url) {
  await page.goto(`${url}/login`);
  await page.getByLabel("Name", { exact: true }).fill("ada");
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "main", exact: true }).waitFor();
}

/** Long tasks from the page's start, read back with `longTasks()`. */
const LONG_TASKS = () => {
  window.__longTasks = [];
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) window.__longTasks.push(e.duration);
  }).observe({ type: "longtask", buffered: true });
};

async function firstLoad(browser, stack) {
  const { context, page } = await signIn(browser);
  await login(page, stack.url);
  // A fresh context with the session cookie and an empty cache.
  const cookies = await context.cookies();
  const cold = await browser.newContext({ viewport: DESKTOP });
  await cold.addCookies(cookies);
  const coldPage = await cold.newPage();
  const scripts = [];
  coldPage.on("requestfinished", async (request) => {
    if (request.resourceType() === "script" || request.url().endsWith(".js")) {
      const sizes = await request.sizes().catch(() => undefined);
      scripts.push({ url: new URL(request.url()).pathname, sent: sizes?.responseBodySize ?? 0 });
    }
  });
  const t0 = Date.now();
  await coldPage.goto(`${stack.url}/c/bench`);
  await coldPage.waitForFunction(() => performance.getEntriesByName("helm:channel-interactive").length > 0);
  const coldMs = await coldPage.evaluate(() => performance.getEntriesByName("helm:channel-interactive")[0].startTime);
  const wall = Date.now() - t0;
  const gz = scripts.map((s) => ({ ...s, gzip: gzipSync(readFileSync(join(dist, s.url)), { level: 9 }).length }));
  const all = readFileSync(join(dist, "index.html"), "utf8");
  void all;
  await cold.close();
  await context.close();
  return { scripts: gz, coldMs, wall };
}

async function navigation(browser, stack) {
  const { context, page } = await signIn(browser);
  await login(page, stack.url);
  const times = [];
  for (let i = 0; i < RUNS; i++) {
    await page.goto(`${stack.url}/c/bench`);
    await page.waitForFunction(() => performance.getEntriesByName("helm:channel-interactive").length > 0);
    times.push(await page.evaluate(() => performance.getEntriesByName("helm:channel-interactive")[0].startTime));
  }
  await context.close();
  return times;
}

async function scrollAll(page, region, olderText) {
  const started = Date.now();
  let steps = 0;
  // The pointer rests on the list once; each step is then only a wheel
  // event and one cheap read, so the bench's own work on the page's main
  // thread (Playwright's hit tests and text queries) stays out of the long
  // tasks it counts.
  await region.hover();
  for (;;) {
    await page.mouse.wheel(0, -1500);
    await page.waitForTimeout(16);
    steps++;
    const { more, top } = await region.evaluate((el, text) => ({ more: el.textContent.includes(text), top: el.scrollTop }), olderText);
    if (!more && top <= 0) break;
    if (Date.now() - started > 240_000) throw new Error("scrolling took too long");
  }
  return { steps, ms: Date.now() - started };
}

async function bigChannel(browser, stack) {
  const { context, page } = await signIn(browser);
  await context.addInitScript(LONG_TASKS);
  await login(page, stack.url);
  await page.goto(`${stack.url}/c/big`);
  const feed = page.getByRole("region", { name: "Messages in #big" });
  await feed.getByText("(1000.10)").waitFor();
  const openMs = await page.evaluate(() => performance.getEntriesByName("helm:channel-interactive")[0].startTime);
  const openTasks = await page.evaluate(() => window.__longTasks.slice());
  await page.evaluate(() => (window.__longTasks.length = 0));
  const scrolled = await scrollAll(page, feed, "Loading earlier messages…");
  await feed.getByText("Topic 1", { exact: false }).first().waitFor().catch(() => undefined);
  const rendered = await page.evaluate(() => document.querySelectorAll('[role="feed"] [role="article"]').length);
  const scrollTasks = await page.evaluate(() => window.__longTasks.slice());

  // The 10,000-message thread.
  await page.goto(`${stack.url}/c/long`);
  await page.getByRole("link", { name: /9999 replies/ }).click();
  const thread = page.getByRole("region", { name: "Messages in this thread" });
  await thread.getByText("(1.10000)").waitFor();
  await page.evaluate(() => (window.__longTasks.length = 0));
  const threadScroll = await scrollAll(page, thread, "Loading earlier messages…");
  await thread.getByText("(1.1)").waitFor();
  const threadRendered = await page.evaluate(() => document.querySelectorAll('[aria-label="Messages in this thread"] [role="article"]').length);
  const threadTasks = await page.evaluate(() => window.__longTasks.slice());
  await context.close();
  return { openMs, openTasks, scrolled, rendered, scrollTasks, threadScroll, threadRendered, threadTasks };
}

async function streaming(browser, stack) {
  const { context, page } = await signIn(browser);
  await context.addInitScript(LONG_TASKS);
  await login(page, stack.url);
  await page.goto(`${stack.url}/c/bench`);
  const tokens = 500;
  await stack.mock.push({ chunks: Array.from({ length: tokens }, (_, i) => (i % 40 === 39 ? `word${i}\n\n` : `word${i} `)), chunk_delay_ms: 10 });
  await page.evaluate(() => {
    window.__frames = [];
    window.__longTasks.length = 0;
    const tick = (t) => {
      window.__frames.push(t);
      if (!window.__stopFrames) requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  });
  // The rate is what the reader sees: from the first token on screen to the
  // last, stamped in the page (a MutationObserver), so neither the turn's
  // start nor the bench's polling counts against it.
  await page.evaluate((last) => {
    // Read in the open thread, where the reply streams from its first word:
    // the feed's preview shows only a reply's end, so there the last word
    // can appear before the first one does in the thread.
    const seen = (word) => new RegExp(`${word}(?!\\d)`).test(document.querySelector('[aria-label="Messages in this thread"]')?.textContent ?? "");
    new MutationObserver((_, observer) => {
      if (window.__firstToken === undefined && seen("word0")) window.__firstToken = performance.now();
      if (seen(last)) {
        window.__lastToken = performance.now();
        observer.disconnect();
      }
    }).observe(document.body, { childList: true, subtree: true, characterData: true });
  }, `word${tokens - 1}`);
  const composer = page.getByLabel("Start a thread in #bench");
  await composer.fill("@bench-agent stream me a long answer");
  await composer.press("Enter");
  const thread = page.getByRole("complementary", { name: /Thread:/ });
  await thread.getByText(`word${tokens - 1}`).waitFor({ timeout: 60_000 });
  const { frames, tasks, first, last } = await page.evaluate(() => {
    window.__stopFrames = true;
    return { frames: window.__frames, tasks: window.__longTasks.slice(), first: window.__firstToken, last: window.__lastToken };
  });
  await context.close();
  // Only the frames while tokens arrived: idle frames before would dilute
  // the count of dropped ones.
  if (first === undefined || last === undefined) throw new Error(`streaming: first token at ${first}, last at ${last}, ${frames.length} frames`);
  const streaming = frames.filter((t) => t >= first && t <= last);
  const gaps = streaming.slice(1).map((t, i) => t - streaming[i]);
  return { tokens, streamMs: last - first, gaps, tasks };
}

const stack = await startStack();
const browser = await launchBrowser();
const results = {};
try {
  const seeded = await seed(stack);
  results.seed = { importMs: seeded.importMs };

  const load = await firstLoad(browser, stack);
  const entries = readFileSync(join(dist, "index.html"), "utf8");
  const allJs = [...entries.matchAll(/src="([^"]+)"/g)].map((m) => m[1]);
  results.firstLoad = {
    scripts: load.scripts,
    sentBytes: load.scripts.reduce((n, s) => n + s.sent, 0),
    gzipBytes: load.scripts.reduce((n, s) => n + s.gzip, 0),
    coldInteractiveMs: Math.round(load.coldMs),
    entry: allJs,
  };
  const times = await navigation(browser, stack);
  results.navigation = { runs: times.length, medianMs: Math.round(median(times)), minMs: Math.round(Math.min(...times)), maxMs: Math.round(Math.max(...times)) };
  const big = await bigChannel(browser, stack);
  const worst = (tasks) => (tasks.length ? Math.round(Math.max(...tasks)) : 0);
  results.bigChannel = {
    openMs: Math.round(big.openMs),
    longTasksWhileOpening: big.openTasks.length,
    worstTaskOpeningMs: worst(big.openTasks),
    scrollSteps: big.scrolled.steps,
    scrollMs: big.scrolled.ms,
    longTasksWhileScrolling: big.scrollTasks.length,
    worstTaskScrollingMs: worst(big.scrollTasks),
    articlesInDom: big.rendered,
    thread: {
      scrollSteps: big.threadScroll.steps,
      scrollMs: big.threadScroll.ms,
      longTasks: big.threadTasks.length,
      worstTaskMs: worst(big.threadTasks),
      articlesInDom: big.threadRendered,
    },
  };
  const stream = await streaming(browser, stack);
  const frame = 1000 / 60;
  results.streaming = {
    tokens: stream.tokens,
    tokensPerSecond: Math.round(((stream.tokens - 1) / stream.streamMs) * 1000),
    frames: stream.gaps.length,
    medianFrameMs: Number(median(stream.gaps).toFixed(1)),
    p99FrameMs: Number(percentile(stream.gaps, 99).toFixed(1)),
    longestFrameMs: Number(Math.max(...stream.gaps).toFixed(1)),
    droppedFrames: stream.gaps.reduce((n, g) => n + Math.max(0, Math.round(g / frame) - 1), 0),
    longTasks: stream.tasks.length,
  };
} finally {
  await browser.close();
  await stack.stop();
}

const r = results;
console.log(`
UI benchmark (${process.env.HELM_HTTP_BIN ? "HELM_HTTP_BIN" : "debug helm-http"}, loopback, headless Chromium)

first load: ${r.firstLoad.scripts.length} scripts, ${kib(r.firstLoad.gzipBytes)} gzipped (${kib(r.firstLoad.sentBytes)} as sent, brotli)
  ${r.firstLoad.scripts.map((s) => `${s.url} ${kib(s.gzip)} gz`).join("\n  ")}
navigation → interactive channel: median ${r.navigation.medianMs} ms over ${r.navigation.runs} (min ${r.navigation.minMs}, max ${r.navigation.maxMs}); cold cache ${r.firstLoad.coldInteractiveMs} ms
10,000-message channel (1,000 threads): open ${r.bigChannel.openMs} ms, ${r.bigChannel.longTasksWhileOpening} long tasks (worst ${r.bigChannel.worstTaskOpeningMs} ms);
  scrolled to the oldest in ${r.bigChannel.scrollSteps} wheel steps (${(r.bigChannel.scrollMs / 1000).toFixed(1)} s): ${r.bigChannel.longTasksWhileScrolling} long tasks over 50 ms (worst ${r.bigChannel.worstTaskScrollingMs} ms); ${r.bigChannel.articlesInDom} items in the DOM
10,000-message thread: scrolled to the first in ${r.bigChannel.thread.scrollSteps} steps (${(r.bigChannel.thread.scrollMs / 1000).toFixed(1)} s): ${r.bigChannel.thread.longTasks} long tasks (worst ${r.bigChannel.thread.worstTaskMs} ms); ${r.bigChannel.thread.articlesInDom} items in the DOM
streaming ${r.streaming.tokens} tokens at ${r.streaming.tokensPerSecond} tokens/s: ${r.streaming.frames} frames, median ${r.streaming.medianFrameMs} ms, p99 ${r.streaming.p99FrameMs} ms, longest ${r.streaming.longestFrameMs} ms, ${r.streaming.droppedFrames} dropped, ${r.streaming.longTasks} long tasks
`);
writeFileSync(join(repo, "target/ui-bench.json"), JSON.stringify(results, null, 2));
void waitFor;
