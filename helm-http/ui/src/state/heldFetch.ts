// For the stores' unit tests: a fetch whose answers wait until the test
// lets each go, so an event can be applied while a read is on its way.

/** Answers each request, in order, only when `release` lets it go, with the next of `bodies` (the last one repeats). */
export function heldFetch(...bodies: unknown[]): { release: () => Promise<void>; restore: () => void } {
  const waiting: (() => void)[] = [];
  const realFetch = globalThis.fetch;
  globalThis.fetch = (async () => {
    await new Promise<void>((resolve) => waiting.push(resolve));
    const body = bodies.length > 1 ? bodies.shift() : bodies[0];
    return new Response(JSON.stringify(body), { status: 200, headers: { "content-type": "application/json" } });
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
