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

describe('createRateLimiter: a bucket identical to an earlier one of its method is counted once', () => {
  it("GET's two v3 buckets (3,000 per 5 minutes per token, twice) are one counter; POST's, PATCH's and DELETE's stay two", async () => {
    const store = recording();
    const limiter = createRateLimiter({ store });
    const now = Date.parse('2026-03-01T00:00:00Z');
    for (const method of ['GET', 'POST', 'PATCH', 'DELETE']) await limiter.check({ tokenId: 't1', method, clientIp: '127.0.0.1', now });
    expect(store.seen.map((b) => b.map((x) => x.key))).toEqual([
      ['GET:1:token:t1'],
      ['POST:1:token:t1', 'POST:2:token:t1'],
      ['PATCH:1:token:t1', 'PATCH:2:token:t1'],
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

  it('rules that differ in limit, window, key or block are all counted', async () => {
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
    expect(store.seen[0]!.map((b) => b.key)).toEqual(['GET:1:token:t', 'GET:2:token:t', 'GET:3:ip:10.0.0.1', 'GET:4:token:t', 'GET:5:token:t']);
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
