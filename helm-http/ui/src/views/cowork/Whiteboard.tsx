// A whiteboard (an SVG under /workspace/whiteboards). This is a stand-in
// that shows the board as saved; the whiteboard editor replaces this file
// with the same export, and loads and saves the file itself through the
// files API.
import type { JSX } from "preact";
import { useEffect, useState } from "preact/hooks";
import { ApiError, api, describeError, urlFor } from "../../api/client";
import { ErrorNote } from "../../components/Field";

export function Whiteboard(props: { channel: string; path: string }): JSX.Element {
  const { channel, path } = props;
  const [state, setState] = useState<"loading" | "ready" | "missing">("loading");
  const [error, setError] = useState<string>();
  useEffect(() => {
    setState("loading");
    api
      .get("/api/channels/{channel}/files/stat", { path: { channel }, query: { path } })
      .then(() => setState("ready"))
      .catch((e) => {
        if (e instanceof ApiError && e.status === 404) setState("missing");
        else setError(describeError(e));
      });
  }, [channel, path]);
  const src = urlFor("/api/channels/{channel}/files/download", { path: { channel }, query: { path } });
  return (
    <div class="whiteboard-view">
      <ErrorNote error={error} />
      {state === "missing" && <p class="muted pad">{path} is not in this workspace (any more).</p>}
      {state === "ready" && <img class="whiteboard-image" src={src} alt={`The whiteboard ${path}`} />}
    </div>
  );
}
