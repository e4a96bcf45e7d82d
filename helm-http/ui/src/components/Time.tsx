// A time as people say it ("5 min ago"), with the exact one on hover,
// kept fresh by one shared clock.
import { signal } from "@preact/signals";
import { ago, fullTime } from "../lib/format";

const now = signal(Date.now());
setInterval(() => (now.value = Date.now()), 30_000);

export function Time({ at }: { at: string }) {
  return (
    <time dateTime={at} title={fullTime(at)}>
      {ago(at, now.value)}
    </time>
  );
}
