/*
 * The SSRF-safe GET behind pmapi's upload-from-URL: the same address policy
 * and guarded connector as the webhook sender (./connector), no redirects,
 * a byte cap enforced while streaming and one deadline for the whole
 * exchange.
 */
import { Agent, request } from 'undici';
import { REFUSED_TARGET_MESSAGE, UrlFetchError } from '@pmapi/core';
import type { UrlFetcher } from '@pmapi/core';
import { describeConnectionError, guardedConnector, innermostError, isRefusedTarget, type GuardedTlsOptions, type HostLookup } from './connector';

export interface UrlFetcherOptions {
  /**
   * Fetch from private, loopback, link-local and other non-public addresses
   * (development and tests only). Default false: such targets are refused,
   * whether written as an IP literal or reached through a name.
   */
  allowPrivateTargets?: boolean;
  /** Name resolution (tests inject one to point a name at an address). */
  lookup?: HostLookup;
  /** Extra TLS options for the connection (tests: `{ ca }` to trust a self-signed server). */
  connect?: GuardedTlsOptions;
  /** The User-Agent header sent (default `pmapi-fetch/1`). */
  userAgent?: string;
}

/** A URL fetcher that also releases its connection pool. */
export type ClosableUrlFetcher = UrlFetcher & { close(): Promise<void> };

export const FETCH_USER_AGENT = 'pmapi-fetch/1';
/** Upper bound of the TCP/TLS connect alone; the per-call `timeoutMs` bounds the whole exchange. */
const CONNECT_TIMEOUT_MS = 10_000;

const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/**
 * Build the fetcher of upload-from-URL: one GET with undici through a
 * dedicated Agent that refuses non-public targets exactly as the webhook
 * sender does (IP literals in the connector, every resolved address of a
 * name in the lookup, the socket pinned to the checked address). Only
 * `http:`/`https:` URLs without credentials; redirects are not followed (a
 * 3xx fails with `bad_status`); a Content-Length above `maxBytes` fails
 * before the body is read and a body growing past `maxBytes` is cut off;
 * connect to last byte is bounded by `timeoutMs`. Every failure is a
 * {@link UrlFetchError} whose message never names a resolved address.
 *
 * @example
 * const fetcher = createUrlFetcher();
 * const { bytes, contentType } = await fetcher.fetch('https://example.com/a.png', { maxBytes: 10 << 20, timeoutMs: 15_000 });
 */
export function createUrlFetcher(o: UrlFetcherOptions = {}): ClosableUrlFetcher {
  const userAgent = o.userAgent ?? FETCH_USER_AGENT;
  const agent = new Agent({
    keepAliveTimeout: 4_000,
    connect: guardedConnector({ allowPrivateTargets: o.allowPrivateTargets ?? false, lookup: o.lookup, connect: o.connect, timeoutMs: CONNECT_TIMEOUT_MS }),
  });

  const fetch = async (rawUrl: string, opts: { maxBytes: number; timeoutMs: number }): Promise<{ bytes: Uint8Array; contentType?: string }> => {
    const { maxBytes, timeoutMs } = opts;
    let url: URL;
    try {
      url = new URL(rawUrl);
    } catch {
      throw new UrlFetchError('refused_target', 'invalid url');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UrlFetchError('refused_target', 'only http and https URLs can be fetched');
    if (url.username !== '' || url.password !== '') throw new UrlFetchError('refused_target', 'URLs with credentials are refused');

    const ac = new AbortController();
    let timedOut = false;
    // Settles (rejects) when the deadline passes, whatever undici is doing (resolving, connecting, reading).
    let expire!: (e: unknown) => void;
    const deadline = new Promise<never>((_, reject) => {
      expire = reject;
    });
    deadline.catch(() => {});
    const timer = setTimeout(() => {
      timedOut = true;
      const e = new UrlFetchError('timeout', `no complete answer within ${timeoutMs} ms`);
      ac.abort(e);
      expire(e);
    }, timeoutMs);

    const fail = (err: unknown): UrlFetchError => {
      if (err instanceof UrlFetchError) return err;
      if (timedOut) return new UrlFetchError('timeout', `no complete answer within ${timeoutMs} ms`);
      if (isRefusedTarget(err)) return new UrlFetchError('refused_target', REFUSED_TARGET_MESSAGE);
      const code = innermostError(err)?.code;
      if (code && TIMEOUT_CODES.has(code)) return new UrlFetchError('timeout', `no complete answer within ${timeoutMs} ms`);
      return new UrlFetchError('network', describeConnectionError(err));
    };

    try {
      const res = await Promise.race([
        request(url, {
          method: 'GET',
          headers: { 'user-agent': userAgent, accept: '*/*' },
          dispatcher: agent,
          signal: ac.signal,
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs,
          // No redirect interceptor on this Agent: a 3xx comes back as is and fails below.
        }),
        deadline,
      ]);
      const drop = () => {
        res.body.destroy();
      };
      const status = res.statusCode;
      if (status < 200 || status >= 300) {
        drop();
        if (status >= 300 && status < 400) throw new UrlFetchError('bad_status', `redirect not followed (HTTP ${status})`);
        throw new UrlFetchError('bad_status', `HTTP ${status}`);
      }
      const declared = res.headers['content-length'];
      const length = typeof declared === 'string' && /^\d+$/.test(declared.trim()) ? Number(declared.trim()) : undefined;
      if (length !== undefined && length > maxBytes) {
        drop();
        throw new UrlFetchError('too_large', `body of ${length} bytes exceeds the limit of ${maxBytes} bytes`);
      }
      const ct = res.headers['content-type'];
      const contentType = Array.isArray(ct) ? ct[0] : ct;

      const read = async (): Promise<Uint8Array> => {
        const chunks: Uint8Array[] = [];
        let total = 0;
        for await (const chunk of res.body) {
          const c = chunk as Uint8Array;
          total += c.byteLength;
          if (total > maxBytes) {
            drop();
            throw new UrlFetchError('too_large', `body exceeds the limit of ${maxBytes} bytes`);
          }
          chunks.push(c);
        }
        const out = new Uint8Array(total);
        let at = 0;
        for (const c of chunks) {
          out.set(c, at);
          at += c.byteLength;
        }
        return out;
      };
      const bytes = await Promise.race([read(), deadline]);
      return contentType === undefined ? { bytes } : { bytes, contentType };
    } catch (err) {
      throw fail(err);
    } finally {
      clearTimeout(timer);
      // Release whatever is still in flight (a pending connect or an unread body).
      if (!ac.signal.aborted) ac.abort(new Error('done'));
    }
  };

  return { fetch, close: () => agent.close() };
}
