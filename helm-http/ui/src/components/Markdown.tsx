// A message's Markdown, sanitised. Re-renders when its text changes, and
// once when the code highlighter arrives.
//
// A streaming reply is drawn block by block (`streamBlocks`): the blocks
// already finished keep their HTML and are never parsed again; only the
// block still growing is, so each frame of a long reply costs as much as
// its last paragraph, not the whole reply. The finished message is then
// rendered whole once (lists and references that span blocks join up).
import { memo } from "preact/compat";
import { highlighterReady, renderMarkdown, streamBlocks } from "../lib/markdown";

export function Markdown({ text, class: className }: { text: string; class?: string }) {
  void highlighterReady.value;
  return <div class={className ? `prose ${className}` : "prose"} dangerouslySetInnerHTML={{ __html: renderMarkdown(text) }} />;
}

/** One finished block of a streaming reply: its text never changes again. */
const Block = memo(function Block({ text }: { text: string }) {
  void highlighterReady.value;
  return <div class="prose-block" dangerouslySetInnerHTML={{ __html: renderMarkdown(text) }} />;
});

export function StreamingMarkdown({ text, class: className }: { text: string; class?: string }) {
  const { done, tail } = streamBlocks(text);
  return (
    <div class={className ? `prose ${className}` : "prose"}>
      {done.map((block, i) => (
        <Block key={i} text={block} />
      ))}
      {tail && <div class="prose-block" dangerouslySetInnerHTML={{ __html: renderMarkdown(tail, false) }} />}
    </div>
  );
}
