/*
 * The SSRF-guarded connection shared by the webhook sender and the
 * upload-from-URL fetcher: an undici connector that refuses every non-public
 * target (IP literals in the connector, names through a checking `lookup`)
 * and pins the socket to the address it checked, plus the helpers that turn
 * connection errors into reasons that never name the resolved address.
 */
import { lookup as dnsLookup } from 'node:dns';
import { isIP } from 'node:net';
import type { ConnectionOptions } from 'node:tls';
import { buildConnector } from 'undici';
import { classifyAddress, isIpLiteral, isLoopbackHost, isPublicAddress, REFUSED_TARGET_MESSAGE } from '@pmapi/core';

/** One resolved address, as `dns.lookup(…, { all: true })` gives it. */
export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Resolves a host name to every address it has (default: the system resolver, `dns.lookup` with `all: true`). */
export type HostLookup = (hostname: string) => Promise<ResolvedAddress[]>;

/** Extra TLS options for a guarded connection (tests: `{ ca }` to trust a self-signed server). */
export type GuardedTlsOptions = Pick<ConnectionOptions, 'ca' | 'cert' | 'key' | 'rejectUnauthorized'>;

/**
 * Raised by the connector or lookup for a refused target. Its message is the
 * fixed {@link REFUSED_TARGET_MESSAGE}: it never names the host or the
 * address it resolved to.
 */
export class RefusedTarget extends Error {
  readonly code = 'E_WEBHOOK_REFUSED_TARGET';
  constructor() {
    super(REFUSED_TARGET_MESSAGE);
  }
}

export const systemLookup: HostLookup = (hostname) =>
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
export function guardedLookup(base: HostLookup, allowPrivate: boolean, allowLoopback = false) {
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
        // allowLoopback: a loopback name (localhost) may resolve to loopback addresses only; other names as usual.
        const loopbackName = allowLoopback && isLoopbackHost(hostname);
        const bad = allowPrivate ? undefined : addrs.find((a) => (loopbackName ? !isLoopbackAddress(a.address) : !isPublicAddress(a.address)));
        if (bad) return cb(new RefusedTarget(), opts.all ? [] : '');
        if (opts.all) cb(null, addrs);
        else cb(null, addrs[0]!.address, addrs[0]!.family);
      },
      (err: NodeJS.ErrnoException) => cb(err, opts.all ? [] : ''),
    );
  };
}

export interface GuardedConnectorOptions {
  /** Connect to non-public addresses too (development and tests only). */
  allowPrivateTargets?: boolean;
  /** Connect to loopback targets: `localhost` (resolving to loopback addresses only) and 127.0.0.0/8, [::1] literals (local development). */
  allowLoopback?: boolean;
  /** Name resolution (default: the system resolver). */
  lookup?: HostLookup;
  /** Extra TLS options. */
  connect?: GuardedTlsOptions;
  /** Deadline of the TCP (and TLS) connection, ms. */
  timeoutMs: number;
}

/**
 * The `connect` of an undici `Agent` that refuses non-public targets: IP
 * literals here (Node never calls `lookup` for them) and every resolved
 * address of a name in {@link guardedLookup}, before any socket opens.
 */
export function guardedConnector(o: GuardedConnectorOptions): buildConnector.connector {
  const allowPrivate = o.allowPrivateTargets ?? false;
  const allowLoopback = o.allowLoopback ?? false;
  const base = buildConnector({
    ...(o.connect ?? {}),
    timeout: o.timeoutMs,
    lookup: guardedLookup(o.lookup ?? systemLookup, allowPrivate, allowLoopback) as never,
  } as buildConnector.BuildOptions);
  return (opts, cb) => {
    // Node connects to an IP literal without calling `lookup`, so literals are judged here.
    // Whatever the policy reads as an address (any spelling, brackets, zone id) is judged as one.
    const host = opts.hostname;
    if (!allowPrivate && (isIP(host.replace(/^\[|\]$/g, '')) !== 0 || isIpLiteral(host)) && !isPublicAddress(host) && !(allowLoopback && isLoopbackAddress(host))) {
      cb(new RefusedTarget(), null);
      return;
    }
    base(opts, cb);
  };
}

/** A loopback address (127.0.0.0/8, ::1) by the core's address policy (IPv4-mapped forms are not). */
function isLoopbackAddress(address: string): boolean {
  const c = classifyAddress(address);
  return c.ip && c.range === 'loopback';
}

type CodedError = Error & { code?: string; cause?: unknown };

/** The useful error inside undici's wrapping: the refusal, or the system error under it. */
export function innermostError(err: unknown): CodedError | undefined {
  let e = err as CodedError | undefined;
  // undici wraps connector errors; the refusal or the system error is the useful part.
  for (let i = 0; i < 3 && e && !(e instanceof RefusedTarget) && e.cause instanceof Error; i++) e = e.cause as CodedError;
  return e;
}

/** Is this error (or what it wraps) a refused target? */
export function isRefusedTarget(err: unknown): boolean {
  return innermostError(err) instanceof RefusedTarget;
}

export const SYSTEM_ERRORS: Record<string, string> = {
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

/**
 * A reason for a failed connection or exchange that names the failure, never
 * the address the host resolved to: the fixed refusal message, a known system
 * error (`ECONNREFUSED: connection refused`), or the message with every
 * address redacted.
 */
export function describeConnectionError(err: unknown): string {
  const e = innermostError(err);
  if (e instanceof RefusedTarget) return e.message;
  const known = e?.code ? SYSTEM_ERRORS[e.code] : undefined;
  if (known) return `${e!.code}: ${known}`;
  const code = e?.code ? `${e.code}: ` : '';
  return `${code}${redactAddresses(e?.message ?? String(err))}`;
}

/** Replace IPv4 and IPv6 addresses (with any port) in a message. */
export function redactAddresses(msg: string): string {
  return msg
    .replace(/\[?\b(?:[0-9a-f]{0,4}:){2,7}[0-9a-f.]{0,15}\]?(?::\d+)?/gi, '<address>')
    .replace(/\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b/g, '<address>');
}
