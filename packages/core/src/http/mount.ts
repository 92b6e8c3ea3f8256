import type { HttpRequest } from './types';

/**
 * The path prefix a request reached pmapi under (`HttpRequest.mount`), as the
 * client sees it: `''` for none, else `/pm` (one leading slash, no trailing
 * one). Every path the API writes back (a problem's `instance`, `Link`
 * headers, the default `docsUrl`) starts with it, so a client can follow it.
 */
export function mountOf(req: Pick<HttpRequest, 'mount'>): string {
  const m = req.mount;
  if (!m) return '';
  const trimmed = m.replace(/\/+$/, '');
  if (trimmed === '') return '';
  return trimmed.startsWith('/') ? trimmed : `/${trimmed}`;
}
