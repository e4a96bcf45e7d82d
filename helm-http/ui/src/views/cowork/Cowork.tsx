// Cowork: the direct visual editing plane for the channel's files under
// /workspace/notes, whiteboards, code, docs and presentations, the same
// files the agent works on. One folder rail for every mode, the open file
// in its mode's editor, and an optional panel with the channel's agent.
// Loaded only when opened (with the whiteboard editor a chunk of its own).
//
// The route: /c/<channel>/cowork[?path=<file> | ?mode=<folder>].
//
// Here: the view, the route's choice of page, the dialogs, the leave
// guard and the agent panel's toggle. The open file is FileView.tsx (text)
// or BoardView.tsx (whiteboard), with FileHead.tsx; the pages without one
// are Home.tsx.
import type { ComponentChildren } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { Icon } from "../../components/Icon";
import { MODE_INFO, fitsMode, freeName, isMode, modeOfPath, workspacePath, type Mode } from "../../lib/cowork";
import type { ChannelEntry } from "../../state/channels";
import { coworkModePath, coworkPath, navigate, setLeaveGuard } from "../../state/router";
import { useWorkspaceChanges } from "../../state/workspace";
import { AgentPanel } from "./AgentPanel";
import { BoardView } from "./BoardView";
import { DeleteDialog, LeaveDialog, NewFileDialog, RenameDialog } from "./dialogs";
import { FileView } from "./FileView";
import { Elsewhere, Home, ModeHome } from "./Home";
import { Rail, useListings } from "./Rail";

const AGENT_KEY = "helm.cowork.agent";

function agentRemembered(): boolean {
  try {
    return localStorage.getItem(AGENT_KEY) === "open";
  } catch {
    return false;
  }
}

type DialogState = { kind: "new"; mode: Mode } | { kind: "rename" } | { kind: "delete" };

export function Cowork({ entry, path, mode }: { entry: ChannelEntry; path?: string; mode?: string }) {
  const channel = entry.channel.name;
  const archived = entry.channel.status === "archived";
  const target = path ? workspacePath(path) : undefined;
  const current: Mode | undefined = target ? modeOfPath(target) : isMode(mode) ? mode : undefined;
  const [version, setVersion] = useState(0);
  const refresh = () => setVersion((v) => v + 1);
  const lists = useListings(channel, version);
  // The agent works on these files too: while it works, each file it
  // writes (and each command it runs) lists the rail again, a quiet
  // moment after; the open file looks at the disk then too.
  const live = useWorkspaceChanges(entry.channel.id);
  useEffect(() => {
    if (live.tick > 0) refresh();
  }, [live.tick]);
  const agentName = `@${entry.agent.handle}`;
  // And when it goes back to ready, look again.
  const agentStatus = entry.agent.status;
  const settled = useRef(agentStatus);
  useEffect(() => {
    if (agentStatus === "ready" && settled.current !== "ready") refresh();
    settled.current = agentStatus;
  }, [agentStatus]);
  const [agentOpen, setAgentOpen] = useState(agentRemembered);
  const [dialog, setDialog] = useState<DialogState>();
  const [leaving, setLeaving] = useState<string>();
  // A file just made from a New … dialog: its editor takes the focus once
  // open (not the + that opened the dialog, where typing would open it again).
  const [made, setMade] = useState<string>();
  // The open file's unsaved state and its save, for leaving it.
  const dirty = useRef(false);
  const saver = useRef<(() => Promise<void>) | undefined>(undefined);

  useEffect(() => {
    setLeaveGuard((to) => {
      if (!dirty.current) return true;
      setLeaving(to);
      return false;
    });
    return () => setLeaveGuard(undefined);
  }, []);

  const toggleAgent = () => {
    const next = !agentOpen;
    setAgentOpen(next);
    try {
      localStorage.setItem(AGENT_KEY, next ? "open" : "closed");
    } catch {
      // Not remembered, then.
    }
  };

  const tools = (
    <button type="button" class={agentOpen ? "btn btn-small agent-toggle on" : "btn btn-small agent-toggle"} aria-pressed={agentOpen} onClick={toggleAgent} title="Show the channel's agent beside your work">
      <Icon name="panel" size={15} /> Agent
    </button>
  );

  const go = (to: string, replace = false) => {
    dirty.current = false;
    navigate(to, { replace, force: true });
  };

  const newFile = (m: Mode) => setDialog({ kind: "new", mode: m });
  const suggested = (m: Mode) => freeName(MODE_INFO[m].suggested, (lists[m].files ?? []).map((f) => f.name));

  let main: ComponentChildren;
  if (target && !current) {
    main = <Elsewhere channel={channel} path={target} tools={tools} />;
  } else if (target && current === "whiteboards" && fitsMode(target, "whiteboards")) {
    main = (
      <BoardView
        key={target}
        channel={channel}
        path={target}
        archived={archived}
        tools={tools}
        focusEditor={made === target}
        version={version}
        change={live}
        agentName={agentName}
        onRename={() => setDialog({ kind: "rename" })}
        onDelete={() => setDialog({ kind: "delete" })}
      />
    );
  } else if (target && current) {
    main = (
      <FileView
        key={target}
        channel={channel}
        path={target}
        mode={current}
        archived={archived}
        tools={tools}
        focusEditor={made === target}
        onState={(d, save) => {
          dirty.current = d;
          saver.current = save;
        }}
        onSaved={refresh}
        version={version}
        change={live}
        agentName={agentName}
        onRename={() => setDialog({ kind: "rename" })}
        onDelete={() => setDialog({ kind: "delete" })}
      />
    );
  } else if (current) {
    main = <ModeHome channel={channel} mode={current} list={lists[current]} archived={archived} tools={tools} onNew={() => newFile(current)} />;
  } else {
    main = <Home channel={channel} lists={lists} archived={archived} tools={tools} onNew={newFile} />;
  }

  const classes = ["cowork", target ? "has-file" : "", agentOpen ? "with-agent" : ""].filter(Boolean).join(" ");
  return (
    <div class={classes}>
      <Rail channel={channel} lists={lists} mode={current} open={target} archived={archived} version={version} onNew={newFile} />
      <div class="cowork-main">{main}</div>
      {agentOpen && <AgentPanel entry={entry} path={target} onClose={toggleAgent} />}
      {dialog?.kind === "new" && (
        <NewFileDialog
          channel={channel}
          mode={dialog.mode}
          suggested={suggested(dialog.mode)}
          onClose={() => setDialog(undefined)}
          onDone={(p) => {
            setDialog(undefined);
            setMade(workspacePath(p));
            refresh();
            navigate(coworkPath(channel, p));
          }}
        />
      )}
      {dialog?.kind === "rename" && target && current && (
        <RenameDialog
          channel={channel}
          mode={current}
          path={target}
          beforeMove={async () => {
            // Unsaved changes go with the file.
            if (dirty.current && saver.current) await saver.current();
            return true;
          }}
          onClose={() => setDialog(undefined)}
          onDone={(to) => {
            setDialog(undefined);
            refresh();
            go(coworkPath(channel, to), true);
          }}
        />
      )}
      {dialog?.kind === "delete" && target && current && (
        <DeleteDialog
          channel={channel}
          path={target}
          onClose={() => setDialog(undefined)}
          onDone={() => {
            setDialog(undefined);
            refresh();
            go(coworkModePath(channel, current), true);
          }}
        />
      )}
      {leaving !== undefined && target && (
        <LeaveDialog
          path={target}
          onClose={() => setLeaving(undefined)}
          onDiscard={() => {
            setLeaving(undefined);
            go(leaving);
          }}
          onSave={async () => {
            await saver.current?.();
            setLeaving(undefined);
            go(leaving);
          }}
        />
      )}
    </div>
  );
}
