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
