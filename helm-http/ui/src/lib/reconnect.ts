// Views that load over REST (Memory, Files, Activity, …) do not hear about
// a server coming back: the events stream does. When it reconnects, a view
// whose load failed meanwhile loads again, without a click or a reload.
import { useEffect } from "preact/hooks";
import { reconnects } from "../state/session";

/** Calls `retry` when the events stream comes back, if `failed` then. */
export function useRetryOnReconnect(failed: boolean, retry: () => void): void {
  const count = reconnects.value;
  useEffect(() => {
    if (count > 0 && failed) retry();
  }, [count]);
}
