// The whiteboard's file through the files API: read with its version, and
// written over that version (so a save over someone else's newer one is
// refused by the server and asks first). What is read or
// written is a plain SVG document (lib/whiteboard/model.ts).
import { ApiError, api, describeError } from "../../api/client";
import { BoardError } from "../../lib/whiteboard/model";

/** The file's text, whether it was cut at the size Helm reads, and its version. */
export function readBoardFile(channel: string, path: string) {
  return api.get("/api/channels/{channel}/files/read", { path: { channel }, query: { path } });
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

/** Said when the file changed since it was opened: the next Save replaces it. */
export function changedMessage(name: string): string {
  return `${name} was changed by someone else (the agent, perhaps) since you opened it. Save again to replace their version with yours, or reload the page to see theirs (your changes would be lost).`;
}

/**
 * Writes the board's file (its folders made as needed) over `base`, the
 * version it was edited from (none: whatever is there); the answer is the
 * file's new entry, with its version.
 */
export function writeBoardFile(channel: string, path: string, content: string, base: string | undefined) {
  return api.put("/api/channels/{channel}/files", { path: { channel }, body: { path, content, base_version: base } });
}

/** Whether a save was refused because the file changed since it was read. */
export function changedMeanwhile(e: unknown): boolean {
  return e instanceof ApiError && e.code === "conflict";
}
