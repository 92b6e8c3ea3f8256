// The SQLite database rate limiter (createRateLimiter({ store: 'database' })): counters in a file of
// their own beside the database, shared by every store opened on it (spec "Limits" → "v3 rate limits").
import { afterEach, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPmapi, createRateLimiter, fakeClock, LEASE_MS, type Pmapi, type RateLimiterOptions } from '@pmapi/core';
import { openSqliteStore, sqliteRateLimitStore } from '@pmapi/adapter-sqlite';

const MIN = 60_000;
const dirs: string[] = [];
const apis: Pmapi[] = [];
afterEach(async () => {
  for (const a of apis.splice(0)) await a.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempDir() {
  const d = mkdtempSync(join(tmpdir(), 'pmapi-limits-'));
  dirs.push(d);
  return d;
}

/** Two APIs over one SQLite file (as two processes would be), each with its own database limiter. */
async function twoOnOneFile(file: string, limits: RateLimiterOptions['limits'], rateLimitFile?: string) {
  const clock = fakeClock(Date.UTC(2026, 10, 26, 12));
  const open = async () => {
    const store = await openSqliteStore({ filename: file, ...(rateLimitFile ? { rateLimitFile } : {}) });
    const api = await createPmapi({ store, clock, rateLimiter: createRateLimiter({ store: 'database', sqlStore: store, limits }) });
    apis.push(api);
    return api;
  };
  const a = await open();
  const b = await open();
  const ws = await a.admin.createWorkspace({ name: 'Limits', owner: { name: 'Owner' } });
  const { token } = await a.admin.issueToken(ws.ownerMemberId, { scopes: ['read', 'write', 'delete'] });
  const get = (api: Pmapi) => api.handle({ method: 'GET', url: '/api/v3/members', headers: { authorization: `Bearer ${token}` } });
  return { a, b, clock, get };
}

describe('SQLite database rate limiter', () => {
  it('counts in one file shared by every store on the database: 5 admitted across two, the 6th refused in either (spec "Limits")', async () => {
    const file = join(tempDir(), 'pm.db');
    const { a, b, get } = await twoOnOneFile(file, { GET: [{ limit: 5, windowMs: MIN, keyBy: 'token' }] });
    const statuses: number[] = [];
    const remaining: string[] = [];
    for (const api of [a, b, a, b, a]) {
      const r = await get(api);
      statuses.push(r.status);
      remaining.push(r.headers['x-ratelimit-remaining']!);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200]);
    expect(remaining).toEqual(['4', '3', '2', '1', '0']);
    expect((await get(b)).status).toBe(429);
    expect((await get(a)).status).toBe(429);
    expect(existsSync(`${file}-limits`)).toBe(true);
  });

  it('a block started through one store holds in the other until it ends, and is not extended by retries', async () => {
    const file = join(tempDir(), 'pm.db');
    const { a, b, clock, get } = await twoOnOneFile(file, { GET: [{ limit: 1, windowMs: MIN, keyBy: 'token', blockMs: 5 * MIN }] });
    expect((await get(a)).status).toBe(200);
    const tripped = await get(a);
    expect(tripped.status).toBe(429);
    expect(tripped.headers['retry-after']).toBe('300');
    clock.advance(2 * MIN);
    const other = await get(b);
    expect(other.status).toBe(429);
    expect(other.headers['retry-after']).toBe('180');
    clock.advance(3 * MIN);
    expect((await get(b)).status).toBe(200);
  });

  it('keeps the counters out of the database file: its rate_counters table stays empty', async () => {
    const file = join(tempDir(), 'pm.db');
    const { a, get } = await twoOnOneFile(file, { GET: [{ limit: 5, windowMs: MIN, keyBy: 'token' }] });
    await get(a);
    const n = await a.store.db.selectFrom('rate_counters').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
    expect(Number(n.n)).toBe(0);
  });

  it('rateLimitFile puts the counters where the embedding application says', async () => {
    const dir = tempDir();
    const file = join(dir, 'pm.db');
    const counters = join(dir, 'elsewhere.limits');
    const { a, b, get } = await twoOnOneFile(file, { GET: [{ limit: 2, windowMs: MIN, keyBy: 'token' }] }, counters);
    expect((await get(a)).status).toBe(200);
    expect((await get(b)).status).toBe(200);
    expect((await get(a)).status).toBe(429);
    expect(existsSync(counters)).toBe(true);
    expect(existsSync(`${file}-limits`)).toBe(false);
  });

  it('a counters file that no longer reads back (an operating-system crash) is started afresh: requests are forgiven, never refused', async () => {
    const dir = tempDir();
    const file = join(dir, 'pm.db');
    writeFileSync(`${file}-limits`, Buffer.alloc(8192, 0x5a));
    const { a, get } = await twoOnOneFile(file, { GET: [{ limit: 2, windowMs: MIN, keyBy: 'token' }] });
    expect((await get(a)).headers['x-ratelimit-remaining']).toBe('1');
  });

  it('api.jobs.purge() forgets counters and blocks that can no longer count', async () => {
    const file = join(tempDir(), 'pm.db');
    const { a, clock, get } = await twoOnOneFile(file, { GET: [{ limit: 1, windowMs: MIN, keyBy: 'token' }] });
    await get(a);
    await get(a);
    clock.advance(60 * MIN);
    expect((await a.jobs.purge()).rateLimits).toBeGreaterThan(0);
    expect((await a.jobs.purge()).rateLimits).toBe(0);
  });

  // Requests that reach the limiter together are counted in one transaction (issue 11, group commit): each
  // exactly as if alone, in arrival order; a refused one counts nowhere (spec "Limits" → "v3 rate limits").
  it('requests counted together are counted one by one: of 8 at once with 5 left, exactly 5 pass', async () => {
    const file = join(tempDir(), 'pm.db');
    const { a, b, get } = await twoOnOneFile(file, { GET: [{ limit: 7, windowMs: MIN, keyBy: 'token' }] });
    // Two requests first (the first records lastUsedAt, the second remembers the token's row), so that the
    // eight reach the limiter in step.
    expect((await get(a)).status).toBe(200);
    expect((await get(a)).status).toBe(200);
    const answers = await Promise.all(Array.from({ length: 8 }, () => get(a)));
    expect(answers.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 200, 429, 429, 429]);
    expect(answers.filter((r) => r.status === 200).map((r) => r.headers['x-ratelimit-remaining']).sort()).toEqual(['0', '1', '2', '3', '4']);
    // The other process on the file sees the same five.
    expect((await get(b)).status).toBe(429);
  });

  it('a batch sees the counts of the batch before it and of the other process', async () => {
    const file = join(tempDir(), 'pm.db');
    const { a, b, get } = await twoOnOneFile(file, { GET: [{ limit: 10, windowMs: MIN, keyBy: 'token' }] });
    for (const api of [a, a, b, b]) await get(api);
    const first = await Promise.all([get(a), get(a), get(b)]);
    const second = await Promise.all([get(a), get(b), get(a), get(b)]);
    expect(first.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(second.map((r) => r.status).sort()).toEqual([200, 200, 200, 429]);
  });

  it('hits made together on the counters store resolve in order, and all fail (none hangs) once it is closed', async () => {
    const limits = sqliteRateLimitStore(':memory:');
    const bucket = { key: 'GET:0:token:t1', limit: 3, windowMs: MIN, blockMs: 0 };
    const now = Date.UTC(2026, 10, 26, 12);
    const outcomes = await Promise.all([1, 2, 3, 4].map(() => limits.hit([bucket], now)));
    expect(outcomes.map((o) => o.admitted)).toEqual([true, true, true, false]);
    expect(outcomes.slice(0, 3).map((o) => (o as { buckets: Array<{ remaining: number }> }).buckets[0]!.remaining)).toEqual([2, 1, 0]);
    limits.close();
    const after = await Promise.allSettled([limits.hit([bucket], now), limits.hit([bucket], now)]);
    expect(after.map((r) => r.status)).toEqual(['rejected', 'rejected']);
  });

  // A busy client's steady state (issue 11): the requests counted together share their keys and windows and
  // the previous windows are settled, so one statement counts them all; each is still judged on the count it
  // would have had alone. These run two seconds into a window, after a request that settled the memo.
  it('counted together in one statement: each answer is the one it would have had alone', async () => {
    const file = join(tempDir(), 'pm.db');
    const { a, b, clock, get } = await twoOnOneFile(file, { GET: [{ limit: 12, windowMs: MIN, keyBy: 'token' }] });
    clock.advance(2_000);
    for (const api of [a, a, b, b]) expect((await get(api)).status).toBe(200);
    // A's second request reserved a count beyond itself (core limits/lease.ts); its time is over, so A gives it back
    // before counting again and the answers below are exact across both processes.
    clock.advance(LEASE_MS);
    const answers = await Promise.all(Array.from({ length: 6 }, () => get(a)));
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(answers.map((r) => r.headers['x-ratelimit-remaining'])).toEqual(['7', '6', '5', '4', '3', '2']);
    // The other process counts on from there.
    expect((await get(b)).headers['x-ratelimit-remaining']).toBe('1');
  });

  it('counted together across the limit: exactly as many pass as were left, then the key stays refused', async () => {
    const file = join(tempDir(), 'pm.db');
    const { a, b, clock, get } = await twoOnOneFile(file, { GET: [{ limit: 7, windowMs: MIN, keyBy: 'token' }] });
    clock.advance(2_000);
    for (const api of [a, a]) expect((await get(api)).status).toBe(200);
    const answers = await Promise.all(Array.from({ length: 8 }, () => get(a)));
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 429, 429, 429]);
    expect(answers.slice(0, 5).map((r) => r.headers['x-ratelimit-remaining'])).toEqual(['4', '3', '2', '1', '0']);
    const later = await Promise.all([get(a), get(a), get(b)]);
    expect(later.map((r) => r.status)).toEqual([429, 429, 429]);
  });

  it('the counters store: hits made together after the memo settled resolve as one by one would', async () => {
    const limits = sqliteRateLimitStore(':memory:');
    try {
      const bucket = { key: 'GET:0:token:t2', limit: 5, windowMs: MIN, blockMs: 2 * MIN };
      const start = Date.UTC(2026, 10, 26, 12);
      // Alone first: reads (and remembers) the previous window's count.
      expect((await limits.hit([bucket], start + 5_000)).admitted).toBe(true);
      const together = await Promise.all([1, 2, 3].map((i) => limits.hit([bucket], start + 5_000 + i)));
      expect(together.map((o) => (o as { buckets: Array<{ remaining: number }> }).buckets[0]!.remaining)).toEqual([3, 2, 1]);
      const over = await Promise.all([4, 5, 6].map((i) => limits.hit([bucket], start + 5_000 + i)));
      expect(over.map((o) => o.admitted)).toEqual([true, false, false]);
      expect((over[1] as { retryAfterMs: number }).retryAfterMs).toBe(2 * MIN);
    } finally {
      limits.close();
    }
  });

  it('the counters store: several clients\' hits made together (one over its limit, one with two keys) resolve as one by one would', async () => {
    const limits = sqliteRateLimitStore(':memory:');
    try {
      const start = Date.UTC(2026, 10, 26, 12);
      const one = (t: string, limit: number) => [{ key: `GET:1:token:${t}`, limit, windowMs: MIN, blockMs: 2 * MIN }];
      const two = (t: string) => [{ key: `DELETE:1:token:${t}`, limit: 5, windowMs: MIN, blockMs: MIN }, { key: 'DELETE:2:ip:10.0.0.9', limit: 9, windowMs: MIN, blockMs: MIN }];
      for (const buckets of [one('a', 5), one('b', 2), two('c')]) expect((await limits.hit(buckets, start + 5_000)).admitted).toBe(true);
      const asked = [one('a', 5), one('b', 2), two('c'), one('b', 2), one('a', 5), two('c'), one('b', 2)];
      const out = await Promise.all(asked.map((buckets, i) => limits.hit(buckets, start + 5_001 + i)));
      expect(out.map((o) => (o.admitted ? o.buckets.map((b) => b.remaining) : 'refused'))).toEqual([[3], [0], [3, 7], 'refused', [2], [2, 6], 'refused']);
      // b's refused hits counted nowhere: it stays blocked; a goes on from 3.
      expect((await limits.hit(one('a', 5), start + 6_000)).admitted).toBe(true);
      expect((await limits.hit(one('b', 2), start + 6_000)).admitted).toBe(false);
    } finally {
      limits.close();
    }
  });
});
