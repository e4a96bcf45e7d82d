// Passing notices: "Saved", an error in words, a mention. Each fades after
// a while; errors stay until dismissed.
import { signal } from "@preact/signals";

export interface Toast {
  id: number;
  text: string;
  tone: "info" | "error" | "mention";
  /** Where clicking it goes, if anywhere. */
  href?: string;
  /** A button beside the text ("Undo"), which dismisses the toast when pressed. */
  action?: { label: string; run: () => void };
}

export const toasts = signal<Toast[]>([]);
let next = 1;

export function toast(text: string, tone: Toast["tone"] = "info", href?: string): void {
  const id = next++;
  toasts.value = [...toasts.value.slice(-3), { id, text, tone, href }];
  // One that leads somewhere stays long enough to be followed.
  if (tone !== "error") setTimeout(() => dismiss(id), tone === "mention" || href ? 8000 : 4000);
}

/** A notice with a button beside it (such as "Undo"); it stays long enough to be used. */
export function toastWithAction(text: string, action: NonNullable<Toast["action"]>): void {
  const id = next++;
  toasts.value = [...toasts.value.slice(-3), { id, text, tone: "info", action }];
  setTimeout(() => dismiss(id), 8000);
}

export function dismiss(id: number): void {
  toasts.value = toasts.value.filter((t) => t.id !== id);
}
