// A quiet line at the top while the live stream is down. Short blips do
// not show it; nothing is missed either way, since the stream resumes from
// the last event it applied.
import { useEffect, useState } from "preact/hooks";
import { streamState } from "../../state/session";

const GRACE_MS = 1500;

export function OfflineBanner() {
  const state = streamState.value;
  const [show, setShow] = useState(false);
  useEffect(() => {
    if (state === "live") {
      setShow(false);
      return;
    }
    const timer = setTimeout(() => setShow(true), GRACE_MS);
    return () => clearTimeout(timer);
  }, [state]);
  return (
    <div class={show ? "offline-banner shown" : "offline-banner"} role="status" aria-live="polite">
      {show ? "Reconnecting… changes made meanwhile will appear when the connection is back." : ""}
    </div>
  );
}
