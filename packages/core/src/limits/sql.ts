import type { SqlStore } from '../sql/dialect';
import { judge, windowOf, type BucketHit, type HitOutcome, type RateLimitStore } from './rules';

/**
 * Counters in the database (tables `rate_counters`, `rate_blocks`), so every
 * process sharing it enforces one limit. One transaction per request:
 *
 * 1. refuse at once if a bucket key is under an active block;
 * 2. count the request in each bucket's current window with one atomic
 *    `INSERT … ON CONFLICT DO UPDATE SET count = count + 1 RETURNING count`
 *    (keys in sorted order, so concurrent requests lock rows in one order);
 * 3. judge the returned counts with the previous windows' counts;
 * 4. refused: take the counts back (`count - 1`, in the same transaction, so
 *    nobody ever sees them) and block each tripped key unless a block runs.
 *
 * The row locks taken in 2 serialise concurrent requests on one key until
 * commit, so the N+1th request sees N whatever process it runs in.
 */
export function sqlRateLimitStore(store: SqlStore): RateLimitStore {
  return {
    async hit(buckets: readonly BucketHit[], now: number): Promise<HitOutcome> {
      if (buckets.length === 0) return { admitted: true, buckets: [] };
      const sorted = [...buckets].sort((x, y) => (x.key < y.key ? -1 : x.key > y.key ? 1 : 0));
      const keys = sorted.map((b) => b.key);
      return store.transaction(async (trx) => {
        const blocked = await trx.selectFrom('rate_blocks').select('until').where('key', 'in', keys).where('until', '>', now).execute();
        if (blocked.length) return { admitted: false, retryAfterMs: Math.max(...blocked.map((r) => Number(r.until))) - now };

        const current: number[] = [];
        for (const b of sorted) {
          const { start, prevStart } = windowOf(now, b.windowMs);
          const row = await trx.insertInto('rate_counters')
            .values({ key: b.key, window_start: start, count: 1 })
            .onConflict((oc) => oc.columns(['key', 'window_start']).doUpdateSet((eb) => ({ count: eb('rate_counters.count', '+', 1) })))
            .returning('count')
            .executeTakeFirstOrThrow();
          const count = Number(row.count);
          // A new window for this key: forget the ones before its previous window.
          if (count === 1) await trx.deleteFrom('rate_counters').where('key', '=', b.key).where('window_start', '<', prevStart).execute();
          current.push(count);
        }
        const prevRows = await trx.selectFrom('rate_counters').select(['key', 'count'])
          .where((eb) => eb.or(sorted.map((b) => eb.and([eb('key', '=', b.key), eb('window_start', '=', windowOf(now, b.windowMs).prevStart)]))))
          .execute();
        const previous = new Map(prevRows.map((r) => [r.key as string, Number(r.count)]));
        const verdicts = sorted.map((b, i) => ({ b, ...judge(b, current[i]!, previous.get(b.key) ?? 0, now) }));
        const tripped = verdicts.filter((v) => !v.admitted);
        if (tripped.length === 0) {
          // Report in the caller's bucket order.
          const byKey = new Map(verdicts.map((v) => [v.b.key, v]));
          return { admitted: true, buckets: buckets.map((b) => {
            const { limit, remaining, resetMs } = byKey.get(b.key)!;
            return { limit, remaining, resetMs };
          }) };
        }
        for (const b of sorted) {
          await trx.updateTable('rate_counters').set((eb) => ({ count: eb('count', '-', 1) }))
            .where('key', '=', b.key).where('window_start', '=', windowOf(now, b.windowMs).start).execute();
        }
        for (const { b } of tripped) {
          await trx.insertInto('rate_blocks').values({ key: b.key, until: now + b.blockMs })
            .onConflict((oc) => oc.column('key').doUpdateSet((eb) => ({ until: eb.ref('excluded.until') })).where('rate_blocks.until', '<=', now))
            .execute();
        }
        const blocks = await trx.selectFrom('rate_blocks').select('until').where('key', 'in', tripped.map((v) => v.b.key)).execute();
        return { admitted: false, retryAfterMs: Math.max(...blocks.map((r) => Number(r.until))) - now };
      });
    },

    async sweep(now: number, keepMs: number): Promise<number> {
      const c = await store.db.deleteFrom('rate_counters').where('window_start', '<', now - keepMs).executeTakeFirst();
      const b = await store.db.deleteFrom('rate_blocks').where('until', '<=', now).executeTakeFirst();
      return Number(c.numDeletedRows) + Number(b.numDeletedRows);
    },
  };
}
