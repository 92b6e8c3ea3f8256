import { lookup as dnsLookup } from 'node:dns';
import { isIP } from 'node:net';
import type { ConnectionOptions } from 'node:tls';
import { performance } from 'node:perf_hooks';
import { Agent, buildConnector, request } from 'undici';
import { isIpLiteral, isPublicAddress, REFUSED_TARGET_MESSAGE } from '@pmapi/core';
import type { WebhookAttempt, WebhookRequest, WebhookSender } from '@pmapi/core';

/** One resolved address, as `dns.lookup(…, { all: true })` gives it. */
export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Resolves a host name to every address it has (default: the system resolver, `dns.lookup` with `all: true`). */
export type HostLookup = (hostname: string) => Promise<ResolvedAddress[]>;

export interface WebhookSenderOptions {
  /**
   * Deliver to private, loopback, link-local and other non-public addresses
   * (development and tests only). Default false: such targets are refused,
   * whether written as an IP literal or reached through a name.
   */
  allowPrivateTargets?: boolean;
  /** Deadline of one attempt, connection to last body byte, ms (spec: 10 s). */
  timeoutMs?: number;
  /** How much of a response body is read before the rest is dropped (default 64 KiB). Bodies are never kept. */
  maxResponseBytes?: number;
  /** Name resolution (tests inject one to point a name at an address). */
  lookup?: HostLookup;
  /** Extra TLS options for the connection (tests: `{ ca }` to trust a self-signed receiver). */
  connect?: Pick<ConnectionOptions, 'ca' | 'cert' | 'key' | 'rejectUnauthorized'>;
}

/** A sender that also releases its connection pool. */
export type ClosableWebhookSender = WebhookSender & { close(): Promise<void> };

export const DEFAULT_TIMEOUT_MS = 10_000;
export const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024;
/** Spec "Delivery semantics" rule 7: the error of a log record is at most 1 KiB. */
export const ERROR_MAX_BYTES = 1024;

/**
 * Raised by the connector or lookup for a refused target. Its message is the
 * fixed {@link REFUSED_TARGET_MESSAGE}: the delivery log and the test-delivery
 * answer never name the host or the address it resolved to.
 */
class RefusedTarget extends Error {
  readonly code = 'E_WEBHOOK_REFUSED_TARGET';
  constructor() {
    super(REFUSED_TARGET_MESSAGE);
  }
}

/**
 * Is this address one a webhook may reach? The one SSRF policy of
 * @pmapi/core (`classifyAddress`), also applied at registration: only a
 * public unicast address passes; IPv4-embedding IPv6 forms (mapped,
 * compatible, NAT64, 6to4, Teredo) are refused whatever they embed.
 */
export { isPublicAddress };

/** Cut a reason to at most `max` UTF-8 bytes. */
export function shortError(msg: string, max = ERROR_MAX_BYTES): string {
  const s = msg.replace(/\s+/g, ' ').trim() || 'error';
  if (Buffer.byteLength(s) <= max) return s;
  let out = Buffer.from(s).subarray(0, max - 3).toString('utf8');
  while (Buffer.byteLength(`${out}...`) > max) out = out.slice(0, -1);
  return `${out}...`;
}

const systemLookup: HostLookup = (hostname) =>
  new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true, verbatim: true }, (err, addrs) => (err ? reject(err) : resolve(addrs)));
  });

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | ResolvedAddress[], family?: number) => void;

/**
 * The `lookup` handed to `net`/`tls.connect`: resolves with `base`, refuses
 * the name if ANY address is not public, and returns only checked addresses,
 * so the socket connects to exactly what was checked (no DNS rebinding
 * between check and connect).
 */
function guardedLookup(base: HostLookup, allowPrivate: boolean) {
  return (hostname: string, options: { all?: boolean; family?: number | string } | number, cb: LookupCallback) => {
    const opts = typeof options === 'object' && options !== null ? options : { family: options };
    const family = opts.family === 'IPv4' ? 4 : opts.family === 'IPv6' ? 6 : Number(opts.family ?? 0);
    base(hostname).then(
      (all) => {
        let addrs = all.filter((a) => isIP(a.address) !== 0);
        if (family === 4 || family === 6) addrs = addrs.filter((a) => a.family === family);
        if (addrs.length === 0) {
          const e: NodeJS.ErrnoException = new Error(`no address for ${hostname}`);
          e.code = 'ENOTFOUND';
          return cb(e, opts.all ? [] : '');
        }
        const bad = allowPrivate ? undefined : addrs.find((a) => !isPublicAddress(a.address));
        if (bad) return cb(new RefusedTarget(), opts.all ? [] : '');
        if (opts.all) cb(null, addrs);
        else cb(null, addrs[0]!.address, addrs[0]!.family);
      },
      (err: NodeJS.ErrnoException) => cb(err, opts.all ? [] : ''),
    );
  };
}

function describe(err: unknown, timedOut: boolean): string {
  if (timedOut) return 'timeout';
  let e = err as (Error & { code?: string; cause?: unknown }) | undefined;
  // undici wraps connector errors; the refusal or the system error is the useful part.
  for (let i = 0; i < 3 && e && !(e instanceof RefusedTarget) && e.cause instanceof Error; i++) e = e.cause as typeof e;
  if (e instanceof RefusedTarget) return e.message;
  // The reason is shown to callers (delivery log): it names the failure, never the address it resolved to.
  const known = e?.code ? SYSTEM_ERRORS[e.code] : undefined;
  if (known) return `${e!.code}: ${known}`;
  const code = e?.code ? `${e.code}: ` : '';
  return `${code}${redactAddresses(e?.message ?? String(err))}`;
}

const SYSTEM_ERRORS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'name resolution failed',
  EPIPE: 'connection closed',
  UND_ERR_SOCKET: 'connection closed',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
  UND_ERR_HEADERS_TIMEOUT: 'timeout',
  UND_ERR_BODY_TIMEOUT: 'timeout',
};

/** Replace IPv4 and IPv6 addresses (with any port) in a message. */
export function redactAddresses(msg: string): string {
  return msg
    .replace(/\[?\b(?:[0-9a-f]{0,4}:){2,7}[0-9a-f.]{0,15}\]?(?::\d+)?/gi, '<address>')
    .replace(/\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b/g, '<address>');
}

/**
 * Build the sender of webhook deliveries: one POST with undici through a
 * dedicated Agent that refuses non-public targets (IP literals in the
 * connector — Node never calls `lookup` for them — and every resolved address
 * in `lookup`), never follows redirects (3xx fails), gives up after
 * `timeoutMs`, reads at most `maxResponseBytes` of the answer and keeps none
 * of it. Any 2xx is success.
 *
 * @example
 * const sender = createWebhookSender();
 * const r = await sender({ url: 'https://hooks.example.com/in', headers, body });
 * // r: { ok: true, status: 204, durationMs: 83, error: null }
 */
export function createWebhookSender(o: WebhookSenderOptions = {}): ClosableWebhookSender {
  const allowPrivate = o.allowPrivateTargets ?? false;
  const timeoutMs = o.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxResponseBytes = o.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const base = buildConnector({
    ...(o.connect ?? {}),
    timeout: timeoutMs,
    lookup: guardedLookup(o.lookup ?? systemLookup, allowPrivate) as never,
  } as buildConnector.BuildOptions);
  const agent = new Agent({
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    connectTimeout: timeoutMs,
    keepAliveTimeout: 4_000,
    connect(opts, cb) {
      // Node connects to an IP literal without calling `lookup`, so literals are judged here.
      // Whatever the policy reads as an address (any spelling, brackets, zone id) is judged as one.
      const host = opts.hostname;
      if (!allowPrivate && (isIP(host.replace(/^\[|\]$/g, '')) !== 0 || isIpLiteral(host)) && !isPublicAddress(host)) {
        cb(new RefusedTarget(), null);
        return;
      }
      base(opts, cb);
    },
  });

  const send = async (req: WebhookRequest): Promise<WebhookAttempt> => {
    const started = performance.now();
    const elapsed = () => Math.max(0, Math.round(performance.now() - started));
    const fail = (status: number | null, error: string): WebhookAttempt => ({ ok: false, status, durationMs: elapsed(), error: shortError(error) });
    let url: URL;
    try {
      url = new URL(req.url);
    } catch {
      return fail(null, 'invalid url');
    }
    if (url.protocol !== 'https:') return fail(null, 'refused: https required');
    const ac = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      ac.abort(new Error('timeout'));
    }, timeoutMs);
    try {
      const res = await request(url, {
        method: 'POST',
        headers: req.headers,
        body: req.body,
        dispatcher: agent,
        signal: ac.signal,
        // No redirect interceptor on this Agent: a 3xx comes back as is and fails below.
      });
      // Read (a capped amount of) the body so the connection can be reused, then drop it.
      let seen = 0;
      try {
        for await (const chunk of res.body) {
          seen += (chunk as Buffer).length;
          if (seen > maxResponseBytes) {
            res.body.destroy();
            break;
          }
        }
      } catch (err) {
        if (timedOut) return fail(res.statusCode, 'timeout');
        // The status already arrived; a body cut short does not change it.
        void err;
      }
      const status = res.statusCode;
      if (status >= 200 && status < 300) return { ok: true, status, durationMs: elapsed(), error: null };
      if (status >= 300 && status < 400) return fail(status, `redirect not followed (HTTP ${status})`);
      return fail(status, `HTTP ${status}`);
    } catch (err) {
      return fail(null, describe(err, timedOut));
    } finally {
      clearTimeout(timer);
    }
  };
  return Object.assign(send, { close: () => agent.close() });
}
