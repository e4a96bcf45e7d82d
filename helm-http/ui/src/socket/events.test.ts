// The events socket, against a scripted stand-in for WebSocket: it resumes
// from the last event it applied, drops what it already has, retries with
// backoff, gives up a silent handshake, and stops when signed out.
import assert from "node:assert/strict";
import { beforeEach, mock, test } from "node:test";

class FakeSocket {
  static all: FakeSocket[] = [];
  onopen: ((e: unknown) => void) | null = null;
  onmessage: ((e: { data: unknown }) => void) | null = null;
  onclose: ((e: { code: number }) => void) | null = null;
  onerror: ((e: unknown) => void) | null = null;
  closed = false;
  constructor(readonly url: string) {
    FakeSocket.all.push(this);
  }
  close() {
    this.closed = true;
  }
  hello(after: number, last = after) {
    this.onmessage?.({ data: JSON.stringify({ type: "stream.hello", last_seq: last, after, user: "ada" }) });
  }
  event(seq: number) {
    this.onmessage?.({ data: JSON.stringify({ type: "agent.status", seq, at: "2026-01-01T00:00:00Z", agent_id: 1, status: "ready" }) });
  }
  drop(code = 1006) {
    this.onclose?.({ code });
  }
}

const listeners = new Map<string, () => void>();
const globals = globalThis as unknown as Record<string, unknown>;
globals.window = { addEventListener: (n: string, f: () => void) => listeners.set(n, f), removeEventListener: () => undefined };
globals.document = { visibilityState: "visible", addEventListener: () => undefined, removeEventListener: () => undefined };
globals.location = { protocol: "http:", host: "helm.test" };

const { BASE_MS, HANDSHAKE_MS, MAX_MS, backoff, createEventStream } = await import("./events");

beforeEach(() => {
  FakeSocket.all = [];
  mock.timers.reset();
  mock.timers.enable({ apis: ["setTimeout"] });
});

function stream(seen: number[], onSignedOut?: () => void) {
  return createEventStream({
    onEvent: (e) => seen.push(e.seq),
    onSignedOut,
    connect: (url) => new FakeSocket(url) as unknown as WebSocket,
  });
}

test("after a drop it resumes from the last event, and nothing is applied twice", () => {
  const seen: number[] = [];
  const s = stream(seen);
  s.start();
  const first = FakeSocket.all[0]!;
  assert.equal(first.url, "ws://helm.test/api/events");
  first.hello(10);
  assert.equal(s.state.value, "live");
  assert.equal(s.reconnects.value, 0, "the first handshake is not a reconnection");
  first.event(11);
  first.event(12);
  first.drop();
  assert.equal(FakeSocket.all.length, 1, "it waits before retrying");
  mock.timers.tick(MAX_MS);
  const second = FakeSocket.all[1]!;
  assert.equal(second.url, "ws://helm.test/api/events?after=12");
  second.hello(12, 14);
  assert.equal(s.reconnects.value, 1, "views that failed meanwhile hear the server is back");
  second.event(12);
  second.event(13);
  second.event(14);
  assert.deepEqual(seen, [11, 12, 13, 14]);
  assert.equal(s.cursor(), 14);
});

test("a socket that opens but never says hello is abandoned and retried", () => {
  const s = stream([]);
  s.start();
  mock.timers.tick(HANDSHAKE_MS + 1);
  assert.equal(FakeSocket.all[0]!.closed, true);
  mock.timers.tick(MAX_MS);
  assert.equal(FakeSocket.all.length, 2);
  s.stop();
});

test("falling behind (4008) reconnects at once from the cursor", () => {
  const s = stream([]);
  s.start();
  const first = FakeSocket.all[0]!;
  first.hello(5);
  first.event(6);
  first.drop(4008);
  mock.timers.tick(0);
  assert.equal(FakeSocket.all[1]!.url, "ws://helm.test/api/events?after=6");
  s.stop();
});

test("a resync frame reconnects from the cursor too", () => {
  const s = stream([]);
  s.start();
  const first = FakeSocket.all[0]!;
  first.hello(3);
  first.onmessage?.({ data: JSON.stringify({ type: "stream.resync", last_seq: 90 }) });
  mock.timers.tick(0);
  assert.equal(FakeSocket.all[1]!.url, "ws://helm.test/api/events?after=3");
  s.stop();
});

test("a session that ended (4001) stops the stream and says so", () => {
  let signedOut = 0;
  const s = stream([], () => signedOut++);
  s.start();
  FakeSocket.all[0]!.hello(1);
  FakeSocket.all[0]!.drop(4001);
  mock.timers.tick(MAX_MS * 4);
  assert.equal(signedOut, 1);
  assert.equal(FakeSocket.all.length, 1, "no retry");
  assert.equal(s.state.value, "offline");
});

test("repeated failures show offline; coming back online retries at once", () => {
  const s = stream([]);
  s.start();
  FakeSocket.all[0]!.drop();
  mock.timers.tick(MAX_MS);
  FakeSocket.all[1]!.drop();
  assert.equal(s.state.value, "offline");
  listeners.get("online")?.();
  mock.timers.tick(0);
  assert.equal(FakeSocket.all.length, 3);
  FakeSocket.all[2]!.hello(0);
  assert.equal(s.state.value, "live");
  s.stop();
});

test("backoff is jittered under an exponential cap", () => {
  for (let attempt = 0; attempt < 12; attempt++) {
    const cap = Math.min(MAX_MS, BASE_MS * 2 ** attempt);
    assert.ok(backoff(attempt, () => 0) >= 100);
    assert.ok(backoff(attempt, () => 0.999) <= cap);
  }
  assert.equal(backoff(20, () => 1), MAX_MS);
});
