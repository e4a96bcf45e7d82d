// Terminals in the channel's computer (this module and xterm.js load only
// when the view opens). Several tabs, each a shell in /workspace; a reload
// reconnects to the same shells and the server replays their scrollback;
// the terminal follows the size of its pane. Several people may use the
// same shells: the channel's `terminal.opened`/`terminal.closed` events
// have the list read again, so others' shells appear and go at once (and
// after the page was hidden, or the events socket came back); a shell
// closed under you stays on screen, ended, with who closed it, until you
// close its tab; closing a running shell asks first. Escape then Tab leaves the
// terminal for its tabs (xterm.js takes every other key). The tabs stay
// one line, scrolling sideways; a shell the server refuses (a limit) holds
// New terminal back with the reason beside it until the shells change.
import { FitAddon } from "@xterm/addon-fit";
import { Terminal as XTerm } from "@xterm/xterm";
import { useEffect, useRef, useState } from "preact/hooks";
import { ApiError, api, describeError } from "../../api/client";
import type { Terminal as TerminalInfo } from "../../api/types";
import { Dialog } from "../../components/Dialog";
import { ErrorNote } from "../../components/Field";
import { Icon } from "../../components/Icon";
import { sentenceStart } from "../../lib/format";
import { backoff } from "../../socket/events";
import type { ChannelEntry } from "../../state/channels";
import { useRetryOnReconnect } from "../../lib/reconnect";
import { me } from "../../state/session";
import { onTerminalEvent } from "../../state/terminals";
import { toast } from "../../state/toasts";
import { userById } from "../../state/users";
import { type Ending, type Refusal, type ShellTab, endTab, endingFrom, endingLine, endingNote, leaveKeys, mergeTabs, pickCurrent, refusalReason, refuse, shellLabel } from "./terminalTabs";

export function Terminal({ entry }: { entry: ChannelEntry }) {
  const channel = entry.channel.name;
  const [tabs, setTabsState] = useState<ShellTab[]>();
  const [current, setCurrent] = useState<number>();
  const [error, setError] = useState<string>();
  const [confirming, setConfirming] = useState<ShellTab>();
  // The server's last refusal of a new shell; it holds the button back only
  // while the shells are those it was given over (see `refusalReason`).
  const [refusal, setRefusal] = useState<Refusal>();
  const refused = refusalReason(refusal, tabs);
  // Which shell the person asked to type into (a click on its tab, or New
  // terminal), counted so that asking again focuses it again.
  const [focusWanted, setFocusWanted] = useState<{ id: number; n: number }>({ id: -1, n: 0 });
  const archived = entry.channel.status === "archived";
  const tabsRef = useRef<ShellTab[] | undefined>(undefined);
  const closedHere = useRef(new Set<number>()).current;
  const toolbar = useRef<HTMLDivElement>(null);

  /** Changes the tabs, and keeps the shown one while it is still a tab. */
  const setTabs = (next: ShellTab[] | undefined) => {
    tabsRef.current = next;
    setTabsState(next);
    setCurrent((c) => (next ? pickCurrent(c, next) : undefined));
  };

  /**
   * The channel's running terminals merged into the tabs; nothing
   * (undefined) once `current` says the view moved on. A `quiet` read (the
   * refresh) says nothing when it fails: the offline banner does, and the
   * next one tries again.
   */
  const load = async (current: () => boolean = () => true, quiet = false) => {
    const asked = new Set((tabsRef.current ?? []).map((t) => t.info.id));
    try {
      const list = (await api.get("/api/channels/{channel}/terminals", { path: { channel } })).filter((t) => t.running);
      if (!current()) return undefined;
      setTabs(mergeTabs(tabsRef.current, list, closedHere, asked));
      return list;
    } catch (e) {
      if (!current()) return undefined;
      if (!quiet) setError(describeError(e));
      return [];
    }
  };

  const select = (id: number) => {
    setCurrent(id);
    setFocusWanted((f) => ({ id, n: f.n + 1 }));
  };

  const open = async (asked: boolean) => {
    setError(undefined);
    setRefusal(undefined);
    try {
      const made = await api.post("/api/channels/{channel}/terminals", { path: { channel }, body: { rows: 24, cols: 100 } });
      const known = tabsRef.current ?? [];
      if (!known.some((t) => t.info.id === made.id)) setTabs([...known, { info: made }]);
      setCurrent(made.id);
      if (asked) setFocusWanted((f) => ({ id: made.id, n: f.n + 1 }));
    } catch (e) {
      // A limit (409): said beside the button, which waits for a change.
      if (e instanceof ApiError && e.status === 409) setRefusal(refuse(asSentence(describeError(e)), tabsRef.current));
      else setError(describeError(e));
    }
  };

  /** An ended shell's tab goes when its person is done with it. */
  const dismiss = (id: number) => setTabs((tabsRef.current ?? []).filter((t) => t.info.id !== id));

  const close = async (id: number) => {
    setConfirming(undefined);
    closedHere.add(id);
    try {
      await api.delete("/api/terminals/{id}", { path: { id } });
      // Closed on purpose, here: its tab goes with it.
      dismiss(id);
    } catch (e) {
      closedHere.delete(id);
      toast(describeError(e), "error");
    }
    await load();
  };

  const ended = (id: number, exitCode: number | null | undefined, closedBy?: string) => {
    if (!tabsRef.current) return;
    setTabs(endTab(tabsRef.current, id, endingFrom(exitCode, closedHere.has(id), closedBy)));
  };

  // Another channel's list, answered after a switch, would show its shells
  // here and open one there: only the shown channel's answer counts.
  useEffect(() => {
    let current = true;
    const live = () => current;
    setTabs(undefined);
    void load(live).then((list) => {
      if (current && list?.length === 0 && !archived) void open(false);
    });
    const refresh = () => {
      if (document.visibilityState === "visible") void load(live, true);
    };
    const stop = onTerminalEvent(entry.channel.id, (event) => {
      // Who closed it is known now, before its socket says so.
      if (event.type === "terminal.closed" && tabsRef.current?.some((t) => t.info.id === event.terminal_id && !t.ended)) {
        ended(event.terminal_id, event.exit_code, event.closed_by != null ? personName(event.closed_by) : undefined);
      }
      void load(live, true);
    });
    document.addEventListener("visibilitychange", refresh);
    return () => {
      current = false;
      stop();
      document.removeEventListener("visibilitychange", refresh);
    };
  }, [channel]);
  // Events missed while the socket was down: read the list again.
  useRetryOnReconnect(true, () => void load(() => true, true));

  // The shown tab is scrolled into the strip (a new one lands at its end).
  useEffect(() => {
    toolbar.current?.querySelector(".terminal-tab.current")?.scrollIntoView({ block: "nearest", inline: "nearest" });
  }, [current]);

  /** Escape then Tab in a shell: the focus goes to its tab in the toolbar. */
  const leave = () => {
    const button = toolbar.current?.querySelector<HTMLButtonElement>(".terminal-tab.current .terminal-switch");
    (button ?? toolbar.current?.querySelector<HTMLButtonElement>("button"))?.focus();
  };

  return (
    <div class="terminals">
      <div class="terminal-tabs" role="group" aria-label="Terminals" ref={toolbar}>
        <div class="terminal-tab-list">
          {(tabs ?? []).map((t) => {
            const label = shellLabel(t.info);
            return (
              <div key={t.info.id} class={`terminal-tab${t.info.id === current ? " current" : ""}${t.ended ? " ended" : ""}`}>
                <button
                  type="button"
                  class="terminal-switch"
                  aria-pressed={t.info.id === current}
                  aria-controls={`terminal-${t.info.id}`}
                  title={t.info.opened_by != null ? `Opened by ${personName(t.info.opened_by)}` : undefined}
                  onClick={() => select(t.info.id)}
                >
                  <Icon name="terminal" size={14} /> {label}
                  <span class="muted small">{t.ended ? "ended" : t.info.isolation}</span>
                </button>
                <button
                  type="button"
                  class="icon-button small"
                  aria-label={t.ended ? `Remove the tab of ended ${label.toLowerCase()}` : `Close ${label.toLowerCase()}`}
                  onClick={() => (t.ended ? dismiss(t.info.id) : setConfirming(t))}
                >
                  <Icon name="close" size={12} />
                </button>
              </div>
            );
          })}
        </div>
        {/* Held back by aria-disabled, not disabled: the button keeps the
            focus after its refused click, and still tells its reason. */}
        <button
          type="button"
          class={refused ? "btn btn-small btn-ghost terminal-new disabled" : "btn btn-small btn-ghost terminal-new"}
          onClick={() => {
            if (!refused) void open(true);
          }}
          disabled={archived}
          aria-disabled={refused ? true : undefined}
          aria-describedby={refused ? "terminal-refused" : undefined}
        >
          <Icon name="plus" size={14} /> New terminal
        </button>
        <span class="terminal-refused small" id="terminal-refused" role="status">
          {refused}
        </span>
        <span class="terminal-hint muted small" id="terminal-keys">
          <kbd>Esc</kbd> then <kbd>Tab</kbd> leaves the terminal
        </span>
      </div>
      <ErrorNote error={error} />
      {archived && <p class="muted pad">This channel is archived, so its computer is off. Restore it to open a terminal.</p>}
      {(tabs ?? []).map((t) => (
        <TerminalPane
          key={t.info.id}
          id={t.info.id}
          channelId={entry.channel.id}
          label={shellLabel(t.info)}
          visible={t.info.id === current}
          ending={t.ended}
          focus={focusWanted.id === t.info.id ? focusWanted.n : 0}
          describe={(code, by) => endingLine(endingFrom(code, closedHere.has(t.info.id), by))}
          onEnded={(code, by) => ended(t.info.id, code, by)}
          onLeave={leave}
        />
      ))}
      {tabs?.length === 0 && !archived && <p class="muted pad">No terminal is open.</p>}
      {confirming && (
        <Dialog title={`Close ${shellLabel(confirming.info)}?`} onClose={() => setConfirming(undefined)}>
          <p>
            {openedBy(confirming.info)}Its shell and everything running in it stop, for everyone in #{channel} who has it open: someone else may be typing in it.
          </p>
          <div class="actions">
            <button type="button" class="btn btn-ghost" onClick={() => setConfirming(undefined)} autoFocus>
              Cancel
            </button>
            <button type="button" class="btn btn-danger" onClick={() => void close(confirming.info.id)}>
              Close the shell
            </button>
          </div>
        </Dialog>
      )}
    </div>
  );
}

/** One shell: its xterm.js screen, connected to the server while the shell runs, kept (with its scrollback) after it ends. */
function TerminalPane({
  id,
  label,
  visible,
  ending,
  focus,
  describe,
  onEnded,
  onLeave,
  channelId,
}: {
  id: number;
  /** The channel the shell belongs to: the server attaches this pane to nothing else. */
  channelId: number;
  label: string;
  visible: boolean;
  ending: Ending | undefined;
  /** Asks for the focus each time it grows (0: never asked). */
  focus: number;
  /** The line written under the scrollback when the shell ends with this exit code. */
  describe: (exitCode: number | null | undefined, closedBy?: string) => string;
  onEnded: (exitCode: number | null | undefined, closedBy?: string) => void;
  onLeave: () => void;
}) {
  const host = useRef<HTMLDivElement>(null);
  const [state, setState] = useState<"connecting" | "live" | "reconnecting" | "ended">("connecting");
  const handle = useRef<{ fit: () => void; focus: () => void; stop: () => void } | undefined>(undefined);
  // The socket's handlers outlive a render: they call the latest props.
  const props = useRef({ describe, onEnded, onLeave });
  props.current = { describe, onEnded, onLeave };

  useEffect(() => {
    const el = host.current;
    if (!el) return;
    const styles = getComputedStyle(document.documentElement);
    const term = new XTerm({
      cursorBlink: true,
      fontFamily: styles.getPropertyValue("--mono").trim() || "monospace",
      fontSize: 13.5,
      lineHeight: 1.2,
      scrollback: 5000,
      theme: {
        background: styles.getPropertyValue("--term-bg").trim() || "#15171c",
        foreground: styles.getPropertyValue("--term-fg").trim() || "#e6e6e6",
        cursor: styles.getPropertyValue("--accent").trim() || "#5b8def",
      },
    });
    const fit = new FitAddon();
    term.loadAddon(fit);
    term.open(el);
    term.textarea?.setAttribute("aria-label", `${label} input`);
    term.textarea?.setAttribute("aria-describedby", "terminal-keys");
    let socket: WebSocket | undefined;
    // An Escape is held back a moment: sent on unless a Tab follows (the
    // way out), so leaving never leaves a stray Escape in the shell.
    const leaves = leaveKeys(() => {
      if (socket?.readyState === WebSocket.OPEN) socket.send(encoder.encode("\x1b"));
    });
    term.attachCustomKeyEventHandler((e) => {
      if (e.type !== "keydown") return true;
      const verdict = leaves(e);
      if (verdict === "shell") return true;
      e.preventDefault();
      if (verdict === "leave") props.current.onLeave();
      return false;
    });
    let attempt = 0;
    let ended = false;
    let retry: ReturnType<typeof setTimeout> | undefined;
    const encoder = new TextEncoder();

    const sendSize = () => {
      if (socket?.readyState === WebSocket.OPEN) socket.send(JSON.stringify({ type: "resize", rows: term.rows, cols: term.cols }));
    };
    const connect = () => {
      const scheme = location.protocol === "https:" ? "wss:" : "ws:";
      // The channel too: after a restart this id may be another channel's shell.
      const ws = new WebSocket(`${scheme}//${location.host}/api/terminals/${id}/ws?channel=${channelId}`);
      ws.binaryType = "arraybuffer";
      socket = ws;
      let first = true;
      ws.onopen = () => {
        attempt = 0;
        setState("live");
        sendSize();
      };
      ws.onmessage = (m) => {
        if (typeof m.data === "string") {
          try {
            const control = JSON.parse(m.data) as { type?: string; exit_code?: number | null; closed_by?: number | null };
            if (control.type === "closed") {
              const by = personName(control.closed_by);
              ended = true;
              setState("ended");
              // Kept to be read, not typed into.
              term.options.disableStdin = true;
              term.options.cursorBlink = false;
              term.write(`\r\n\x1b[3m[${props.current.describe(control.exit_code, by)}]\x1b[0m\r\n`);
              props.current.onEnded(control.exit_code, by);
            }
          } catch {
            // Not a control message.
          }
          return;
        }
        if (first) {
          // The scrollback replaces what was shown before a reconnect.
          term.reset();
          first = false;
        }
        term.write(new Uint8Array(m.data as ArrayBuffer));
      };
      ws.onclose = (close) => {
        if (socket !== ws || ended) return;
        if (close.code === 4001 || close.code === 4004) {
          setState("ended");
          if (close.code === 4004) props.current.onEnded(null);
          return;
        }
        setState("reconnecting");
        retry = setTimeout(connect, backoff(attempt++));
      };
    };
    const input = term.onData((data) => {
      if (socket?.readyState === WebSocket.OPEN) socket.send(encoder.encode(data));
    });
    const resized = term.onResize(() => sendSize());
    const observer = new ResizeObserver(() => {
      if (el.offsetWidth > 0 && el.offsetHeight > 0) {
        try {
          fit.fit();
        } catch {
          // Not laid out yet.
        }
      }
    });
    observer.observe(el);
    handle.current = {
      fit: () => fit.fit(),
      focus: () => term.focus(),
      // Ended as the list or an event says: no more reconnecting, no typing.
      stop: () => {
        ended = true;
        if (retry) clearTimeout(retry);
        socket?.close();
        term.options.disableStdin = true;
        term.options.cursorBlink = false;
        setState("ended");
      },
    };
    connect();
    return () => {
      ended = true;
      if (retry) clearTimeout(retry);
      observer.disconnect();
      input.dispose();
      resized.dispose();
      socket?.close();
      term.dispose();
    };
  }, [id]);

  useEffect(() => {
    if (ending) handle.current?.stop();
  }, [ending]);

  // The focus moves in only when the person asked for this shell (not when
  // the view opens: the keyboard would land in the shell unasked).
  useEffect(() => {
    if (visible && focus > 0) requestAnimationFrame(() => handle.current?.focus());
  }, [focus]);

  return (
    <div id={`terminal-${id}`} role="region" class={visible ? "terminal-pane" : "terminal-pane hidden"} aria-label={`Terminal: ${label}`}>
      {ending ? (
        <p class="terminal-ended" role="status">
          {endingNote(ending)}
        </p>
      ) : (
        state !== "live" && <p class="terminal-state muted small">{state === "connecting" ? "Connecting…" : state === "reconnecting" ? "Reconnecting…" : "This shell has ended."}</p>
      )}
      <div ref={host} class="terminal-host" />
    </div>
  );
}

/** A person's shown name by id; undefined for none (a shell no person closed). */
function personName(id: number | null | undefined): string | undefined {
  if (id === null || id === undefined) return undefined;
  const user = userById(id);
  return user ? user.display_name || user.name : "someone";
}

/** "Opened by Bob. " for the close dialog, when another person opened it. */
function openedBy(info: TerminalInfo): string {
  const id = info.opened_by;
  if (id === null || id === undefined || id === me.value?.id) return "";
  return `Opened by ${personName(id)}. `;
}

/** The server's words as a sentence of the page: a capital first, a full stop last. */
function asSentence(words: string): string {
  const text = sentenceStart(words.trim());
  return /[.!?]$/.test(text) ? text : `${text}.`;
}
