import { describe, it, expect, inject, beforeAll, afterAll } from 'vitest';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { sql } from 'kysely';
import { createPmapi, createRateLimiter, fakeClock, sqlRateLimitStore, type Pmapi } from '@pmapi/core';
import type { SqlStore } from '@pmapi/core/sql';
import { openPostgresStore } from '@pmapi/adapter-postgres';

const url = inject('pgUrl');
const MIN = 60_000;
type Admitted = { admitted: true; buckets: Array<{ remaining: number }> };

/**
 * Issue 11, spec "Limits" (v3 rate limits): on Postgres the requests that
 * reach the database limiter in one turn of the event loop are counted
 * together — one statement for a busy client's batch — and each must still get
 * exactly the answer it would have had counted alone, in every process.
 */
describe.skipIf(!url)('[postgres] requests reaching the database limiter together', () => {
  const schema = `rl_${randomBytes(6).toString('hex')}`;
  let store: SqlStore;
  let other: SqlStore;
  let statements: string[] = [];
  const apis: Pmapi[] = [];

  beforeAll(async () => {
    store = await openPostgresStore({ connectionString: url!, schema, max: 6, onQuery: (q: string) => statements.push(q) });
    other = await openPostgresStore({ connectionString: url!, schema, max: 2 });
  });
  afterAll(async () => {
    // The APIs close the stores they were given.
    for (const a of apis) await a.close();
    const cleanup = await openPostgresStore({ connectionString: url!, schema, max: 1 });
    await cleanup.db.schema.dropSchema(schema).cascade().execute();
    await cleanup.close();
  });
  const counting = () => statements.filter((q) => /^\s*insert into "rate_counters"/i.test(q)).length;

  it('after the memo settled: one statement counts them all, and each answer is the one it would have had alone', async () => {
    const limits = sqlRateLimitStore(store);
    const bucket = { key: 'GET:1:token:batch-a', limit: 6, windowMs: MIN, blockMs: 2 * MIN };
    const start = Date.UTC(2026, 10, 27, 12);
    // Alone first, two seconds into the window: reads (and remembers) the previous window's count.
    expect((await limits.hit([bucket], start + 2_000)).admitted).toBe(true);
    statements = [];
    const together = await Promise.all([1, 2, 3].map((i) => limits.hit([bucket], start + 2_000 + i)));
    expect(together.map((o) => (o as Admitted).buckets[0]!.remaining)).toEqual([4, 3, 2]);
    expect(counting()).toBe(1);
    // Another process's store counts on from there.
    expect(((await sqlRateLimitStore(other).hit([bucket], start + 3_000)) as Admitted).buckets[0]!.remaining).toBe(1);
  });

  it('across the limit: the batch is taken back and counted one by one; exactly as many pass as were left', async () => {
    const limits = sqlRateLimitStore(store);
    const bucket = { key: 'GET:1:token:batch-b', limit: 5, windowMs: MIN, blockMs: 2 * MIN };
    const start = Date.UTC(2026, 10, 27, 12);
    expect((await limits.hit([bucket], start + 2_000)).admitted).toBe(true);
    const first = await Promise.all([1, 2].map((i) => limits.hit([bucket], start + 2_000 + i)));
    expect(first.map((o) => (o as Admitted).buckets[0]!.remaining)).toEqual([3, 2]);
    const over = await Promise.all([3, 4, 5, 6].map((i) => limits.hit([bucket], start + 2_000 + i)));
    expect(over.map((o) => o.admitted)).toEqual([true, true, false, false]);
    expect(over.slice(0, 2).map((o) => (o as Admitted).buckets[0]!.remaining)).toEqual([1, 0]);
    expect((over[2] as { retryAfterMs: number }).retryAfterMs).toBe(2 * MIN);
    // Refused requests count nowhere: the counter holds the five admitted, seen from the other process too.
    const rows = await other.db.selectFrom('rate_counters').select('count').where('key', '=', bucket.key).where('window_start', '=', start).execute();
    expect(rows.map((r) => Number(r.count))).toEqual([5]);
  });

  it('a batch with keys of different clients is counted request by request, each on its own keys', async () => {
    const limits = sqlRateLimitStore(store);
    const start = Date.UTC(2026, 10, 27, 12);
    const b = (t: string) => ({ key: `GET:1:token:${t}`, limit: 2, windowMs: MIN, blockMs: MIN });
    const out = await Promise.all(['x', 'y', 'x', 'x', 'y'].map((t, i) => limits.hit([b(t)], start + 2_000 + i)));
    expect(out.map((o) => o.admitted)).toEqual([true, true, true, false, true]);
  });

  it('over the API, two processes on one schema: of 8 requests at once with 5 left, exactly 5 pass', async () => {
    const clock = fakeClock(Date.UTC(2026, 10, 27, 13, 0, 2));
    const limits = { GET: [{ limit: 7, windowMs: MIN, keyBy: 'token' as const }] };
    const a = await createPmapi({ store, clock, rateLimiter: createRateLimiter({ store: 'database', sqlStore: store, limits }) });
    const b = await createPmapi({ store: other, clock, rateLimiter: createRateLimiter({ store: 'database', sqlStore: other, limits }) });
    apis.push(a, b);
    const ws = await a.admin.createWorkspace({ name: 'Limits', owner: { name: 'Owner' } });
    const { token } = await a.admin.issueToken(ws.ownerMemberId, { scopes: ['read'] });
    const get = (api: Pmapi) => api.handle({ method: 'GET', url: '/api/v3/members', headers: { authorization: `Bearer ${token}` } });
    expect((await get(a)).status).toBe(200);
    expect((await get(b)).status).toBe(200);
    const answers = await Promise.all(Array.from({ length: 8 }, () => get(a)));
    expect(answers.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 200, 429, 429, 429]);
    expect(answers.filter((r) => r.status === 200).map((r) => r.headers['x-ratelimit-remaining']).sort()).toEqual(['0', '1', '2', '3', '4']);
    expect((await get(b)).status).toBe(429);
  });
});

/**
 * Issue 11: a turn's requests of several clients (each its own keys) are
 * counted side by side — each client's in one statement, or each request in
 * its own where they cannot go together — and those statements leave for
 * Postgres in one socket write, not one round trip after another.
 */
describe.skipIf(!url)('[postgres] several clients reaching the database limiter together', () => {
  const schema = `rlw_${randomBytes(6).toString('hex')}`;
  // One connection, so every statement the limiter sends is seen on its socket.
  const pool = new pg.Pool({ connectionString: url!, max: 1 });
  let store: SqlStore;
  /** Socket writes that carried statements (the host pool's search_path setting and resetting around each checkout left out). */
  let flushes = 0;
  const count = (text: string) => {
    if (!text.includes("set_config('search_path'")) flushes++;
  };

  beforeAll(async () => {
    pool.on('connect', (client) => {
      const socket = (client as unknown as { connection: { stream: { _write: (...a: unknown[]) => unknown; _writev?: (...a: unknown[]) => unknown } } }).connection.stream;
      const write = socket._write.bind(socket);
      socket._write = (...a: unknown[]) => (count(Buffer.from(a[0] as Buffer).toString('latin1')), write(...a));
      const writev = socket._writev?.bind(socket);
      if (writev) socket._writev = (...a: unknown[]) => (count((a[0] as Array<{ chunk: Buffer }>).map((c) => Buffer.from(c.chunk).toString('latin1')).join('')), writev(...a));
    });
    store = await openPostgresStore({ pool, schema });
  });
  afterAll(async () => {
    await store.close();
    await pool.query(`drop schema ${schema} cascade`);
    await pool.end();
  });

  it('three clients, two requests each, one of them with two keys: one write, and each answer is the one it would have had alone', async () => {
    const limits = sqlRateLimitStore(store);
    const start = Date.UTC(2026, 10, 27, 12);
    const one = (t: string) => [{ key: `GET:1:token:${t}`, limit: 4, windowMs: MIN, blockMs: MIN }];
    const two = (t: string) => [{ key: `DELETE:1:token:${t}`, limit: 4, windowMs: MIN, blockMs: MIN }, { key: 'DELETE:2:ip:10.0.0.9', limit: 9, windowMs: MIN, blockMs: MIN }];
    // Each client alone first, two seconds into the window: its previous window's count is read and remembered.
    for (const buckets of [one('a'), one('b'), two('c')]) expect((await limits.hit(buckets, start + 2_000)).admitted).toBe(true);
    flushes = 0;
    const out = await Promise.all([one('a'), one('b'), two('c'), one('a'), one('b'), two('c')].map((buckets, i) => limits.hit(buckets, start + 2_001 + i)));
    expect(flushes).toBe(1);
    expect(out.map((o) => (o as Admitted).buckets.map((b) => b.remaining))).toEqual([[2], [2], [2, 7], [1], [1], [1, 6]]);
  });

  it("statements sent in one turn of the event loop leave in one write, however many awaits apart (a request's count and the read it lets start)", async () => {
    const reads = store.reads!;
    flushes = 0;
    const first = sql<{ n: number }>`select 1 as n`.execute(reads);
    let later = Promise.resolve();
    for (let i = 0; i < 50; i++) later = later.then(() => undefined);
    const second = later.then(() => sql<{ n: number }>`select 2 as n`.execute(reads));
    expect([(await first).rows[0]!.n, (await second).rows[0]!.n]).toEqual([1, 2]);
    expect(flushes).toBe(1);
  });
});
