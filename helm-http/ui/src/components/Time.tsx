// A time as people say it ("5 min ago"), with the exact one on hover,
// kept fresh by one shared clock. The exact time is formatted only when
// the pointer or focus reaches it: formatting a full date is costly, and a
// list scrolling past hundreds of messages would pay it for each.
import { signal } from "@preact/signals";
import { ago, fullTime } from "../lib/format";

const now = signal(Date.now());
setInterval(() => (now.value = Date.now()), 30_000);

function exact(e: Event): void {
  const el = e.currentTarget as HTMLTimeElement;
  if (!el.title) el.title = fullTime(el.dateTime);
}

export function Time({ at }: { at: string }) {
  return (
    <time dateTime={at} onPointerEnter={exact} onFocus={exact}>
      {ago(at, now.value)}
    </time>
  );
}
