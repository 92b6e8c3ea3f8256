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
}
