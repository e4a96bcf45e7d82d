// The shortcut sheet (`?`).
import { Dialog } from "../../components/Dialog";

const SHORTCUTS: [string, string][] = [
  ["Ctrl K or ⌘ K", "Jump to a channel, thread or file"],
  ["c", "Create a channel"],
  ["n", "Write a quick note (into a channel's /workspace/notes)"],
  ["Ctrl Enter or ⌘ Enter", "Save the quick note"],
  ["?", "Show these shortcuts"],
  ["Enter", "Send the message"],
  ["Shift Enter", "New line in a message"],
  ["@", "Mention the agent, Skipper or a person"],
  ["↑ ↓ then Enter", "Pick a mention or a palette result"],
  ["Escape", "Close a dialog, the palette, the quick note or a thread"],
  ["Ctrl S or ⌘ S", "Save the file open in Cowork"],
  ["Escape then Tab", "Leave the terminal for its tabs (a lone Escape still reaches the shell)"],
  ["→ ← Space", "Next and previous slide while presenting"],
];

export function Shortcuts({ onClose }: { onClose: () => void }) {
  return (
    <Dialog title="Keyboard shortcuts" onClose={onClose}>
      <table class="shortcuts">
        <tbody>
          {SHORTCUTS.map(([keys, what]) => (
            <tr key={keys}>
              <th scope="row">
                {keys.split(" or ").map((k, i) => (
                  <span key={k}>
                    {i > 0 && " or "}
                    <kbd>{k}</kbd>
                  </span>
                ))}
              </th>
              <td>{what}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </Dialog>
  );
}
