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
}

/** What the core answers; `body` is serialised JSON (or absent for 204). */
export interface HttpResponse {
  status: number;
  headers: Record<string, string>;
  body?: string;
}
