import type { ConnectionOptions } from 'node:tls';
import { performance } from 'node:perf_hooks';
import { Agent, request } from 'undici';
import { isLoopbackHost, isPublicAddress } from '@pmapi/core';
import type { WebhookAttempt, WebhookRequest, WebhookSender } from '@pmapi/core';
import { checkOptionNames } from '@pmapi/core/sql';
import { describeConnectionError, guardedConnector, redactAddresses, type HostLookup, type ResolvedAddress } from './connector';

export { redactAddresses, type HostLookup, type ResolvedAddress };

export interface WebhookSenderOptions {
  /**
   * Deliver to private, loopback, link-local and other non-public addresses
   * (development and tests only). Default false: such targets are refused,
   * whether written as an IP literal or reached through a name.
   */
  allowPrivateTargets?: boolean;
  /**
   * Local webhook development (off by default): deliver to loopback
   * receivers — http:// or https:// on `localhost` (which must resolve to
   * loopback addresses only), 127.0.0.0/8 and [::1] — as the Stripe CLI does.
   * Other private targets stay refused. Pair with `createPmapi({ webhooks: { allowLoopback: true } })`.
   */
  allowLoopback?: boolean;
  /** Deadline of one attempt, connection to last body byte, ms (spec: 10 s). */
  timeoutMs?: number;
  /** How much of a response body is read before the rest is dropped (default 64 KiB). Bodies are never kept. */
  maxResponseBytes?: number;
  /** Name resolution (tests inject one to point a name at an address). */
  lookup?: HostLookup;
  /** Extra TLS options for the connection (tests: `{ ca }` to trust a self-signed receiver). */
  connect?: Pick<ConnectionOptions, 'ca' | 'cert' | 'key' | 'rejectUnauthorized'>;
}

/** Every WebhookSenderOptions key: any other is refused (issue 16: `{ allowLoopBack: true }` was ignored). */
const SENDER_OPTIONS = ['allowPrivateTargets', 'allowLoopback', 'timeoutMs', 'maxResponseBytes', 'lookup', 'connect'] as const satisfies ReadonlyArray<keyof WebhookSenderOptions>;
const _allSenderOptions: Exclude<keyof WebhookSenderOptions, (typeof SENDER_OPTIONS)[number]> extends never ? true : never = true;
void _allSenderOptions;

/** A sender that also releases its connection pool. */
export type ClosableWebhookSender = WebhookSender & { close(): Promise<void> };

export const DEFAULT_TIMEOUT_MS = 10_000;
export const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024;
/** Spec "Delivery semantics" rule 7: the error of a log record is at most 1 KiB. */
export const ERROR_MAX_BYTES = 1024;

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

function describe(err: unknown, timedOut: boolean): string {
  if (timedOut) return 'timeout';
  return describeConnectionError(err);
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
  checkOptionNames('createWebhookSender', o, SENDER_OPTIONS);
  const allowPrivate = o.allowPrivateTargets ?? false;
  const allowLoopback = o.allowLoopback ?? false;
  const timeoutMs = o.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxResponseBytes = o.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const agent = new Agent({
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    connectTimeout: timeoutMs,
    keepAliveTimeout: 4_000,
    connect: guardedConnector({ allowPrivateTargets: allowPrivate, allowLoopback, lookup: o.lookup, connect: o.connect, timeoutMs }),
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
    // Plain http only to a loopback receiver, and only when local development allows it.
    if (url.protocol !== 'https:' && !(allowLoopback && url.protocol === 'http:' && isLoopbackHost(url.hostname))) return fail(null, 'refused: https required');
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
