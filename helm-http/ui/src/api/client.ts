// The one typed API client. Every request the UI makes goes through `api`,
// typed by the paths of the server's OpenAPI document (schema.gen.ts, made by
// the build from docs/openapi.json): a path, its parameters, its body and its
// answer are checked by `tsc`, so a UI that drifts from the server fails to
// build. Errors come back as `ApiError`, whose message is the server's own
// words for people.
import type { paths } from "./schema.gen";

type Method = "get" | "post" | "put" | "patch" | "delete";

/** The paths that answer `M`. */
export type PathsFor<M extends Method> = {
  [P in keyof paths]: paths[P] extends { [K in M]: infer O } ? ([O] extends [undefined] ? never : P) : never;
}[keyof paths];

type Operation<P extends keyof paths, M extends Method> = NonNullable<paths[P][M & keyof paths[P]]>;
type ParametersOf<O> = O extends { parameters: infer X } ? X : never;
type PathOf<O> = ParametersOf<O> extends { path: infer X } ? X : never;
type QueryOf<O> = ParametersOf<O> extends { query?: infer X } ? X : never;
type JsonBodyOf<O> = O extends { requestBody: { content: { "application/json": infer B } } }
  ? B
  : O extends { requestBody?: { content: { "application/json": infer B } } }
    ? B
    : never;
type Content<R> = R extends { content: { "application/json": infer X } } ? X : undefined;
type SuccessOf<O> = O extends { responses: infer R }
  ? R extends { 200: infer S }
    ? Content<S>
    : R extends { 201: infer S }
      ? Content<S>
      : undefined
  : never;

/** `K` is required when `V` has a required field, optional otherwise, absent for `never`. */
type Optional<K extends string, V> = [V] extends [never]
  ? { [_ in K]?: never }
  : [V] extends [undefined]
    ? { [_ in K]?: never }
    : {} extends V
      ? { [_ in K]?: V }
      : { [_ in K]: V };

/** What a call takes besides its method and path. */
export type CallInit<P extends keyof paths, M extends Method> = Optional<"path", PathOf<Operation<P, M>>> &
  Optional<"query", QueryOf<Operation<P, M>>> &
  Optional<"body", JsonBodyOf<Operation<P, M>>> & { signal?: AbortSignal };

/** What a call answers with. */
export type Answer<P extends keyof paths, M extends Method> = SuccessOf<Operation<P, M>>;

/** A failed call: the server's `{code, message}`, or a network failure. */
export class ApiError extends Error {
  constructor(
    /** HTTP status; 0 when the server could not be reached. */
    readonly status: number,
    /** The server's stable code (`not_found`, `conflict`, …), or `network`. */
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

const NETWORK_MESSAGE = "Helm did not answer. Check that the server is running and your connection works, then try again.";

type Listener = (error: ApiError) => void;
const unauthenticatedListeners = new Set<Listener>();

/** Called when a signed-in call answers 401 (the session ended elsewhere). */
export function onUnauthenticated(listener: Listener): () => void {
  unauthenticatedListeners.add(listener);
  return () => unauthenticatedListeners.delete(listener);
}

/** `/api/channels/{channel}` with `{channel: "launch"}` → `/api/channels/launch`. */
export function fillPath(template: string, params: Record<string, unknown> | undefined): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = params?.[name];
    if (value === undefined || value === null) throw new Error(`missing path parameter ${name}`);
    return encodeURIComponent(String(value));
  });
}

/** `?a=1&b=x`, leaving out absent values. */
export function queryString(query: Record<string, unknown> | undefined): string {
  if (!query) return "";
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined && value !== null) search.set(key, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : "";
}

/** The URL a call goes to (also for links: downloads, WebSockets). */
export function urlFor<P extends keyof paths>(
  path: P,
  init: { path?: Record<string, unknown>; query?: Record<string, unknown> } = {},
): string {
  return fillPath(path as string, init.path) + queryString(init.query);
}

async function errorFrom(response: Response): Promise<ApiError> {
  try {
    const body = (await response.json()) as { code?: string; message?: string };
    if (body && typeof body.message === "string") {
      return new ApiError(response.status, body.code ?? "error", body.message);
    }
  } catch {
    // Not JSON: a proxy's page, or an empty 5xx.
  }
  if (response.status >= 500) {
    return new ApiError(response.status, "server", "Helm ran into a problem on the server. Try again; if it keeps happening, the server's log says why.");
  }
  return new ApiError(response.status, "error", `The server answered ${response.status} ${response.statusText}.`);
}

async function send(method: string, url: string, body: BodyInit | undefined, headers: HeadersInit, signal?: AbortSignal): Promise<Response> {
  let response: Response;
  try {
    response = await fetch(url, { method: method.toUpperCase(), body, headers, credentials: "same-origin", signal });
  } catch (e) {
    if (e instanceof DOMException && e.name === "AbortError") throw e;
    throw new ApiError(0, "network", NETWORK_MESSAGE);
  }
  if (!response.ok) {
    const error = await errorFrom(response);
    if (response.status === 401) unauthenticatedListeners.forEach((l) => l(error));
    throw error;
  }
  return response;
}

async function call<P extends PathsFor<M>, M extends Method>(method: M, path: P, init?: CallInit<P, M>): Promise<Answer<P, M>> {
  const { path: params, query, body, signal } = (init ?? {}) as {
    path?: Record<string, unknown>;
    query?: Record<string, unknown>;
    body?: unknown;
    signal?: AbortSignal;
  };
  const url = fillPath(path as string, params) + queryString(query);
  const headers: Record<string, string> = { accept: "application/json" };
  let payload: BodyInit | undefined;
  if (body !== undefined) {
    headers["content-type"] = "application/json";
    payload = JSON.stringify(body);
  }
  const response = await send(method, url, payload, headers, signal);
  if (response.status === 204) return undefined as Answer<P, M>;
  const type = response.headers.get("content-type") ?? "";
  if (!type.includes("json")) return undefined as Answer<P, M>;
  return (await response.json()) as Answer<P, M>;
}

/** Typed calls, one per method: `api.get("/api/channels/{channel}", {path: {channel}})`. */
export const api = {
  get: <P extends PathsFor<"get">>(path: P, ...init: {} extends CallInit<P, "get"> ? [CallInit<P, "get">?] : [CallInit<P, "get">]) =>
    call("get", path, init[0] as CallInit<P, "get">),
  post: <P extends PathsFor<"post">>(path: P, ...init: {} extends CallInit<P, "post"> ? [CallInit<P, "post">?] : [CallInit<P, "post">]) =>
    call("post", path, init[0] as CallInit<P, "post">),
  put: <P extends PathsFor<"put">>(path: P, ...init: {} extends CallInit<P, "put"> ? [CallInit<P, "put">?] : [CallInit<P, "put">]) =>
    call("put", path, init[0] as CallInit<P, "put">),
  patch: <P extends PathsFor<"patch">>(path: P, ...init: {} extends CallInit<P, "patch"> ? [CallInit<P, "patch">?] : [CallInit<P, "patch">]) =>
    call("patch", path, init[0] as CallInit<P, "patch">),
  delete: <P extends PathsFor<"delete">>(path: P, ...init: {} extends CallInit<P, "delete"> ? [CallInit<P, "delete">?] : [CallInit<P, "delete">]) =>
    call("delete", path, init[0] as CallInit<P, "delete">),

  /**
   * Uploads files as a multipart form (the one call whose body is not
   * JSON); `exists` says what a taken name does: `replace` it, `refuse`
   * the upload (409, nothing written) or `keep_both` (a numbered name).
   */
  async upload(
    channel: string,
    files: File[],
    dir?: string,
    exists?: IfExists,
  ): Promise<Answer<"/api/channels/{channel}/files/upload", "post">> {
    const form = new FormData();
    for (const file of files) form.append("file", file, file.name);
    const url = urlFor("/api/channels/{channel}/files/upload", { path: { channel }, query: { dir, exists } });
    const response = await send("post", url, form, { accept: "application/json" });
    return (await response.json()) as Answer<"/api/channels/{channel}/files/upload", "post">;
  },
};

/** What an upload does with a name that is taken (the server's `exists`). */
export type IfExists = NonNullable<NonNullable<paths["/api/channels/{channel}/files/upload"]["post"]["parameters"]["query"]>["exists"]>;

/** Words for an error caught anywhere in the UI. */
export function describeError(error: unknown): string {
  if (error instanceof ApiError) return error.message;
  if (error instanceof Error) return error.message;
  return "Something went wrong.";
}
