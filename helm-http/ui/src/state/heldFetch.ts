// For the stores' unit tests: a fetch whose answers wait until the test
// lets each go, so an event can be applied while a read is on its way.

/** A held fetch: `release` lets the oldest waiting request have its answer; `restore` puts the real fetch back. */
export interface Held {
  release: () => Promise<void>;
  restore: () => void;
}

/** Answers each request, in order, only when `release` lets it go, with the next of `bodies` (the last one repeats). */
export function heldFetch(...bodies: unknown[]): Held {
  return heldAnswers(bodies.map((body) => [200, body]));
}

/** As `heldFetch`, each answer with its HTTP status (a 404, say). */
export function heldAnswers(answers: [number, unknown][]): Held {
  const waiting: (() => void)[] = [];
  const realFetch = globalThis.fetch;
  globalThis.fetch = (async () => {
    await new Promise<void>((resolve) => waiting.push(resolve));
    const [status, body] = (answers.length > 1 ? answers.shift() : answers[0]) ?? [200, null];
    return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
  }) as typeof fetch;
  return {
    // Waits a tick first, so the request has been made, and after, so its answer is applied.
    release: async () => {
      await tick();
      waiting.shift()?.();
      await tick();
    },
    restore: () => (globalThis.fetch = realFetch),
  };
}

export const tick = () => new Promise((resolve) => setTimeout(resolve, 0));
