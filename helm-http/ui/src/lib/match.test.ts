// The command palette's matching: word starts and runs of letters, ranked;
// never letters scattered through a text.
import assert from "node:assert/strict";
import { test } from "node:test";
import { matchScore } from "./match";

test("letters scattered through a text are no match", () => {
  assert.equal(matchScore("Just a note for the team", "Jane"), 0);
  assert.equal(matchScore("launch", "lch"), 0);
});

test("the whole name, then its start, then a word's start, then the words in order, then a run", () => {
  assert.equal(matchScore("notes", "Notes"), 100);
  assert.equal(matchScore("notes-archive", "notes"), 80);
  assert.equal(matchScore("Just a note for the team", "note"), 60);
  assert.equal(matchScore("Release notes", "rel no"), 40);
  assert.equal(matchScore("keynote", "note"), 20);
  assert.equal(matchScore("Release notes", "no rel"), 0, "words in the order typed");
  assert.equal(matchScore("anything", "  "), 1, "nothing typed matches everything");
});
