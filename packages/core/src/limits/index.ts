import { ProblemError } from '../errors/problem';
import type { SqlStore } from '../sql/dialect';
import { memoryRateLimitStore } from './memory';
import { sqlRateLimitStore } from './sql';
import {
  DEFAULT_BLOCK_FACTOR, V3_RATE_LIMITS,
  type BucketHit, type BucketState, type HitOutcome, type RateLimitMethod, type RateLimitRule, type RateLimitStore, type RateLimitTable,
} from './rules';

export {
  V3_RATE_LIMITS, DEFAULT_BLOCK_FACTOR, judge, highestAdmitted, byKeys, planOneKeyBatch, judgeOneKeyBatch, inKeyOrder, windowOf, verdictOf, previousCounts, PREVIOUS_WINDOW_SETTLE_MS,
  type PreviousCounts, type OneKeyBatch, type BucketHit, type BucketState, type HitOutcome, type RateLimitMethod, type RateLimitRule, type RateLimitStore, type RateLimitTable,
} from './rules';
export { memoryRateLimitStore } from './memory';
export { sqlRateLimitStore } from './sql';
export { leaseBook, LEASE_MS, LEASE_MAX, type LeaseBook } from './lease';

/**
 * What the request pipeline asks of a rate limiter (spec "Limits"): admit a
 * request — returning the X-RateLimit-* headers to add — or throw a 429
 * `rate_limited` ProblemError with Retry-After.
 */
export interface RateLimiter {
  check(input: { tokenId: string; method: string; clientIp: string | undefined; now: number }): Promise<Record<string, string>>;
  /**
   * `check`'s answer at once where the limiter can give it without waiting
   * (its store answers at once: see {@link RateLimitStore.hitNow}): the
   * headers, or the 429 thrown; undefined, with nothing counted, where it
   * cannot: then `check`.
   */
  checkNow?(input: { tokenId: string; method: string; clientIp: string | undefined; now: number }): Record<string, string> | undefined;
  /**
   * Whether this limiter's last answers for the request's buckets left room to
   * spare (at least a tenth of each limit, {@link ROOM_SHARE}): the pipeline may
   * then start a read while `check` counts, dropping it should the count
   * refuse. A limiter without it is always waited for first.
   */
  hasRoom?(input: { tokenId: string; method: string; clientIp: string | undefined }): boolean;
  /** Forget stale counters and expired blocks (run by `api.jobs.purge()`); returns how many went. */
  sweep?(now: number): Promise<number>;
}

export interface RateLimiterOptions {
  /**
   * Where counters live: `'memory'` (this process only), `'database'` (the
   * `sqlStore`, shared by every process using it), or a store of your own.
   * Default `'memory'`.
   */
  store?: 'memory' | 'database' | RateLimitStore;
  /** The database for `store: 'database'`. */
  sqlStore?: SqlStore;
  /**
   * Buckets per method, replacing the v3 table's entry for each method given
   * (`{ GET: [] }` leaves GET unlimited), e.g. higher limits for internal
   * traffic or small ones in tests.
   */
  limits?: RateLimitTable;
  /** Block length after a bucket trips, in ms, or per rule (default: 2 × the bucket's window). */
  blockMs?: number | ((rule: RateLimitRule) => number);
}

/** The share of a bucket's limit its last count must have left for {@link RateLimiter.hasRoom}. */
export const ROOM_SHARE = 0.1;

/** At most this many keys in a limiter's memo of room left. */
const ROOM_KEYS = 10_000;

/** The headers of a request whose method is not limited: none. */
const NOT_LIMITED: Record<string, string> = Object.freeze({}) as Record<string, string>;

/** The key IP buckets use when the request has no client address. */
export const UNKNOWN_CLIENT_IP = 'unknown';

/**
 * The v3 rate limiter: per method, every bucket of the table must admit the
 * request (HEAD counts as GET; other methods are not limited).
 *
 * @example
 * createPmapi({ store, rateLimiter: createRateLimiter({ store: 'database', sqlStore: store }) });
 * createPmapi({ store, rateLimiter: createRateLimiter({ limits: { GET: [{ limit: 100_000, windowMs: 60_000, keyBy: 'token' }] } }) });
 */
export function createRateLimiter(o: RateLimiterOptions = {}): RateLimiter {
  const table: RateLimitTable = { ...V3_RATE_LIMITS, ...(o.limits ?? {}) };
  for (const [method, rules] of Object.entries(table)) {
    for (const r of rules ?? []) {
      if (!(Number.isInteger(r.limit) && r.limit >= 0 && Number.isInteger(r.windowMs) && r.windowMs > 0) || (r.keyBy !== 'token' && r.keyBy !== 'ip')) {
        throw new Error(`pmapi: invalid rate-limit rule for ${method}: ${JSON.stringify(r)}`);
      }
    }
  }
  let store: RateLimitStore;
  if (o.store === 'database') {
    if (!o.sqlStore) throw new Error("pmapi: createRateLimiter({ store: 'database' }) needs sqlStore");
    store = o.sqlStore.rateLimitStore?.() ?? sqlRateLimitStore(o.sqlStore);
  } else if (o.store === undefined || o.store === 'memory') {
    store = memoryRateLimitStore();
  } else {
    store = o.store;
  }
  const blockOf = (r: RateLimitRule): number =>
    r.blockMs ?? (typeof o.blockMs === 'function' ? o.blockMs(r) : o.blockMs ?? DEFAULT_BLOCK_FACTOR * r.windowMs);
  // The buckets of a method that share a window and a kind of key count exactly the same requests (every
  // admitted request counts in every bucket, a refused one in none), so they share one counter: GET's two in
  // the v3 table, and POST's and PATCH's pairs, which differ only in limit. The smallest limit always trips
  // first (the counts are the same), so the shared counter is judged against it and blocks for the longest
  // block among the rules with that limit; the X-RateLimit-* headers name that bucket either way (fewest
  // remaining). Each bucket's block length is settled here, once, not per request.
  const distinct: Partial<Record<string, Array<{ rule: RateLimitRule; n: number; blockMs: number }>>> = {};
  for (const [method, rules] of Object.entries(table)) {
    const shared = new Map<string, { rule: RateLimitRule; n: number; blockMs: number }>();
    (rules ?? []).forEach((rule, i) => {
      const blockMs = blockOf(rule);
      const same = `${rule.windowMs}:${rule.keyBy}`;
      const first = shared.get(same);
      if (!first) return void shared.set(same, { rule, n: i + 1, blockMs });
      if (rule.limit < first.rule.limit) shared.set(same, { rule: { ...first.rule, limit: rule.limit }, n: first.n, blockMs });
      else if (rule.limit === first.rule.limit) first.blockMs = Math.max(first.blockMs, blockMs);
    });
    distinct[method] = [...shared.values()];
  }
  // At least an hour: the store may be shared with the API-host token endpoint's hourly bucket (api.ts).
  const longestWindow = Math.max(60 * 60_000, ...Object.values(table).flatMap((rules) => (rules ?? []).map((r) => r.windowMs)));

  type Mine = { m: RateLimitMethod; buckets: BucketHit[] };
  /** Per method whose buckets are all keyed by token: each token's buckets (at most ROOM_KEYS tokens, then afresh). */
  const byToken = new Map<string, Map<string, Mine>>();
  for (const [method, rules] of Object.entries(distinct)) if (rules?.every((r) => r.rule.keyBy === 'token')) byToken.set(method, new Map());

  /** The request's buckets, each with its key (undefined: the method is not limited). */
  const bucketsOf = (tokenId: string, method: string, clientIp: string | undefined): Mine | undefined => {
    const m = (method === 'HEAD' ? 'GET' : method) as RateLimitMethod;
    const rules = Object.prototype.hasOwnProperty.call(distinct, m) ? distinct[m] : undefined;
    if (!rules || rules.length === 0) return undefined;
    // A method whose buckets are all per token: its buckets are the token's, built once (keys are strings built anew otherwise).
    const memo = byToken.get(m);
    const known = memo?.get(tokenId);
    if (known) return known;
    const mine: Mine = {
      m,
      buckets: rules.map(({ rule: r, n, blockMs }) => ({
        key: `${m}:${n}:${r.keyBy}:${r.keyBy === 'token' ? tokenId : clientIp || UNKNOWN_CLIENT_IP}`,
        limit: r.limit,
        windowMs: r.windowMs,
        blockMs,
      })),
    };
    if (memo) {
      if (memo.size >= ROOM_KEYS) memo.clear();
      memo.set(tokenId, mine);
    }
    return mine;
  };
  // What each key had left after its last admitted request in this process (none after a refusal): hasRoom's memo,
  // at most ROOM_KEYS keys (started afresh when full: a miss only means waiting for the count).
  const room = new Map<string, number>();
  /** An outcome as `check` answers it: the headers of the most constrained bucket, or the 429. */
  const settle = ({ m, buckets }: Mine, out: HitOutcome): Record<string, string> => {
    if (!out.admitted) {
      for (const b of buckets) room.delete(b.key);
      // A request that waited for another process's trip can see a block starting after its own `now`:
      // never announce more than a whole block.
      const ms = Math.min(out.retryAfterMs, Math.max(...buckets.map((b) => b.blockMs)));
      const seconds = Math.max(1, Math.ceil(ms / 1000));
      throw new ProblemError('rate_limited', `Too many ${m} requests; retry after ${seconds} s`, { retryAfter: seconds }, { 'retry-after': String(seconds) });
    }
    if (room.size >= ROOM_KEYS) room.clear();
    if (out.buckets.length === buckets.length) out.buckets.forEach((s, i) => room.set(buckets[i]!.key, s.remaining));
    const tightest = out.buckets.length === 1 ? out.buckets[0]! : mostConstrained(out.buckets);
    return {
      'x-ratelimit-limit': String(tightest.limit),
      'x-ratelimit-remaining': String(tightest.remaining),
      'x-ratelimit-reset': String(Math.ceil(tightest.resetMs / 1000)),
    };
  };

  return {
    hasRoom({ tokenId, method, clientIp }) {
      const mine = bucketsOf(tokenId, method, clientIp);
      if (!mine) return true;
      for (const b of mine.buckets) if ((room.get(b.key) ?? 0) < Math.max(1, Math.ceil(b.limit * ROOM_SHARE))) return false;
      return true;
    },
    async check({ tokenId, method, clientIp, now }): Promise<Record<string, string>> {
      const mine = bucketsOf(tokenId, method, clientIp);
      if (!mine) return NOT_LIMITED;
      return settle(mine, await store.hit(mine.buckets, now));
    },
    checkNow({ tokenId, method, clientIp, now }): Record<string, string> | undefined {
      const mine = bucketsOf(tokenId, method, clientIp);
      if (!mine) return NOT_LIMITED;
      const out = store.hitNow?.(mine.buckets, now);
      return out && settle(mine, out);
    },
    async sweep(now) {
      // Counters stay while they can still weigh in a sliding window (current + previous).
      return store.sweep ? store.sweep(now, 2 * longestWindow) : 0;
    },
  };
}

/** The bucket with the fewest requests left; ties go to the smaller limit, then the later reset. */
function mostConstrained(buckets: readonly BucketState[]): BucketState {
  let best = buckets[0]!;
  for (const b of buckets.slice(1)) {
    if (b.remaining < best.remaining || (b.remaining === best.remaining && (b.limit < best.limit || (b.limit === best.limit && b.resetMs > best.resetMs)))) best = b;
  }
  return best;
}
