// A signal read at most once per animation frame. A reply streams in at a
// hundred deltas a second or more, while the screen shows sixty frames:
// rendering on every delta would lay the message out two or three times
// per frame for nothing. The store stays exact (every delta applied at
// once); only what is drawn is coalesced.
import { effect, type Signal } from "@preact/signals";
import { useEffect, useRef, useState } from "preact/hooks";

export function useFramed<T>(source: Signal<T> | undefined): T | undefined {
  const [, setTick] = useState(0);
  const drawn = useRef<T | undefined>(undefined);
  useEffect(() => {
    if (!source) return;
    let frame = 0;
    const dispose = effect(() => {
      // (Also on the first run: it may have changed since the render.)
      if (source.value !== drawn.current && !frame) {
        frame = requestAnimationFrame(() => {
          frame = 0;
          setTick((t) => t + 1);
        });
      }
    });
    return () => {
      dispose();
      if (frame) cancelAnimationFrame(frame);
    };
  }, [source]);
  // peek(): the component must not subscribe itself, or it would render per delta.
  const value = source?.peek();
  drawn.current = value;
  return value;
}
