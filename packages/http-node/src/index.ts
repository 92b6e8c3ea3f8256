import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { setImmediate } from 'node:timers';
import type { HttpRequest, HttpResponse, Pmapi } from '@pmapi/core';
import { createCors, withCors, CONSENT_PATH, type CorsOptions } from './cors';
import { checkOptionNames } from './option-names';

export { createCors, withCors, type Cors, type CorsOptions } from './cors';
export { toFetchHandler, type FetchHandlerOptions } from './fetch';

export interface NodeHandlerOptions {
  /** Largest request body accepted, in bytes (default 4 MiB); larger ones get 413. PUT requests use `uploadLimit` instead. */
  bodyLimit?: number;
  /**
   * Largest body of a PUT request, in bytes (default 64 MiB); larger ones get
   * 413. v3 itself never takes PUT: only uploads to pmapi's own signed blob
   * links do, so file uploads get this limit while JSON bodies keep `bodyLimit`.
   * (Uploads must still arrive within `bodyTimeoutMs`.)
   */
  uploadLimit?: number;
  /**
   * Deadline for the whole request body, from when the handler starts
   * reading it (default 10 s). A body still arriving then is answered 408
   * `request_timeout` and the connection is closed: a client trickling a
   * byte every few seconds cannot hold a connection open.
   */
  bodyTimeoutMs?: number;
  /**
   * After a 413, how long the rest of an oversized body is read and dropped
   * so the client can read the answer before the connection closes
   * (default 2 s; at most `drainLimit` bytes, default 16 MiB).
   */
  drainTimeoutMs?: number;
  drainLimit?: number;
  /**
   * Whether to believe `X-Forwarded-For`. `false` (default): the socket's
   * address. `true`: every proxy is trusted (leftmost address). A function:
   * trust the hops it returns true for, reading right to left.
   */
  trustProxy?: boolean | ((address: string) => boolean);
  /**
   * Where v3 is, *inside* the mount (default: createPmapi's `basePath`, which the API carries, so it is not repeated here);
   * other paths go to `next` in middleware use, else 404. Mounted under a prefix (`app.use('/pm', …)`),
   * the prefix is not repeated here: the host strips it from `req.url`.
   */
  basePath?: string;
  /** Cross-origin access for browser callers (default off): preflights from allowed origins answered before authentication. */
  cors?: CorsOptions;
}

/** Every NodeServerOptions key (NodeHandlerOptions and the server deadlines): any other is refused. */
const SERVER_OPTIONS = ['bodyLimit', 'uploadLimit', 'bodyTimeoutMs', 'drainTimeoutMs', 'drainLimit', 'trustProxy', 'basePath', 'cors', 'headersTimeoutMs', 'requestTimeoutMs', 'keepAliveTimeoutMs'] as const satisfies ReadonlyArray<keyof NodeServerOptions>;
const _allServerOptions: Exclude<keyof NodeServerOptions, (typeof SERVER_OPTIONS)[number]> extends never ? true : never = true;
void _allServerOptions;

/** Deadlines node:http enforces on the server itself (they cannot be set from a request listener). */
export interface NodeServerOptions extends NodeHandlerOptions {
  /** Time a client has to send the request line and headers (default 10 s; Node's own default is 60 s). */
  headersTimeoutMs?: number;
  /** Time a client has to send the whole request (default 30 s; Node's own default is 300 s). */
  requestTimeoutMs?: number;
  /** Idle time before a kept-alive connection is closed (default 5 s). */
  keepAliveTimeoutMs?: number;
}

export const DEFAULT_BODY_LIMIT = 4 * 1024 * 1024;
/** Where the core serves the legacy v1.0 surface (`api.handle`); answered here like v3, also in middleware use. */
const LEGACY_BASE = '/api/v1.0';
export const DEFAULT_UPLOAD_LIMIT = 64 * 1024 * 1024;
export const DEFAULT_BODY_TIMEOUT_MS = 10_000;
export const DEFAULT_HEADERS_TIMEOUT_MS = 10_000;
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

/**
 * Set a server's header, request and keep-alive deadlines (for a server the
 * application created itself). Node checks them every
 * `connectionsCheckingInterval` (30 s unless given to `http.createServer`);
 * {@link createNodeServer} sets that to 1 s.
 */
export function applyServerDeadlines(server: Server, o: NodeServerOptions = {}): Server {
  const headers = o.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS;
  server.headersTimeout = headers;
  server.requestTimeout = Math.max(o.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS, headers);
  server.keepAliveTimeout = o.keepAliveTimeoutMs ?? 5_000;
  return server;
}

/**
 * A node:http server serving pmapi with every deadline set: headers,
 * whole request, body and keep-alive.
 *
 * @example
 * createNodeServer(api).listen(3000, '127.0.0.1');
 */
export function createNodeServer(api: Parameters<typeof toNodeHandler>[0], o: NodeServerOptions = {}): Server {
  checkOptionNames('createNodeServer options', o, SERVER_OPTIONS);
  const server = createServer({ connectionsCheckingInterval: 1_000 }, toNodeHandler(api, o));
  return applyServerDeadlines(server, o);
}

type Next = (err?: unknown) => void;

/** The client address, honouring `trustProxy`. */
export function clientAddress(req: IncomingMessage, trust: NodeHandlerOptions['trustProxy']): string | undefined {
  const socketAddr = req.socket.remoteAddress;
  if (!trust) return socketAddr;
  const xff = req.headers['x-forwarded-for'];
  const chain = (Array.isArray(xff) ? xff.join(',') : xff ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  if (chain.length === 0) return socketAddr;
  if (trust === true) return chain[0];
  // Walk from the nearest hop: skip trusted proxies, the first untrusted address is the client.
  if (socketAddr && !trust(socketAddr)) return socketAddr;
  for (let i = chain.length - 1; i >= 0; i--) if (!trust(chain[i]!)) return chain[i];
  return chain[0];
}

/**
 * The requests that are ready (headers, and body if any) in one turn of the
 * event loop are handed to the core together, at the start of the next turn
 * (one setImmediate for all of them). Each still runs on its own; but started
 * together they move through authentication, the rate limiter and the
 * database in step (each pauses at the same awaits, and the microtask queue
 * takes them in turn), so each stage's code stays warm in the CPU's caches
 * and a store can serve them together (the SQLite rate limiter counts them in
 * one transaction). Under load the time from reading a request to answering
 * it is spent better: a GET by id answered 6,336 → 10,660 requests a second
 * at 10 connections (bench/, SQLite). An idle server waits one turn, microseconds.
 */
function turnBatch(): (fn: () => void) => void {
  let waiting: Array<() => void> = [];
  const run = () => {
    const batch = waiting;
    waiting = [];
    for (const fn of batch) {
      try {
        fn();
      } catch (err) {
        console.error('pmapi http-node: unhandled error', err);
      }
    }
  };
  return (fn) => {
    if (waiting.push(fn) === 1) laterTurn(run);
  };
}

/** Node's own setImmediate, taken when the module loads: fake timers a test installs later do not hold requests back. */
const laterTurn: (fn: () => void) => void = setImmediate;

function send(res: ServerResponse, out: HttpResponse): void {
  if (res.headersSent || res.destroyed) return;
  const parts = out.bodyParts;
  if (parts) {
    // A large page: its pieces (text or bytes) written in turn, in one writev, never joined into one string.
    let length = 0;
    for (const p of parts) length += Buffer.byteLength(p);
    res.writeHead(out.status, { ...out.headers, 'content-length': length });
    // Once the socket has taken every byte, the pieces' memory serves later answers (never if the connection fails first).
    if (out.release) res.once('finish', () => out.release!());
    res.cork();
    for (const p of parts) res.write(p);
    res.end();
    res.uncork();
    return;
  }
  // A string (JSON, HTML) or raw bytes (a file download); Content-Length counts bytes either way.
  const body = out.body === undefined || typeof out.body === 'string' ? out.body : Buffer.from(out.body.buffer, out.body.byteOffset, out.body.byteLength);
  res.writeHead(out.status, body === undefined ? out.headers : { ...out.headers, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/**
 * A node:http request listener — also usable as Express/Connect middleware —
 * that feeds pmapi's v3 handler. It owns transport concerns only: body
 * limit (413) and deadline (408), two Authorization headers (401), the
 * client address and the last-resort 500.
 *
 * @example
 * http.createServer(toNodeHandler(api)).listen(3000);
 * app.use(toNodeHandler(api));   // Express: /api/v3/* answered, the rest passed on
 */
export function toNodeHandler(api: Pick<Pmapi, 'handle' | 'problem'> & Partial<Pick<Pmapi, 'oauth' | 'observe' | 'basePath'>>, o: NodeHandlerOptions = {}) {
  const together = turnBatch();
  // createNodeServer hands its own options on: the server deadlines are known here too.
  checkOptionNames('toNodeHandler options', o, SERVER_OPTIONS);
  const bodyLimit = o.bodyLimit ?? DEFAULT_BODY_LIMIT;
  const uploadLimit = o.uploadLimit ?? DEFAULT_UPLOAD_LIMIT;
  const bodyTimeout = o.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS;
  const drainTimeout = o.drainTimeoutMs ?? 2_000;
  const drainLimit = o.drainLimit ?? 16 * 1024 * 1024;
  // createPmapi's basePath by default: a changed basePath is set once, not repeated here (issue 16 "One setting").
  const base = (o.basePath ?? api.basePath ?? '/api/v3').replace(/\/$/, '');
  const cors = createCors(o.cors);
  const under = (p: string, prefix: string) => p === prefix || p.startsWith(`${prefix}/`);
  // The API-host token endpoint (`{base_url}/oauth/token`, beside the v3 base), as createPmapi places it.
  const tokenPath = `${base.endsWith('/api/v3') ? base.slice(0, -'/api/v3'.length) : ''}/oauth/token`;
  const serves = (p: string) => under(p, base) || under(p, LEGACY_BASE) || (api.oauth !== undefined && p === tokenPath);
  return function pmapiHandler(req: IncomingMessage, res: ServerResponse, next?: Next): void {
    // Mounted under a prefix (Express/Connect `app.use('/pm', …)`, Fastify middie), the host strips the prefix
    // from req.url and keeps the full URL in req.originalUrl. The API lives *inside* the mount: v3, legacy, blob
    // links and the API-host token endpoint are matched on req.url against `basePath` (createPmapi's, default
    // /api/v3), so the prefix is set once, in app.use. The OAuth server's paths come from its absolute issuer URL:
    // matched on the full path. (A full path that itself starts with `basePath` — the old way, the prefix in
    // basePath — is still served.)
    const full = (req as IncomingMessage & { originalUrl?: string }).originalUrl ?? req.url ?? '/';
    const inner = req.url ?? full;
    const fullPath = full.split('?')[0]!;
    // The OAuth 2.1 server's paths (discovery, /oauth/authorize, /oauth/token), when `api.oauth` is mounted.
    const oauth = api.oauth?.owns(fullPath) ? api.oauth : undefined;
    const url = oauth ? full : serves(inner.split('?')[0]!) || !serves(fullPath) ? inner : full;
    const path = url.split('?')[0]!;
    // The prefix the host took off (`/pm`), as the client sees it: the core writes paths back with it
    // (problem instance, Link headers, docsUrl). None when the full URL is handed on.
    const mount = url === full || !fullPath.endsWith(path) ? '' : fullPath.slice(0, fullPath.length - path.length);
    // The frozen legacy v1.0 surface, which `api.handle` serves at /api/v1.0 (issue 15).
    const legacy = !oauth && under(path, LEGACY_BASE);
    // PUT is a blob upload (the upload limit), except on the legacy surface, where it is an update.
    const limit = req.method === 'PUT' && !legacy ? uploadLimit : bodyLimit;
    // The token endpoint on the API host (`{base_url}/oauth/token`, beside the v3 base), which `api.handle` serves
    // when `api.oauth` is mounted and the authorization server's own token path is elsewhere: a form endpoint too.
    const apiToken = !oauth && api.oauth !== undefined && path === tokenPath;
    const form = oauth !== undefined || apiToken;
    if (next && !oauth && !apiToken && !legacy && !under(path, base)) return next();
    const started = performance.now();
    // The consent page holds a CSRF token: another origin reading it with the person's cookies could post "allow"
    // for its own client. CORS (for the API's bearer callers) never covers it, whatever the origins and credentials.
    const consent = oauth !== undefined && fullPath.endsWith(CONSENT_PATH);
    const corsHeaders = cors && !consent ? cors.headers(req.headers) : {};
    const reply = (out: HttpResponse) => send(res, withCors(out, corsHeaders));
    /** An answer made here, not by the core: reported to onRequest (the core reports its own). */
    const observed = (out: HttpResponse) => api.observe?.({ method: req.method ?? 'GET', url, headers: {}, ...(mount ? { mount } : {}) }, out, started);
    // A CORS preflight from an allowed origin is answered here, before authentication (it carries no token).
    const preflight = consent ? undefined : cors?.preflight(req.method ?? 'GET', req.headers);
    if (preflight) {
      if (!req.readableEnded) req.resume();
      send(res, preflight);
      observed(preflight);
      return;
    }

    let answered = false;
    let drained = 0;
    let drainTimer: NodeJS.Timeout | undefined;
    /**
     * Answer before the body is read (413, 401). The rest of the body is then read
     * and dropped, for at most `drainTimeout` and `drainLimit` bytes: closing
     * a socket with unread input resets it, and the client would lose the
     * answer (it got 0 bytes before). No `Connection: close`, since Node would
     * close at once: a body drained to its end leaves the connection usable.
     */
    const answerEarly = (out: HttpResponse) => {
      answered = true;
      clearTimeout(bodyTimer);
      reply(out);
      observed(out);
      // Nothing left to read (a body parser ran before us, or the body is in): no drain, and above all no
      // timer that would destroy the kept-alive connection later, under whatever request it then carries.
      if (req.readableEnded) return;
      const close = () => req.socket.destroy();
      drainTimer = setTimeout(close, drainTimeout);
      drainTimer.unref();
      req.on('data', (c: Buffer) => {
        drained += c.length;
        if (drained > drainLimit) close();
      });
      req.on('end', () => clearTimeout(drainTimer));
      req.resume();
    };
    const tooLarge = () => answerEarly(api.problem('payload_too_large', `The body exceeds ${limit} bytes`, url, { limit }, mount));

    // Two Authorization headers are refused, never resolved by using the first (Node keeps only the first in
    // req.headers). The core refuses an array too; answering here does not depend on it.
    const authorization = req.headersDistinct?.authorization;
    const headers = authorization && authorization.length > 1 ? { ...req.headers, authorization } : req.headers;

    const declared = Number(req.headers['content-length'] ?? 0);
    let bodyTimer: NodeJS.Timeout | undefined;
    // (The OAuth endpoints answer any Authorization header themselves, in RFC 6749's error shape.)
    if (!form && authorization && authorization.length > 1) {
      const out = api.problem('unauthorized', 'Send exactly one Authorization header', url, {}, mount);
      answerEarly({ ...out, headers: { ...out.headers, 'www-authenticate': 'Bearer' } });
      return;
    }
    if (declared > limit) {
      tooLarge();
      return;
    }
    const dispatch = (body: Buffer | undefined) => together(() => {
      // hostRequest: the host's own request (Express's req, with its session), for the embedding application's hooks.
      const request: HttpRequest = { method: req.method ?? 'GET', url, headers, body, remoteAddress: clientAddress(req, o.trustProxy), hostRequest: req, ...(mount ? { mount } : {}) };
      (oauth ? oauth.handle(request) : api.handle(request)).then(
        (out) => {
          // res.writeHead throws on a header Node cannot send (a bad name, a line break): answer 500, never hang.
          try {
            reply(out);
          } catch (err) {
            console.error('pmapi http-node: the response could not be sent', err);
            if (res.headersSent) res.destroy();
            else reply(api.problem('internal_error', 'Internal error', url, {}, mount));
          }
        },
        (err) => {
          console.error('pmapi http-node: unhandled error', err);
          const out = api.problem('internal_error', 'Internal error', url, {}, mount);
          reply(out);
          observed(out);
        },
      );
    });
    // A body parser ran before us (express.json()): the stream is spent, the parsed value is on req.body.
    const parsed = (req as IncomingMessage & { body?: unknown }).body;
    if (req.readableEnded && parsed !== undefined) {
      // A raw body parser (express.raw()) left the bytes themselves.
      if (parsed instanceof Uint8Array) {
        dispatch(parsed.byteLength ? Buffer.from(parsed.buffer, parsed.byteOffset, parsed.byteLength) : undefined);
        return;
      }
      const empty = parsed === null || (typeof parsed === 'object' && Object.keys(parsed as object).length === 0 && !declared);
      // OAuth endpoints take forms (express.urlencoded() left an object): encode it back.
      dispatch(empty ? undefined : Buffer.from(form && typeof parsed === 'object' ? new URLSearchParams(parsed as Record<string, string>).toString() : JSON.stringify(parsed)));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    // Only a request that carries a body has one to wait for (a GET ends at once: no timer on the hot path).
    const hasBody = declared > 0 || req.headers['transfer-encoding'] !== undefined;
    if (hasBody) bodyTimer = setTimeout(() => {
      if (answered || req.readableEnded) return;
      chunks.length = 0;
      // A client that trickles bytes is not waited for: answer, then close once the answer is out.
      answered = true;
      const out = api.problem('request_timeout', `The body did not arrive within ${bodyTimeout} ms`, url, { timeoutMs: bodyTimeout }, mount);
      reply({ ...out, headers: { ...out.headers, connection: 'close' } });
      observed(out);
      setTimeout(() => req.socket.destroy(), 100).unref();
    }, bodyTimeout);
    bodyTimer?.unref();
    req.on('data', (c: Buffer) => {
      if (answered) return;
      size += c.length;
      if (size > limit) {
        chunks.length = 0;
        tooLarge();
        return;
      }
      chunks.push(c);
    });
    req.on('error', () => {
      // The client went away; nothing to answer.
      clearTimeout(bodyTimer);
    });
    req.on('end', () => {
      clearTimeout(bodyTimer);
      if (answered) return;
      dispatch(chunks.length ? Buffer.concat(chunks) : undefined);
    });
  };
}
