// Cowork's one folder rail: each work mode with its folder's files (Notes
// newest first, Code as a tree of folders), the open file marked, and a
// "New …" action per mode. A mode whose folder does not exist yet shows
// empty: making its first file makes the folder.
import { useEffect, useState } from "preact/hooks";
import { api, describeError } from "../../api/client";
import type { FileEntry } from "../../api/types";
import { Icon, type IconName } from "../../components/Icon";
import { Time } from "../../components/Time";
import { entryQuietly, listQuietly } from "../../lib/files";
import { MODES, MODE_INFO, ROOT, fitsMode, modeFolder, type Mode } from "../../lib/cowork";
import { coworkModePath, coworkPath, filesPath } from "../../state/router";

export const MODE_ICON: Record<Mode, IconName> = {
  notes: "note",
  whiteboards: "whiteboard",
  code: "code",
  docs: "doc",
  presentations: "slides",
};

export interface Listing {
  /** The mode's files (for Code: the folder's entries, folders first); undefined while loading. */
  files?: FileEntry[];
  /** Files there that this mode does not edit (shown in Files). */
  others: number;
  error?: string;
}

export { listQuietly };

/** Whether `path` exists (without asking for anything missing). */
export async function existsQuietly(channel: string, path: string): Promise<boolean> {
  return (await entryQuietly(channel, path)) !== undefined;
}

async function listFolder(channel: string, path: string): Promise<FileEntry[]> {
  return api.get("/api/channels/{channel}/files", { path: { channel }, query: { path } });
}

const byName = (a: FileEntry, b: FileEntry) => Number(b.kind === "dir") - Number(a.kind === "dir") || a.name.localeCompare(b.name);
const newestFirst = (a: FileEntry, b: FileEntry) => (b.modified ?? "").localeCompare(a.modified ?? "") || a.name.localeCompare(b.name);

/** Every mode's folder, listed again when `version` changes. */
export function useListings(channel: string, version: number): Record<Mode, Listing> {
  const [lists, setLists] = useState<Record<Mode, Listing>>(() => Object.fromEntries(MODES.map((m) => [m, { others: 0 }])) as Record<Mode, Listing>);
  useEffect(() => {
    let live = true;
    const failed = (e: unknown) => live && setLists((l) => Object.fromEntries(MODES.map((m) => [m, { ...l[m], error: describeError(e) }])) as Record<Mode, Listing>);
    // The workspace first: a mode's folder may not be made yet.
    listFolder(channel, ROOT)
      .then((top) => {
        for (const mode of MODES) {
          const made = top.some((e) => e.name === mode && e.kind === "dir");
          (made ? listFolder(channel, modeFolder(mode)) : Promise.resolve([]))
            .then((entries) => {
              if (!live) return;
              const files = mode === "code" ? entries.slice().sort(byName) : entries.filter((e) => e.kind === "file" && fitsMode(e.path, mode)).sort(mode === "notes" ? newestFirst : byName);
              const others = mode === "code" ? 0 : entries.filter((e) => !(e.kind === "file" && fitsMode(e.path, mode))).length;
              setLists((l) => ({ ...l, [mode]: { files, others } }));
            })
            .catch((e) => live && setLists((l) => ({ ...l, [mode]: { ...l[mode], error: describeError(e) } })));
        }
      })
      .catch(failed);
    return () => {
      live = false;
    };
  }, [channel, version]);
  return lists;
}

export function Rail({
  channel,
  lists,
  mode,
  open,
  archived,
  version,
  onNew,
}: {
  channel: string;
  lists: Record<Mode, Listing>;
  /** The mode shown. */
  mode?: Mode;
  /** The open file's path. */
  open?: string;
  archived: boolean;
  version: number;
  onNew: (mode: Mode) => void;
}) {
  return (
    <nav class="cowork-rail" aria-label="Cowork folders">
      {MODES.map((m) => {
        const info = MODE_INFO[m];
        const list = lists[m];
        const headId = `rail-${m}`;
        return (
          <section key={m} class={m === mode ? "rail-section current" : "rail-section"} aria-labelledby={headId}>
            <div class="rail-head">
              <a id={headId} class="rail-mode" href={coworkModePath(channel, m)} aria-current={m === mode && !open ? "page" : undefined}>
                <Icon name={MODE_ICON[m]} size={16} />
                <span>{info.label}</span>
                {list.files && list.files.length > 0 && <span class="rail-count">{list.files.length}</span>}
              </a>
              {!archived && (
                <button type="button" class="icon-button small" aria-label={`New ${info.noun}`} title={`New ${info.noun}`} onClick={() => onNew(m)}>
                  <Icon name="plus" size={16} />
                </button>
              )}
            </div>
            {list.error ? (
              <p class="rail-note error-text">{list.error}</p>
            ) : list.files === undefined ? (
              <p class="rail-note muted">Loading…</p>
            ) : list.files.length === 0 ? (
              <p class="rail-note muted">
                No {info.noun}s yet.
                {!archived && (
                  <>
                    {" "}
                    <button type="button" class="link-like" onClick={() => onNew(m)}>
                      New {info.noun}
                    </button>
                  </>
                )}
              </p>
            ) : m === "code" ? (
              <CodeTree channel={channel} entries={list.files} open={open} version={version} />
            ) : (
              <ul class="rail-files" aria-label={`${info.label} files`}>
                {list.files.map((f) => (
                  <li key={f.path}>
                    <a class="rail-file" href={coworkPath(channel, f.path)} aria-current={f.path === open ? "page" : undefined}>
                      <span class="rail-name">{f.name}</span>
                      {m === "notes" && f.modified && (
                        <span class="rail-time">
                          <Time at={f.modified} />
                        </span>
                      )}
                    </a>
                  </li>
                ))}
              </ul>
            )}
            {list.others > 0 && (
              <a class="rail-note small" href={filesPath(channel, modeFolder(m))}>
                {list.others === 1 ? "1 other item" : `${list.others} other items`} in Files
              </a>
            )}
          </section>
        );
      })}
    </nav>
  );
}

/** Code's folders, opened one level at a time; the open file's folders start open. */
function CodeTree({ channel, entries, open, version }: { channel: string; entries: FileEntry[]; open?: string; version: number }) {
  const [expanded, setExpanded] = useState<Set<string>>(new Set());
  const [children, setChildren] = useState<Record<string, FileEntry[] | string>>({});

  // Open the folders holding the open file.
  useEffect(() => {
    if (!open?.startsWith(`${modeFolder("code")}/`)) return;
    const parts = open.split("/");
    const dirs: string[] = [];
    for (let i = 4; i < parts.length; i++) dirs.push(parts.slice(0, i).join("/"));
    if (dirs.some((d) => !expanded.has(d))) setExpanded((s) => new Set([...s, ...dirs]));
  }, [open]);

  // Load what is expanded (again, when the rail refreshes).
  // A listing answered after a newer one was asked (a create or delete
  // refreshed the rail meanwhile) would show the folder as it was: dropped.
  useEffect(() => {
    let current = true;
    for (const dir of expanded) {
      listFolder(channel, dir)
        .then((list) => current && setChildren((c) => ({ ...c, [dir]: list.slice().sort(byName) })))
        .catch((e) => current && setChildren((c) => ({ ...c, [dir]: describeError(e) })));
    }
    return () => {
      current = false;
    };
  }, [expanded, version, channel]);

  const toggle = (dir: string) =>
    setExpanded((s) => {
      const next = new Set(s);
      if (next.has(dir)) next.delete(dir);
      else next.add(dir);
      return next;
    });

  const level = (list: FileEntry[], depth: number, label?: string) => (
    <ul class="rail-files" aria-label={label}>
      {list.map((f) => {
        if (f.kind === "dir") {
          const isOpen = expanded.has(f.path);
          const inside = children[f.path];
          return (
            <li key={f.path}>
              <button type="button" class="rail-file rail-dir" aria-expanded={isOpen} onClick={() => toggle(f.path)} style={{ paddingLeft: `${12 + depth * 14}px` }}>
                <Icon name={isOpen ? "down" : "chevron"} size={14} />
                <span class="rail-name">{f.name}</span>
              </button>
              {isOpen &&
                (typeof inside === "string" ? (
                  <p class="rail-note error-text">{inside}</p>
                ) : inside === undefined ? (
                  <p class="rail-note muted">Loading…</p>
                ) : inside.length === 0 ? (
                  <p class="rail-note muted">Empty folder</p>
                ) : (
                  level(inside, depth + 1, `In ${f.name}`)
                ))}
            </li>
          );
        }
        return (
          <li key={f.path}>
            <a class="rail-file" href={coworkPath(channel, f.path)} aria-current={f.path === open ? "page" : undefined} style={{ paddingLeft: `${32 + depth * 14}px` }}>
              <span class="rail-name">{f.name}</span>
            </a>
          </li>
        );
      })}
    </ul>
  );
  return level(entries, 0, "Code files");
}
