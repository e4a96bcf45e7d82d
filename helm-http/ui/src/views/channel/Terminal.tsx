// Terminals in the channel's computer (this module and xterm.js load only
// when the view opens). Several tabs, each a shell in /workspace; a reload
// reconnects to the same shells and the server replays their scrollback;
// the terminal follows the size of its pane.
import { FitAddon } from "@xterm/addon-fit";
import { Terminal as XTerm } from "@xterm/xterm";
import { useEffect, useRef, useState } from "preact/hooks";
import { api, describeError } from "../../api/client";
import type { Terminal as TerminalInfo } from "../../api/types";
import { ErrorNote } from "../../components/Field";
import { Icon } from "../../components/Icon";
import { backoff } from "../../socket/events";
import type { ChannelEntry } from "../../state/channels";
import { toast } from "../../state/toasts";

export function Terminal({ entry }: { entry: ChannelEntry }) {
  const channel = entry.channel.name;
  const [terminals, setTerminals] = useState<TerminalInfo[]>();
  const [current, setCurrent] = useState<number>();
  const [error, setError] = useState<string>();
  const archived = entry.channel.status === "archived";

  /** The channel's running terminals; nothing (undefined) once `current` says the view moved on. */
  const load = async (current: () => boolean = () => true) => {
    try {
      const list = (await api.get("/api/channels/{channel}/terminals", { path: { channel } })).filter((t) => t.running);
      if (!current()) return undefined;
      setTerminals(list);
      setCurrent((c) => (c !== undefined && list.some((t) => t.id === c) ? c : list[0]?.id));
      return list;
    } catch (e) {
      if (!current()) return undefined;
      setError(describeError(e));
      return [];
    }
  };

  const open = async () => {
    setError(undefined);
    try {
      const made = await api.post("/api/channels/{channel}/terminals", { path: { channel }, body: { rows: 24, cols: 100 } });
      setTerminals((list) => [...(list ?? []), made]);
      setCurrent(made.id);
    } catch (e) {
      setError(describeError(e));
    }
  };

  const close = async (id: number) => {
    try {
      await api.delete("/api/terminals/{id}", { path: { id } });
    } catch (e) {
      toast(describeError(e), "error");
    }
    const list = await load();
    if (list?.length === 0) setCurrent(undefined);
  };

  // Another channel's list, answered after a switch, would show its shells
  // here and open one there: only the shown channel's answer counts.
  useEffect(() => {
    let current = true;
    setTerminals(undefined);
    setCurrent(undefined);
    void load(() => current).then((list) => {
      if (current && list?.length === 0 && !archived) void open();
    });
    return () => {
      current = false;
    };
  }, [channel]);

  return (
    <div class="terminals">
      <div class="terminal-tabs" role="group" aria-label="Terminals">
        {(terminals ?? []).map((t, i) => (
          <div key={t.id} class={t.id === current ? "terminal-tab current" : "terminal-tab"}>
            <button type="button" class="terminal-switch" aria-pressed={t.id === current} aria-controls={`terminal-${t.id}`} onClick={() => setCurrent(t.id)}>
              <Icon name="terminal" size={14} /> Shell {i + 1}
              <span class="muted small">{t.isolation}</span>
            </button>
            <button type="button" class="icon-button small" aria-label={`Close shell ${i + 1}`} onClick={() => void close(t.id)}>
              <Icon name="close" size={12} />
            </button>
          </div>
        ))}
        <button type="button" class="btn btn-small btn-ghost" onClick={() => void open()} disabled={archived}>
          <Icon name="plus" size={14} /> New terminal
        </button>
      </div>
      <ErrorNote error={error} />
      {archived && <p class="muted pad">This channel is archived, so its computer is off. Restore it to open a terminal.</p>}
      {(terminals ?? []).map((t) => (
        <TerminalPane key={t.id} id={t.id} visible={t.id === current} onEnded={() => void load()} />
      ))}
      {terminals?.length === 0 && !archived && <p class="muted pad">No terminal is open.</p>}
    </div>
  );
}

function TerminalPane({ id, visible, onEnded }: { id: number; visible: boolean; onEnded: () => void }) {
  const host = useRef<HTMLDivElement>(null);
  const [state, setState] = useState<"connecting" | "live" | "reconnecting" | "ended">("connecting");
  const handle = useRef<{ fit: () => void; focus: () => void } | undefined>(undefined);

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
    term.textarea?.setAttribute("aria-label", "Terminal input");
    let socket: WebSocket | undefined;
    let attempt = 0;
    let ended = false;
    let retry: ReturnType<typeof setTimeout> | undefined;
    const encoder = new TextEncoder();

    const sendSize = () => {
      if (socket?.readyState === WebSocket.OPEN) socket.send(JSON.stringify({ type: "resize", rows: term.rows, cols: term.cols }));
    };
    const connect = () => {
      const scheme = location.protocol === "https:" ? "wss:" : "ws:";
      const ws = new WebSocket(`${scheme}//${location.host}/api/terminals/${id}/ws`);
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
            const control = JSON.parse(m.data) as { type?: string; exit_code?: number };
            if (control.type === "closed") {
              ended = true;
              setState("ended");
              term.write(`\r\n\x1b[2m[the shell ended${control.exit_code !== undefined ? ` with exit code ${control.exit_code}` : ""}]\x1b[0m\r\n`);
              onEnded();
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
    handle.current = { fit: () => fit.fit(), focus: () => term.focus() };
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
    if (visible) requestAnimationFrame(() => handle.current?.focus());
  }, [visible]);

  return (
    <div id={`terminal-${id}`} role="region" class={visible ? "terminal-pane" : "terminal-pane hidden"} aria-label={`Terminal ${id}`}>
      {state !== "live" && <p class="terminal-state muted small">{state === "connecting" ? "Connecting…" : state === "reconnecting" ? "Reconnecting…" : "This shell has ended."}</p>}
      <div ref={host} class="terminal-host" />
    </div>
  );
}
