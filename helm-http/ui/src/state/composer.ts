// Text another control asks the composer to take in: "Ask @skipper" puts
// `@skipper ` at its start, a drop of files adds their paths.
import { signal } from "@preact/signals";

export const composerInsert = signal<{ channel: number; text: string } | undefined>(undefined);
