// A message's Markdown, sanitised. Re-renders when its text changes, and
// once when the code highlighter arrives.
import { highlighterReady, renderMarkdown } from "../lib/markdown";

export function Markdown({ text, class: className }: { text: string; class?: string }) {
  void highlighterReady.value;
  return <div class={className ? `prose ${className}` : "prose"} dangerouslySetInnerHTML={{ __html: renderMarkdown(text) }} />;
}
