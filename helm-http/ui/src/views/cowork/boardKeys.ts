// The whiteboard's keyboard shortcuts: saving, undo and redo, the
// clipboard (copy, cut, paste, duplicate), selecting all, deleting,
// nudging with the arrow keys, zoom, and a key per tool. Typing in a text
// box or a toolbar field keeps its keys (Ctrl/Cmd-S still saves).
import { bounds } from "../../lib/whiteboard/geometry";
import type { BoardPointerInput } from "./useBoardPointer";
import { TOOLS, isTyping } from "./whiteboardTools";

/** One step of a nudge; Shift takes ten. */
const NUDGE = 1;

export function boardKeys(input: BoardPointerInput, setSpaceHeld: (held: boolean) => void) {
  const { readOnly, itemsRef, measured } = input.board;
  const { tool, setTool, chooseTool, selected, setSelected } = input.tools;
  const { canvas, zoomAt, fit } = input.view;
  const { editItem } = input.text;
  const { save, undo, redo, remove, nudge, copy, cut, paste, duplicate } = input.commands;

  const keys = (e: KeyboardEvent) => {
    const mod = e.ctrlKey || e.metaKey;
    const key = e.key.toLowerCase();
    let handled = true;
    if (mod && key === "s") void save();
    else if (isTyping(e.target)) return;
    else if (mod && (key === "y" || (key === "z" && e.shiftKey))) redo();
    else if (mod && key === "z") undo();
    else if (mod && key === "a") setSelected(new Set(itemsRef.current.filter((i) => bounds(i, measured.current)).map((i) => i.id)));
    else if (mod && key === "c" && !e.shiftKey && !e.altKey) copy();
    else if (mod && key === "x" && !e.shiftKey && !e.altKey) cut();
    else if (mod && key === "v" && !e.shiftKey && !e.altKey) paste();
    // Ctrl/Cmd-D would bookmark the page: on the board it duplicates.
    else if (mod && key === "d" && !e.shiftKey && !e.altKey) duplicate();
    else if (mod || e.altKey) handled = false;
    else if (key === "delete" || key === "backspace") remove();
    else if (key === "escape") {
      if (selected.size) setSelected(new Set());
      else if (tool !== "select") setTool("select");
      else handled = false;
    } else if (key === "enter" && selected.size === 1) {
      const item = itemsRef.current.find((i) => selected.has(i.id));
      if (item) editItem(item);
    } else if (key === "+" || key === "=") zoomAt(1.25);
    else if (key === "-" || key === "_") zoomAt(0.8);
    else if (key === "0") fit();
    else if (key.startsWith("arrow") && selected.size) {
      const step = e.shiftKey ? 10 * NUDGE : NUDGE;
      nudge(key === "arrowleft" ? -step : key === "arrowright" ? step : 0, key === "arrowup" ? -step : key === "arrowdown" ? step : 0);
    } else if (key === " " && e.target === canvas.current) setSpaceHeld(true);
    else {
      const t = TOOLS.find((x) => x.key.toLowerCase() === key);
      if (t && (!readOnly || t.tool === "select" || t.tool === "pan")) chooseTool(t.tool);
      else handled = false;
    }
    if (handled) {
      e.preventDefault();
      e.stopPropagation();
    }
  };
  const keyUp = (e: KeyboardEvent) => {
    if (e.key === " ") setSpaceHeld(false);
  };
  return { keys, keyUp };
}
