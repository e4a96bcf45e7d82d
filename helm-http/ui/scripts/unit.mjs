// Runs the UI's unit tests (src/**/*.test.ts) under node's test runner:
// esbuild bundles each test file into .unit/, then `node --test` runs them.
// They test modules that need no browser (the events socket, the stores);
// what needs one is in the browser suite (e2e/).
import { spawnSync } from "node:child_process";
import { readdirSync, rmSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";

const root = fileURLToPath(new URL("..", import.meta.url));
const out = join(root, ".unit");

function* tests(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* tests(path);
    else if (name.endsWith(".test.ts")) yield path;
  }
}

rmSync(out, { recursive: true, force: true });
const entryPoints = [...tests(join(root, "src"))];
await esbuild.build({
  absWorkingDir: root,
  entryPoints,
  outdir: out,
  outbase: "src",
  bundle: true,
  format: "esm",
  platform: "node",
  target: "node20",
  outExtension: { ".js": ".mjs" },
  jsx: "automatic",
  jsxImportSource: "preact",
  logLevel: "warning",
});
const files = entryPoints.map((p) => join(out, relative(join(root, "src"), p).replace(/\.ts$/, ".mjs")));
const run = spawnSync(process.execPath, ["--test", ...files], { stdio: "inherit" });
process.exit(run.status ?? 1);
