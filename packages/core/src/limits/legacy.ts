import { ProblemError } from '../errors/problem';
import type { SqlStore } from '../sql/dialect';
import { memoryRateLimitStore } from './memory';
import { sqlRateLimitStore } from './sql';
import type { BucketHit, BucketState, RateLimitRule, RateLimitStore } from './rules';

/**
 * The legacy v1.0 rate limits (spec "Limits" → "Legacy rate limits"): per
 * method a per-token and a per-IP bucket, both must pass; POSTs to
 * `/messages` have a pair of their own instead of POST's. Same sliding
 * windows, stores and block semantics as v3 (limits/index.ts); keys are
 * prefixed `v1:` so they never meet v3's in a shared store.
 */

/** The rows of the legacy table: the four methods, and POST /messages. */
export type LegacyRateLimitBucket = 'GET' | 'POST' | 'PUT' | 'DELETE' | 'POST /messages';

/** A legacy rule: as a v3 rule, with its block length always stated. */
export interface LegacyRateLimitRule extends RateLimitRule {
  blockMs: number;
}

/** Per row, the per-token rule then the per-IP rule. */
export type LegacyRateLimitTable = Record<LegacyRateLimitBucket, readonly [LegacyRateLimitRule, LegacyRateLimitRule]>;

const MINUTE = 60_000;

/**
 * The spec table with its block lengths: 60 minutes after exhausting the
 * per-token GET or POST /messages bucket; 10 minutes after the other
 * per-token buckets; 10 minutes after the per-IP GET bucket; 60 minutes
 * after the other per-IP buckets.
 */
export const LEGACY_RATE_LIMITS: Readonly<LegacyRateLimitTable> = {
  GET: [
    { limit: 1000, windowMs: 5 * MINUTE, keyBy: 'token', blockMs: 60 * MINUTE },
    { limit: 200, windowMs: MINUTE, keyBy: 'ip', blockMs: 10 * MINUTE },
  ],
  POST: [
    { limit: 50, windowMs: MINUTE, keyBy: 'token', blockMs: 10 * MINUTE },
    { limit: 100, windowMs: MINUTE, keyBy: 'ip', blockMs: 60 * MINUTE },
  ],
  PUT: [
    { limit: 50, windowMs: MINUTE, keyBy: 'token', blockMs: 10 * MINUTE },
    { limit: 100, windowMs: MINUTE, keyBy: 'ip', blockMs: 60 * MINUTE },
  ],
  DELETE: [
    { limit: 10, windowMs: MINUTE, keyBy: 'token', blockMs: 10 * MINUTE },
    { limit: 200, windowMs: 10 * MINUTE, keyBy: 'ip', blockMs: 60 * MINUTE },
  ],
  'POST /messages': [
    { limit: 500, windowMs: 5 * MINUTE, keyBy: 'token', blockMs: 60 * MINUTE },
    { limit: 100, windowMs: MINUTE, keyBy: 'ip', blockMs: 60 * MINUTE },
  ],
};

/** What the legacy pipeline asks of its limiter, between authentication and the operation. */
export interface LegacyRateLimiter {
  /**
   * Admit a request — returning the X-RateLimit-* headers of its most
   * constrained bucket — or throw a 429 `rate_limited` ProblemError whose
   * detail is the message, with `Retry-After` (the remaining block, whole
   * seconds) in its headers and `retryAfter` in its extras. `path` is the
   * request path (with or without `/api/v1.0`, query ignored).
   */
  check(input: { tokenId: string; method: string; path: string; clientIp: string | undefined; now: number }): Promise<Record<string, string>>;
  /** Forget stale counters and expired blocks (run by `api.jobs.purge()`); returns how many went. */
  sweep?(now: number): Promise<number>;
}

export interface LegacyRateLimiterOptions {
  /** Where counters live, as for `createRateLimiter`: `'memory'` (default), `'database'` (the `sqlStore`, shared by its processes), or a store. */
  store?: 'memory' | 'database' | RateLimitStore;
  /** The database for `store: 'database'`. */
  sqlStore?: SqlStore;
  /**
   * Rows replacing the spec's (tests, internal traffic). A rule without
   * `blockMs` takes the spec's block length of its row and key kind.
   */
  limits?: Partial<Record<LegacyRateLimitBucket, readonly [RateLimitRule, RateLimitRule]>>;
}

/** The key IP buckets use when the request has no client address (as v3's). */
const UNKNOWN_IP = 'unknown';

/** Counters are kept at least this long by a sweep (a store may be shared with hourly buckets). */
const KEEP_AT_LEAST_MS = 2 * 60 * MINUTE;

/** The legacy segment a path names: the one after `/api/v1.0` (or the first one of a relative path). */
function segmentOf(path: string): string {
  const segs = path.split('?')[0]!.split('/').filter(Boolean);
  const i = segs.indexOf('v1.0');
  return (i >= 0 ? segs[i + 1] : segs[0]) ?? '';
}

/** The table row a request counts in (undefined: not limited). HEAD counts as GET; a POST to the messages segment is POST /messages. */
export function legacyBucketOf(method: string, path: string): LegacyRateLimitBucket | undefined {
  const m = method.toUpperCase();
  if (m === 'GET' || m === 'HEAD') return 'GET';
  if (m === 'POST') return segmentOf(path) === 'messages' ? 'POST /messages' : 'POST';
  if (m === 'PUT' || m === 'DELETE') return m;
  return undefined;
}

const KEY_PART: Record<LegacyRateLimitBucket, string> = { GET: 'GET', POST: 'POST', PUT: 'PUT', DELETE: 'DELETE', 'POST /messages': 'POST-messages' };

/**
 * The legacy v1.0 rate limiter (spec "Limits"): both buckets of the
 * request's row must admit it; tripping one blocks its key for the spec's
 * block length, during which every request of that key is refused without
 * counting, and retries neither shorten nor extend the block.
 *
 * @example
 * createPmapi({ store, legacyRateLimiter: createLegacyRateLimiter({ store: 'database', sqlStore: store }) });
 */
export function createLegacyRateLimiter(o: LegacyRateLimiterOptions = {}): LegacyRateLimiter {
  const table = {} as Record<LegacyRateLimitBucket, readonly [LegacyRateLimitRule, LegacyRateLimitRule]>;
  for (const row of Object.keys(LEGACY_RATE_LIMITS) as LegacyRateLimitBucket[]) {
    const spec = LEGACY_RATE_LIMITS[row];
    const given = o.limits?.[row];
    if (given === undefined) {
      table[row] = spec;
      continue;
    }
    if (!Array.isArray(given) || given.length !== 2 || given[0].keyBy !== 'token' || given[1].keyBy !== 'ip') {
      throw new Error(`pmapi: legacy rate limits for ${row} must be [a per-token rule, a per-IP rule]`);
    }
    table[row] = [0, 1].map((i) => {
      const r = given[i]!;
      const blockMs = r.blockMs ?? spec[i]!.blockMs;
      if (!(Number.isInteger(r.limit) && r.limit >= 0 && Number.isInteger(r.windowMs) && r.windowMs > 0 && Number.isInteger(blockMs) && blockMs >= 0)) {
        throw new Error(`pmapi: invalid legacy rate-limit rule for ${row}: ${JSON.stringify(r)}`);
      }
      return { limit: r.limit, windowMs: r.windowMs, keyBy: r.keyBy, blockMs };
    }) as unknown as readonly [LegacyRateLimitRule, LegacyRateLimitRule];
  }
  let store: RateLimitStore;
  if (o.store === 'database') {
    if (!o.sqlStore) throw new Error("pmapi: createLegacyRateLimiter({ store: 'database' }) needs sqlStore");
    store = o.sqlStore.rateLimitStore?.() ?? sqlRateLimitStore(o.sqlStore);
  } else if (o.store === undefined || o.store === 'memory') {
    store = memoryRateLimitStore();
  } else {
    store = o.store;
  }
  const longestWindow = Math.max(...Object.values(table).flatMap((rules) => rules.map((r) => r.windowMs)));

  return {
    async check({ tokenId, method, path, clientIp, now }): Promise<Record<string, string>> {
      const row = legacyBucketOf(method, path);
      if (!row) return {};
      const buckets: BucketHit[] = table[row].map((r, i) => ({
        key: `v1:${KEY_PART[row]}:${i + 1}:${r.keyBy}:${r.keyBy === 'token' ? tokenId : clientIp || UNKNOWN_IP}`,
        limit: r.limit,
        windowMs: r.windowMs,
        blockMs: r.blockMs,
      }));
      const out = await store.hit(buckets, now);
      if (!out.admitted) {
        // Never announce more than a whole block (a request that waited for another process's trip).
        const ms = Math.min(out.retryAfterMs, Math.max(...buckets.map((b) => b.blockMs)));
        const seconds = Math.max(1, Math.ceil(ms / 1000));
        throw new ProblemError('rate_limited', `Too many ${row} requests; retry after ${seconds} s`, { retryAfter: seconds }, { 'retry-after': String(seconds) });
      }
      const tightest = mostConstrained(out.buckets);
      return {
        'x-ratelimit-limit': String(tightest.limit),
        'x-ratelimit-remaining': String(tightest.remaining),
        'x-ratelimit-reset': String(Math.ceil(tightest.resetMs / 1000)),
      };
    },
    async sweep(now) {
      return store.sweep ? store.sweep(now, Math.max(KEEP_AT_LEAST_MS, 2 * longestWindow)) : 0;
    },
  };
}

/** The bucket with the fewest requests left; ties go to the smaller limit, then the later reset (as v3). */
function mostConstrained(buckets: readonly BucketState[]): BucketState {
  let best = buckets[0]!;
  for (const b of buckets.slice(1)) {
    if (b.remaining < best.remaining || (b.remaining === best.remaining && (b.limit < best.limit || (b.limit === best.limit && b.resetMs > best.resetMs)))) best = b;
  }
  return best;
}
