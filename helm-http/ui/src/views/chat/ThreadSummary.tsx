// A thread's session summary, under its header. Its decisions are listed
// one by one: each can be kept as a decision record of the channel (sourced
// to this thread), or says it is one already. Helm keeps the summary by
// itself but leaves decisions to a person (see lib/summary.ts).
import { useEffect, useState } from "preact/hooks";
import { describeError } from "../../api/client";
import { isRecorded, summaryParts } from "../../lib/summary";
import { addMemory, loadMemory, memoryOf } from "../../state/memory";
import { toast } from "../../state/toasts";

export function ThreadSummary({ summary, channelId, channelName, thread, writable }: { summary: string; channelId: number; channelName: string; thread: number; writable: boolean }) {
  const { lines, decisions } = summaryParts(summary);
  const [open, setOpen] = useState(false);
  const [saving, setSaving] = useState<string>();
  const records = memoryOf(channelId).value;
  // The channel's records say which decisions are kept already; read them
  // once the summary is opened, if no view has yet.
  useEffect(() => {
    if (open && decisions.length > 0 && records === undefined) loadMemory(channelId, channelName).catch(() => undefined);
  }, [open, channelId]);

  const keep = async (decision: string) => {
    setSaving(decision);
    try {
      await addMemory(channelName, "decision", decision, thread);
      toast("Decision recorded in the channel's memory.");
    } catch (e) {
      toast(describeError(e), "error");
    } finally {
      setSaving(undefined);
    }
  };

  return (
    <details class="thread-summary" onToggle={(e) => setOpen(e.currentTarget.open)}>
      <summary>Summary</summary>
      <p>{lines.join("\n")}</p>
      {decisions.length > 0 && (
        <>
          <h4 class="small">Decisions</h4>
          <ul class="summary-decisions">
            {decisions.map((d) => {
              const kept = records !== undefined && isRecorded(d, records, thread);
              return (
                <li key={d}>
                  <span>{d}</span>{" "}
                  {kept ? (
                    <span class="muted small">recorded</span>
                  ) : (
                    writable &&
                    records !== undefined && (
                      <button type="button" class="btn btn-small btn-ghost" disabled={saving !== undefined} onClick={() => void keep(d)} aria-label={`Record as a decision: ${d}`}>
                        Record as a decision
                      </button>
                    )
                  )}
                </li>
              );
            })}
          </ul>
        </>
      )}
    </details>
  );
}
