// Who a message in a private channel reaches: the composer's @ list and its
// warning about a typed name that will not be told.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { Channel, User } from "../api/types";
import { mentionablePeople, mentionedNames, seesChannel, unseenMentions, unseenWords } from "./audience";

const person = (id: number, name: string, role: "captain" | "admin" | "member", deactivated?: string) => ({ id, name, display_name: name, role, deactivated }) as unknown as User;
const ada = person(1, "ada", "captain");
const bob = person(2, "bob", "member");
const cleo = person(3, "cleo", "admin");
const dan = person(4, "dan", "member");
const eve = person(5, "eve", "member", "2026-01-01T00:00:00Z");
const everyone = [ada, bob, cleo, dan, eve];
const secret = { id: 9, name: "secret", visibility: "private" } as unknown as Channel;
const launch = { id: 7, name: "launch", visibility: "public" } as unknown as Channel;

test("a private channel is seen by its members, the Captain and admins; a public one by everyone active", () => {
  const members = new Set([4]);
  assert.deepEqual(everyone.filter((u) => seesChannel(u, secret, members)).map((u) => u.name), ["ada", "cleo", "dan"]);
  assert.deepEqual(everyone.filter((u) => seesChannel(u, launch, undefined)).map((u) => u.name), ["ada", "bob", "cleo", "dan"]);
  // Members not read yet: only those who see every channel.
  assert.deepEqual(everyone.filter((u) => seesChannel(u, secret, undefined)).map((u) => u.name), ["ada", "cleo"]);
});

test("a typed @name of someone outside the private channel is said, once, by name", () => {
  const members = new Set([4]);
  assert.deepEqual(mentionedNames("@Bob look, @dan. and @bob again (@cleo)"), ["bob", "dan", "cleo"]);
  const unseen = unseenMentions("@bob please check, @dan too, and @eve and @nobody", everyone, secret, members);
  assert.deepEqual(unseen.map((u) => u.name), ["bob"]);
  assert.equal(unseenWords(unseen, "secret"), "@bob is not in #secret and will not be told.");
  assert.equal(unseenWords([bob, dan], "secret"), "@bob and @dan are not in #secret and will not be told.");
  assert.equal(unseenWords([], "secret"), undefined);
  // A public channel reaches everyone; unread members flag nobody.
  assert.deepEqual(unseenMentions("@bob", everyone, launch, undefined), []);
  assert.deepEqual(unseenMentions("@bob", everyone, secret, undefined), []);
});

test("the @ list leaves out the person typing, and keeps everyone else the message reaches", () => {
  const members = new Set([4]);
  assert.deepEqual(mentionablePeople(everyone, launch, undefined, 2).map((u) => u.name), ["ada", "cleo", "dan"], "bob types in a public channel");
  assert.deepEqual(mentionablePeople(everyone, secret, members, 1).map((u) => u.name), ["cleo", "dan"], "the Captain types in a private one");
  // Not signed in yet (no id): nobody is left out for it.
  assert.deepEqual(mentionablePeople(everyone, launch, undefined, undefined).map((u) => u.name), ["ada", "bob", "cleo", "dan"]);
});
