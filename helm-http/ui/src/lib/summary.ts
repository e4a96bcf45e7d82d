// A thread's session summary as Helm renders it (helm-core's
// `SessionSummary::render`): "Goal: …", "Work done: …", "Result: …", then
// "Decisions: a; b" and "Open items: c; d" when there are any. The thread
// panel lists the decisions so a person can keep each as a decision record
// (the spec's memory candidates): the summary is kept by itself, but a
// decision becomes a record only when a person says so, so the agent's own
// records are not doubled by paraphrases.

/** The summary's parts: its other lines as written, and its decisions. */
export interface SummaryParts {
  lines: string[];
  decisions: string[];
}

const DECISIONS = "Decisions: ";

/** Splits a rendered summary into its decisions and the rest. */
export function summaryParts(summary: string): SummaryParts {
  const lines: string[] = [];
  const decisions: string[] = [];
  for (const line of summary.split("\n")) {
    if (line.startsWith(DECISIONS)) {
      decisions.push(
        ...line
          .slice(DECISIONS.length)
          .split("; ")
          .map((d) => d.trim())
          .filter((d) => d.length > 0),
      );
    } else {
      lines.push(line);
    }
  }
  return { lines, decisions };
}

/** Whether `decision` is recorded already: a current decision record of the thread with the same words (case and spaces aside). */
export function isRecorded(decision: string, records: { kind: string; status: string; thread_id?: number | null; content: string }[], thread: number): boolean {
  const words = (s: string) => s.toLowerCase().replace(/\s+/g, " ").replace(/[.\s]+$/, "").trim();
  return records.some((r) => r.kind === "decision" && r.status === "current" && r.thread_id === thread && words(r.content) === words(decision));
}
