// Builds the web UI into dist/, which helm-http serves (and, in release
// builds, embeds in its binary):
//
//   1. the API types from docs/openapi.json (scripts/gen-api.mjs);
//   2. `tsc --noEmit`: the whole UI type-checks against those types;
//   3. esbuild: one entry plus lazily loaded chunks (terminal, editor,
//      code highlighting), every file named by its content hash under
//      dist/assets/;
//   4. dist/index.html pointing at them (no inline script or style, so the
//      server's Content-Security-Policy needs no 'unsafe-inline' for scripts);
//   5. a .gz and a .br beside every file, so the server sends the smaller
//      one without compressing per request.
//
// `node scripts/build.mjs --no-check` skips step 2 (for quick local loops).
import { spawnSync } from "node:child_process";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";
import {
  copyFileSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";
import { generate } from "./gen-api.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
// Built in a scratch directory, then synced into dist/: files whose bytes
// did not change keep their timestamps, so a rebuild of the same sources
// does not make cargo re-embed the UI into a release binary.
const dist = join(root, ".build");
const target = join(root, "dist");
const check = !process.argv.includes("--no-check");
// For profiling: readable names (and no minification) in the bundle.
const readable = process.argv.includes("--readable");

function step(name) {
  process.stdout.write(`ui build: ${name}\n`);
}

step("API types from docs/openapi.json");
await generate();

if (check) {
  step("type check (tsc --noEmit)");
  const tsc = spawnSync(join(root, "node_modules/.bin/tsc"), ["--noEmit", "-p", root], {
    stdio: "inherit",
  });
  if (tsc.status !== 0) {
    console.error("ui build: the UI does not type-check against the API (see above)");
    process.exit(1);
  }
}

step("bundle (esbuild)");
rmSync(dist, { recursive: true, force: true });
mkdirSync(join(dist, "assets"), { recursive: true });
const result = await esbuild.build({
  absWorkingDir: root,
  entryPoints: { app: "src/main.tsx" },
  bundle: true,
  splitting: true,
  format: "esm",
  target: "es2022",
  outdir: ".build/assets",
  entryNames: "[name]-[hash]",
  chunkNames: "[name]-[hash]",
  assetNames: "[name]-[hash]",
  publicPath: "/assets",
  jsx: "automatic",
  jsxImportSource: "preact",
  minify: !readable,
  legalComments: "none",
  metafile: true,
  logLevel: "warning",
  loader: { ".svg": "file", ".woff2": "file" },
  define: { "process.env.NODE_ENV": '"production"' },
});

const outputs = Object.entries(result.metafile.outputs);
const entry = outputs.find(([, o]) => o.entryPoint === "src/main.tsx");
if (!entry) throw new Error("esbuild produced no entry chunk");
const [entryJs, entryMeta] = entry;
const entryCss = entryMeta.cssBundle;
const url = (file) => "/" + relative(dist, join(root, file)).split("\\").join("/");

step("index.html");
const template = readFileSync(join(root, "src/index.html"), "utf8");
const html = template
  .replace("<!--styles-->", entryCss ? `<link rel="stylesheet" href="${url(entryCss)}">` : "")
  .replace("<!--script-->", `<script type="module" src="${url(entryJs)}"></script>`);
writeFileSync(join(dist, "index.html"), html);
for (const file of readdirSync(join(root, "src/public"))) {
  copyFileSync(join(root, "src/public", file), join(dist, file));
}

step("pre-compress (gzip, brotli)");
function* files(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* files(path);
    else yield path;
  }
}
let raw = 0;
let gz = 0;
let firstLoadGz = 0;
const firstLoad = new Set([join(root, entryJs), entryCss && join(root, entryCss)]);
for (const path of [...files(dist)]) {
  const body = readFileSync(path);
  const gzipped = gzipSync(body, { level: 9 });
  const brotli = brotliCompressSync(body, {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: 11,
      [constants.BROTLI_PARAM_SIZE_HINT]: body.length,
    },
  });
  writeFileSync(`${path}.gz`, gzipped);
  writeFileSync(`${path}.br`, brotli);
  raw += body.length;
  gz += gzipped.length;
  if (firstLoad.has(path)) firstLoadGz += gzipped.length;
}
// Static imports of the entry are loaded on first load too.
for (const imported of entryMeta.imports) {
  if (imported.kind === "import-statement") {
    firstLoadGz += gzipSync(readFileSync(join(root, imported.path)), { level: 9 }).length;
  }
}
step("sync into dist/");
const built = new Set([...files(dist)].map((p) => relative(dist, p)));
mkdirSync(join(target, "assets"), { recursive: true });
for (const name of built) {
  const from = join(dist, name);
  const to = join(target, name);
  let same = false;
  try {
    same = readFileSync(to).equals(readFileSync(from));
  } catch {
    // Not there yet.
  }
  if (!same) copyFileSync(from, to);
}
for (const path of [...files(target)]) {
  if (!built.has(relative(target, path))) rmSync(path);
}
rmSync(dist, { recursive: true, force: true });

const kb = (n) => `${(n / 1024).toFixed(1)} KiB`;
step(`done: ${kb(raw)} in dist/ (${kb(gz)} gzipped); first load ${kb(firstLoadGz)} gzipped`);
