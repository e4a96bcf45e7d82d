// The one events socket: follows `/api/events` for the whole session and
// hands every event, once and in order, to `onEvent`.
//
// - Resume: the cursor advances on every event (even ones the UI ignores);
//   after any disconnect the socket reopens with `?after=<cursor>`, and the
//   server replays what was missed from its durable log. Events at or
//   below the cursor are dropped, so nothing is applied twice.
// - Handshake watchdog: a socket that opens but sends no `stream.hello`
//   within HANDSHAKE_MS is abandoned and retried.
// - Backoff with full jitter between attempts (BASE_MS doubling to MAX_MS),
//   reset by a successful handshake; an `online` event or the page becoming
//   visible retries at once.
// - `state` is "connecting" | "live" | "offline"; the UI shows a quiet banner
//   only once the stream has been down for a moment.
// - `reconnects` counts the handshakes that resumed after a drop: the
//   server is back, so a view whose load failed meanwhile tries again.
// - Close 4001 (the session ended) stops the stream and calls `onSignedOut`;
//   4008 (fell behind) reconnects at once from the cursor.
import { signal, type ReadonlySignal } from "@preact/signals";
import type { LiveEvent, StreamFrame, StreamHello } from "../api/events";

export type StreamState = "connecting" | "live" | "offline";

export interface EventStreamOptions {
  /** Called for each new event, in `seq` order. */
  onEvent: (event: LiveEvent) => void;
  /** Called after each handshake, with whether it resumed a cursor. */
  onHello?: (hello: StreamHello, resumed: boolean) => void;
  /** Called when the server says the credential is no longer valid. */
  onSignedOut?: () => void;
  /** The WebSocket URL for a cursor (tests and the benchmark swap it). */
  url?: (after: number | undefined) => string;
  /** Makes the socket (tests swap it). */
  connect?: (url: string) => WebSocket;
}

export const HANDSHAKE_MS = 8000;
export const BASE_MS = 400;
export const MAX_MS = 15_000;

/** The delay before attempt `n` (0-based): full jitter over an exponential cap. */
export function backoff(attempt: number, random = Math.random): number {
  const cap = Math.min(MAX_MS, BASE_MS * 2 ** attempt);
  return Math.max(100, Math.round(random() * cap));
}

function defaultUrl(after: number | undefined): string {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  const query = after === undefined ? "" : `?after=${after}`;
  return `${scheme}//${location.host}/api/events${query}`;
}

export interface EventStream {
  readonly state: ReadonlySignal<StreamState>;
  /** How many times the stream came back after a drop (0 until the first). */
  readonly reconnects: ReadonlySignal<number>;
  /** The last `seq` applied (undefined before the first handshake). */
  readonly cursor: () => number | undefined;
  start(): void;
  stop(): void;
  /** Drops the current socket and reconnects from the cursor (tests use it). */
  reconnect(): void;
}

export function createEventStream(options: EventStreamOptions): EventStream {
  const state = signal<StreamState>("connecting");
  const reconnects = signal(0);
  const url = options.url ?? defaultUrl;
  const connect = options.connect ?? ((u: string) => new WebSocket(u));
  let cursor: number | undefined;
  let socket: WebSocket | undefined;
  let attempt = 0;
  let running = false;
  let retryTimer: ReturnType<typeof setTimeout> | undefined;
  let watchdog: ReturnType<typeof setTimeout> | undefined;

  const clearTimers = () => {
    if (retryTimer) clearTimeout(retryTimer);
    if (watchdog) clearTimeout(watchdog);
    retryTimer = watchdog = undefined;
  };

  const drop = () => {
    if (!socket) return;
    const old = socket;
    socket = undefined;
    old.onopen = old.onmessage = old.onclose = old.onerror = null;
    try {
      old.close();
    } catch {
      // Already closing.
    }
  };

  const scheduleRetry = (immediately = false) => {
    if (!running) return;
    clearTimers();
    const delay = immediately ? 0 : backoff(attempt);
    attempt += 1;
    if (attempt > 1) state.value = "offline";
    retryTimer = setTimeout(open, delay);
  };

  const handleFrame = (frame: StreamFrame) => {
    if (frame.type === "stream.hello") {
      const hello = frame as StreamHello;
      if (watchdog) clearTimeout(watchdog);
      watchdog = undefined;
      const resumed = cursor !== undefined;
      if (cursor === undefined) cursor = hello.after;
      attempt = 0;
      state.value = "live";
      if (resumed) reconnects.value += 1;
      options.onHello?.(hello, resumed);
      return;
    }
    if (frame.type === "stream.resync") {
      drop();
      scheduleRetry(true);
      return;
    }
    const seq = (frame as { seq?: number }).seq;
    if (typeof seq !== "number") return;
    if (cursor !== undefined && seq <= cursor) return;
    cursor = seq;
    options.onEvent(frame as LiveEvent);
  };

  function open() {
    if (!running) return;
    drop();
    if (state.value !== "offline") state.value = "connecting";
    let ws: WebSocket;
    try {
      ws = connect(url(cursor));
    } catch {
      scheduleRetry();
      return;
    }
    socket = ws;
    watchdog = setTimeout(() => {
      // Opened (or hanging) without a handshake: try again.
      if (socket === ws) {
        drop();
        scheduleRetry();
      }
    }, HANDSHAKE_MS);
    ws.onmessage = (message) => {
      if (typeof message.data !== "string") return;
      let frame: StreamFrame;
      try {
        frame = JSON.parse(message.data) as StreamFrame;
      } catch {
        return;
      }
      try {
        handleFrame(frame);
      } catch (e) {
        // One bad event must not end the stream; say so for debugging.
        console.warn("helm: an event could not be applied", e);
      }
    };
    ws.onclose = (close) => {
      if (socket !== ws) return;
      socket = undefined;
      if (close.code === 4001) {
        running = false;
        clearTimers();
        state.value = "offline";
        options.onSignedOut?.();
        return;
      }
      scheduleRetry(close.code === 4008);
    };
    ws.onerror = () => {
      // onclose follows and decides.
    };
  }

  const online = () => {
    if (running && !socket) scheduleRetry(true);
  };
  const visible = () => {
    if (document.visibilityState === "visible") online();
  };

  return {
    state,
    reconnects,
    cursor: () => cursor,
    start() {
      if (running) return;
      running = true;
      attempt = 0;
      window.addEventListener("online", online);
      document.addEventListener("visibilitychange", visible);
      open();
    },
    stop() {
      running = false;
      clearTimers();
      drop();
      window.removeEventListener("online", online);
      document.removeEventListener("visibilitychange", visible);
    },
    reconnect() {
      drop();
      scheduleRetry(true);
    },
  };
}
