// Small, pure formatting helpers shared by views.

// Intl formatters are costly to make; one of each is enough.
const weekday = new Intl.DateTimeFormat(undefined, { weekday: "short" });
const dayMonth = new Intl.DateTimeFormat(undefined, { day: "numeric", month: "short" });
const dayMonthYear = new Intl.DateTimeFormat(undefined, { day: "numeric", month: "short", year: "numeric" });
const time = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit" });
const full = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });

const minute = 60_000;
const hour = 60 * minute;
const day = 24 * hour;

/** "just now", "5 min ago", "3 h ago", "Mon 14:02", "12 Mar". */
export function ago(iso: string, now = Date.now()): string {
  const then = Date.parse(iso);
  if (Number.isNaN(then)) return "";
  const delta = now - then;
  if (delta < -45_000) {
    const ahead = -delta;
    if (ahead < hour) return `in ${Math.round(ahead / minute)} min`;
    if (ahead < day) return `in ${Math.round(ahead / hour)} h`;
    return `on ${dayMonth.format(then)}`;
  }
  if (delta < 45_000) return "just now";
  if (delta < hour) return `${Math.round(delta / minute)} min ago`;
  if (delta < day) return `${Math.round(delta / hour)} h ago`;
  const date = new Date(then);
  if (delta < 6 * day) return `${weekday.format(date)} ${clock(date)}`;
  return (delta > 300 * day ? dayMonthYear : dayMonth).format(date);
}

/** "14:02". */
export function clock(date: Date): string {
  return time.format(date);
}

/** A full date and time, for tooltips. */
export function fullTime(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : full.format(date);
}

/** "1.2 KB", "3.4 MB". */
export function bytes(n: number): string {
  if (n < 1000) return `${n} B`;
  const units = ["KB", "MB", "GB", "TB"];
  let value = n;
  let unit = -1;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit += 1;
  }
  return `${value < 10 ? value.toFixed(1) : Math.round(value)} ${units[unit]}`;
}

/** "1.2 s", "340 ms". */
export function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return "";
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

/** "1 thread", "3 threads". */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** Initials for an avatar: "Ada Lovelace" → "AL". */
export function initials(name: string): string {
  const parts = name.replace(/[@#]/g, "").split(/[\s._-]+/).filter(Boolean);
  const letters = parts.length > 1 ? [parts[0]![0], parts[1]![0]] : [name.replace(/[@#]/g, "").slice(0, 2)];
  return letters.join("").toUpperCase();
}

/** A stable hue for a name, for avatars. */
export function hue(name: string): number {
  let h = 0;
  for (let i = 0; i < name.length; i++) h = (h * 31 + name.charCodeAt(i)) % 360;
  return h;
}

/**
 * A count at a glance: exact up to 999, then "1.2k", "12k", "340k",
 * "1.2M", "12M" (one decimal below ten of a unit, none above; a value that
 * rounds up to the next unit is said in it: 999,999 is "1M").
 */
export function compactCount(n: number): string {
  const value = Number.isFinite(n) ? Math.max(0, Math.round(n)) : 0;
  if (value < 1000) return String(value);
  const units: [number, string][] = [
    [1e3, "k"],
    [1e6, "M"],
    [1e9, "B"],
  ];
  for (let i = 0; i < units.length; i++) {
    const [size, suffix] = units[i]!;
    const scaled = value / size;
    // Below ten of a unit one decimal ("1.2k"), else whole ("12k"); ".0" is dropped.
    const shown = scaled < 9.95 ? Math.round(scaled * 10) / 10 : Math.round(scaled);
    if (shown < 1000 || i === units.length - 1) return `${shown}${suffix}`;
  }
  return String(value);
}

const grouping = new Map<string, Intl.NumberFormat>();

/** An exact count with the locale's grouping: "1,234" (in English). */
export function exactCount(n: number, locale?: string): string {
  const key = locale ?? "";
  let f = grouping.get(key);
  if (!f) {
    f = new Intl.NumberFormat(locale, { maximumFractionDigits: 0 });
    grouping.set(key, f);
  }
  return f.format(n);
}

/** Tokens used, as the provider reported them. */
export interface Usage {
  input_tokens: number;
  output_tokens: number;
}

/** "1.2k tokens", "1 token". */
export function tokenCount(usage: Usage): string {
  const total = usage.input_tokens + usage.output_tokens;
  return `${compactCount(total)} ${total === 1 ? "token" : "tokens"}`;
}

/**
 * The exact split, for a tooltip: "1,234 in · 210 out, over 2 model calls"
 * (and "in 3 turns" when it sums several).
 */
export function usageDetail(usage: Usage, calls?: number, turns?: number, locale?: string): string {
  let text = `${exactCount(usage.input_tokens, locale)} in · ${exactCount(usage.output_tokens, locale)} out`;
  if (calls !== undefined && calls > 0) text += `, over ${exactCount(calls, locale)} model ${calls === 1 ? "call" : "calls"}`;
  if (turns !== undefined && turns > 1) text += ` in ${exactCount(turns, locale)} turns`;
  return text;
}

/** `text` with its first letter a capital, to start a sentence with a name like "you (another tab)". */
export function sentenceStart(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
