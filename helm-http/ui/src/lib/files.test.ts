// How many rows of a big folder the Files listing shows.
import assert from "node:assert/strict";
import { test } from "node:test";
import { FILE_ROWS_PER_PAGE, rowsShown } from "./files";

test("a big folder shows one page of rows, more as asked, and always the open file", () => {
  assert.equal(rowsShown(20_000, FILE_ROWS_PER_PAGE, -1), FILE_ROWS_PER_PAGE, "one page at first");
  assert.equal(rowsShown(20_000, 2 * FILE_ROWS_PER_PAGE, -1), 2 * FILE_ROWS_PER_PAGE, "Show more adds a page");
  assert.equal(rowsShown(12, FILE_ROWS_PER_PAGE, -1), 12, "a small folder whole");
  assert.equal(rowsShown(20_000, FILE_ROWS_PER_PAGE, 4_321), 4_400, "the open file's page is reached");
  assert.equal(rowsShown(450, FILE_ROWS_PER_PAGE, 449), 450);
});
