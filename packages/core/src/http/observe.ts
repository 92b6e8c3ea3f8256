import type { HttpRequest } from './types';

/**
 * What the pipeline learns about a request while handling it, for the
 * per-request hook (`createPmapi({ onRequest })`): the matched route pattern
 * and the authenticated workspace. Recorded only for requests being observed.
 */
export interface RequestNote {
  route?: string;
  workspace?: string;
}

const notes = new WeakMap<HttpRequest, RequestNote>();

/** Start observing a request; the returned note fills in as the pipeline goes. */
export function observeRequest(req: HttpRequest): RequestNote {
  const note: RequestNote = {};
  notes.set(req, note);
  return note;
}

/** Record what is known of an observed request (no-op for others). */
export function noteRequest(req: HttpRequest, note: RequestNote): void {
  const n = notes.get(req);
  if (n) Object.assign(n, note);
}
