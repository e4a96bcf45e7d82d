// The channel's workspace as a two-pane browser: folders and files on the
// left, the chosen file on the right (text, Markdown rendered, images),
// editable in place. Upload (button or drop), new folder, rename, delete,
// download. A file an agent made links to the thread that made it; one a
// person uploaded says so.
import { lazy, Suspense } from "preact/compat";
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { ApiError, api, describeError, urlFor, type IfExists } from "../../api/client";
import type { Artifact, FileEntry, FileText } from "../../api/types";
import { Dialog } from "../../components/Dialog";
import { ErrorNote, Field } from "../../components/Field";
import { Icon } from "../../components/Icon";
import { Markdown } from "../../components/Markdown";
import { Time } from "../../components/Time";
import { FILE_ROWS_PER_PAGE, listQuietly, rowsShown, sameStamp } from "../../lib/files";
import { bytes, plural } from "../../lib/format";
import { useRetryOnReconnect } from "../../lib/reconnect";
import type { ChannelEntry } from "../../state/channels";
import { channelPath, filesPath, navigate } from "../../state/router";
import { threadSignal } from "../../state/threads";
import { toast } from "../../state/toasts";
import { useWorkspaceChanges } from "../../state/workspace";

const Editor = lazy(() => import("./Editor").then((m) => ({ default: m.Editor })));

const ROOT = "/workspace";
const IMAGE = /\.(png|jpe?g|gif|webp|svg|bmp|ico)$/i;
const MARKDOWN = /\.(md|markdown)$/i;

function parent(path: string): string {
  const cut = path.replace(/\/+$/, "").lastIndexOf("/");
  return cut <= 0 ? ROOT : path.slice(0, cut) || ROOT;
}

/** Folders first, then by name. */
function folderOrder(list: FileEntry[]): FileEntry[] {
  return list.slice().sort((a, b) => Number(b.kind === "dir") - Number(a.kind === "dir") || a.name.localeCompare(b.name));
}

function join(dir: string, name: string): string {
  return `${dir.replace(/\/+$/, "")}/${name}`;
}

/** How a file came to be, as its tag in the list says it (by the API's `kind`). */
const ORIGIN: Record<Artifact["kind"], { tag: string; title: string }> = {
  file: { tag: "artifact", title: "Made by the channel's work" },
  upload: { tag: "upload", title: "Uploaded by a person" },
  link: { tag: "link", title: "A link the channel's work recorded" },
};

export function Files({ entry, path }: { entry: ChannelEntry; path?: string }) {
  const channel = entry.channel.name;
  const archived = entry.channel.status === "archived";
  const [dir, setDir] = useState(ROOT);
  const [selected, setSelected] = useState<FileEntry>();
  const [entries, setEntries] = useState<FileEntry[]>();
  const [artifacts, setArtifacts] = useState<Artifact[]>([]);
  const [error, setError] = useState<string>();
  const [dialog, setDialog] = useState<"mkdir" | "rename" | "delete" | "rename-dir" | "delete-dir" | undefined>();
  const [version, setVersion] = useState(0);
  // Bumped to load again after a failure (Retry, or the server coming back).
  const [attempt, setAttempt] = useState(0);

  // The URL names a directory or a file; a file opens in its directory. An
  // answer about an address left since (two clicks in a row) is dropped.
  useEffect(() => {
    let current = true;
    const target = path ?? ROOT;
    api
      .get("/api/channels/{channel}/files/stat", { path: { channel }, query: { path: target } })
      .then((stat) => {
        if (!current) return;
        if (stat.kind === "dir") {
          setDir(stat.path);
          setSelected(undefined);
        } else {
          setDir(parent(stat.path));
          setSelected(stat);
        }
      })
      .catch((e) => {
        if (!current) return;
        setError(e instanceof ApiError && e.status === 404 ? `${target} is not in this workspace (any more).` : describeError(e));
        setDir(ROOT);
      });
    return () => {
      current = false;
    };
  }, [path, channel, attempt]);

  // The list first read is of ROOT, before the URL's folder is known: an
  // answer for a folder no longer shown is dropped, or it could land last
  // and show ROOT's contents under the folder's name.
  useEffect(() => {
    let current = true;
    setEntries(undefined);
    api
      .get("/api/channels/{channel}/files", { path: { channel }, query: { path: dir } })
      .then((list) => {
        if (!current) return;
        setEntries(folderOrder(list));
        setError(undefined);
      })
      .catch((e) => current && setError(describeError(e)));
    api
      .get("/api/channels/{channel}/artifacts", { path: { channel } })
      .then((list) => current && setArtifacts(list))
      .catch(() => undefined);
    return () => {
      current = false;
    };
  }, [dir, channel, version, attempt]);

  // The agent writes files while it works: a quiet moment after each
  // change, the folder is listed again in place (no "Loading…"), and the
  // open file's new time and size reach its preview, which reads it again.
  const live = useWorkspaceChanges(entry.channel.id);
  const liveBy = live.by ?? `@${entry.agent.handle}`;
  const shownDir = useRef(dir);
  shownDir.current = dir;
  useEffect(() => {
    if (live.tick === 0) return;
    let current = true;
    const asked = dir;
    listQuietly(channel, asked)
      .then((list) => {
        if (!current || !list || shownDir.current !== asked) return;
        setEntries(folderOrder(list));
        setSelected((s) => {
          const now = s && list.find((e) => e.path === s.path);
          return now && !sameStamp(now, s) ? now : s;
        });
      })
      .catch(() => undefined);
    api
      .get("/api/channels/{channel}/artifacts", { path: { channel } })
      .then((list) => current && setArtifacts(list))
      .catch(() => undefined);
    return () => {
      current = false;
    };
  }, [live.tick]);

  const byPath = useMemo(() => new Map(artifacts.map((a) => [a.path, a])), [artifacts]);
  // Rows asked for in this folder ("Show more"); another folder starts at one page.
  const [asked, setAsked] = useState({ dir, rows: FILE_ROWS_PER_PAGE });
  const selectedAt = useMemo(() => (selected && entries ? entries.findIndex((e) => e.path === selected.path) : -1), [entries, selected?.path]);
  const shownRows = entries ? rowsShown(entries.length, asked.dir === dir ? asked.rows : FILE_ROWS_PER_PAGE, selectedAt) : 0;
  const listRef = useRef<HTMLUListElement>(null);
  // The open file's row in view (a link to a file far down a big folder).
  useEffect(() => {
    if (selectedAt >= 0) listRef.current?.querySelector<HTMLElement>(`li[data-row="${selectedAt}"]`)?.scrollIntoView({ block: "nearest" });
  }, [selectedAt]);
  const showMore = () => {
    const from = shownRows;
    setAsked({ dir, rows: from + FILE_ROWS_PER_PAGE });
    // A keyboard user goes on from the first row added, not back to the top.
    requestAnimationFrame(() => listRef.current?.querySelector<HTMLElement>(`li[data-row="${from}"] a`)?.focus());
  };
  const refresh = () => setVersion((v) => v + 1);
  const retry = () => {
    setError(undefined);
    setAttempt((a) => a + 1);
  };
  useRetryOnReconnect(error !== undefined, retry);

  // After a save: the list, and the open file's size and time, from the server.
  const saved = (file: FileEntry) => {
    refresh();
    api
      .get("/api/channels/{channel}/files/stat", { path: { channel }, query: { path: file.path } })
      .then((stat) => setSelected((s) => (s?.path === stat.path ? stat : s)))
      .catch(() => undefined);
  };
  const open = (e: FileEntry) => navigate(filesPath(channel, e.path));

  // An upload never replaces a file unasked: a taken name refuses it whole
  // first, and the person chooses to replace or keep both.
  const [clash, setClash] = useState<{ files: File[]; message: string }>();
  const upload = async (files: File[], exists: IfExists = "refuse") => {
    if (files.length === 0) return;
    try {
      const done = await api.upload(channel, files, dir, exists);
      const renamed = done.filter((u, i) => u.file.name !== files[i]?.name).map((u) => u.file.name);
      toast(`Uploaded ${plural(files.length, "file")} to ${dir}${renamed.length ? ` (as ${renamed.join(", ")})` : ""}.`);
      refresh();
    } catch (e) {
      if (exists === "refuse" && e instanceof ApiError && e.code === "conflict") setClash({ files, message: e.message });
      else toast(describeError(e), "error");
    }
  };

  const crumbs = dir.split("/").filter(Boolean);
  // The open folder, for its own Rename and Delete (a click on a folder
  // opens it, so the folder is acted on from inside it).
  const folder: FileEntry | undefined = dir === ROOT ? undefined : { path: dir, name: crumbs[crumbs.length - 1] ?? dir, kind: "dir", size: 0, mode: 0, links: 0 };
  return (
    <div
      // has-file: on a phone the list and the open file take turns (see views.css).
      class={selected ? "files has-file" : "files"}
      onDragOver={(e) => e.dataTransfer?.types.includes("Files") && e.preventDefault()}
      onDrop={(e) => {
        e.preventDefault();
        if (!archived) void upload([...(e.dataTransfer?.files ?? [])]);
      }}
    >
      <div class="files-list-pane">
        <div class="files-toolbar">
          <nav aria-label="Folder" class="breadcrumbs">
            {crumbs.map((c, i) => {
              const to = `/${crumbs.slice(0, i + 1).join("/")}`;
              return (
                <span key={to}>
                  {i > 0 && <span class="sep">/</span>}
                  <a href={filesPath(channel, to)} aria-current={to === dir ? "page" : undefined}>
                    {c}
                  </a>
                </span>
              );
            })}
          </nav>
          <div class="toolbar-actions">
            <label class={archived ? "btn btn-small disabled" : "btn btn-small"}>
              <Icon name="upload" size={15} /> Upload
              <input type="file" multiple class="visually-hidden" disabled={archived} onChange={(e) => {
                const files = [...(e.currentTarget.files ?? [])];
                e.currentTarget.value = "";
                void upload(files);
              }} />
            </label>
            <button type="button" class="btn btn-small" disabled={archived} onClick={() => setDialog("mkdir")}>
              <Icon name="newfolder" size={15} /> New folder
            </button>
            <button type="button" class="icon-button" aria-label="Refresh" onClick={refresh}>
              <Icon name="refresh" size={16} />
            </button>
          </div>
        </div>
        {folder && !archived && (
          <div class="folder-actions">
            <span class="muted small">
              Folder <strong>{folder.name}</strong>
            </span>
            <button type="button" class="btn btn-small btn-ghost" aria-label={`Rename folder ${folder.name}`} onClick={() => setDialog("rename-dir")}>
              <Icon name="edit" size={14} /> Rename
            </button>
            <button type="button" class="btn btn-small btn-ghost btn-danger-quiet" aria-label={`Delete folder ${folder.name}`} onClick={() => setDialog("delete-dir")}>
              <Icon name="trash" size={14} /> Delete
            </button>
          </div>
        )}
        <ErrorNote error={error} onRetry={retry} />
        {entries === undefined ? (
          !error && <p class="muted pad">Loading…</p>
        ) : (
          <ul class="file-list" aria-label={`Contents of ${dir}`} ref={listRef}>
            {dir !== ROOT && (
              <li>
                <a class="file-row" href={filesPath(channel, parent(dir))}>
                  <Icon name="back" size={16} />
                  <span class="file-name">..</span>
                </a>
              </li>
            )}
            {entries.length === 0 && <li class="muted pad">This folder is empty. Drop files here to upload them.</li>}
            {entries.slice(0, shownRows).map((e, i) => (
              <li key={e.path} data-row={i}>
                <a class={selected?.path === e.path ? "file-row selected" : "file-row"} href={filesPath(channel, e.path)} aria-current={selected?.path === e.path ? "true" : undefined}>
                  <Icon name={e.kind === "dir" ? "folder" : e.kind === "symlink" ? "link" : "file"} size={16} />
                  <span class="file-name">{e.name}</span>
                  <OriginTag artifact={byPath.get(e.path)} />
                  <span class="file-size">{e.kind === "dir" ? "" : bytes(e.size)}</span>
                </a>
              </li>
            ))}
            {shownRows < entries.length && (
              <li class="file-more">
                <span class="muted small">
                  {shownRows.toLocaleString()} of {entries.length.toLocaleString()} shown
                </span>
                <button type="button" class="btn btn-small" onClick={showMore}>
                  Show {Math.min(FILE_ROWS_PER_PAGE, entries.length - shownRows).toLocaleString()} more
                </button>
              </li>
            )}
          </ul>
        )}
      </div>
      <div class="files-preview-pane">
        {selected && (
          // Only on a phone, where the open file hides the list.
          <a class="btn btn-small btn-ghost files-back" href={filesPath(channel, dir)}>
            <Icon name="back" size={14} /> {dir === ROOT ? "workspace" : (crumbs[crumbs.length - 1] ?? dir)}
          </a>
        )}
        {selected ? (
          <Preview
            key={`${selected.path}-${version}`}
            channel={channel}
            file={selected}
            artifact={byPath.get(selected.path)}
            archived={archived}
            changedBy={liveBy}
            onRename={() => setDialog("rename")}
            onDelete={() => setDialog("delete")}
            onSaved={() => saved(selected)}
          />
        ) : (
          <div class="preview-empty muted">
            <Icon name="files" size={28} />
            <p>Choose a file to see it here. Files the agent makes in /workspace show up as soon as they exist.</p>
          </div>
        )}
      </div>
      {dialog === "mkdir" && <MkdirDialog channel={channel} dir={dir} onClose={() => setDialog(undefined)} onDone={(p) => { setDialog(undefined); setSelected(undefined); refresh(); navigate(filesPath(channel, p)); }} />}
      {dialog === "rename" && selected && (
        <RenameDialog channel={channel} file={selected} onClose={() => setDialog(undefined)} onDone={(p) => { setDialog(undefined); setSelected(undefined); refresh(); navigate(filesPath(channel, p)); }} />
      )}
      {dialog === "rename-dir" && folder && (
        // No refresh: the old folder is gone; going to the new path lists it.
        <RenameDialog channel={channel} file={folder} onClose={() => setDialog(undefined)} onDone={(p) => { setDialog(undefined); setSelected(undefined); navigate(filesPath(channel, p)); }} />
      )}
      {dialog === "delete-dir" && folder && (
        <DeleteDialog channel={channel} file={folder} onClose={() => setDialog(undefined)} onDone={() => { setDialog(undefined); setSelected(undefined); navigate(filesPath(channel, parent(folder.path))); }} />
      )}
      {clash && (
        <UploadClashDialog
          message={clash.message}
          onClose={() => setClash(undefined)}
          onChoose={(exists) => {
            setClash(undefined);
            void upload(clash.files, exists);
          }}
        />
      )}
      {dialog === "delete" && selected && (
        <DeleteDialog channel={channel} file={selected} onClose={() => setDialog(undefined)} onDone={() => { const dir = parent(selected.path); setDialog(undefined); setSelected(undefined); navigate(filesPath(channel, dir)); refresh(); }} />
      )}
    </div>
  );
}

function OriginTag({ artifact }: { artifact?: Artifact }) {
  const origin = artifact && ORIGIN[artifact.kind];
  if (!origin) return null;
  return (
    <span class="tag" title={origin.title}>
      {origin.tag}
    </span>
  );
}

function Preview({
  channel,
  file,
  artifact,
  archived,
  changedBy,
  onRename,
  onDelete,
  onSaved,
}: {
  channel: string;
  file: FileEntry;
  artifact?: Artifact;
  archived: boolean;
  /** Who changed files last (`@launch-agent`), for "Updated by". */
  changedBy: string;
  onRename: () => void;
  onDelete: () => void;
  onSaved: () => void;
}) {
  const [text, setText] = useState<FileText>();
  const [binary, setBinary] = useState(false);
  const [error, setError] = useState<string>();
  const [editing, setEditing] = useState(false);
  const download = urlFor("/api/channels/{channel}/files/download", { path: { channel }, query: { path: file.path } });
  const image = IMAGE.test(file.name);

  useEffect(() => {
    if (image) return;
    api
      .get("/api/channels/{channel}/files/read", { path: { channel }, query: { path: file.path } })
      .then(setText)
      .catch((e) => {
        if (e instanceof ApiError && e.status === 422) setBinary(true);
        else setError(describeError(e));
      });
  }, [file.path]);

  // The file changed on disk (a new time or size from the listing): read it
  // again; an open editor takes it only if nothing in it is unsaved.
  const [disk, setDisk] = useState<{ content: string; version?: string; by: string; seq: number }>();
  const [updatedBy, setUpdatedBy] = useState<string>();
  const shown = useRef(text);
  shown.current = text;
  const editingNow = useRef(editing);
  editingNow.current = editing;
  const stamp = useRef({ modified: file.modified, size: file.size });
  useEffect(() => {
    // Not text (or not read yet): nothing to read again.
    if (image || binary || !shown.current || sameStamp(stamp.current, file)) return;
    stamp.current = { modified: file.modified, size: file.size };
    let current = true;
    api
      .get("/api/channels/{channel}/files/read", { path: { channel }, query: { path: file.path } })
      .then((now) => {
        if (!current || now.content === shown.current?.content) return;
        setText(now);
        if (editingNow.current) setDisk((d) => ({ content: now.content, version: now.version ?? undefined, by: changedBy, seq: (d?.seq ?? 0) + 1 }));
        else setUpdatedBy(changedBy);
      })
      .catch(() => undefined);
    return () => {
      current = false;
    };
  }, [file.modified, file.size]);
  useEffect(() => {
    if (!updatedBy) return;
    const t = setTimeout(() => setUpdatedBy(undefined), 5000);
    return () => clearTimeout(t);
  }, [updatedBy]);

  const madeIn = artifact?.thread_id ? threadSignal(artifact.thread_id)?.value : undefined;
  return (
    <div class="preview">
      <header class="preview-head">
        <div>
          <h2>{file.name}</h2>
          <p class="muted small">
            {bytes(file.size)}
            {file.modified && (
              <>
                {" · changed "}
                <Time at={file.modified} />
              </>
            )}
            {artifact && (
              <>
                {artifact.kind === "upload" ? " · uploaded by " : " · made by "}
                {artifact.created_by}
                {artifact.thread_id && (
                  <>
                    {" in "}
                    <a href={channelPath(channel, "chat", artifact.thread_id)}>{madeIn?.title ? `“${madeIn.title}”` : "its thread"}</a>
                  </>
                )}
              </>
            )}
            <span role="status">{updatedBy && <span class="live-updated"> · Updated by {updatedBy}</span>}</span>
          </p>
        </div>
        <div class="toolbar-actions">
          {text && !text.truncated && !editing && !archived && (
            <button type="button" class="btn btn-small" onClick={() => setEditing(true)}>
              <Icon name="edit" size={15} /> Edit
            </button>
          )}
          <a class="btn btn-small" href={download} download={file.name}>
            <Icon name="download" size={15} /> Download
          </a>
          {!archived && (
            <>
              <button type="button" class="btn btn-small" onClick={onRename}>
                Rename
              </button>
              <button type="button" class="btn btn-small btn-danger-quiet" onClick={onDelete}>
                <Icon name="trash" size={15} /> Delete
              </button>
            </>
          )}
        </div>
      </header>
      {text?.truncated && (
        // Saving what is shown would write its first part over the whole file: read-only here.
        <p class="preview-note muted small" role="note">
          This file ({bytes(file.size)}) is too big to show whole: only its first part is here, so it opens read-only (saving that part would put it in place of the whole file). <a href={download} download={file.name}>Download it</a> for all of it.
        </p>
      )}
      <ErrorNote error={error} />
      {image && <img class="preview-image" src={download} alt={file.name} />}
      {binary && <p class="muted pad">This file is not text, so it cannot be shown here. Download it to open it.</p>}
      {text && editing && (
        <Suspense fallback={<p class="muted pad">Loading the editor…</p>}>
          <Editor
            channel={channel}
            path={file.path}
            initial={text.content}
            version={text.version ?? undefined}
            disk={disk}
            onClose={(saved, version) => {
              setEditing(false);
              if (saved !== undefined) {
                setText({ ...text, content: saved, version });
                onSaved();
              }
            }}
          />
        </Suspense>
      )}
      {text && !editing && (MARKDOWN.test(file.name) ? <Markdown text={text.content} class="preview-markdown" /> : <pre class="preview-text">{text.content}</pre>)}
    </div>
  );
}

function MkdirDialog({ channel, dir, onClose, onDone }: { channel: string; dir: string; onClose: () => void; onDone: (path: string) => void }) {
  const [name, setName] = useState("");
  const [error, setError] = useState<string>();
  const submit = async (e: Event) => {
    e.preventDefault();
    try {
      const made = await api.post("/api/channels/{channel}/files/mkdir", { path: { channel }, body: { path: join(dir, name.trim()) } });
      onDone(made.path);
    } catch (err) {
      setError(describeError(err));
    }
  };
  return (
    <Dialog title="New folder" onClose={onClose}>
      <form onSubmit={submit} class="stack">
        <Field label="Folder name" hint={`Made in ${dir}.`}>
          {(p) => <input {...p} value={name} onInput={(e) => setName(e.currentTarget.value)} required autoFocus />}
        </Field>
        <ErrorNote error={error} />
        <div class="actions">
          <button type="button" class="btn btn-ghost" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" class="btn btn-primary">
            Create folder
          </button>
        </div>
      </form>
    </Dialog>
  );
}

function RenameDialog({ channel, file, onClose, onDone }: { channel: string; file: FileEntry; onClose: () => void; onDone: (path: string) => void }) {
  const [name, setName] = useState(file.name);
  const [error, setError] = useState<string>();
  const submit = async (e: Event) => {
    e.preventDefault();
    const to = name.trim().startsWith("/") ? name.trim() : join(parent(file.path), name.trim());
    try {
      await api.post("/api/channels/{channel}/files/move", { path: { channel }, body: { from: file.path, to } });
      onDone(to);
    } catch (err) {
      setError(describeError(err));
    }
  };
  return (
    <Dialog title={`Rename ${file.name}`} onClose={onClose}>
      <form onSubmit={submit} class="stack">
        <Field label="New name" hint="A name, or a whole path under /workspace to move it.">
          {(p) => <input {...p} value={name} onInput={(e) => setName(e.currentTarget.value)} required autoFocus />}
        </Field>
        <ErrorNote error={error} />
        <div class="actions">
          <button type="button" class="btn btn-ghost" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" class="btn btn-primary">
            Rename
          </button>
        </div>
      </form>
    </Dialog>
  );
}

/** A file of the upload is already there: replace it, keep both, or leave it. */
function UploadClashDialog({ message, onClose, onChoose }: { message: string; onClose: () => void; onChoose: (exists: IfExists) => void }) {
  // The server's words name the file: "/workspace/x.md already exists; nothing was uploaded".
  const taken = message.split(" already exists")[0];
  return (
    <Dialog title="Replace the file?" onClose={onClose}>
      <p>
        <code>{taken}</code> is already here, and nothing was uploaded yet. Replace what is there with your file, or keep both (yours gets a numbered name, such as <code>plan-2.md</code>)?
      </p>
      <div class="actions">
        <button type="button" class="btn btn-ghost" onClick={onClose}>
          Cancel
        </button>
        <button type="button" class="btn" onClick={() => onChoose("keep_both")} autoFocus>
          Keep both
        </button>
        <button type="button" class="btn btn-danger" onClick={() => onChoose("replace")}>
          Replace
        </button>
      </div>
    </Dialog>
  );
}

function DeleteDialog({ channel, file, onClose, onDone }: { channel: string; file: FileEntry; onClose: () => void; onDone: () => void }) {
  const [error, setError] = useState<string>();
  const remove = async () => {
    try {
      await api.delete("/api/channels/{channel}/files", { path: { channel }, query: { path: file.path, recursive: file.kind === "dir" } });
      onDone();
    } catch (err) {
      setError(describeError(err));
    }
  };
  return (
    <Dialog title={`Delete ${file.name}?`} onClose={onClose}>
      <p>
        <code>{file.path}</code> will be removed from the workspace{file.kind === "dir" ? ", with everything in it" : ""}. This cannot be undone.
      </p>
      <ErrorNote error={error} />
      <div class="actions">
        <button type="button" class="btn btn-ghost" onClick={onClose} autoFocus>
          Keep it
        </button>
        <button type="button" class="btn btn-danger" onClick={remove}>
          Delete
        </button>
      </div>
    </Dialog>
  );
}
