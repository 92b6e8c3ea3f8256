import { describe, it, expect } from 'vitest';
import { createRateLimiter, memoryRateLimitStore, previousCounts, V3_RATE_LIMITS, type BucketHit, type RateLimitStore } from '@pmapi/core';

// Issue 11: the database rate limiter's work per request. Spec "Limits" → "v3 rate limits": a request must
// pass both buckets of its method; the answers (admitted or 429, X-RateLimit-*) are checked on both stores
// by the conformance kit (suites/rate-limits.ts). These tests pin down the work saved without changing them.

/** A store that records the buckets each request is counted in, counting in memory. */
function recording(): RateLimitStore & { seen: BucketHit[][] } {
  const inner = memoryRateLimitStore();
  const seen: BucketHit[][] = [];
  return { seen, hit: (buckets, now) => (seen.push([...buckets]), inner.hit(buckets, now)) };
}

describe('createRateLimiter: the buckets of a method that share a window and a kind of key share one counter', () => {
  it("GET's two v3 buckets are one counter, and so are POST's and PATCH's (same window, per token); DELETE's (token, ip) stay two", async () => {
    const store = recording();
    const limiter = createRateLimiter({ store });
    const now = Date.parse('2026-03-01T00:00:00Z');
    for (const method of ['GET', 'POST', 'PATCH', 'DELETE']) await limiter.check({ tokenId: 't1', method, clientIp: '127.0.0.1', now });
    expect(store.seen.map((b) => b.map((x) => x.key))).toEqual([
      ['GET:1:token:t1'],
      ['POST:1:token:t1'],
      ['PATCH:1:token:t1'],
      ['DELETE:1:token:t1', 'DELETE:2:ip:127.0.0.1'],
    ]);
    // The table itself is the spec's, two GET buckets included.
    expect(V3_RATE_LIMITS.GET).toHaveLength(2);
  });

  it('the answers are those of both buckets: the 3,000th GET is admitted with remaining 0, the 3,001st refused', async () => {
    const limiter = createRateLimiter({ store: 'memory' });
    const now = Date.parse('2026-03-01T00:00:00Z');
    let last: Record<string, string> = {};
    for (let i = 0; i < 3000; i++) last = await limiter.check({ tokenId: 't', method: 'GET', clientIp: undefined, now });
    expect(last).toEqual({ 'x-ratelimit-limit': '3000', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '300' });
    await expect(limiter.check({ tokenId: 't', method: 'GET', clientIp: undefined, now })).rejects.toMatchObject({ code: 'rate_limited' });
  });

  it('rules that differ in window or kind of key are counted apart; a smaller limit or another block shares the counter', async () => {
    const store = recording();
    const limiter = createRateLimiter({
      store,
      limits: { GET: [
        { limit: 10, windowMs: 60_000, keyBy: 'token' }, { limit: 10, windowMs: 60_000, keyBy: 'token', blockMs: 1 },
        { limit: 10, windowMs: 60_000, keyBy: 'ip' }, { limit: 11, windowMs: 60_000, keyBy: 'token' },
        { limit: 10, windowMs: 61_000, keyBy: 'token' }, { limit: 10, windowMs: 60_000, keyBy: 'token' },
      ] },
    });
    await limiter.check({ tokenId: 't', method: 'GET', clientIp: '10.0.0.1', now: 0 });
    expect(store.seen[0]!.map((b) => b.key)).toEqual(['GET:1:token:t', 'GET:3:ip:10.0.0.1', 'GET:5:token:t']);
    // The shared counter is judged against the smallest limit, and blocks for the longest block among the rules with it.
    expect(store.seen[0]![0]).toMatchObject({ limit: 10, windowMs: 60_000, blockMs: 120_000 });
  });

  it("POST's shared counter answers as both buckets would: the 200th POST in a minute passes with remaining 0 (the 200 bucket), the 201st is refused and blocks for 2 minutes", async () => {
    const limiter = createRateLimiter({ store: 'memory' });
    const now = Date.parse('2026-03-01T00:00:00Z');
    let last: Record<string, string> = {};
    for (let i = 0; i < 200; i++) last = await limiter.check({ tokenId: 't', method: 'POST', clientIp: undefined, now });
    expect(last).toEqual({ 'x-ratelimit-limit': '200', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '60' });
    await expect(limiter.check({ tokenId: 't', method: 'POST', clientIp: undefined, now })).rejects.toMatchObject({ code: 'rate_limited', headers: { 'retry-after': '120' } });
    // Still blocked in the next window, until the block ends.
    await expect(limiter.check({ tokenId: 't', method: 'POST', clientIp: undefined, now: now + 119_000 })).rejects.toMatchObject({ code: 'rate_limited' });
    await expect(limiter.check({ tokenId: 't', method: 'POST', clientIp: undefined, now: now + 240_000 })).resolves.toMatchObject({ 'x-ratelimit-limit': '200' });
  });

  it('a smaller limit with a shorter block than a larger one: the counter trips at the smaller limit and blocks for its block', async () => {
    const limiter = createRateLimiter({ store: 'memory', limits: { PATCH: [{ limit: 5, windowMs: 60_000, keyBy: 'token', blockMs: 90_000 }, { limit: 3, windowMs: 60_000, keyBy: 'token', blockMs: 10_000 }] } });
    const now = 0;
    for (let i = 0; i < 3; i++) await limiter.check({ tokenId: 't', method: 'PATCH', clientIp: undefined, now });
    await expect(limiter.check({ tokenId: 't', method: 'PATCH', clientIp: undefined, now })).rejects.toMatchObject({ headers: { 'retry-after': '10' } });
  });
});

describe("previousCounts: a previous window's count is remembered only once it is settled", () => {
  const key = (start: number) => ({ key: 'k', start, prevStart: start - 60_000 });

  it('within the first second of a window nothing is remembered or answered; afterwards the count read is', () => {
    const memo = previousCounts(1000);
    const start = 600_000;
    memo.remember(key(start), 7, start + 999);
    expect(memo.all([key(start)], start + 1000)).toBeUndefined();
    memo.remember(key(start), 7, start + 1000);
    expect(memo.all([key(start)], start + 999)).toBeUndefined();
    expect(memo.all([key(start)], start + 1000)).toEqual([7]);
    // The next window asks for another previous window: not known.
    expect(memo.all([key(start + 60_000)], start + 61_000)).toBeUndefined();
  });

  it('answers only when every key is known, in the order asked', () => {
    const memo = previousCounts(0);
    memo.remember({ key: 'a', start: 60, prevStart: 0 }, 1, 60);
    expect(memo.all([{ key: 'a', start: 60, prevStart: 0 }, { key: 'b', start: 60, prevStart: 0 }], 60)).toBeUndefined();
    memo.remember({ key: 'b', start: 60, prevStart: 0 }, 2, 60);
    expect(memo.all([{ key: 'b', start: 60, prevStart: 0 }, { key: 'a', start: 60, prevStart: 0 }], 60)).toEqual([2, 1]);
  });

  it('holds at most max entries, oldest first out', () => {
    const memo = previousCounts(0, 2);
    for (const k of ['a', 'b', 'c']) memo.remember({ key: k, start: 60, prevStart: 0 }, 1, 60);
    expect(memo.all([{ key: 'a', start: 60, prevStart: 0 }], 60)).toBeUndefined();
    expect(memo.all([{ key: 'b', start: 60, prevStart: 0 }, { key: 'c', start: 60, prevStart: 0 }], 60)).toEqual([1, 1]);
  });
});
