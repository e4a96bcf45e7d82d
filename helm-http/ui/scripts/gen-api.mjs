// Generates the API's TypeScript types from the server's OpenAPI document
// (docs/openapi.json, itself generated from the handlers and checked by a
// Rust test). The build runs this first, so a UI that no longer matches the
// server fails `tsc` instead of failing in a browser.
import { writeFileSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import openapiTS, { astToString } from "openapi-typescript";

const here = (p) => fileURLToPath(new URL(p, import.meta.url));
export const documentPath = here("../../../docs/openapi.json");
export const outputPath = here("../src/api/schema.gen.ts");

export async function generate() {
  const document = JSON.parse(readFileSync(documentPath, "utf8"));
  const ast = await openapiTS(document, { alphabetize: true });
  const header =
    "// Generated from docs/openapi.json by scripts/gen-api.mjs. Do not edit.\n" +
    "/* eslint-disable */\n";
  writeFileSync(outputPath, header + astToString(ast));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await generate();
  console.log(`wrote ${outputPath}`);
}
