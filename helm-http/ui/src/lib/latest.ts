// Reads whose answers can come back out of order: a folder's listing, a
// channel's members, a recall. An answer to a read that a newer one
// replaced (another channel, another folder, a second click), or that
// arrives once the view is gone, must not be shown.
import { useCallback, useEffect, useRef } from "preact/hooks";

/**
 * Returns `take`: call it as a read leaves; the check it returns stays true
 * while no later read was taken and the component is still shown.
 */
export function useLatest(): () => () => boolean {
  const taken = useRef(0);
  useEffect(
    () => () => {
      taken.current += 1;
    },
    [],
  );
  return useCallback(() => {
    const mine = ++taken.current;
    return () => taken.current === mine;
  }, []);
}
