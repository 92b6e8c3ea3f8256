import { sql } from 'kysely';
import type { SqlStore } from '../sql/dialect';
import { judge, windowOf, type BucketHit, type HitOutcome, type RateLimitStore } from './rules';

/**
 * Counters in the database (tables `rate_counters`, `rate_blocks`), so every
 * process sharing it enforces one limit. An admitted request costs two
 * statements and holds no lock beyond them:
 *
 * 1. one read of the keys' active blocks and their previous windows' counts;
 * 2. one multi-row `INSERT … ON CONFLICT DO UPDATE SET count = count + 1
 *    RETURNING count` counting the request in every bucket at once (atomic:
 *    concurrent requests on a key get distinct counts, so the N+1th sees N+1
 *    whatever process it runs in);
 * 3. refused: take the counts back and block each tripped key unless a block
 *    already runs (its retry neither shortens nor extends the block).
 */
export function sqlRateLimitStore(store: SqlStore): RateLimitStore {
  return {
    async hit(buckets: readonly BucketHit[], now: number): Promise<HitOutcome> {
      if (buckets.length === 0) return { admitted: true, buckets: [] };
      // Sorted keys: concurrent multi-row upserts lock rows in one order.
      const sorted = [...buckets].sort((x, y) => (x.key < y.key ? -1 : x.key > y.key ? 1 : 0));
      const keys = sorted.map((b) => b.key);
      const db = store.db;
      const state = await db.selectFrom('rate_blocks').select([sql.lit('b').as('t'), 'key', 'until as v'])
        .where('key', 'in', keys).where('until', '>', now)
        .unionAll(db.selectFrom('rate_counters').select([sql.lit('p').as('t'), 'key', 'count as v'])
          .where((eb) => eb.or(sorted.map((b) => eb.and([eb('key', '=', b.key), eb('window_start', '=', windowOf(now, b.windowMs).prevStart)])))))
        .execute();
      const blocks = state.filter((r) => r.t === 'b').map((r) => Number(r.v));
      if (blocks.length) return { admitted: false, retryAfterMs: Math.max(...blocks) - now };
      const previous = new Map(state.filter((r) => r.t === 'p').map((r) => [r.key as string, Number(r.v)]));

      const counted = await db.insertInto('rate_counters')
        .values(sorted.map((b) => ({ key: b.key, window_start: windowOf(now, b.windowMs).start, count: 1 })))
        .onConflict((oc) => oc.columns(['key', 'window_start']).doUpdateSet((eb) => ({ count: eb('rate_counters.count', '+', 1) })))
        .returning(['key', 'count'])
        .execute();
      const current = new Map(counted.map((r) => [r.key as string, Number(r.count)]));
      // A key's first request in a new window: forget the windows before its previous one.
      const fresh = sorted.filter((b) => current.get(b.key) === 1);
      for (const b of fresh) await db.deleteFrom('rate_counters').where('key', '=', b.key).where('window_start', '<', windowOf(now, b.windowMs).prevStart).execute();

      const verdicts = sorted.map((b) => ({ b, ...judge(b, current.get(b.key) ?? 1, previous.get(b.key) ?? 0, now) }));
      const tripped = verdicts.filter((v) => !v.admitted);
      if (tripped.length === 0) {
        // Report in the caller's bucket order.
        const byKey = new Map(verdicts.map((v) => [v.b.key, v]));
        return { admitted: true, buckets: buckets.map((b) => {
          const { limit, remaining, resetMs } = byKey.get(b.key)!;
          return { limit, remaining, resetMs };
        }) };
      }
      // Refused requests count nowhere. One key per statement: a statement never holds one counter while
      // waiting for another, so this cannot deadlock with a concurrent (sorted) multi-row count.
      for (const b of sorted) {
        await db.updateTable('rate_counters').set((eb) => ({ count: eb('count', '-', 1) }))
          .where('key', '=', b.key).where('window_start', '=', windowOf(now, b.windowMs).start).execute();
      }
      await db.insertInto('rate_blocks').values(tripped.map(({ b }) => ({ key: b.key, until: now + b.blockMs })))
        .onConflict((oc) => oc.column('key').doUpdateSet((eb) => ({ until: eb.ref('excluded.until') })).where('rate_blocks.until', '<=', now))
        .execute();
      const until = await db.selectFrom('rate_blocks').select('until').where('key', 'in', tripped.map((v) => v.b.key)).execute();
      return { admitted: false, retryAfterMs: Math.max(...until.map((r) => Number(r.until))) - now };
    },

    async sweep(now: number, keepMs: number): Promise<number> {
      const c = await store.db.deleteFrom('rate_counters').where('window_start', '<', now - keepMs).executeTakeFirst();
      const b = await store.db.deleteFrom('rate_blocks').where('until', '<=', now).executeTakeFirst();
      return Number(c.numDeletedRows) + Number(b.numDeletedRows);
    },
  };
}
