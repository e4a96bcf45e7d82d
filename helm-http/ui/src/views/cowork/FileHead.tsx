// The open file's header (its name, path, save state and actions) and the
// live-change pieces both kinds of open file share: "Updated by @agent"
// for a few seconds, and the bar over a file changed on disk while it had
// unsaved edits here.
import type { ComponentChildren } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { Icon } from "../../components/Icon";
import { MODE_INFO, baseName, type Mode } from "../../lib/cowork";
import { sentenceStart } from "../../lib/format";
import { coworkModePath } from "../../state/router";
import { MODE_ICON } from "./Rail";

/** How long "Updated by @agent" stays in a file's header. */
const UPDATED_MS = 5000;

/** The open file's header: its name and path, what is saved, and its actions. */
export function FileHead({
  channel,
  mode,
  path,
  archived,
  tools,
  status,
  updatedBy,
  save,
  onRename,
  onDelete,
}: {
  channel: string;
  mode: Mode;
  path: string;
  archived: boolean;
  tools: ComponentChildren;
  status?: ComponentChildren;
  /** Who just changed the file on disk (shown for a few seconds). */
  updatedBy?: string;
  save?: ComponentChildren;
  onRename: () => void;
  onDelete: () => void;
}) {
  return (
    <header class="cowork-head">
      <a class="icon-button phone-only" href={coworkModePath(channel, mode)} aria-label={`Back to ${MODE_INFO[mode].label}`}>
        <Icon name="back" />
      </a>
      <Icon name={MODE_ICON[mode]} size={20} class="cowork-head-icon" />
      <div class="cowork-title">
        <h2>{baseName(path)}</h2>
        <p class="muted small">
          <span class="cowork-path">{path}</span>
          {status}
          <span class="live-updated" role="status">
            {updatedBy && ` · Updated by ${updatedBy}`}
          </span>
        </p>
      </div>
      <div class="toolbar-actions">
        {save}
        {!archived && (
          <>
            <button type="button" class="btn btn-small" onClick={onRename}>
              Rename
            </button>
            <button type="button" class="btn btn-small btn-danger-quiet" onClick={onDelete} aria-label={`Delete ${baseName(path)}`}>
              <Icon name="trash" size={15} />
            </button>
          </>
        )}
        {tools}
      </div>
    </header>
  );
}

/** The file changed on disk while the person had unsaved edits (or it went away). */
export interface Conflict {
  by: string;
  /** What is on disk now; undefined when the file was removed. */
  content?: string;
  truncated?: boolean;
  /** Its version (what a save over it names as its base). */
  version?: string;
}

/** "Updated by @agent" for a few seconds, then nothing. */
export function useFlash(): [string | undefined, (by: string) => void] {
  const [shown, setShown] = useState<string>();
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useEffect(() => () => clearTimeout(timer.current), []);
  const flash = (by: string) => {
    clearTimeout(timer.current);
    setShown(by);
    timer.current = setTimeout(() => setShown(undefined), UPDATED_MS);
  };
  return [shown, flash];
}

/** The bar over a file someone else changed while it had unsaved edits here. */
export function ConflictBar({ conflict, onReload, onKeep }: { conflict: Conflict; onReload?: () => void; onKeep: () => void }) {
  const removed = conflict.content === undefined && !onReload;
  return (
    <div class="live-conflict" role="alert">
      <p>
        <strong>
          {sentenceStart(conflict.by)} {removed ? "removed this file." : "changed this file."}
        </strong>{" "}
        {removed ? "Your edits are still here: saving puts the file back." : "Your edits here are not saved."}
      </p>
      <div class="live-conflict-actions">
        {onReload && (
          <button type="button" class="btn btn-small" onClick={onReload}>
            Reload (discard your edits)
          </button>
        )}
        <button type="button" class="btn btn-small btn-primary" onClick={onKeep}>
          Keep mine
        </button>
      </div>
    </div>
  );
}
