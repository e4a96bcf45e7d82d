// The whiteboard's toolbar: the tools, ink, stroke width and fill (which
// also restyle the selection), undo, redo, the clipboard and delete, zoom,
// what is saved, and Save. The state it shows and what its buttons do are
// the editor's. On a phone the rows wrap, and the fill, clipboard and zoom
// groups fold behind "More", so the board keeps its height and the page
// never scrolls sideways.
import { useState } from "preact/hooks";
import { Icon } from "../../components/Icon";
import { COLORS, FILLS, TOOLS, WIDTHS, type Tool } from "./whiteboardTools";

/** What the toolbar shows. */
export interface ToolbarState {
  tool: Tool;
  ink: (typeof COLORS)[number];
  sw: number;
  fill: string;
  readOnly: boolean;
  selectedCount: number;
  canUndo: boolean;
  canRedo: boolean;
  canPaste: boolean;
  /** The view's scale (1 is 100%). */
  zoom: number;
  status: string;
  dirty: boolean;
  saving: boolean;
  /** The board is loaded (nothing to save before). */
  loaded: boolean;
}

/** What its buttons do. */
export interface ToolbarActions {
  onTool: (t: Tool) => void;
  onColor: (c: (typeof COLORS)[number]) => void;
  onWidth: (sw: number) => void;
  onFill: (fill: string) => void;
  onUndo: () => void;
  onRedo: () => void;
  onRemove: () => void;
  onCopy: () => void;
  onPaste: () => void;
  onDuplicate: () => void;
  onZoom: (factor: number) => void;
  onFit: () => void;
  onSave: () => void;
}

export function WhiteboardToolbar({ state, actions }: { state: ToolbarState; actions: ToolbarActions }) {
  const { tool, ink, sw, fill, readOnly, selectedCount, canUndo, canRedo, canPaste, zoom, status, dirty, saving, loaded } = state;
  const [more, setMore] = useState(false);
  const also = selectedCount ? " (also the selection)" : "";
  return (
    <div class={more ? "wb-bar more" : "wb-bar"} role="toolbar" aria-label="Whiteboard tools">
      <div class="wb-group wb-tools" role="group" aria-label="Tools">
        {TOOLS.map((t) => (
          <button
            key={t.tool}
            type="button"
            class={tool === t.tool ? "wb-tool current" : "wb-tool"}
            aria-label={t.label}
            aria-pressed={tool === t.tool}
            aria-keyshortcuts={t.key}
            title={`${t.label} (${t.key})`}
            disabled={readOnly && t.tool !== "select" && t.tool !== "pan"}
            onClick={() => actions.onTool(t.tool)}
          >
            <ToolIcon path={t.path} />
          </button>
        ))}
      </div>
      <div class="wb-group wb-inks" role="group" aria-label="Colour">
        {COLORS.map((c) => (
          <button
            key={c.name}
            type="button"
            class="wb-swatch"
            aria-label={c.name}
            aria-pressed={ink.name === c.name}
            title={`${c.name}${also}`}
            disabled={readOnly}
            onClick={() => actions.onColor(c)}
          >
            <span style={{ background: c.ink }} />
          </button>
        ))}
        <select class="wb-width" aria-label="Stroke width" title="Stroke width (and text size)" value={sw} disabled={readOnly} onChange={(e) => actions.onWidth(Number(e.currentTarget.value))}>
          {WIDTHS.map((x) => (
            <option key={x.sw} value={x.sw}>
              {x.label}
            </option>
          ))}
        </select>
      </div>
      <div class="wb-group wb-extra" role="group" aria-label="Fill">
        {FILLS.map((f) => (
          <button
            key={f.fill}
            type="button"
            class="wb-swatch wb-fill"
            aria-label={f.name}
            aria-pressed={fill === f.fill}
            title={`${f.name} for rectangles and ellipses${also}`}
            disabled={readOnly}
            onClick={() => actions.onFill(f.fill)}
          >
            <span class={f.fill === "none" ? "none" : undefined} style={f.fill === "none" ? undefined : { background: f.fill }} />
          </button>
        ))}
      </div>
      <div class="wb-group wb-edit" role="group" aria-label="Edit">
        <button type="button" class="wb-tool" aria-label="Undo" title="Undo (Ctrl+Z)" aria-keyshortcuts="Control+Z Meta+Z" disabled={readOnly || !canUndo} onClick={actions.onUndo}>
          <ToolIcon path="M9 14L4 9l5-5M4 9h10.5a5.5 5.5 0 0 1 0 11H11" />
        </button>
        <button type="button" class="wb-tool" aria-label="Redo" title="Redo (Shift+Ctrl+Z)" aria-keyshortcuts="Shift+Control+Z Shift+Meta+Z" disabled={readOnly || !canRedo} onClick={actions.onRedo}>
          <ToolIcon path="M15 14l5-5-5-5M20 9H9.5a5.5 5.5 0 0 0 0 11H13" />
        </button>
        <button type="button" class="wb-tool" aria-label="Delete selection" title="Delete (Delete)" aria-keyshortcuts="Delete Backspace" disabled={readOnly || selectedCount === 0} onClick={actions.onRemove}>
          <Icon name="trash" size={18} />
        </button>
      </div>
      <div class="wb-group wb-extra" role="group" aria-label="Clipboard">
        <button type="button" class="wb-tool" aria-label="Copy" title="Copy (Ctrl+C)" aria-keyshortcuts="Control+C Meta+C" disabled={selectedCount === 0} onClick={actions.onCopy}>
          <ToolIcon path="M9 9h11v11H9zM5 15H4V4h11v1" />
        </button>
        <button type="button" class="wb-tool" aria-label="Paste" title="Paste (Ctrl+V)" aria-keyshortcuts="Control+V Meta+V" disabled={readOnly || !canPaste} onClick={actions.onPaste}>
          <ToolIcon path="M9 3h6v4H9zM9 5H5v16h14V5h-4" />
        </button>
        <button type="button" class="wb-tool" aria-label="Duplicate" title="Duplicate (Ctrl+D)" aria-keyshortcuts="Control+D Meta+D" disabled={readOnly || selectedCount === 0} onClick={actions.onDuplicate}>
          <ToolIcon path="M8 8h12v12H8zM4 16V4h12M14 11v6M11 14h6" />
        </button>
      </div>
      <div class="wb-group wb-extra" role="group" aria-label="Zoom">
        <button type="button" class="wb-tool" aria-label="Zoom out" title="Zoom out (−)" aria-keyshortcuts="-" onClick={() => actions.onZoom(0.8)}>
          <ToolIcon path="M5 12h14" />
        </button>
        <span class="wb-zoom" title="Zoom (Ctrl+wheel, or pinch)">{Math.round(zoom * 100)}%</span>
        <button type="button" class="wb-tool" aria-label="Zoom in" title="Zoom in (+)" aria-keyshortcuts="+" onClick={() => actions.onZoom(1.25)}>
          <ToolIcon path="M12 5v14M5 12h14" />
        </button>
        <button type="button" class="btn btn-small btn-ghost" title="Fit the board to the window (0)" aria-keyshortcuts="0" onClick={actions.onFit}>
          Fit
        </button>
      </div>
      <button type="button" class="wb-tool wb-more" aria-label="More tools" title="Fill, copy and paste, zoom" aria-expanded={more} onClick={() => setMore(!more)}>
        <ToolIcon path="M5 12h.5M12 12h.5M19 12h.5" width={3} />
      </button>
      <span class={dirty && !readOnly ? "wb-status changed" : "wb-status"} role="status">
        {status}
      </span>
      {!readOnly && (
        <button type="button" class="btn btn-small btn-primary wb-save" title="Save (Ctrl+S)" aria-keyshortcuts="Control+S Meta+S" disabled={saving || !loaded || !dirty} onClick={actions.onSave}>
          {saving ? "Saving…" : "Save"}
        </button>
      )}
    </div>
  );
}

function ToolIcon({ path, width = 1.8 }: { path: string; width?: number }) {
  return (
    <svg class="icon" width="18" height="18" viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width={width} stroke-linecap="round" stroke-linejoin="round" aria-hidden="true" focusable="false">
      <path d={path} />
    </svg>
  );
}
