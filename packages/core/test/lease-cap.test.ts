import { describe, it, expect } from 'vitest';
import { leaseBook, LEASE_MAX, windowOf, type BucketHit, type OneKeyBatch } from '@pmapi/core';

// Issue 11, docs/not-shown.md "Counts reserved for a busy client (database rate limiters)": a reservation takes
// as many counts as the client's last one answered, twice over (at least its batch), at most LEASE_MAX (4,096)
// and at most a tenth of the room the bucket had left. Both database stores size reservations here.

const MIN = 60_000;
const NOW = Date.UTC(2026, 10, 29, 12, 0, 5);

function busyClient(limit: number) {
  const bucket: BucketHit = { key: 'GET:1:token:busy', limit, windowMs: MIN, blockMs: 2 * MIN };
  const book = leaseBook();
  const { start, prevStart } = windowOf(NOW, MIN);
  const plan = (n: number): OneKeyBatch => ({ key: { key: bucket.key, start, prevStart }, previous: 0, cap: limit, n, earliest: NOW });
  return { bucket, book, plan };
}

describe('database rate limiters: how many counts a reservation takes', () => {
  it('the documented cap is 4,096 counts', () => {
    expect(LEASE_MAX).toBe(4096);
  });

  it('twice what the last reservation answered, but never more than LEASE_MAX, however far the limit', () => {
    const { bucket, book, plan } = busyClient(1_000_000_000);
    // A batch of 8 counted with a reservation of LEASE_MAX, all of which the client's next requests use.
    book.granted(plan(8), LEASE_MAX, 8 + LEASE_MAX);
    for (let i = 0; i < LEASE_MAX; i++) expect(book.serveOne([bucket], NOW)?.admitted).toBe(true);
    // Spent: the next request is not answered from it.
    expect(book.serveOne([bucket], NOW)).toBeUndefined();
    // Twice the use (8,192) would be more than the cap.
    expect(book.extra(plan(8))).toBe(LEASE_MAX);
  });

  it('a small use reserves twice the use, at least the batch', () => {
    const { bucket, book, plan } = busyClient(1_000_000_000);
    book.granted(plan(8), 16, 24);
    for (let i = 0; i < 10; i++) book.serveOne([bucket], NOW);
    expect(book.extra(plan(8))).toBe(20);
    expect(book.extra(plan(64))).toBe(64);
  });

  it('near the limit a tenth of the room left binds first (a limit of 3,000, as GET\'s in the v3 table)', () => {
    const { bucket, book, plan } = busyClient(3000);
    book.granted(plan(8), 16, 24);
    for (let i = 0; i < 16; i++) book.serveOne([bucket], NOW);
    // Room after the batch: 3,000 - 24 - 8 = 2,968, a tenth 296: twice the use (32) is less.
    expect(book.extra(plan(8))).toBe(32);
    // A use of 500: twice is 1,000, a tenth of the room (3,000 - 508 - 8) is 248.
    const big = busyClient(3000);
    big.book.granted(big.plan(8), 500, 508);
    for (let i = 0; i < 500; i++) big.book.serveOne([big.bucket], NOW);
    expect(big.book.extra(big.plan(8))).toBe(Math.floor((3000 - 508 - 8) * 0.1));
  });
});
