// A tool call inside an agent's reply: what it did, how it went, how long
// it took and under which isolation; opened, its input and output.
import type { Signal } from "@preact/signals";
import type { ToolAction } from "../../api/types";
import { Icon } from "../../components/Icon";
import { duration } from "../../lib/format";

const TOOL_WORDS: Record<string, string> = {
  run_command: "Ran a command",
  write_file: "Wrote a file",
  read_file: "Read a file",
  list_files: "Listed files",
  edit_file: "Edited a file",
  grep: "Searched files",
  glob: "Found files",
  recall: "Recalled from memory",
  remember: "Recorded in memory",
  call_skipper: "Called Skipper",
  host_command: "Ran a command on the host",
  install_package: "Installed a package",
  grant_capability: "Granted a capability",
  request_approval: "Asked for approval",
  resolve_escalation: "Handed back",
  hand_to_captain: "Handed to the Captain",
  read_channel: "Read another channel",
  list_channels: "Listed channels",
  create_channel: "Created a channel",
  archive_channel: "Archived a channel",
  delete_channel: "Deleted a channel",
  set_model: "Changed a model",
  revoke_capability: "Revoked a capability",
};

const STATUS_WORDS: Record<ToolAction["status"], string> = {
  running: "running",
  ok: "done",
  error: "failed",
  denied: "denied",
  cancelled: "cancelled",
  interrupted: "interrupted",
};

export function ToolCard({ action }: { action: Signal<ToolAction> }) {
  const a = action.value;
  const title = TOOL_WORDS[a.tool] ?? `Used ${a.tool}`;
  return (
    <details class={`tool-card tool-${a.status}`}>
      <summary>
        <Icon name="tool" size={15} />
        <span class="tool-title">{title}</span>
        <code class="tool-input-inline">{a.input_summary}</code>
        <span class="tool-meta">
          {a.status === "running" ? <span class="spinner" aria-hidden="true" /> : null}
          <span class={`tool-status status-${a.status}`}>{STATUS_WORDS[a.status]}</span>
          {a.duration_ms !== null && a.duration_ms !== undefined && <span>{duration(a.duration_ms)}</span>}
        </span>
      </summary>
      <dl class="tool-detail">
        <dt>Tool</dt>
        <dd>
          <code>{a.tool}</code>
        </dd>
        <dt>Input</dt>
        <dd>
          <pre>{a.input_summary || "—"}</pre>
        </dd>
        <dt>{a.output ? "Result" : "Output"}</dt>
        <dd>
          <pre>{a.result_summary || (a.status === "running" ? "Still running…" : "—")}</pre>
        </dd>
        {a.output && (
          <>
            {/* What the tool gave back to the agent: a command's exit code and what it printed. */}
            <dt>Output</dt>
            <dd>
              <pre class="tool-output" tabIndex={0}>
                {a.output}
              </pre>
            </dd>
          </>
        )}
        {a.isolation && (
          <>
            <dt>Isolation</dt>
            <dd>{a.isolation}</dd>
          </>
        )}
      </dl>
    </details>
  );
}
