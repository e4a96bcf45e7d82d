// Cowork's editors, one per mode, each editing the text the file view
// holds (which loads and saves it): Notes (write or preview), Docs (a
// formatting toolbar, source beside its live preview), Code (line numbers,
// highlighting, Tab indents) and Presentations (slides cut at `---`, the
// current one previewed, thumbnails, and full-screen presenting).
import type { ComponentChildren } from "preact";
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { Icon } from "../../components/Icon";
import { Markdown } from "../../components/Markdown";
import { applyFormat, baseName, slideAt, splitSlides, type Format, type Slide } from "../../lib/cowork";

export interface EditorProps {
  path: string;
  text: string;
  onChange: (text: string) => void;
  readOnly: boolean;
}

/**
 * Replaces the textarea's whole text with `next`, through the browser's
 * own editing (so Ctrl-Z undoes it), then selects `start`–`end`. Only the
 * part that changed is replaced.
 */
function replaceText(el: HTMLTextAreaElement, next: string, start: number, end: number): void {
  const old = el.value;
  let head = 0;
  while (head < old.length && head < next.length && old[head] === next[head]) head++;
  let tail = 0;
  while (tail < old.length - head && tail < next.length - head && old[old.length - 1 - tail] === next[next.length - 1 - tail]) tail++;
  el.focus();
  el.setSelectionRange(head, old.length - tail);
  const inserted = next.slice(head, next.length - tail);
  // execCommand keeps the undo history; where it does nothing, set the value.
  const done = inserted ? document.execCommand("insertText", false, inserted) : document.execCommand("delete");
  if (!done || el.value !== next) {
    el.value = next;
    el.dispatchEvent(new Event("input", { bubbles: true }));
  }
  el.setSelectionRange(start, end);
}

/**
 * Tab indents (and Shift-Tab outdents) the lines the selection touches;
 * Escape lets Tab move focus; Enter keeps the line's indentation.
 */
function useIndenting() {
  const [tabMoves, setTabMoves] = useState(false);
  const onKeyDown = (e: KeyboardEvent) => {
    const el = e.currentTarget as HTMLTextAreaElement;
    if (el.readOnly) return;
    if (e.key === "Escape" || (e.ctrlKey && e.key.toLowerCase() === "m")) {
      setTabMoves(!tabMoves);
      return;
    }
    if (e.key === "Enter" && !e.shiftKey && !e.ctrlKey && !e.metaKey && !e.altKey && !e.isComposing) {
      // A new line starts where the one before it did.
      const { selectionStart: s, value } = el;
      const indent = /^[ \t]*/.exec(value.slice(value.lastIndexOf("\n", s - 1) + 1, s))?.[0] ?? "";
      if (!indent) return;
      e.preventDefault();
      document.execCommand("insertText", false, `\n${indent}`);
      return;
    }
    if (e.key !== "Tab" || tabMoves || e.ctrlKey || e.metaKey || e.altKey) return;
    e.preventDefault();
    const { selectionStart: s, selectionEnd: end, value } = el;
    if (!e.shiftKey && s === end) {
      document.execCommand("insertText", false, "  ") || replaceText(el, `${value.slice(0, s)}  ${value.slice(end)}`, s + 2, s + 2);
      return;
    }
    const from = value.lastIndexOf("\n", s - 1) + 1;
    const lines = value.slice(from, end).split("\n");
    const changed = lines.map((l) => (e.shiftKey ? l.replace(/^ {1,2}/, "") : `  ${l}`)).join("\n");
    const next = value.slice(0, from) + changed + value.slice(end);
    const first = e.shiftKey ? -(lines[0]!.length - lines[0]!.replace(/^ {1,2}/, "").length) : 2;
    replaceText(el, next, Math.max(from, s + first), from + changed.length);
  };
  return { tabMoves, onKeyDown };
}

function TabHint({ tabMoves }: { tabMoves: boolean }) {
  return <span class="muted small">{tabMoves ? "Tab moves focus (Escape: Tab indents)" : "Tab indents (Escape: Tab moves focus)"}</span>;
}

// Notes ------------------------------------------------------------------

export function NotesEditor({ path, text, onChange, readOnly }: EditorProps) {
  const [preview, setPreview] = useState(readOnly);
  return (
    <div class="cowork-editor notes-editor">
      <div class="editor-strip">
        <div class="segmented" role="group" aria-label="Show">
          <button type="button" aria-pressed={!preview} onClick={() => setPreview(false)} disabled={readOnly}>
            Write
          </button>
          <button type="button" aria-pressed={preview} onClick={() => setPreview(true)}>
            Preview
          </button>
        </div>
        <span class="muted small">Markdown</span>
      </div>
      {preview ? (
        <div class="note-preview">{text.trim() ? <Markdown text={text} /> : <p class="muted">This note is empty.</p>}</div>
      ) : (
        <textarea
          class="cowork-text note-text"
          value={text}
          readOnly={readOnly}
          aria-label={`Text of ${baseName(path)}`}
          placeholder="Write in Markdown…"
          onInput={(e) => onChange(e.currentTarget.value)}
        />
      )}
    </div>
  );
}

// Docs -------------------------------------------------------------------

const FORMATS: { format: Format; label: string; glyph: ComponentChildren; keys?: string }[] = [
  { format: "heading", label: "Heading", glyph: <span class="glyph">H</span> },
  { format: "bold", label: "Bold", glyph: <span class="glyph bold">B</span>, keys: "Ctrl+B" },
  { format: "italic", label: "Italic", glyph: <span class="glyph italic">I</span>, keys: "Ctrl+I" },
  { format: "list", label: "Bulleted list", glyph: <Icon name="list" size={16} /> },
  { format: "link", label: "Link", glyph: <Icon name="link" size={16} /> },
  { format: "code", label: "Code", glyph: <Icon name="code" size={16} /> },
];

export function DocsEditor({ path, text, onChange, readOnly }: EditorProps) {
  const area = useRef<HTMLTextAreaElement>(null);
  const format = (f: Format) => {
    const el = area.current;
    if (!el || readOnly) return;
    const edit = applyFormat(el.value, el.selectionStart, el.selectionEnd, f);
    replaceText(el, edit.text, edit.start, edit.end);
    onChange(el.value);
  };
  const keys = (e: KeyboardEvent) => {
    if (!(e.ctrlKey || e.metaKey) || e.altKey) return;
    const k = e.key.toLowerCase();
    if (k === "b" || k === "i") {
      e.preventDefault();
      format(k === "b" ? "bold" : "italic");
    }
  };
  return (
    <div class="cowork-editor docs-editor">
      <div class="editor-strip" role="toolbar" aria-label="Formatting">
        {FORMATS.map((f) => (
          <button
            key={f.format}
            type="button"
            class="format-button"
            aria-label={f.label}
            title={f.keys ? `${f.label} (${f.keys})` : f.label}
            disabled={readOnly}
            // Keep the selection in the text where it is.
            onMouseDown={(e) => e.preventDefault()}
            onClick={() => format(f.format)}
          >
            {f.glyph}
          </button>
        ))}
        <span class="muted small strip-end">Markdown · preview beside</span>
      </div>
      <div class="docs-split">
        <textarea
          ref={area}
          class="cowork-text docs-text"
          value={text}
          readOnly={readOnly}
          aria-label={`Text of ${baseName(path)}`}
          placeholder="Write the document in Markdown…"
          onInput={(e) => onChange(e.currentTarget.value)}
          onKeyDown={keys}
        />
        <div class="docs-preview" role="region" aria-label="Preview">
          {text.trim() ? <Markdown text={text} class="doc-page" /> : <p class="muted">The preview shows here as you write.</p>}
        </div>
      </div>
    </div>
  );
}

// Code -------------------------------------------------------------------

type Highlight = (code: string, lang: string) => string | undefined;
let highlighter: Highlight | undefined;
let loadingHighlighter: Promise<Highlight> | undefined;

function loadHighlighter(): Promise<Highlight> {
  loadingHighlighter ??= import("../../lib/highlight").then((m) => (highlighter = m.highlight));
  return loadingHighlighter;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>]/g, (c) => (c === "&" ? "&amp;" : c === "<" ? "&lt;" : "&gt;"));
}

/** The highlighter's language for a file, by its name. */
export function languageOf(path: string): string {
  const name = baseName(path).toLowerCase();
  if (name === "dockerfile") return "dockerfile";
  const dot = name.lastIndexOf(".");
  return dot > 0 ? name.slice(dot + 1) : "";
}

/** Files bigger than this are shown plain: highlighting them on each key would lag. */
const HIGHLIGHT_LIMIT = 200_000;

export function CodeEditor({ path, text, onChange, readOnly }: EditorProps) {
  const [ready, setReady] = useState(highlighter !== undefined);
  const layer = useRef<HTMLPreElement>(null);
  const gutter = useRef<HTMLPreElement>(null);
  const { tabMoves, onKeyDown } = useIndenting();
  const lang = languageOf(path);
  useEffect(() => {
    if (!ready && lang) void loadHighlighter().then(() => setReady(true));
  }, [lang]);
  const html = useMemo(() => {
    const highlighted = ready && lang && text.length < HIGHLIGHT_LIMIT ? highlighter?.(text, lang) : undefined;
    // A last empty line still takes its height.
    return `${highlighted ?? escapeHtml(text)}\n`;
  }, [text, lang, ready]);
  const lines = useMemo(() => {
    const count = text.split("\n").length;
    let out = "";
    for (let i = 1; i <= count; i++) out += `${i}\n`;
    return out;
  }, [text]);
  const follow = (e: Event) => {
    const el = e.currentTarget as HTMLTextAreaElement;
    if (layer.current) {
      layer.current.scrollTop = el.scrollTop;
      layer.current.scrollLeft = el.scrollLeft;
    }
    if (gutter.current) gutter.current.scrollTop = el.scrollTop;
  };
  return (
    <div class="cowork-editor code-editor-wrap">
      <div class="code-editor">
        <pre class="code-gutter" ref={gutter} aria-hidden="true">
          {lines}
        </pre>
        <div class="code-stack">
          <pre class="code-layer" ref={layer} aria-hidden="true">
            <code class="hljs" dangerouslySetInnerHTML={{ __html: html }} />
          </pre>
          <textarea
            class="code-input"
            value={text}
            readOnly={readOnly}
            wrap="off"
            spellcheck={false}
            autocapitalize="off"
            autocomplete="off"
            aria-label={`Code of ${baseName(path)}`}
            onInput={(e) => onChange(e.currentTarget.value)}
            onKeyDown={onKeyDown}
            onScroll={follow}
          />
        </div>
      </div>
      <div class="editor-strip bottom">
        <span class="muted small">
          {lines.length ? text.split("\n").length : 0} lines · {lang || "plain text"}
        </span>
        {!readOnly && <TabHint tabMoves={tabMoves} />}
      </div>
    </div>
  );
}

// Presentations ---------------------------------------------------------

/** One slide, drawn at any size: its type scales with its frame (container units). */
export function SlideView({ slide, class: className, hidden }: { slide: Slide | undefined; class?: string; hidden?: boolean }) {
  return (
    <div class={className ? `slide ${className}` : "slide"} aria-hidden={hidden ? "true" : undefined}>
      <div class="slide-body">{slide?.text ? <Markdown text={slide.text} /> : <p class="slide-empty">An empty slide</p>}</div>
    </div>
  );
}

export function SlidesEditor({ path, text, onChange, readOnly, onPresent }: EditorProps & { onPresent: (from: number) => void }) {
  const slides = useMemo(() => splitSlides(text), [text]);
  const [current, setCurrent] = useState(0);
  const area = useRef<HTMLTextAreaElement>(null);
  const at = Math.min(current, slides.length - 1);
  const follow = () => {
    const el = area.current;
    if (el) setCurrent(slideAt(splitSlides(el.value), el.selectionStart));
  };
  const go = (i: number) => {
    setCurrent(i);
    const el = area.current;
    const slide = slides[i];
    if (el && slide) {
      // The caret to the slide's first line, scrolled into view.
      el.setSelectionRange(slide.start, slide.start);
      const line = el.value.slice(0, slide.start).split("\n").length - 1;
      el.scrollTop = Math.max(0, line * 21 - 40);
    }
  };
  return (
    <div class="cowork-editor slides-editor">
      <div class="editor-strip">
        <span class="muted small">
          {slides.length} {slides.length === 1 ? "slide" : "slides"} · a line with only <code>---</code> starts the next
        </span>
        <button type="button" class="btn btn-small btn-primary strip-end" onClick={() => onPresent(at)}>
          <Icon name="play" size={14} /> Present
        </button>
      </div>
      <div class="slides-split">
        <textarea
          ref={area}
          class="cowork-text slides-text"
          value={text}
          readOnly={readOnly}
          aria-label={`Slides of ${baseName(path)}`}
          onInput={(e) => {
            onChange(e.currentTarget.value);
            follow();
          }}
          onKeyUp={follow}
          onClick={follow}
        />
        <div class="slides-side">
          <div class="slide-stage" role="region" aria-label={`Slide ${at + 1} of ${slides.length}`}>
            <SlideView slide={slides[at]} class="slide-large" />
          </div>
          <ol class="slide-strip" aria-label="Slides">
            {slides.map((s, i) => (
              <li key={i}>
                <button type="button" class={i === at ? "slide-thumb current" : "slide-thumb"} aria-current={i === at ? "true" : undefined} onClick={() => go(i)}>
                  <SlideView slide={s} class="slide-small" hidden />
                  <span class="thumb-number">
                    <span class="sr-only">Slide </span>
                    {i + 1}
                  </span>
                </button>
              </li>
            ))}
          </ol>
        </div>
      </div>
    </div>
  );
}

/**
 * Slides full screen: → ↓ Space PageDown (or a click) go on, ← ↑ PageUp
 * go back, Home and End, Escape leaves.
 */
export function Presenter({ text, title, from, onClose }: { text: string; title: string; from: number; onClose: () => void }) {
  const slides = useMemo(() => splitSlides(text), [text]);
  const [at, setAt] = useState(Math.min(from, slides.length - 1));
  const root = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = root.current;
    const opener = document.activeElement as HTMLElement | null;
    el?.focus();
    el?.requestFullscreen?.().catch(() => undefined);
    // Leaving full screen (the browser's own Escape) leaves presenting.
    const left = () => !document.fullscreenElement && onClose();
    document.addEventListener("fullscreenchange", left);
    return () => {
      document.removeEventListener("fullscreenchange", left);
      if (document.fullscreenElement) void document.exitFullscreen().catch(() => undefined);
      opener?.focus?.();
    };
  }, []);
  const last = slides.length - 1;
  const keys = (e: KeyboardEvent) => {
    // Space and Enter on one of the buttons below press that button.
    if ((e.key === " " || e.key === "Enter") && (e.target as Element).closest("button")) return;
    const next = ["ArrowRight", "ArrowDown", "PageDown", " ", "Enter"];
    const back = ["ArrowLeft", "ArrowUp", "PageUp", "Backspace"];
    if (next.includes(e.key)) setAt((a) => Math.min(last, a + 1));
    else if (back.includes(e.key)) setAt((a) => Math.max(0, a - 1));
    else if (e.key === "Home") setAt(0);
    else if (e.key === "End") setAt(last);
    else if (e.key === "Escape") onClose();
    // Other keys stay here too: the app's shortcuts wait until presenting ends.
    else return e.stopPropagation();
    e.preventDefault();
    e.stopPropagation();
  };
  return (
    <div class="presenter" ref={root} tabIndex={-1} role="dialog" aria-modal="true" aria-label={`Presenting ${title}`} onKeyDown={keys}>
      <div class="presenter-stage" onClick={() => setAt((a) => Math.min(last, a + 1))}>
        <SlideView slide={slides[at]} class="slide-full" />
      </div>
      <div class="presenter-bar">
        <button type="button" class="presenter-button" aria-label="Previous slide" disabled={at === 0} onClick={() => setAt(at - 1)}>
          <Icon name="back" size={18} />
        </button>
        <span class="presenter-count" aria-live="polite">
          {at + 1} / {slides.length}
        </span>
        <button type="button" class="presenter-button" aria-label="Next slide" disabled={at === last} onClick={() => setAt(at + 1)}>
          <Icon name="chevron" size={18} />
        </button>
        <button type="button" class="presenter-button" aria-label="Stop presenting" onClick={onClose}>
          <Icon name="close" size={18} />
        </button>
      </div>
    </div>
  );
}
