// Messages are Markdown: rendered with marked, then sanitised with
// DOMPurify (no scripts, no styles, no forms; links to other sites open in
// a new tab without the opener). Code is highlighted only once its fence
// is closed, so a streaming block is not re-highlighted on every token;
// the highlighter is a separate chunk, loaded on first need.
import { signal } from "@preact/signals";
import DOMPurify from "dompurify";
import { Marked, type Tokens } from "marked";

type Highlighter = (code: string, lang: string) => string | undefined;

/** Bumped when the highlighter arrives, so rendered code re-renders. */
export const highlighterReady = signal(false);
let highlighter: Highlighter | undefined;
let loading: Promise<void> | undefined;

function loadHighlighter(): void {
  loading ??= import("./highlight").then((m) => {
    highlighter = m.highlight;
    highlighterReady.value = true;
  });
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] ?? c);
}

const CLOSED_FENCE = /\n\s*(`{3,}|~{3,})\s*$/;

function renderCode({ text, lang, raw }: Tokens.Code): string {
  const language = (lang ?? "").split(/\s/)[0] ?? "";
  const closed = CLOSED_FENCE.test(raw) || !raw.trimStart().startsWith("`") && !raw.trimStart().startsWith("~");
  let body: string | undefined;
  if (closed && language) {
    if (highlighter) body = highlighter(text, language);
    else loadHighlighter();
  }
  const label = language ? `<span class="code-lang">${escapeHtml(language)}</span>` : "";
  return `<pre class="code">${label}<code${language ? ` class="language-${escapeHtml(language)}"` : ""}>${body ?? escapeHtml(text)}</code></pre>`;
}

const marked = new Marked({
  gfm: true,
  breaks: true,
  renderer: {
    code: renderCode,
    // Raw HTML in a message is shown as text, not rendered.
    html: ({ text }) => escapeHtml(text),
  },
});

// (Outside a browser — the unit tests — there is no DOM to sanitise with.)
DOMPurify.addHook?.("afterSanitizeAttributes", (node) => {
  if (node.tagName === "A") {
    const href = node.getAttribute("href") ?? "";
    if (/^https?:\/\//i.test(href) || href.startsWith("//")) {
      node.setAttribute("target", "_blank");
      node.setAttribute("rel", "noopener noreferrer");
    }
  }
});

const PURIFY = {
  FORBID_TAGS: ["style", "form", "input", "textarea", "select", "button", "iframe", "object", "embed"],
  FORBID_ATTR: ["style"],
  ALLOW_DATA_ATTR: false,
};

const cache = new Map<string, string>();

/**
 * Text with nothing Markdown would turn into markup (most chat lines):
 * no emphasis, code, links, headings, lists, quotes, tables, HTML or
 * entities, and no bare URL (which becomes a link).
 */
const MARKUP = /[*_`~#[\]<>|\\&!]|^\s*([-+>]|\d+[.)])\s|https?:|www\.|@\S+\.\S/m;

/** Whether a message needs no Markdown at all. */
export function isPlainText(text: string): boolean {
  return !MARKUP.test(text);
}

function plainParagraphs(text: string): string {
  return text
    .trim()
    .split(/\n{2,}/)
    .map((p) => `<p>${escapeHtml(p).replace(/\n/g, "<br>")}</p>`)
    .join("");
}

/**
 * Safe HTML for a message's Markdown. `remember: false` for text that is
 * about to change (the growing end of a streaming reply), so the cache is
 * not filled with every prefix of it.
 */
export function renderMarkdown(text: string, remember = true): string {
  const key = `${highlighter ? 1 : 0}${text}`;
  const hit = cache.get(key);
  if (hit !== undefined) return hit;
  // Plain text skips the parser and the sanitiser: it is only escaped.
  const html = isPlainText(text) ? plainParagraphs(text) : (DOMPurify.sanitize(marked.parse(text, { async: false }) as string, PURIFY) as string);
  if (!remember) return html;
  if (cache.size > 400) cache.clear();
  cache.set(key, html);
  return html;
}

const FENCE = /^ {0,3}(`{3,}|~{3,})/;

/**
 * A streaming reply cut into top-level blocks: `done` are those a blank
 * line (outside a code fence) has closed, which no later delta can change;
 * `tail` is the block still growing. A fence opened and not yet closed
 * stays in the tail whole, so its code is highlighted only once closed.
 */
export function streamBlocks(text: string): { done: string[]; tail: string } {
  const done: string[] = [];
  let start = 0;
  let fence: string | undefined;
  let pos = 0;
  let blank = true;
  while (pos <= text.length) {
    let end = text.indexOf("\n", pos);
    if (end < 0) end = text.length;
    const line = text.slice(pos, end);
    const open = FENCE.exec(line);
    if (fence) {
      if (open && open[1]!.startsWith(fence) && line.trim() === open[1]) fence = undefined;
    } else if (open) {
      fence = open[1];
    } else if (line.trim() === "" && end < text.length) {
      // A blank line closes the block before it.
      if (!blank) done.push(text.slice(start, pos - 1));
      start = end + 1;
      blank = true;
      pos = end + 1;
      continue;
    }
    blank = false;
    if (end >= text.length) break;
    pos = end + 1;
  }
  return { done, tail: text.slice(start) };
}

type Token = { type: string; text?: string; tokens?: Token[]; items?: Token[]; header?: Token[]; rows?: Token[][] };

/**
 * The words of lexed Markdown: markup dropped, the text it marks kept
 * (`**Plan**` is "Plan", a link is its label), a code block a "[code]".
 */
function tokenText(tokens: Token[]): string {
  let out = "";
  for (const t of tokens) {
    if (t.type === "code") out += " [code] ";
    else if (t.type === "hr" || t.type === "def") out += " ";
    else if (t.type === "table") out += ` ${[t.header ?? [], ...(t.rows ?? [])].map((row) => row.map((cell) => tokenText(cell.tokens ?? [])).join(" ")).join(" ")} `;
    else if (t.items) out += ` ${t.items.map((item) => tokenText(item.tokens ?? [])).join(" ")} `;
    else if (t.tokens) out += `${tokenText(t.tokens)}${t.type === "paragraph" || t.type === "heading" || t.type === "blockquote" ? " " : ""}`;
    else out += t.type === "space" || t.type === "br" ? " " : (t.text ?? "");
  }
  return out;
}

/**
 * Plain text of a message's Markdown, for previews and notifications: the
 * Markdown syntax goes, the characters that are text stay (`#garden`,
 * `snake_case`, `a > b`).
 */
export function plainText(text: string, max = 200): string {
  // Only the opening is read: a preview of a long reply (up to megabytes)
  // need not lex all of it, and syntax is far less than 8 characters in 9.
  const head = text.length > max * 8 ? text.slice(0, max * 8) : text;
  const words = isPlainText(head) ? head : tokenText(marked.lexer(head) as Token[]);
  const flat = words.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
