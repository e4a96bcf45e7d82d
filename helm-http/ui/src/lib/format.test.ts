// Counts at a glance and exact: the token counts beside a reply and a thread.
import assert from "node:assert/strict";
import { test } from "node:test";
import { compactCount, exactCount, tokenCount, usageDetail } from "./format";

test("counts are exact to 999, then k and M", () => {
  const cases: [number, string][] = [
    [0, "0"],
    [1, "1"],
    [15, "15"],
    [999, "999"],
    [1000, "1k"],
    [1049, "1k"],
    [1050, "1.1k"],
    [1234, "1.2k"],
    [9949, "9.9k"],
    [9950, "10k"],
    [12_345, "12k"],
    [340_500, "341k"],
    [999_499, "999k"],
    [999_500, "1M"],
    [1_234_567, "1.2M"],
    [12_345_678, "12M"],
    [999_999_999, "1B"],
    [-5, "0"],
    [Number.NaN, "0"],
  ];
  for (const [n, want] of cases) assert.equal(compactCount(n), want, `${n}`);
});

test("exact counts use the locale's grouping", () => {
  assert.equal(exactCount(1234, "en-US"), "1,234");
  assert.equal(exactCount(1234567, "de-DE"), "1.234.567");
  assert.equal(exactCount(999, "en-US"), "999");
  // Without a locale, the runtime's own.
  assert.equal(exactCount(1234), (1234).toLocaleString());
});

test("tokens: the total at a glance, the split exact", () => {
  assert.equal(tokenCount({ input_tokens: 20, output_tokens: 10 }), "30 tokens");
  assert.equal(tokenCount({ input_tokens: 1, output_tokens: 0 }), "1 token");
  assert.equal(tokenCount({ input_tokens: 0, output_tokens: 0 }), "0 tokens");
  assert.equal(tokenCount({ input_tokens: 1234, output_tokens: 210 }), "1.4k tokens");
  assert.equal(usageDetail({ input_tokens: 1234, output_tokens: 210 }, 2, undefined, "en-US"), "1,234 in · 210 out, over 2 model calls");
  assert.equal(usageDetail({ input_tokens: 10, output_tokens: 5 }, 1, undefined, "en-US"), "10 in · 5 out, over 1 model call");
  assert.equal(usageDetail({ input_tokens: 10, output_tokens: 5 }, 0, undefined, "en-US"), "10 in · 5 out");
  assert.equal(usageDetail({ input_tokens: 30, output_tokens: 15 }, 3, 2, "en-US"), "30 in · 15 out, over 3 model calls in 2 turns");
  assert.equal(usageDetail({ input_tokens: 1234567, output_tokens: 2000 }, 1, 1, "de-DE"), "1.234.567 in · 2.000 out, over 1 model call");
});
