import { describe, it, expect, inject } from 'vitest';
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { createRateLimiter } from '@pmapi/core';
import { openPostgresStore } from '@pmapi/adapter-postgres';

const url = inject('pgUrl');

/**
 * Issue 11: a rate-limited request costs one statement, and on Postgres that
 * statement must not wait for a WAL flush: the counters and blocks live in
 * unlogged tables (docs/not-shown.md, "Rate limits"); everything else is logged.
 */
describe.skipIf(!url)('[postgres] rate-limit tables are unlogged, and only they', () => {
  it('rate_counters and rate_blocks are unlogged; tasks and the outbox are not; the database limiter still counts', async () => {
    const schema = `h_${randomBytes(6).toString('hex')}`;
    const store = await openPostgresStore({ connectionString: url!, schema, max: 2 });
    try {
      const rows = (await sql<{ relname: string; relpersistence: string }>`
        select c.relname, c.relpersistence from pg_class c join pg_namespace n on n.oid = c.relnamespace
        where n.nspname = ${schema} and c.relname in ('rate_counters', 'rate_blocks', 'tasks', 'outbox') and c.relkind = 'r'`.execute(store.db)).rows;
      expect(Object.fromEntries(rows.map((r) => [r.relname, r.relpersistence]))).toEqual({ rate_counters: 'u', rate_blocks: 'u', tasks: 'p', outbox: 'p' });
      const limiter = createRateLimiter({ store: 'database', sqlStore: store, limits: { GET: [{ limit: 2, windowMs: 60_000, keyBy: 'token' }] } });
      const now = Date.parse('2026-03-01T09:00:30.000Z');
      await limiter.check({ tokenId: 't', method: 'GET', clientIp: undefined, now });
      await limiter.check({ tokenId: 't', method: 'GET', clientIp: undefined, now });
      await expect(limiter.check({ tokenId: 't', method: 'GET', clientIp: undefined, now })).rejects.toMatchObject({ code: 'rate_limited' });
    } finally {
      await store.db.schema.dropSchema(schema).cascade().execute();
      await store.close();
    }
  });
});
