/** A transport-neutral request: what every front end hands the core. */
export interface HttpRequest {
  method: string;
  /** Path and query, e.g. `/api/v3/tasks?limit=10`. */
  url: string;
  /** Header names in lower case. */
  headers: Record<string, string | string[] | undefined>;
  /** The raw body, if any. */
  body?: Uint8Array | string;
  remoteAddress?: string;
  /**
   * The path prefix the host mounted pmapi under, as clients see it (`/pm`),
   * when the front end took it off `url` (Express `app.use('/pm', …)`:
   * http-node's front ends set it). Paths the API writes back — a problem's
   * `instance`, the `Link` headers, the default `docsUrl` — start with it.
   * Absent: none.
   */
  mount?: string;
  /**
   * The host framework's own request object, as the front end received it:
   * Express's (or node:http's) `req` under `toNodeHandler`, the fetch
   * `Request` under `toFetchHandler`. pmapi never reads it; it hands it to
   * the embedding application's hooks (`oauth.currentMember`,
   * `oauth.signInUrl`, `oauth.renderConsent`) so they see the host's own
   * session (`req.session`, `req.user`).
   */
  hostRequest?: unknown;
}

/** What the core answers. */
export interface HttpResponse {
  status: number;
  headers: Record<string, string>;
  /**
   * The answer's body: serialised JSON (or HTML/text) as a string for every
   * API and OAuth answer, raw bytes (`Uint8Array`) only for file downloads
   * served by pmapi itself (`serveBlobRequest`); absent for 204 and HEAD.
   * Front ends must write both forms (and set `Content-Length` from the byte
   * count, not the string length).
   */
  body?: string | Uint8Array;
  /**
   * The same body in pieces, when pmapi built a large JSON answer that way
   * (a page of a list): `body` is their concatenation, joined only when read.
   * A front end that writes to a socket should write the pieces in turn and
   * leave `body` unread: V8 gives every string over 128 KiB an allocation of
   * its own, which costs a large page more than writing it. A piece is text
   * or UTF-8 bytes (an expanded page is built as bytes: see BodyPart). Front
   * ends that ignore this field lose nothing but that.
   */
  bodyParts?: readonly BodyPart[];
  /**
   * Present with `bodyParts`: a front end that wrote the pieces calls it once
   * it holds none of them anymore (node:http: when the response has
   * finished, i.e. the socket took every byte; a fetch front end: once the
   * pieces are copied into a Blob). pmapi then uses the pieces' memory again
   * for later answers. After it neither `bodyParts` nor `body` may be read
   * (`body` throws unless it was read before). A front end that never calls
   * it loses nothing but that: the pieces are collected as any garbage.
   */
  release?(): void;
}

/**
 * A piece of a body built in pieces: text, or bytes (UTF-8, whole
 * characters: a piece never ends inside one). Concatenated, the pieces are
 * the body.
 */
export type BodyPart = string | Uint8Array;
