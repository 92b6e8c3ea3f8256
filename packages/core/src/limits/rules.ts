/**
 * The v3 rate-limit table (spec "Limits" → "v3 rate limits") and the
 * sliding-window arithmetic every store shares.
 */

export type RateLimitMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/** One bucket: at most `limit` requests per sliding `windowMs`, counted per token or per client IP. */
export interface RateLimitRule {
  limit: number;
  windowMs: number;
  keyBy: 'token' | 'ip';
  /** How long tripping this bucket blocks its key (default: the limiter's `blockMs`, else 2 × `windowMs`). */
  blockMs?: number;
}

/** Buckets per method; a request must pass all of its method's buckets. A method absent or `[]` is not limited. */
export type RateLimitTable = Partial<Record<RateLimitMethod, readonly RateLimitRule[]>>;

const MINUTE = 60_000;

/** The v3 table, exactly as the spec gives it. Identical on every plan. */
export const V3_RATE_LIMITS: Readonly<Record<RateLimitMethod, readonly RateLimitRule[]>> = {
  GET: [
    { limit: 3000, windowMs: 5 * MINUTE, keyBy: 'token' },
    { limit: 3000, windowMs: 5 * MINUTE, keyBy: 'token' },
  ],
  POST: [
    { limit: 500, windowMs: MINUTE, keyBy: 'token' },
    { limit: 200, windowMs: MINUTE, keyBy: 'token' },
  ],
  PATCH: [
    { limit: 100, windowMs: MINUTE, keyBy: 'token' },
    { limit: 200, windowMs: MINUTE, keyBy: 'token' },
  ],
  DELETE: [
    { limit: 200, windowMs: 10 * MINUTE, keyBy: 'token' },
    { limit: 200, windowMs: 10 * MINUTE, keyBy: 'ip' },
  ],
};

/** Block length when a bucket trips and nothing else is configured: twice its window (spec: "longer than the window"). */
export const DEFAULT_BLOCK_FACTOR = 2;

/** One bucket a request must pass, resolved to its key. */
export interface BucketHit {
  /** Unique per bucket and subject, e.g. `POST:2:token:<tokenId>` or `DELETE:2:ip:10.0.0.7`. */
  key: string;
  limit: number;
  windowMs: number;
  blockMs: number;
}

/** What an admitted request learns about one bucket. */
export interface BucketState {
  limit: number;
  /** Requests still allowed now (after this one). */
  remaining: number;
  /** Milliseconds until the current fixed window ends. */
  resetMs: number;
}

export type HitOutcome =
  | { admitted: true; buckets: BucketState[] }
  | { admitted: false; retryAfterMs: number };

/**
 * Where counters and blocks live. `hit` must be atomic: with any number of
 * concurrent callers (processes, for a shared store) a bucket never admits
 * more than its limit; a refused request counts in no bucket; a key under an
 * active block is refused without counting; tripping a bucket blocks its key
 * for `blockMs` unless a block is already running (never shortened nor
 * extended by retries).
 */
export interface RateLimitStore {
  hit(buckets: readonly BucketHit[], now: number): Promise<HitOutcome>;
  /**
   * The outcome `hit` would come to, answered at once where the store can
   * tell without waiting (the memory store always; a database store from a
   * reservation, with no count of the key waiting before it), counted as `hit`
   * counts it; undefined, with nothing counted, where it cannot: then `hit`.
   * Saves a request the promise and the turn of the microtask queue.
   */
  hitNow?(buckets: readonly BucketHit[], now: number): HitOutcome | undefined;
  /** Forget counters older than `keepMs` and expired blocks; returns rows/entries removed. */
  sweep?(now: number, keepMs: number): Promise<number>;
}

/** The fixed window `now` falls in, and the one before it. */
export function windowOf(now: number, windowMs: number): { start: number; prevStart: number; resetMs: number } {
  const start = Math.floor(now / windowMs) * windowMs;
  return { start, prevStart: start - windowMs, resetMs: start + windowMs - now };
}

/**
 * Sliding-window counter: the estimate is `current + previous × overlap`,
 * where overlap is the share of the previous window still inside the sliding
 * window ending now. `current` already includes this request. In integers:
 * admitted iff `current·W + previous·(W − elapsed) ≤ limit·W`.
 */
export function judge(b: BucketHit, current: number, previous: number, now: number): BucketState & { admitted: boolean } {
  const { resetMs } = windowOf(now, b.windowMs);
  const slack = b.limit * b.windowMs - current * b.windowMs - previous * resetMs;
  return { admitted: slack >= 0, limit: b.limit, remaining: Math.max(0, Math.floor(slack / b.windowMs)), resetMs };
}

/** The highest current-window count (this request included) that {@link judge} admits at `now`, given the previous window's count. */
export function highestAdmitted(b: BucketHit, previous: number, now: number): number {
  return Math.floor((b.limit * b.windowMs - previous * windowOf(now, b.windowMs).resetMs) / b.windowMs);
}

/** One client's batch on a single key, ready for one all-or-none statement: its counter, the previous window's count, and the cap the count may reach. */
export interface OneKeyBatch {
  key: { key: string; start: number; prevStart: number };
  previous: number;
  /** The highest count the batch may bring the key to: what the bucket admits at the earliest request's instant. */
  cap: number;
  n: number;
  earliest: number;
}

/**
 * The plan for counting a batch with one statement (both database stores): every request on the same single
 * bucket and window, with the previous window's count settled and remembered (the steady state of one busy
 * client). What the bucket admits only grows as time passes, so at the earliest instant it admits every one of
 * them. Undefined when the batch is not of that kind.
 */
export function planOneKeyBatch(batch: ReadonlyArray<{ buckets: readonly BucketHit[]; now: number }>, memo: PreviousCounts): OneKeyBatch | undefined {
  const b = batch[0]!.buckets[0]!;
  if (batch.some((p) => p.buckets.length !== 1 || p.buckets[0]!.key !== b.key || p.buckets[0]!.windowMs !== b.windowMs || p.buckets[0]!.limit !== b.limit)) return undefined;
  let earliest = batch[0]!.now;
  for (const p of batch) if (p.now < earliest) earliest = p.now;
  const key = { key: b.key, ...windowOf(earliest, b.windowMs) };
  const known = memo.all([key], earliest);
  if (!known || batch.some((p) => windowOf(p.now, b.windowMs).start !== key.start)) return undefined;
  return { key, previous: known[0]!, cap: highestAdmitted(b, known[0]!, earliest), n: batch.length, earliest };
}

/** Each request of a batch counted by its plan's statement (the key's count is now `count`), judged on the count it would have had alone: the count before the statement plus its place in the batch, at its own instant. */
export function judgeOneKeyBatch(batch: ReadonlyArray<{ buckets: readonly BucketHit[]; now: number }>, plan: OneKeyBatch, count: number): HitOutcome[] {
  const outcomes = batch.map((p, i) => verdictOf(p.buckets, [{ key: plan.key.key, count: count - plan.n + i + 1, previous: plan.previous }], p.now));
  if (outcomes.some((o) => !o.admitted)) throw new Error('pmapi: a rate-limit batch counted within its cap judged a request refused');
  return outcomes as HitOutcome[];
}

/**
 * Requests grouped by the keys they count in (a client's requests share them): groups in order of their first
 * request, each in arrival order. What the database stores count together.
 */
export function byKeys<P extends { buckets: readonly { key: string }[] }>(requests: readonly P[]): P[][] {
  const groups = new Map<string, P[]>();
  for (const p of requests) {
    const keys = p.buckets.length === 1 ? p.buckets[0]!.key : p.buckets.map((b) => b.key).join('\n');
    const mine = groups.get(keys);
    if (mine) mine.push(p);
    else groups.set(keys, [p]);
  }
  return [...groups.values()];
}

/** Buckets in key order: the order every store locks counter rows in, so concurrent multi-row counts cannot deadlock. */
export function inKeyOrder<B extends { key: string }>(buckets: readonly B[]): B[] {
  return [...buckets].sort((x, y) => (x.key < y.key ? -1 : x.key > y.key ? 1 : 0));
}

/**
 * What counted requests come to, for the database stores (limits/sql.ts and
 * the SQLite side-file store): each bucket judged on the count its statement
 * returned (this request included) and the previous window's; either every
 * bucket admits — their states, in the caller's bucket order — or the buckets
 * that tripped, whose keys the store must then block (and take the counts back).
 */
export function verdictOf(
  buckets: readonly BucketHit[], counted: ReadonlyArray<{ key: string; count: number; previous: number }>, now: number,
): { admitted: true; buckets: BucketState[] } | { admitted: false; tripped: BucketHit[] } {
  const byKey = new Map(counted.map((c) => [c.key, c]));
  const verdicts = buckets.map((b) => {
    const c = byKey.get(b.key);
    return { b, ...judge(b, c?.count ?? 1, c?.previous ?? 0, now) };
  });
  // Tripped keys in key order, the order every store locks rows in.
  const tripped = inKeyOrder(verdicts.filter((v) => !v.admitted).map((v) => v.b));
  if (tripped.length) return { admitted: false, tripped };
  return { admitted: true, buckets: verdicts.map(({ limit, remaining, resetMs }) => ({ limit, remaining, resetMs })) };
}

/**
 * A process's memo of previous windows' counts, for the database stores: a
 * window's count stops changing once the window is over and the requests
 * counted in it have committed, so after `settleMs` into the next window it is
 * read once per key (with the count, in the same statement) and then taken
 * from here, and counting is a plain upsert. At most `max` entries, oldest
 * first out; a miss only costs the fuller statement.
 */
export interface PreviousCounts {
  /** The settled previous-window count of every key, or undefined when any of them must be read. */
  all(keys: ReadonlyArray<{ key: string; start: number; prevStart: number }>, now: number): number[] | undefined;
  /** Remember counts just read (those still settling are not kept). */
  remember(key: { key: string; start: number; prevStart: number }, previous: number, now: number): void;
  /**
   * After counting: give each counted key the previous count `known` holds
   * (what {@link PreviousCounts.all} answered for `keys`), or remember the
   * one the statement read. Returns the keys counted first in their window,
   * whose older windows the store may forget.
   */
  settle<K extends { key: string; start: number; prevStart: number }>(keys: readonly K[], counted: ReadonlyArray<{ key: string; count: number; previous: number }>, known: readonly number[] | undefined, now: number): K[];
}

/** How long into a window its predecessor may still receive counts (requests in flight when it ended). */
export const PREVIOUS_WINDOW_SETTLE_MS = 1000;

export function previousCounts(settleMs = PREVIOUS_WINDOW_SETTLE_MS, max = 10_000): PreviousCounts {
  const known = new Map<string, number>();
  const id = (k: { key: string; prevStart: number }) => `${k.prevStart}\u0000${k.key}`;
  return {
    all(keys, now) {
      const out: number[] = [];
      for (const k of keys) {
        const v = now - k.start >= settleMs ? known.get(id(k)) : undefined;
        if (v === undefined) return undefined;
        out.push(v);
      }
      return out;
    },
    remember(k, previous, now) {
      if (now - k.start < settleMs) return;
      if (known.size >= max) known.delete(known.keys().next().value!);
      known.set(id(k), previous);
    },
    settle(keys, counted, knownCounts, now) {
      const byKey = new Map(counted.map((c) => [c.key, c]));
      const first: typeof keys[number][] = [];
      for (let i = 0; i < keys.length; i++) {
        const k = keys[i]!;
        const c = byKey.get(k.key) as { count: number; previous: number } | undefined;
        if (!c) continue;
        if (knownCounts) c.previous = knownCounts[i]!;
        else this.remember(k, c.previous, now);
        if (c.count === 1) first.push(k);
      }
      return first;
    },
  };
}
