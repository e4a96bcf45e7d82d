// How well a name matches what was typed in the command palette. A match
// must start a word, or be a run of the typed letters as they are: letters
// scattered through a text ("Jane" in "Just a note for the team") are no
// match, since they find nearly everything once a workspace has a history.

/** Where each word of `text` starts (a letter or digit after anything else). */
function wordStarts(text: string): number[] {
  const starts: number[] = [];
  for (let i = 0; i < text.length; i++) {
    if (/[\p{L}\p{N}]/u.test(text[i]!) && (i === 0 || !/[\p{L}\p{N}]/u.test(text[i - 1]!))) starts.push(i);
  }
  return starts;
}

/**
 * `query` in `text`: the whole of it (100), its start (80), a word's start
 * (60), every typed word at the start of a word, in order ("rel no" →
 * "release notes", 40), a run inside a word (20); 0 when it is not there.
 */
export function matchScore(text: string, query: string): number {
  const t = text.toLowerCase();
  const q = query.toLowerCase().trim().replace(/\s+/g, " ");
  if (!q) return 1;
  if (t === q) return 100;
  if (t.startsWith(q)) return 80;
  const starts = wordStarts(t);
  if (starts.some((i) => t.startsWith(q, i))) return 60;
  const words = q.split(" ");
  if (words.length > 1) {
    let w = 0;
    for (const i of starts) if (w < words.length && t.startsWith(words[w]!, i)) w++;
    if (w === words.length) return 40;
  }
  return t.includes(q) ? 20 : 0;
}
