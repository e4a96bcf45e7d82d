// What model calls used, at a glance ("1.2k tokens"), with the exact split
// ("1,234 in · 210 out, over 2 model calls") in its tooltip and said to
// screen readers. Shown only where the provider reported usage: an absent
// count is never drawn as 0.
import { compactCount, tokenCount, usageDetail } from "../lib/format";
import type { TurnUsage } from "../state/threads";

export function Tokens({ usage, turns, label, class: extra }: { usage: TurnUsage; turns?: number; label?: string; class?: string }) {
  const detail = usageDetail(usage, usage.calls, turns);
  const text = label ? `${label}: ${compactCount(usage.input_tokens + usage.output_tokens)}` : tokenCount(usage);
  return (
    <span class={extra ? `token-count ${extra}` : "token-count"} title={detail}>
      {text}
      <span class="sr-only"> ({detail})</span>
    </span>
  );
}
