// Line icons drawn inline (no icon font, nothing fetched). Decorative by
// default: the control around an icon carries its label.

const PATHS = {
  hash: "M5 9h14M5 15h14M10 4 8 20M16 4l-2 16",
  lock: "M7 11V8a5 5 0 0 1 10 0v3M6 11h12v9H6z",
  plus: "M12 5v14M5 12h14",
  search: "M11 18a7 7 0 1 1 0-14 7 7 0 0 1 0 14zM20 20l-4-4",
  chat: "M4 5h16v11H9l-5 4z",
  threads: "M4 6h16M4 12h10M4 18h13",
  files: "M4 6a1 1 0 0 1 1-1h5l2 2h7a1 1 0 0 1 1 1v10a1 1 0 0 1-1 1H5a1 1 0 0 1-1-1z",
  terminal: "M4 5h16v14H4zM8 10l3 2-3 2M13 15h3",
  memory: "M12 3 4 7l8 4 8-4zM4 12l8 4 8-4M4 17l8 4 8-4",
  activity: "M3 12h4l3-8 4 16 3-8h4",
  settings: "M12 15a3 3 0 1 0 0-6 3 3 0 0 0 0 6zM19 12a7 7 0 0 0-.1-1.2l2-1.6-2-3.4-2.4 1a7 7 0 0 0-2-1.2L14 3h-4l-.5 2.6a7 7 0 0 0-2 1.2l-2.4-1-2 3.4 2 1.6A7 7 0 0 0 5 12c0 .4 0 .8.1 1.2l-2 1.6 2 3.4 2.4-1a7 7 0 0 0 2 1.2L10 21h4l.5-2.6a7 7 0 0 0 2-1.2l2.4 1 2-3.4-2-1.6c.1-.4.1-.8.1-1.2z",
  send: "M4 12 20 4l-6 16-2-7z",
  stop: "M7 7h10v10H7z",
  close: "M6 6l12 12M18 6 6 18",
  chevron: "M9 6l6 6-6 6",
  down: "M6 9l6 6 6-6",
  check: "M5 12l5 5 9-10",
  folder: "M4 6a1 1 0 0 1 1-1h5l2 2h7a1 1 0 0 1 1 1v10a1 1 0 0 1-1 1H5a1 1 0 0 1-1-1z",
  file: "M7 3h7l5 5v13H7zM14 3v5h5",
  upload: "M12 16V4M7 9l5-5 5 5M5 20h14",
  download: "M12 4v12M7 11l5 5 5-5M5 20h14",
  edit: "M4 20h4L19 9l-4-4L4 16zM14 6l4 4",
  trash: "M5 7h14M10 7V4h4v3M7 7l1 13h8l1-13",
  user: "M12 12a4 4 0 1 0 0-8 4 4 0 0 0 0 8zM4 21a8 8 0 0 1 16 0",
  users: "M9 11a4 4 0 1 0 0-8 4 4 0 0 0 0 8zM2 21a7 7 0 0 1 14 0M16 3.5a4 4 0 0 1 0 7.5M18 14a7 7 0 0 1 4 7",
  shield: "M12 3 5 6v6c0 4 3 7.5 7 9 4-1.5 7-5 7-9V6z",
  bell: "M6 16V11a6 6 0 0 1 12 0v5l2 2H4zM10 20a2 2 0 0 0 4 0",
  key: "M14 10a4 4 0 1 0-3.9 4L8 16v2H6v2H3v-3l6.9-6.9A4 4 0 0 0 14 10z",
  link: "M10 14a4 4 0 0 0 5.7 0l3-3a4 4 0 0 0-5.7-5.7l-1 1M14 10a4 4 0 0 0-5.7 0l-3 3a4 4 0 0 0 5.7 5.7l1-1",
  attach: "M20 11l-8 8a5 5 0 0 1-7-7l8-8a3.5 3.5 0 0 1 5 5l-8 8a2 2 0 0 1-3-3l7-7",
  archive: "M4 5h16v4H4zM6 9v10h12V9M10 13h4",
  restore: "M4 12a8 8 0 1 0 2.3-5.7L4 8.6M4 4v4.6h4.6",
  tool: "M14 6a4 4 0 0 0 5 5l-9 9-4-4 9-9a4 4 0 0 1-1-1z",
  skipper: "M12 3v18M5 8h14M7 8a5 5 0 0 0 10 0M4 16a8 8 0 0 0 16 0",
  keyboard: "M3 6h18v12H3zM7 10h.01M11 10h.01M15 10h.01M7 14h10",
  menu: "M4 6h16M4 12h16M4 18h16",
  back: "M15 6l-6 6 6 6",
  refresh: "M20 12a8 8 0 1 1-2.3-5.7L20 8.6M20 4v4.6h-4.6",
  newfolder: "M4 6a1 1 0 0 1 1-1h5l2 2h7a1 1 0 0 1 1 1v10a1 1 0 0 1-1 1H5a1 1 0 0 1-1-1zM12 11v5M9.5 13.5h5",
  eye: "M2 12s3.5-7 10-7 10 7 10 7-3.5 7-10 7S2 12 2 12zM12 15a3 3 0 1 0 0-6 3 3 0 0 0 0 6z",
  logout: "M15 4h4v16h-4M10 8l-4 4 4 4M6 12h10",
  pin: "M9 4h6l-1 6 3 3H7l3-3zM12 13v7",
  note: "M14 3H6a1 1 0 0 0-1 1v16a1 1 0 0 0 1 1h12a1 1 0 0 0 1-1V8zM14 3v5h5M8.5 13h7M8.5 17h4",
} as const;

export type IconName = keyof typeof PATHS;

export function Icon({ name, size = 18, class: className }: { name: IconName; size?: number; class?: string }) {
  return (
    <svg
      class={className ? `icon ${className}` : "icon"}
      width={size}
      height={size}
      viewBox="0 0 24 24"
      fill="none"
      stroke="currentColor"
      stroke-width="1.8"
      stroke-linecap="round"
      stroke-linejoin="round"
      aria-hidden="true"
      focusable="false"
    >
      <path d={PATHS[name]} />
    </svg>
  );
}
