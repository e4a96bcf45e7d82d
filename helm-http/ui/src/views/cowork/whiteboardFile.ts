// The whiteboard's file through the files API: read with the time it was
// last changed (so a save over someone else's newer version asks first),
// that time looked at again before a save, and the write. What is read or
// written is a plain SVG document (lib/whiteboard/model.ts).
import { ApiError, api, describeError } from "../../api/client";
import { BoardError } from "../../lib/whiteboard/model";

/** The file's text, whether it was cut at the size Helm reads, and when it was last changed (when that could be told). */
export async function readBoardFile(channel: string, path: string) {
  const stat = api.get("/api/channels/{channel}/files/stat", { path: { channel }, query: { path } }).catch(() => undefined);
  const file = await api.get("/api/channels/{channel}/files/read", { path: { channel }, query: { path } });
  return { ...file, modified: (await stat)?.modified };
}

/** The board cannot be edited when its file was read only in part. */
export function tooBig(): BoardError {
  return new BoardError("This whiteboard is larger than the 1 MiB Helm opens here. Download it to open it in another program.");
}

/** Why the board could not be opened, and whether trying again may help. */
export function loadProblem(e: unknown, path: string): { message: string; retryable: boolean } {
  return {
    retryable: !(e instanceof BoardError) && !(e instanceof ApiError && e.status === 422),
    message: e instanceof ApiError && e.status === 422 ? `${path} is not a text file, so it is not a whiteboard Helm can open.` : describeError(e),
  };
}

/** When the file was last changed now, or undefined when that cannot be told. */
export async function modifiedNow(channel: string, path: string) {
  const now = await api.get("/api/channels/{channel}/files/stat", { path: { channel }, query: { path } }).catch(() => undefined);
  return now?.modified;
}

/** Said when the file changed since it was opened: the next Save replaces it. */
export function changedMessage(name: string): string {
  return `${name} was changed by someone else (the agent, perhaps) since you opened it. Save again to replace their version with yours, or reload the page to see theirs (your changes would be lost).`;
}

/** Writes the board's file (its folders made as needed); the answer is the file's new entry. */
export function writeBoardFile(channel: string, path: string, content: string) {
  return api.put("/api/channels/{channel}/files", { path: { channel }, body: { path, content } });
}
