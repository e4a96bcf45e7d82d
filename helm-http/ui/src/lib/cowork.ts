// Cowork's rules that need no browser: the five work modes and their
// folders under /workspace, the paths the route carries, what a new file
// may be called, a presentation's slides, the document toolbar's edits,
// and the first message the agent panel sends.

/** The work modes, each the folder of /workspace it edits. */
export const MODES = ["notes", "whiteboards", "code", "docs", "presentations"] as const;
export type Mode = (typeof MODES)[number];

export interface ModeInfo {
  /** Its name in the rail. */
  label: string;
  /** One file of it, in words ("note"). */
  noun: string;
  /** The extension a new file gets when its name has none ("" for code). */
  ext: string;
  /** The name a new file starts with. */
  suggested: string;
  /** What it is for, in a sentence. */
  blurb: string;
}

export const MODE_INFO: Record<Mode, ModeInfo> = {
  notes: { label: "Notes", noun: "note", ext: ".md", suggested: "note.md", blurb: "Quick Markdown notes, newest first." },
  whiteboards: { label: "Whiteboard", noun: "whiteboard", ext: ".svg", suggested: "board.svg", blurb: "Sketches and diagrams, kept as SVG." },
  code: { label: "Code", noun: "code file", ext: "", suggested: "main.py", blurb: "Source files and folders, with highlighting." },
  docs: { label: "Docs", noun: "doc", ext: ".md", suggested: "document.md", blurb: "Longer documents, with a live preview." },
  presentations: { label: "Presentations", noun: "presentation", ext: ".md", suggested: "slides.md", blurb: "Slides in Markdown, separated by ---." },
};

export const ROOT = "/workspace";

/** A mode's folder (`/workspace/notes`). */
export function modeFolder(mode: Mode): string {
  return `${ROOT}/${mode}`;
}

/**
 * A path as the agent sees it (`/workspace/notes/a.md`), from one written
 * either way the files API takes (`notes/a.md` or `/workspace/notes/a.md`).
 */
export function workspacePath(path: string): string {
  const trimmed = path.trim().replace(/\/+$/, "");
  if (trimmed === ROOT || trimmed.startsWith(`${ROOT}/`)) return trimmed;
  return `${ROOT}/${trimmed.replace(/^\/+/, "")}`;
}

/** The mode a path belongs to, by its top folder under /workspace. */
export function modeOfPath(path: string): Mode | undefined {
  const top = workspacePath(path).slice(ROOT.length + 1).split("/")[0];
  return MODES.find((m) => m === top);
}

export function isMode(value: string | undefined): value is Mode {
  return value !== undefined && (MODES as readonly string[]).includes(value);
}

/** A path's last part. */
export function baseName(path: string): string {
  return path.replace(/\/+$/, "").split("/").pop() ?? path;
}

/** The folder holding `path`. */
export function parentOf(path: string): string {
  const cut = path.replace(/\/+$/, "").lastIndexOf("/");
  return cut <= 0 ? ROOT : path.slice(0, cut);
}

/** Whether a path is the kind of file its mode edits. */
export function fitsMode(path: string, mode: Mode): boolean {
  const name = baseName(path).toLowerCase();
  if (mode === "whiteboards") return name.endsWith(".svg");
  if (mode === "code") return true;
  return /\.(md|markdown)$/.test(name);
}

// Names ----------------------------------------------------------------

/** One part of a name: starts with a letter or digit; letters, digits, spaces, `.`, `-`, `_`. */
const PART = /^[\p{L}\p{N}][\p{L}\p{N} ._-]*$/u;

/** The rule, as the name field states it. */
export function nameRule(mode: Mode): string {
  const base = "Start with a letter or digit; then letters, digits, spaces, '.', '-' and '_' (up to 100 characters).";
  if (mode === "code") return `${base} Use '/' for folders (src/main.py makes src).`;
  return `${base} ${MODE_INFO[mode].ext} is added when you leave it out.`;
}

/** Why `name` cannot be a new file of `mode`, or undefined when it can. */
export function nameProblem(name: string, mode: Mode): string | undefined {
  const trimmed = name.trim();
  if (!trimmed) return "Give it a name.";
  if (trimmed.length > 100) return "Use at most 100 characters.";
  const parts = trimmed.split("/");
  if (parts.length > 1 && mode !== "code") return "A name cannot contain '/'.";
  for (const part of parts) {
    if (!part) return "A name cannot start or end with '/', or have '//'.";
    if (part === "." || part === ".." || !PART.test(part)) return nameRule(mode);
  }
  return undefined;
}

/** The file name `name` gives in `mode`: trimmed, with the mode's extension when it has none of it. */
export function fileNameFor(name: string, mode: Mode): string {
  const trimmed = name.trim();
  const ext = MODE_INFO[mode].ext;
  if (!ext) return trimmed;
  const lower = trimmed.toLowerCase();
  if (lower.endsWith(ext) || (ext === ".md" && lower.endsWith(".markdown"))) return trimmed;
  return `${trimmed}${ext}`;
}

/** `name`, or `name-2`, `name-3`… (before the extension) until it is not in `taken`. */
export function freeName(name: string, taken: Iterable<string>): string {
  const used = new Set([...taken].map((n) => n.toLowerCase()));
  if (!used.has(name.toLowerCase())) return name;
  const dot = name.lastIndexOf(".");
  const [stem, ext] = dot > 0 ? [name.slice(0, dot), name.slice(dot)] : [name, ""];
  for (let i = 2; ; i++) {
    const next = `${stem}-${i}${ext}`;
    if (!used.has(next.toLowerCase())) return next;
  }
}

/** What a new file of `mode` holds. */
export function starterContent(mode: Mode, name: string): string {
  const title = baseName(name).replace(/\.[^.]+$/, "");
  switch (mode) {
    case "whiteboards":
      return '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 1600 1000" width="1600" height="1000"></svg>';
    case "presentations":
      return `# ${title}\n\nA subtitle\n\n---\n\n## The first point\n\n- One\n- Two\n`;
    case "code":
      return "";
    default:
      return `# ${title}\n\n`;
  }
}

// Slides ---------------------------------------------------------------

export interface Slide {
  /** Its Markdown, without the separators. */
  text: string;
  /** Where it starts in the whole text (an offset). */
  start: number;
  /** Where it ends (the offset of its separator line, or the end). */
  end: number;
}

/** A separator: a line with only `---` (spaces around allowed), outside a code fence. */
const SEPARATOR = /^\s*---\s*$/;
const FENCE = /^\s*(`{3,}|~{3,})/;

/** A presentation's slides: its text cut at lines holding only `---`. */
export function splitSlides(text: string): Slide[] {
  const slides: Slide[] = [];
  let start = 0;
  let offset = 0;
  let fence: string | undefined;
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const next = offset + line.length + (i < lines.length - 1 ? 1 : 0);
    const opener = FENCE.exec(line)?.[1];
    if (opener && (!fence || opener.startsWith(fence))) fence = fence ? undefined : opener;
    else if (!fence && SEPARATOR.test(line)) {
      slides.push({ text: text.slice(start, offset).trim(), start, end: offset });
      start = next;
    }
    offset = next;
  }
  slides.push({ text: text.slice(start).trim(), start, end: text.length });
  return slides;
}

/** The slide holding the offset `at` (the caret). */
export function slideAt(slides: Slide[], at: number): number {
  for (let i = slides.length - 1; i >= 0; i--) if (at >= slides[i]!.start) return i;
  return 0;
}

// The document toolbar -------------------------------------------------

export type Format = "heading" | "bold" | "italic" | "list" | "link" | "code";

export interface Edit {
  text: string;
  /** The selection after the edit. */
  start: number;
  end: number;
}

function lineStart(text: string, at: number): number {
  return text.lastIndexOf("\n", at - 1) + 1;
}

function lineEnd(text: string, at: number): number {
  const cut = text.indexOf("\n", at);
  return cut === -1 ? text.length : cut;
}

/** Wraps the selection in `mark` (or unwraps it when it is wrapped already). */
function wrap(text: string, start: number, end: number, mark: string, placeholder: string): Edit {
  const before = text.slice(start - mark.length, start);
  const after = text.slice(end, end + mark.length);
  if (start !== end && before === mark && after === mark) {
    return { text: text.slice(0, start - mark.length) + text.slice(start, end) + text.slice(end + mark.length), start: start - mark.length, end: end - mark.length };
  }
  const inner = start === end ? placeholder : text.slice(start, end);
  const next = text.slice(0, start) + mark + inner + mark + text.slice(end);
  return { text: next, start: start + mark.length, end: start + mark.length + inner.length };
}

/** Applies a prefix to every line the selection touches (or takes it off when all have it). */
function prefixLines(text: string, start: number, end: number, prefix: RegExp, add: string): Edit {
  const from = lineStart(text, start);
  const to = lineEnd(text, end > start && text[end - 1] === "\n" ? end - 1 : end);
  const lines = text.slice(from, to).split("\n");
  const all = lines.every((l) => prefix.test(l));
  const changed = lines.map((l) => (all ? l.replace(prefix, "") : add + l.replace(prefix, ""))).join("\n");
  const next = text.slice(0, from) + changed + text.slice(to);
  if (start === end) {
    const moved = Math.max(from, start + (changed.length - (to - from)));
    return { text: next, start: moved, end: moved };
  }
  return { text: next, start: from, end: from + changed.length };
}

/** What a toolbar button does to `text` with the selection `start`–`end`. */
export function applyFormat(text: string, start: number, end: number, format: Format): Edit {
  switch (format) {
    case "bold":
      return wrap(text, start, end, "**", "bold text");
    case "italic":
      return wrap(text, start, end, "_", "italic text");
    case "heading": {
      // No heading → ##, ## → ###, ### → none.
      const from = lineStart(text, start);
      const line = text.slice(from, lineEnd(text, start));
      const level = /^(#{1,6}) /.exec(line)?.[1]?.length ?? 0;
      const bare = line.replace(/^#{1,6} /, "");
      const nextLevel = level === 0 ? 2 : level >= 3 ? 0 : level + 1;
      const made = (nextLevel ? `${"#".repeat(nextLevel)} ` : "") + bare;
      const delta = made.length - line.length;
      return { text: text.slice(0, from) + made + text.slice(from + line.length), start: Math.max(from, start + delta), end: Math.max(from, end + delta) };
    }
    case "list":
      return prefixLines(text, start, end, /^[-*] /, "- ");
    case "code": {
      const selected = text.slice(start, end);
      if (selected.includes("\n")) {
        const block = `\`\`\`\n${selected.replace(/\n$/, "")}\n\`\`\``;
        return { text: text.slice(0, start) + block + text.slice(end), start: start + 4, end: start + 4 + selected.replace(/\n$/, "").length };
      }
      return wrap(text, start, end, "`", "code");
    }
    case "link": {
      const label = start === end ? "link text" : text.slice(start, end);
      const made = `[${label}](https://)`;
      const url = start + label.length + 3;
      return { text: text.slice(0, start) + made + text.slice(end), start: url, end: url + "https://".length };
    }
  }
}

// The agent panel ------------------------------------------------------

/**
 * The first message of a Cowork thread: what the person wrote, addressed
 * to the agent (its handle put first unless they named it or Skipper),
 * then the open file's path on a line of its own: only the path, never the
 * file's contents.
 */
export function firstMessage(text: string, handle: string, path: string | undefined): string {
  let body = text.trim();
  const named = new RegExp(`(^|\\s)@(${handle}|skipper)\\b`, "i").test(body);
  if (!named) body = `@${handle} ${body}`;
  return path ? `${body}\n\n${workspacePath(path)}` : body;
}
