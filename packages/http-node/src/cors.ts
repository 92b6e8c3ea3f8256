import type { HttpResponse } from '@pmapi/core';
import { checkOptionNames } from './option-names';

/**
 * Cross-origin access for browser callers (issue 16). Off unless given. Shared by
 * `toNodeHandler` and `toFetchHandler`, so both front ends answer alike.
 */
export interface CorsOptions {
  /** Origins allowed to call the API (`https://app.example.com`, exact match; `'*'` allows any). Others get no CORS headers. */
  origins: readonly string[];
  /** Send `Access-Control-Allow-Credentials: true` (cookies, client certificates). Default false: bearer tokens need none. */
  credentials?: boolean;
  /** How long a browser may cache a preflight answer, seconds (default 600). */
  maxAge?: number;
}

/** The OAuth consent page's path under the issuer (core's AUTHORIZE_PATH): a navigation, never cross-origin readable. */
export const CONSENT_PATH = '/oauth/authorize';

/** Methods the API answers (v3: GET HEAD POST PATCH DELETE; blob uploads and legacy updates: PUT). */
const ALLOW_METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE';
/** Request headers a browser may send beyond the safelisted ones. */
const ALLOW_HEADERS = 'authorization, content-type, idempotency-key, x-request-id, if-match, if-none-match';
/** Response headers a browser script may read. */
const EXPOSE_HEADERS = 'x-request-id, x-ratelimit-limit, x-ratelimit-remaining, x-ratelimit-reset, retry-after, idempotency-replayed, location, link, deprecation, sunset, etag';

export interface Cors {
  /** The answer to a CORS preflight from an allowed origin (204), else undefined (the request goes on as usual). */
  preflight(method: string, headers: Record<string, string | string[] | undefined>): HttpResponse | undefined;
  /** The headers an actual answer gets for this request's `Origin` (none for an origin not allowed). */
  headers(headers: Record<string, string | string[] | undefined>): Record<string, string>;
}

function one(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? (v.length === 1 ? v[0] : undefined) : v;
}

/** Check the options once (a bad one throws, naming it) and build the policy; `undefined` when CORS is off. */
export function createCors(o: CorsOptions | undefined): Cors | undefined {
  if (o === undefined) return undefined;
  if (o && typeof o === 'object') checkOptionNames('cors', o, ['origins', 'credentials', 'maxAge'] satisfies ReadonlyArray<keyof CorsOptions>);
  if (!o || !Array.isArray(o.origins) || o.origins.some((x) => typeof x !== 'string' || (x !== '*' && !/^https?:\/\/[^/?#\s]+$/.test(x)))) {
    throw new TypeError("pmapi http-node: cors.origins must be an array of origins such as 'https://app.example.com' (scheme and host, no path or trailing slash) or '*'");
  }
  if (o.credentials !== undefined && typeof o.credentials !== 'boolean') throw new TypeError('pmapi http-node: cors.credentials must be a boolean');
  if (o.maxAge !== undefined && !(Number.isInteger(o.maxAge) && o.maxAge >= 0)) throw new TypeError('pmapi http-node: cors.maxAge must be a non-negative integer (seconds)');
  const any = o.origins.includes('*');
  const allowed = new Set(o.origins.map((x) => x.toLowerCase()));
  const maxAge = String(o.maxAge ?? 600);
  const allowedOrigin = (h: Record<string, string | string[] | undefined>) => {
    const origin = one(h.origin);
    if (!origin || origin === 'null') return undefined;
    return any || allowed.has(origin.toLowerCase()) ? origin : undefined;
  };
  const base = (origin: string): Record<string, string> => ({
    // The origin itself is echoed (never `*`), so the answer varies by Origin.
    'access-control-allow-origin': origin,
    vary: 'Origin',
    ...(o.credentials ? { 'access-control-allow-credentials': 'true' } : {}),
  });
  return {
    preflight(method, h) {
      if (method.toUpperCase() !== 'OPTIONS' || !one(h['access-control-request-method'])) return undefined;
      const origin = allowedOrigin(h);
      if (!origin) return undefined;
      return {
        status: 204,
        headers: {
          ...base(origin),
          vary: 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers',
          'access-control-allow-methods': ALLOW_METHODS,
          'access-control-allow-headers': ALLOW_HEADERS,
          'access-control-max-age': maxAge,
        },
      };
    },
    headers(h) {
      const origin = allowedOrigin(h);
      return origin ? { ...base(origin), 'access-control-expose-headers': EXPOSE_HEADERS } : {};
    },
  };
}

/** Add CORS headers to an answer (merging `Vary`). */
export function withCors(out: HttpResponse, extra: Record<string, string>): HttpResponse {
  if (Object.keys(extra).length === 0) return out;
  const vary = out.headers.vary ? `${out.headers.vary}, ${extra.vary}` : extra.vary;
  // Copied property by property: a body built in pieces stays unjoined (its `body` is read only on demand).
  const copy = Object.defineProperties({}, Object.getOwnPropertyDescriptors(out)) as HttpResponse;
  copy.headers = { ...out.headers, ...extra, ...(vary ? { vary } : {}) };
  return copy;
}
