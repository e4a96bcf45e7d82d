// The people list and the changes made while it is read: a list that left
// before a person's role changed must not put the old role back.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { LiveEvent } from "../api/events";
import type { User } from "../api/types";
import { heldFetch } from "./heldFetch";
import { applyUserEvent, loadUsers, userById } from "./users";

function user(role: User["role"]): User {
  return { id: 3, name: "ada", display_name: "Ada", role, deactivated: false, created: "2026-01-01T00:00:00Z" } as User;
}

test("a person changed while the list was read stays as the change said", async () => {
  const held = heldFetch([user("member")]);
  try {
    const stale = loadUsers();
    applyUserEvent({ type: "user.updated", seq: 1, at: "2026-01-01T00:00:01Z", user: user("admin") } as unknown as LiveEvent);
    await held.release();
    await stale;
    assert.equal(userById(3)?.role, "admin", "the event is newer than the answer");

    // A list read after the change is taken as it is.
    const fresh = loadUsers();
    await held.release();
    await fresh;
    assert.equal(userById(3)?.role, "member");
  } finally {
    held.restore();
  }
});
