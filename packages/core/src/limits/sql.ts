import type { SqlStore } from '../sql/dialect';
import { activeBlock, countTogether, countUnlessBlocked, forgetOldWindows, giveBack, refuse, sweepRateLimits } from '../sql/queries/rate-limits';
import { leaseBook } from './lease';
import { byKeys, inKeyOrder, judgeOneKeyBatch, planOneKeyBatch, previousCounts, verdictOf, windowOf, type BucketHit, type HitOutcome, type RateLimitStore } from './rules';

/**
 * Counters in the database (tables `rate_counters`, `rate_blocks`), so every
 * process sharing it enforces one limit. An admitted request costs one
 * statement (sql/queries/rate-limits.ts, `countUnlessBlocked`), compiled once
 * per number of buckets, and holds no lock beyond it:
 *
 * - unless a key is under an active block, one multi-row `INSERT … ON
 *   CONFLICT DO UPDATE SET count = count + 1 RETURNING` counts the request
 *   in every bucket at once and returns each key's new count (atomic:
 *   concurrent requests on a key get distinct counts, so the N+1th sees N+1
 *   whatever process it runs in), with its previous window's count until
 *   this process has that one settled (rules.ts `previousCounts`);
 * - blocked (no row came back): read the block's end, counting nothing;
 * - refused: take the counts back and block each tripped key unless a block
 *   already runs (its retry neither shortens nor extends the block).
 *
 * The requests that reach the limiter in one run of the microtask queue are
 * counted side by side: a busy client's (whose authentications came back
 * together) with one statement where they all fit (see `hitTogether`), other
 * clients' each with its own. Every statement commits on its own, so they go
 * through the store's `reads` where it has one, sent together with the other
 * statements of the moment, in arrival order: the reads of requests the
 * limiter had room for, started beside their count (http/handle.ts), go in the
 * same write.
 *
 * A busy client's batch may reserve a few counts more, and its next requests
 * are answered from them without a statement (limits/lease.ts); one count of a
 * client's key is in flight at a time, and requests arriving meanwhile wait
 * for it, then are answered from what it reserved where they can.
 */
export function sqlRateLimitStore(store: SqlStore): RateLimitStore {
  const db = store.reads ?? store.db;
  const previous = previousCounts();
  const leases = leaseBook();

  /** One request counted on its own. */
  async function hitOne(buckets: readonly BucketHit[], now: number): Promise<HitOutcome> {
    // Sorted keys: concurrent multi-row upserts lock rows in one order.
    const sorted = inKeyOrder(buckets);
    const keys = sorted.map((b) => ({ key: b.key, ...windowOf(now, b.windowMs) }));
    const known = previous.all(keys, now);
    const counted = await countUnlessBlocked(db, store.dialect, keys, now, !known);
    if (!counted) {
      const until = await activeBlock(db, sorted.map((b) => b.key), now);
      // The block ended between the two statements: refuse for a moment rather than count twice.
      return { admitted: false, retryAfterMs: Math.max(until - now, 1) };
    }
    for (const k of previous.settle(keys, counted, known, now)) await forgetOldWindows(db, k.key, k.prevStart);
    const verdict = verdictOf(buckets, counted, now);
    if (verdict.admitted) {
      if (keys.length === 1) leases.counted(keys[0]!.key, keys[0]!.start, counted[0]!.count);
      return verdict;
    }
    // Refused requests count nowhere.
    const until = await refuse(db, keys, verdict.tripped.map((b) => ({ key: b.key, until: now + b.blockMs })), now);
    return { admitted: false, retryAfterMs: until - now };
  }

  type Pending = { buckets: readonly BucketHit[]; now: number; resolve: (o: HitOutcome) => void; reject: (err: unknown) => void };

  /**
   * Requests that all count in the same single bucket and window, with the
   * previous window's count settled and remembered (the steady state of one
   * busy client; GET, POST and PATCH count in one bucket each): when all of them fit
   * (the count after them stays within what the bucket admits at the
   * earliest of their instants), one statement adds them all, and each is
   * judged on the count it would have had counted alone (the count before the
   * statement plus its place in the batch) at its own instant. When they do
   * not all fit, or the key is blocked, the statement counts none of them
   * (`countTogether`: all or none, so no other request ever sees a count that
   * is taken back) and they are counted one by one, in arrival order.
   * Undefined at once when the batch is not of that kind (its requests are
   * then counted alone, beside the others); a promise of undefined when it
   * was not counted.
   */
  function hitTogether(batch: readonly Pending[]): Promise<HitOutcome[] | undefined> | undefined {
    const plan = planOneKeyBatch(batch, previous);
    if (!plan) return undefined;
    const extra = leases.extra(plan);
    // A request alone goes this way only to take a reservation; otherwise hitOne counts it (one statement either way).
    if (plan.n === 1 && extra === 0) return undefined;
    return countTogether(db, store.dialect, plan.key, plan.n + extra, plan.cap, plan.earliest).then(async (count) => {
      if (count === undefined) return undefined;
      leases.granted(plan, extra, count);
      const outcomes = judgeOneKeyBatch(batch, plan, count - extra);
      // The batch opened the key's window: its older windows can go.
      if (count === plan.n + extra) await forgetOldWindows(db, plan.key.key, plan.key.prevStart);
      return outcomes;
    });
  }

  let queue: Pending[] = [];
  /** One client's requests (the same keys): together with one statement where they fit, else one by one; settles when all are answered. */
  const countGroup = (mine: readonly Pending[]): Promise<unknown> => {
    let together: ReturnType<typeof hitTogether>;
    try {
      together = hitTogether(mine);
    } catch (err) {
      mine.forEach((p) => p.reject(err));
      return Promise.resolve();
    }
    const alone = (): Promise<unknown> => Promise.all(mine.map((p) => hitOne(p.buckets, p.now).then(p.resolve, p.reject)));
    if (!together) return alone();
    return together.then(
      (outcomes): unknown => (outcomes ? mine.forEach((p, i) => p.resolve(outcomes[i]!)) : alone()),
      (err: unknown) => mine.forEach((p) => p.reject(err)),
    );
  };
  /** Single-key clients whose count is in flight: their later requests wait for it (then a reservation it took may answer them). */
  const inFlight = new Map<string, Pending[]>();
  /** A single-key client's requests: from its reservation where it can, else counted, one statement in flight per key. */
  const countKey = (key: string, group: readonly Pending[]): void => {
    const { served, rest: mine, back } = leases.take(group);
    served.forEach((o, i) => group[i]!.resolve(o));
    if (mine.length === 0) return;
    const waiting: Pending[] = [];
    inFlight.set(key, waiting);
    // What is left of the reservation goes back before the key is counted again, so the count is this process's
    // requests exactly. Should that fail, the counts stay for their window (refusing early, never admitting late).
    const counting = back ? giveBack(db, back.key, back.start, back.unspent).catch(() => undefined).then(() => countGroup(mine)) : countGroup(mine);
    void counting.then(() => {
      inFlight.delete(key);
      if (waiting.length) countKey(key, waiting);
    });
  };
  const flush = () => {
    const batch = queue;
    queue = [];
    // One client's requests (the same keys) are counted together; other clients' go beside them.
    for (const group of byKeys(batch)) {
      if (group[0]!.buckets.length !== 1) {
        void countGroup(group);
        continue;
      }
      const key = group[0]!.buckets[0]!.key;
      const waiting = inFlight.get(key);
      if (waiting) waiting.push(...group);
      else countKey(key, group);
    }
  };

  return {
    hitNow(buckets: readonly BucketHit[], now: number): HitOutcome | undefined {
      // Behind requests already waiting for the key's count (or any queued this turn), a request waits its turn.
      if (queue.length !== 0 || buckets.length !== 1 || inFlight.has(buckets[0]!.key)) return undefined;
      return leases.serveOne(buckets, now);
    },

    hit(buckets: readonly BucketHit[], now: number): Promise<HitOutcome> {
      if (buckets.length === 0) return Promise.resolve({ admitted: true, buckets: [] });
      return new Promise<HitOutcome>((resolve, reject) => {
        if (queue.push({ buckets, now, resolve, reject }) === 1) queueMicrotask(flush);
      });
    },

    async sweep(now: number, keepMs: number): Promise<number> {
      return sweepRateLimits(db, now - keepMs, now);
    },
  };
}
