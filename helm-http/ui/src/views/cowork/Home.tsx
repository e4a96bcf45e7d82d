// Cowork's pages without an open file: the front (the five modes), a
// mode's folder (its files as cards), and a path outside Cowork's folders.
import type { ComponentChildren } from "preact";
import { ErrorNote } from "../../components/Field";
import { Icon } from "../../components/Icon";
import { Time } from "../../components/Time";
import { MODES, MODE_INFO, modeFolder, type Mode } from "../../lib/cowork";
import { channelPath, coworkModePath, coworkPath, filesPath } from "../../state/router";
import { MODE_ICON, type Listing } from "./Rail";

/** A path outside Cowork's folders: said, with the way to Files. */
export function Elsewhere({ channel, path, tools }: { channel: string; path: string; tools: ComponentChildren }) {
  return (
    <div class="cowork-home">
      <header class="cowork-home-head">
        <div>
          <h2>Not a Cowork file</h2>
          <p class="muted">
            <code>{path}</code> is outside Cowork's folders ({MODES.map((m) => modeFolder(m).slice("/workspace/".length)).join(", ")}).
          </p>
        </div>
        <div class="toolbar-actions">{tools}</div>
      </header>
      <a class="btn btn-small" href={filesPath(channel, path)}>
        Open it in Files
      </a>
    </div>
  );
}

/** A mode's folder: its files as cards, and the way to a new one. */
export function ModeHome({ channel, mode, list, archived, tools, onNew }: { channel: string; mode: Mode; list: Listing; archived: boolean; tools: ComponentChildren; onNew: () => void }) {
  const info = MODE_INFO[mode];
  const files = (list.files ?? []).filter((f) => f.kind === "file");
  return (
    <div class="cowork-home">
      <header class="cowork-home-head">
        <div>
          <h2>
            <Icon name={MODE_ICON[mode]} size={20} class="cowork-head-icon" /> {info.label}
          </h2>
          <p class="muted">
            {info.blurb} In <code>{modeFolder(mode)}</code>, where the agent sees them too.
          </p>
        </div>
        <div class="toolbar-actions">
          {!archived && (
            <button type="button" class="btn btn-small btn-primary" onClick={onNew}>
              <Icon name="plus" size={15} /> New {info.noun}
            </button>
          )}
          {tools}
        </div>
      </header>
      <ErrorNote error={list.error} />
      {list.files !== undefined && files.length === 0 && (
        <div class="cowork-empty">
          <Icon name={MODE_ICON[mode]} size={28} />
          <p>
            No {info.noun}s yet{mode === "code" && (list.files?.length ?? 0) > 0 ? " at the top of the folder: open its folders in the rail" : ""}.
            {!archived && ` Make the first one, or ask the agent to.`}
          </p>
        </div>
      )}
      {files.length > 0 && (
        <ul class="cowork-cards" aria-label={`${info.label} files`}>
          {files.map((f) => (
            <li key={f.path}>
              <a class="cowork-card" href={coworkPath(channel, f.path)}>
                <Icon name={MODE_ICON[mode]} size={18} />
                <span class="cowork-card-name">{f.name}</span>
                {f.modified && (
                  <span class="muted small">
                    changed <Time at={f.modified} />
                  </span>
                )}
              </a>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** Cowork's front: the five modes, what each holds, a new file of each. */
export function Home({ channel, lists, archived, tools, onNew }: { channel: string; lists: Record<Mode, Listing>; archived: boolean; tools: ComponentChildren; onNew: (m: Mode) => void }) {
  return (
    <div class="cowork-home">
      <header class="cowork-home-head">
        <div>
          <h2>Cowork</h2>
          <p class="muted">
            Edit the channel's notes, whiteboards, code, docs and presentations directly. They are files under <code>/workspace</code>: the agent works on
            the same ones. Open the agent panel to ask it about the file in front of you.
          </p>
        </div>
        <div class="toolbar-actions">{tools}</div>
      </header>
      <ul class="cowork-modes" aria-label="Work modes">
        {MODES.map((m) => {
          const info = MODE_INFO[m];
          const count = lists[m].files?.filter((f) => f.kind === "file").length;
          return (
            <li key={m} class="cowork-mode-card">
              <a href={coworkModePath(channel, m)} class="cowork-mode-link">
                <Icon name={MODE_ICON[m]} size={22} />
                <span class="cowork-mode-name">{info.label}</span>
              </a>
              <p class="muted small">{info.blurb}</p>
              <p class="muted small">{count === undefined ? "…" : count === 0 ? `No ${info.noun}s yet` : count === 1 ? `1 ${info.noun}` : `${count} ${info.noun}s`}</p>
              {!archived && (
                <button type="button" class="btn btn-small" onClick={() => onNew(m)}>
                  <Icon name="plus" size={14} /> New {info.noun}
                </button>
              )}
            </li>
          );
        })}
      </ul>
      <p class="muted small">
        Prefer the whole workspace? <a href={filesPath(channel)}>Files</a> shows every folder; <a href={channelPath(channel)}>Chat</a> has every thread.
      </p>
    </div>
  );
}
