import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HttpRequest, HttpResponse, Pmapi } from '@pmapi/core';

export interface NodeHandlerOptions {
  /** Largest request body accepted, in bytes (default 4 MiB); larger ones get 413. */
  bodyLimit?: number;
  /**
   * Whether to believe `X-Forwarded-For`. `false` (default): the socket's
   * address. `true`: every proxy is trusted (leftmost address). A function:
   * trust the hops it returns true for, reading right to left.
   */
  trustProxy?: boolean | ((address: string) => boolean);
  /** Where v3 is mounted (default `/api/v3`); other paths go to `next` in middleware use, else 404. */
  basePath?: string;
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

function send(res: ServerResponse, out: HttpResponse): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(out.status, out.body === undefined ? out.headers : { ...out.headers, 'content-length': Buffer.byteLength(out.body) });
  res.end(out.body);
}

/**
 * A node:http request listener — also usable as Express/Connect middleware —
 * that feeds pmapi's v3 handler. It owns transport concerns only: body
 * limits, the client address and the last-resort 500.
 *
 * @example
 * http.createServer(toNodeHandler(api)).listen(3000);
 * app.use(toNodeHandler(api));   // Express: /api/v3/* answered, the rest passed on
 */
export function toNodeHandler(api: Pick<Pmapi, 'handle' | 'problem'> & Partial<Pick<Pmapi, 'oauth'>>, o: NodeHandlerOptions = {}) {
  const limit = o.bodyLimit ?? 4 * 1024 * 1024;
  const base = (o.basePath ?? '/api/v3').replace(/\/$/, '');
  return function pmapiHandler(req: IncomingMessage, res: ServerResponse, next?: Next): void {
    const url = (req as IncomingMessage & { originalUrl?: string }).originalUrl ?? req.url ?? '/';
    const path = url.split('?')[0]!;
    // The OAuth 2.1 server's paths (discovery, /oauth/authorize, /oauth/token), when `api.oauth` is mounted.
    const oauth = api.oauth?.owns(path) ? api.oauth : undefined;
    if (next && !oauth && path !== base && !path.startsWith(`${base}/`)) return next();
    const tooLargeResponse = () => {
      const out = api.problem('payload_too_large', `The body exceeds ${limit} bytes`, url, { limit });
      // Stop reading: the connection closes once the answer is out.
      send(res, { ...out, headers: { ...out.headers, connection: 'close' } });
    };
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > limit) {
      tooLargeResponse();
      return;
    }
    const dispatch = (body: Buffer | undefined) => {
      const request: HttpRequest = { method: req.method ?? 'GET', url, headers: req.headers, body, remoteAddress: clientAddress(req, o.trustProxy) };
      (oauth ? oauth.handle(request) : api.handle(request)).then(
        (out) => send(res, out),
        (err) => {
          console.error('pmapi http-node: unhandled error', err);
          send(res, api.problem('internal_error', 'Internal error', url));
        },
      );
    };
    // A body parser ran before us (express.json()): the stream is spent, the parsed value is on req.body.
    const parsed = (req as IncomingMessage & { body?: unknown }).body;
    if (req.readableEnded && parsed !== undefined) {
      const empty = parsed === null || (typeof parsed === 'object' && Object.keys(parsed as object).length === 0 && !declared);
      // OAuth endpoints take forms (express.urlencoded() left an object): encode it back.
      dispatch(empty ? undefined : Buffer.from(oauth && typeof parsed === 'object' ? new URLSearchParams(parsed as Record<string, string>).toString() : JSON.stringify(parsed)));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (c: Buffer) => {
      if (tooLarge) return;
      size += c.length;
      if (size > limit) {
        tooLarge = true;
        chunks.length = 0;
        tooLargeResponse();
        return;
      }
      chunks.push(c);
    });
    req.on('error', () => {
      // The client went away; nothing to answer.
    });
    req.on('end', () => {
      if (tooLarge) return;
      dispatch(chunks.length ? Buffer.concat(chunks) : undefined);
    });
  };
}
