import type { HttpRequest, HttpResponse, Pmapi } from '@pmapi/core';
import { createCors, withCors, CONSENT_PATH, type CorsOptions } from './cors';
import { checkOptionNames } from './option-names';

// No node: imports here: this front end runs wherever `Request`/`Response` exist (Node ≥ 20, Bun, Deno, workers).

export interface FetchHandlerOptions {
  /** Largest request body accepted, in bytes (default 4 MiB); larger ones get 413. PUT requests use `uploadLimit` instead. */
  bodyLimit?: number;
  /** Largest body of a PUT request (a blob upload through pmapi's own signed link), in bytes (default 64 MiB). */
  uploadLimit?: number;
  /**
   * The client address (rate limits, DELETE's per-IP bucket). A fetch `Request` carries none: pass the
   * runtime's (`toFetchHandler(api)(req, { remoteAddress })`), or derive it here, e.g. from a header your
   * own proxy sets. Default: the `remoteAddress` given to the handler, else none.
   */
  clientIp?: (req: Request, given: string | undefined) => string | undefined;
  /** Cross-origin access for browser callers (default off), as `toNodeHandler`'s. */
  cors?: CorsOptions;
  /**
   * The path prefix the API is served under, as clients see it (`/pm`; default none). A request path that
   * starts with it has it taken off before matching (Hono `app.all('/pm/*', …)`); one a framework already
   * took it off (Hono `app.mount('/pm', pm)`) is matched as it is. Paths the API writes back (problem
   * `instance`, `Link` headers, the default `docsUrl`) start with it. The OAuth server's paths follow its
   * issuer URL, which includes the prefix.
   */
  mount?: string;
}

const LEGACY_BASE = '/api/v1.0';
/** Every FetchHandlerOptions key: any other is refused. */
const FETCH_OPTIONS = ['bodyLimit', 'uploadLimit', 'clientIp', 'cors', 'mount'] as const satisfies ReadonlyArray<keyof FetchHandlerOptions>;
const _allFetchOptions: Exclude<keyof FetchHandlerOptions, (typeof FETCH_OPTIONS)[number]> extends never ? true : never = true;
void _allFetchOptions;

/** A fetch Response from a core answer (no body for HEAD, 204 and 304). */
function toResponse(out: HttpResponse, method: string): Response {
  const headers = new Headers(out.headers);
  const parts = out.bodyParts;
  const empty = method === 'HEAD' || out.status === 204 || out.status === 304 || (parts === undefined && out.body === undefined);
  if (empty) return new Response(null, { status: out.status, headers });
  if (parts) {
    // A large page's pieces (text or bytes) go into a Blob as they are, never joined into one string. The Blob
    // copies them: their memory can serve later answers at once.
    const blob = new Blob(parts as ConstructorParameters<typeof Blob>[0]);
    out.release?.();
    return new Response(blob, { status: out.status, headers });
  }
  return new Response(out.body as ConstructorParameters<typeof Response>[0], { status: out.status, headers });
}

/** Read the body, stopping (false) past `limit` bytes. */
async function readBody(req: Request, limit: number): Promise<Uint8Array | undefined | false> {
  if (!req.body) return undefined;
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      return false;
    }
    chunks.push(value);
  }
  if (size === 0) return undefined;
  if (chunks.length === 1) return chunks[0];
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

/**
 * A fetch-style front end: `Request` → `Response`, for Hono, Next.js route
 * handlers, Bun, Deno and workers. Same duties as `toNodeHandler`: body
 * limits (413), the client address, the OAuth server's paths when
 * `api.oauth` is mounted, CORS when configured, the last-resort 500. Every
 * path is answered (no `next`): mount it where the API lives.
 *
 * @example
 * const pm = toFetchHandler(api);
 * app.all('/api/*', (c) => pm(c.req.raw));                  // Hono
 * export const GET = pm, POST = pm, PATCH = pm, DELETE = pm; // Next.js app/api/[...path]/route.ts
 */
export function toFetchHandler(api: Pick<Pmapi, 'handle' | 'problem'> & Partial<Pick<Pmapi, 'oauth' | 'observe'>>, o: FetchHandlerOptions = {}) {
  checkOptionNames('toFetchHandler options', o, FETCH_OPTIONS);
  const bodyLimit = o.bodyLimit ?? 4 * 1024 * 1024;
  const uploadLimit = o.uploadLimit ?? 64 * 1024 * 1024;
  const cors = createCors(o.cors);
  const mount = (o.mount ?? '').replace(/\/+$/, '');
  if (mount && !mount.startsWith('/')) throw new Error(`toFetchHandler: mount must start with "/" (got '${o.mount}')`);
  const under = (p: string, prefix: string) => p === prefix || p.startsWith(`${prefix}/`);
  return async function pmapiFetch(request: Request, info?: { remoteAddress?: string }): Promise<Response> {
    const method = request.method.toUpperCase();
    const u = new URL(request.url);
    // Inside the mount: the prefix taken off (unless the framework did already); the full path for the OAuth server.
    const prefixed = mount !== '' && under(u.pathname, mount);
    const path = prefixed ? u.pathname.slice(mount.length) || '/' : u.pathname;
    const fullPath = `${mount}${path}`;
    const url = `${path}${u.search}`;
    const headers: Record<string, string> = {};
    request.headers.forEach((v, k) => {
      headers[k] = v;
    });
    const oauth = api.oauth?.owns(fullPath) ? api.oauth : undefined;
    // The consent page (CSRF token inside) is never CORS-readable: see toNodeHandler.
    const consent = oauth !== undefined && fullPath.endsWith(CONSENT_PATH);
    const corsHeaders = cors && !consent ? cors.headers(headers) : {};
    const reply = (out: HttpResponse) => toResponse(withCors(out, corsHeaders), method);
    const started = performance.now();
    /** An answer made here, not by the core: reported to onRequest (the core reports its own). */
    const own = (out: HttpResponse) => {
      api.observe?.({ method, url, headers: {}, ...(mount ? { mount } : {}) }, out, started);
      return out;
    };
    try {
      const preflight = consent ? undefined : cors?.preflight(method, headers);
      if (preflight) return toResponse(own(preflight), method);
      const legacy = path === LEGACY_BASE || path.startsWith(`${LEGACY_BASE}/`);
      const limit = method === 'PUT' && !legacy ? uploadLimit : bodyLimit;
      const declared = Number(headers['content-length'] ?? 0);
      const tooLarge = () => reply(own(api.problem('payload_too_large', `The body exceeds ${limit} bytes`, url, { limit }, mount)));
      if (declared > limit) return tooLarge();
      const body = await readBody(request, limit);
      if (body === false) return tooLarge();
      const remoteAddress = o.clientIp ? o.clientIp(request, info?.remoteAddress) : info?.remoteAddress;
      // hostRequest: the fetch Request itself, for the embedding application's hooks (oauth.currentMember).
      // The OAuth server gets the full path (its issuer's); the API the path inside the mount, and the mount.
      const req: HttpRequest = { method, url: oauth ? `${fullPath}${u.search}` : url, headers, ...(body ? { body } : {}), ...(remoteAddress ? { remoteAddress } : {}), hostRequest: request, ...(mount && !oauth ? { mount } : {}) };
      return reply(await (oauth ? oauth.handle(req) : api.handle(req)));
    } catch (err) {
      console.error('pmapi fetch handler: unhandled error', err);
      return reply(own(api.problem('internal_error', 'Internal error', url, {}, mount)));
    }
  };
}
