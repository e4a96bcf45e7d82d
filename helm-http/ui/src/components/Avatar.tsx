// A person's or agent's initials on a colour of their own.
import { hue, initials } from "../lib/format";

export function Avatar({ name, kind = "human", size = "md" }: { name: string; kind?: "human" | "agent" | "skipper" | "system"; size?: "sm" | "md" }) {
  const tint = Math.floor(hue(name) / 30);
  const label = kind === "skipper" ? "S" : kind === "system" ? "H" : initials(name);
  return (
    <span class={`avatar avatar-${size} avatar-${kind} tint-${tint}`} aria-hidden="true">
      {label}
    </span>
  );
}
