// The whiteboard's toolbar: the tools, colour and stroke width (which also
// restyle the selection), undo, redo and delete, zoom, what is saved, and
// Save. The state it shows and what its buttons do are the editor's.
import { Icon } from "../../components/Icon";
import { COLORS, TOOLS, WIDTHS, type Tool } from "./whiteboardTools";

export function WhiteboardToolbar({
  tool,
  ink,
  sw,
  readOnly,
  selectedCount,
  canUndo,
  canRedo,
  zoom,
  status,
  dirty,
  saving,
  loaded,
  onTool,
  onColor,
  onWidth,
  onUndo,
  onRedo,
  onRemove,
  onZoom,
  onFit,
  onSave,
}: {
  tool: Tool;
  ink: (typeof COLORS)[number];
  sw: number;
  readOnly: boolean;
  selectedCount: number;
  canUndo: boolean;
  canRedo: boolean;
  /** The view's scale (1 is 100%). */
  zoom: number;
  status: string;
  dirty: boolean;
  saving: boolean;
  /** The board is loaded (nothing to save before). */
  loaded: boolean;
  onTool: (t: Tool) => void;
  onColor: (c: (typeof COLORS)[number]) => void;
  onWidth: (sw: number) => void;
  onUndo: () => void;
  onRedo: () => void;
  onRemove: () => void;
  onZoom: (factor: number) => void;
  onFit: () => void;
  onSave: () => void;
}) {
  return (
    <div class="wb-bar" role="toolbar" aria-label="Whiteboard tools">
      <div class="wb-group" role="group" aria-label="Tools">
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
            onClick={() => onTool(t.tool)}
          >
            <ToolIcon path={t.path} />
          </button>
        ))}
      </div>
      <div class="wb-group" role="group" aria-label="Colour">
        {COLORS.map((c) => (
          <button
            key={c.name}
            type="button"
            class="wb-swatch"
            aria-label={c.name}
            aria-pressed={ink.name === c.name}
            title={`${c.name}${selectedCount ? " (also the selection)" : ""}`}
            disabled={readOnly}
            onClick={() => onColor(c)}
          >
            <span style={{ background: c.ink }} />
          </button>
        ))}
        <select class="wb-width" aria-label="Stroke width" title="Stroke width (and text size)" value={sw} disabled={readOnly} onChange={(e) => onWidth(Number(e.currentTarget.value))}>
          {WIDTHS.map((x) => (
            <option key={x.sw} value={x.sw}>
              {x.label}
            </option>
          ))}
        </select>
      </div>
      <div class="wb-group" role="group" aria-label="Edit">
        <button type="button" class="wb-tool" aria-label="Undo" title="Undo (Ctrl+Z)" aria-keyshortcuts="Control+Z Meta+Z" disabled={readOnly || !canUndo} onClick={onUndo}>
          <ToolIcon path="M9 14L4 9l5-5M4 9h10.5a5.5 5.5 0 0 1 0 11H11" />
        </button>
        <button type="button" class="wb-tool" aria-label="Redo" title="Redo (Shift+Ctrl+Z)" aria-keyshortcuts="Shift+Control+Z Shift+Meta+Z" disabled={readOnly || !canRedo} onClick={onRedo}>
          <ToolIcon path="M15 14l5-5-5-5M20 9H9.5a5.5 5.5 0 0 0 0 11H13" />
        </button>
        <button type="button" class="wb-tool" aria-label="Delete selection" title="Delete (Delete)" aria-keyshortcuts="Delete Backspace" disabled={readOnly || selectedCount === 0} onClick={onRemove}>
          <Icon name="trash" size={18} />
        </button>
      </div>
      <div class="wb-group" role="group" aria-label="Zoom">
        <button type="button" class="wb-tool" aria-label="Zoom out" title="Zoom out (−)" aria-keyshortcuts="-" onClick={() => onZoom(0.8)}>
          <ToolIcon path="M5 12h14" />
        </button>
        <span class="wb-zoom" title="Zoom (Ctrl+wheel, or pinch)">{Math.round(zoom * 100)}%</span>
        <button type="button" class="wb-tool" aria-label="Zoom in" title="Zoom in (+)" aria-keyshortcuts="+" onClick={() => onZoom(1.25)}>
          <ToolIcon path="M12 5v14M5 12h14" />
        </button>
        <button type="button" class="btn btn-small btn-ghost" title="Fit the board to the window (0)" aria-keyshortcuts="0" onClick={onFit}>
          Fit
        </button>
      </div>
      <span class={dirty && !readOnly ? "wb-status changed" : "wb-status"} role="status">
        {status}
      </span>
      {!readOnly && (
        <button type="button" class="btn btn-small btn-primary wb-save" title="Save (Ctrl+S)" aria-keyshortcuts="Control+S Meta+S" disabled={saving || !loaded || !dirty} onClick={onSave}>
          {saving ? "Saving…" : "Save"}
        </button>
      )}
    </div>
  );
}

function ToolIcon({ path }: { path: string }) {
  return (
    <svg class="icon" width="18" height="18" viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="1.8" stroke-linecap="round" stroke-linejoin="round" aria-hidden="true" focusable="false">
      <path d={path} />
    </svg>
  );
}
