import type { SqlStore } from '../sql/dialect';
import { activeBlock, countUnlessBlocked, forgetOldWindows, refuse, sweepRateLimits } from '../sql/queries/rate-limits';
import { previousCounts, verdictOf, windowOf, type BucketHit, type HitOutcome, type RateLimitStore } from './rules';

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
 */
export function sqlRateLimitStore(store: SqlStore): RateLimitStore {
  const previous = previousCounts();
  return {
    async hit(buckets: readonly BucketHit[], now: number): Promise<HitOutcome> {
      if (buckets.length === 0) return { admitted: true, buckets: [] };
      // Sorted keys: concurrent multi-row upserts lock rows in one order.
      const sorted = [...buckets].sort((x, y) => (x.key < y.key ? -1 : x.key > y.key ? 1 : 0));
      const keys = sorted.map((b) => ({ key: b.key, ...windowOf(now, b.windowMs) }));
      const known = previous.all(keys, now);
      const counted = await countUnlessBlocked(store.db, store.dialect, keys, now, !known);
      if (!counted) {
        const until = await activeBlock(store.db, sorted.map((b) => b.key), now);
        // The block ended between the two statements: refuse for a moment rather than count twice.
        return { admitted: false, retryAfterMs: Math.max(until - now, 1) };
      }
      for (const k of previous.settle(keys, counted, known, now)) await forgetOldWindows(store.db, k.key, k.prevStart);
      const verdict = verdictOf(buckets, counted, now);
      if (verdict.admitted) return verdict;
      // Refused requests count nowhere.
      const until = await refuse(store.db, keys, verdict.tripped.map((b) => ({ key: b.key, until: now + b.blockMs })), now);
      return { admitted: false, retryAfterMs: until - now };
    },

    async sweep(now: number, keepMs: number): Promise<number> {
      return sweepRateLimits(store.db, now - keepMs, now);
    },
  };
}
