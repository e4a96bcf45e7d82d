// The Terminal view's tabs with several people at once: others' shells
// appear, a shell closed under you stays with a note (and stays shown),
// names do not shift, and Escape then Tab is the way out of the terminal;
// a refused New terminal stays refused until the shells change.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { Terminal as TerminalInfo } from "../../api/types";
import { endTab, endingFrom, endingNote, leaveKeys, mergeTabs, pickCurrent, refusalReason, refuse, shellLabel, type ShellTab } from "./terminalTabs";

function shell(id: number): TerminalInfo {
  return { id, channel_id: 2, isolation: "process", size: { rows: 24, cols: 100 }, started: "2026-01-01T00:00:00Z", running: true, exit_code: null };
}
const ids = (tabs: ShellTab[]) => tabs.map((t) => [t.info.id, t.ended?.kind ?? "running"]);

test("a shell someone else opens appears; one they close stays, ended, and stays shown", () => {
  const none = new Set<number>();
  let tabs = mergeTabs(undefined, [shell(1)], none);
  // Bob opens a shell: Ada's next read lists it after hers.
  tabs = mergeTabs(tabs, [shell(1), shell(2)], none);
  assert.deepEqual(ids(tabs), [[1, "running"], [2, "running"]]);
  // Bob closes Ada's shell: it is kept, ended, and Ada still looks at it.
  tabs = mergeTabs(tabs, [shell(2)], none);
  assert.deepEqual(ids(tabs), [[1, "elsewhere"], [2, "running"]]);
  assert.equal(pickCurrent(1, tabs), 1, "never moved into Bob's shell");
  // A later read does not bring it back or forget it.
  tabs = mergeTabs(tabs, [shell(2)], none);
  assert.deepEqual(ids(tabs), [[1, "elsewhere"], [2, "running"]]);
  // Her own close says so.
  tabs = mergeTabs(tabs, [], new Set([2]));
  assert.deepEqual(ids(tabs), [[1, "elsewhere"], [2, "here"]]);
});

test("a read asked for before a shell was opened here does not end it", () => {
  const tabs = mergeTabs(undefined, [shell(1)], new Set());
  // New terminal answered while a read of the list was on its way.
  const opened = [...tabs, { info: shell(2) }];
  assert.deepEqual(ids(mergeTabs(opened, [shell(1)], new Set(), new Set([1]))), [[1, "running"], [2, "running"]]);
  // The next read, asked for after, tells.
  assert.deepEqual(ids(mergeTabs(opened, [shell(1)], new Set(), new Set([1, 2]))), [[1, "running"], [2, "elsewhere"]]);
});

test("the socket's word replaces a guess: an exit code means the shell exited", () => {
  let tabs = mergeTabs(mergeTabs(undefined, [shell(1)], new Set()), [], new Set());
  tabs = endTab(tabs, 1, endingFrom(0, false));
  assert.deepEqual(tabs[0]?.ended, { kind: "exited", code: 0 });
  // A killed shell has no exit code: closed, by someone else unless by this page.
  assert.deepEqual(endingFrom(null, false), { kind: "elsewhere" });
  assert.deepEqual(endingFrom(null, true), { kind: "here" });
  // Under bubblewrap a killed shell reports 128 + SIGKILL.
  assert.deepEqual(endingFrom(137, false), { kind: "elsewhere" });
  assert.deepEqual(endingFrom(1, false), { kind: "exited", code: 1 });
  assert.match(endingNote({ kind: "elsewhere" }), /closed by someone else/);
  // The server names the person who closed it; that beats a guess too.
  assert.deepEqual(endingFrom(null, false, "Bob"), { kind: "closedBy", name: "Bob" });
  assert.deepEqual(endingFrom(null, true, "Bob"), { kind: "here" }, "closed from this page");
  let guessed = mergeTabs(mergeTabs(undefined, [shell(2)], new Set()), [], new Set());
  assert.deepEqual(guessed[0]?.ended, { kind: "elsewhere" });
  guessed = endTab(guessed, 2, endingFrom(null, false, "Bob"));
  assert.deepEqual(guessed[0]?.ended, { kind: "closedBy", name: "Bob" });
  assert.match(endingNote({ kind: "closedBy", name: "Bob" }), /^This shell was closed by Bob\./);
  assert.match(endingNote({ kind: "exited", code: 3 }), /exit code 3/);
});

test("names follow the shell, not its place in the list; the first running tab is shown when none was", () => {
  assert.equal(shellLabel({ id: 3 }), "Shell 3");
  assert.equal(shellLabel({ id: 1_234_567_890_123, number: 2 }), "Shell 2", "the channel's number, not the id");
  // Node 1's terminal 5 is "Shell 5" too.
  assert.equal(shellLabel({ id: 2 ** 32 + 5 }), "Shell 5");
  const tabs = mergeTabs(mergeTabs(undefined, [shell(4), shell(7)], new Set()), [shell(7)], new Set());
  assert.equal(pickCurrent(undefined, tabs), 7);
  assert.equal(pickCurrent(9, tabs), 7, "a tab closed here falls back to a running one");
  assert.equal(pickCurrent(undefined, []), undefined);
});

test("Escape then Tab leaves the terminal, and that Escape never reaches the shell; a lone Escape does", () => {
  const key = (k: string, mods: Partial<{ ctrlKey: boolean; altKey: boolean; metaKey: boolean }> = {}) => ({ key: k, ctrlKey: false, altKey: false, metaKey: false, ...mods });
  let sent = 0;
  let pending: (() => void) | undefined;
  const timers = {
    set: (fn: () => void) => {
      pending = fn;
      return 1;
    },
    clear: () => {
      pending = undefined;
    },
  };
  const leaves = leaveKeys(() => sent++, 300, timers);
  assert.equal(leaves(key("Tab")), "shell", "Tab alone completes in the shell");
  assert.equal(leaves(key("Escape")), "held");
  assert.equal(leaves(key("Tab")), "leave");
  assert.equal(sent, 0, "the Escape before the Tab is dropped");
  assert.equal(leaves(key("Tab")), "shell", "and only once");
  // A lone Escape reaches the shell when the moment passes (vi's Escape)…
  assert.equal(leaves(key("Escape")), "held");
  pending?.();
  assert.equal(sent, 1);
  assert.equal(leaves(key("Tab")), "shell", "a Tab after that is the shell's");
  // …or at once, before the next key, when another key follows.
  assert.equal(leaves(key("Escape")), "held");
  assert.equal(leaves(key(":")), "shell");
  assert.equal(sent, 2, "sent before the ':'");
  // Shift (as in Shift+Tab) keeps it held; Ctrl+Tab is the shell's.
  assert.equal(leaves(key("Escape")), "held");
  assert.equal(leaves(key("Shift")), "shell");
  assert.equal(leaves(key("Tab")), "leave");
  assert.equal(leaves(key("Escape")), "held");
  assert.equal(leaves(key("Tab", { ctrlKey: true })), "shell");
  assert.equal(sent, 3);
});

test("a refused new shell holds New terminal back until the running shells change", () => {
  const none = new Set<number>();
  const reason = "this channel already has 4 open terminals, the limit; close one first";
  let tabs = mergeTabs(undefined, [shell(1), shell(2), shell(3), shell(4)], none);
  const refusal = refuse(reason, tabs);
  assert.equal(refusalReason(refusal, tabs), reason);
  // A read that lists the same shells (in another order) changes nothing.
  tabs = mergeTabs(tabs, [shell(4), shell(3), shell(2), shell(1)], none);
  assert.equal(refusalReason(refusal, tabs), reason);
  // Someone closes one: it stays as an ended tab, and a new shell may fit.
  const closed = mergeTabs(tabs, [shell(1), shell(2), shell(4)], none);
  assert.equal(refusalReason(refusal, closed), undefined);
  // Or its socket says it ended before the next read.
  assert.equal(refusalReason(refusal, endTab(tabs, 3, { kind: "exited", code: 0 })), undefined);
  // Someone else opened one meanwhile: the list changed, so the button is offered again.
  assert.equal(refusalReason(refusal, mergeTabs(tabs, [shell(1), shell(2), shell(3), shell(4), shell(5)], none)), undefined);
  assert.equal(refusalReason(undefined, tabs), undefined, "nothing refused");
});
