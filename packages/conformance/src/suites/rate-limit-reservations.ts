import { describe, it, expect } from 'vitest';
import { LEASE_MAX, LEASE_MS, memoryRateLimitStore, type BucketHit, type HitOutcome, type RateLimitStore } from '@pmapi/core';

const MIN = 60_000;
/** A window start (whole minutes since the epoch) and an instant well past its previous window's settling. */
const START = Date.UTC(2026, 10, 27, 12);
const T = START + 5_000;

/** Two stores sharing one set of counters, as two processes on one database would have. */
export interface SharedCounters {
  a: RateLimitStore;
  b: RateLimitStore;
  close(): Promise<void>;
}

const remaining = (o: HitOutcome) => (o.admitted ? o.buckets[0]!.remaining : -1);

/** Hits at once (one turn, as http-node hands a turn's requests on), each at its own instant. */
const wave = (store: RateLimitStore, bucket: BucketHit, instants: readonly number[]) => Promise.all(instants.map((now) => store.hit([bucket], now)));
const instants = (from: number, n: number) => Array.from({ length: n }, (_, i) => from + i);

/**
 * Issue 11 (performance), spec "Limits" → "v3 rate limits": the database
 * stores reserve counts for a busy client (core limits/lease.ts) and answer
 * its next requests from them without a statement. For one process every
 * answer must be the one counting one by one gives (the memory store, fed the
 * same hits in the same order); processes sharing the counters never admit
 * more than the limit between them, see each other's reservations as counted,
 * get back what a reservation left unused, and a block one of them starts
 * binds the others within LEASE_MS.
 */
export function rateLimitReservationsSuite(name: string, open: () => Promise<SharedCounters>): void {
  describe(`[${name}] Limits: counts reserved for a busy client`, () => {
    it('one process: every answer is the one counting one by one gives — waves, a pause past LEASE_MS, the limit, the block', async () => {
      const { a, close } = await open();
      try {
        const reference = memoryRateLimitStore();
        const bucket = { key: 'GET:1:token:reserve-one', limit: 300, windowMs: MIN, blockMs: 2 * MIN };
        const sizes = [1, 1, 3, 8, 8, 8, 8, 8, 8, 2, 8, 8];
        let now = T;
        const got: HitOutcome[] = [];
        const want: HitOutcome[] = [];
        const run = async (n: number) => {
          const at = instants(now, n);
          got.push(...(await wave(a, bucket, at)));
          for (const t of at) want.push(await reference.hit([bucket], t));
          now += n + 5;
        };
        for (const n of sizes) await run(n);
        // A pause longer than a reservation lasts: what is left of it goes back before the next count.
        now += LEASE_MS;
        for (const n of sizes) await run(n);
        // On to the limit and past it: the trip and the block fall where counting one by one puts them.
        while (!want.some((o) => !o.admitted) && now < START + MIN - 100) await run(8);
        await run(8);
        expect(got).toEqual(want);
        expect(want.some((o) => !o.admitted)).toBe(true);
        expect(got.filter((o) => o.admitted).length).toBe(bucket.limit);
      } finally {
        await close();
      }
    });

    it('answered at once (hitNow): from a reservation exactly as counting one by one, nothing without one, never ahead of a request queued before it', async () => {
      const { a, close } = await open();
      try {
        expect(a.hitNow).toBeTypeOf('function');
        const reference = memoryRateLimitStore();
        const bucket = { key: 'GET:1:token:reserve-now', limit: 300, windowMs: MIN, blockMs: 2 * MIN };
        // No reservation yet: nothing is answered, nothing counted.
        expect(a.hitNow!([bucket], T)).toBeUndefined();
        const got: HitOutcome[] = [];
        const want: HitOutcome[] = [];
        let now = T;
        let atOnce = 0;
        let waited = 0;
        // Waves take reservations; single requests in between are answered at once where one holds counts, else counted.
        for (let round = 0; round < 40 && !want.some((o) => !o.admitted); round++) {
          const at = instants(now, 8);
          got.push(...(await wave(a, bucket, at)));
          for (const t of at) want.push(await reference.hit([bucket], t));
          now += 20;
          for (let k = 0; k < 6; k++, now++) {
            const quick = a.hitNow!([bucket], now);
            if (quick) atOnce++;
            else waited++;
            got.push(quick ?? (await a.hit([bucket], now)));
            want.push(await reference.hit([bucket], now));
          }
        }
        expect(got).toEqual(want);
        expect(atOnce).toBeGreaterThan(0);
        expect(want.some((o) => !o.admitted)).toBe(true);
        expect(got.filter((o) => o.admitted).length).toBe(bucket.limit);
      } finally {
        await close();
      }
    });

    it('answered at once (hitNow): a request queued in this turn keeps its turn; the one after it waits', async () => {
      const { a, close } = await open();
      try {
        const bucket = { key: 'GET:1:token:reserve-queue', limit: 1000, windowMs: MIN, blockMs: 2 * MIN };
        let now = T;
        let first: HitOutcome | undefined;
        for (let i = 0; i < 20 && !first; i++, now += 10) {
          await wave(a, bucket, instants(now, 8));
          first = a.hitNow!([bucket], now + 8);
        }
        expect(first?.admitted).toBe(true);
        // Spend the reservation; the next wave is counted with a fresh one of at least its own size beyond it.
        while (a.hitNow!([bucket], now)) now++;
        await wave(a, bucket, instants(now, 8));
        now += 8;
        const before = a.hitNow!([bucket], now++);
        expect(before?.admitted).toBe(true);
        // The reservation still holds counts: the next request would be answered at once…
        expect(a.hitNow!([bucket], now++)?.admitted).toBe(true);
        // …but not once a request is queued in this turn: it keeps its turn.
        const queued = a.hit([bucket], now++);
        expect(a.hitNow!([bucket], now)).toBeUndefined();
        const after = await a.hit([bucket], now++);
        expect(remaining(await queued)).toBe(remaining(before!) - 2);
        expect(remaining(after)).toBe(remaining(before!) - 3);
      } finally {
        await close();
      }
    });

    it('one process: a reservation left at the end of a window is given back, so the next window weighs the exact count', async () => {
      const { a, close } = await open();
      try {
        const reference = memoryRateLimitStore();
        const bucket = { key: 'GET:1:token:reserve-roll', limit: 400, windowMs: MIN, blockMs: 2 * MIN };
        const got: HitOutcome[] = [];
        const want: HitOutcome[] = [];
        const run = async (from: number, n: number) => {
          const at = instants(from, n);
          got.push(...(await wave(a, bucket, at)));
          for (const t of at) want.push(await reference.hit([bucket], t));
        };
        for (let i = 0; i < 12; i++) await run(T + i * 20, i < 2 ? 1 : 8);
        // Next window, past its settling: the previous window's count is read (after the give-back) and weighed.
        for (let i = 0; i < 6; i++) await run(START + MIN + 5_000 + i * 20, 8);
        expect(got).toEqual(want);
      } finally {
        await close();
      }
    });

    it('two processes: a reservation counts for the other process; what it left unused is given back before its owner counts again', async () => {
      const { a, b, close } = await open();
      try {
        const bucket = { key: 'GET:1:token:reserve-two', limit: 200, windowMs: MIN, blockMs: 2 * MIN };
        let admittedA = 0;
        // Five waves: the fourth reserves 16 counts beyond its 8, the fifth is answered from 8 of them.
        for (let i = 0; i < 5; i++) {
          const answers = await wave(a, bucket, instants(T + i * 10, 8));
          expect(answers.map(remaining)).toEqual(instants(0, 8).map((k) => 200 - (admittedA + k + 1)));
          admittedA += 8;
        }
        // B is counted after A's requests and the counts A holds in reserve: never more room than is left.
        const fromB = remaining(await b.hit([bucket], T + 100));
        expect(fromB).toBeLessThan(200 - (admittedA + 1));
        expect(fromB).toBeGreaterThanOrEqual(200 - (admittedA + 1) - LEASE_MAX);
        // A's reservation has ended: its unused counts go back, and A's answer is exact again.
        const later = await a.hit([bucket], T + 100 + LEASE_MS);
        expect(remaining(later)).toBe(200 - (admittedA + 2));
      } finally {
        await close();
      }
    });

    it('two processes: never more than the limit admitted between them, and a block one starts binds the other within LEASE_MS', async () => {
      const { a, b, close } = await open();
      try {
        const bucket = { key: 'GET:1:token:reserve-block', limit: 200, windowMs: MIN, blockMs: 2 * MIN };
        let admitted = 0;
        const count = (outs: HitOutcome[]) => {
          admitted += outs.filter((o) => o.admitted).length;
          return outs;
        };
        // A takes reservations as a busy client does.
        for (let i = 0; i < 5; i++) count(await wave(a, bucket, instants(T + i * 10, 8)));
        // B counts until the bucket trips: A's reserved counts are counted, so B trips early rather than late.
        let at = T + 100;
        for (let i = 0; i < 400; i++) {
          const [o] = count(await wave(b, bucket, [at++]));
          if (!o!.admitted) break;
        }
        expect(admitted).toBeLessThanOrEqual(bucket.limit);
        const refusedB = await b.hit([bucket], at);
        expect(refusedB.admitted).toBe(false);
        // Once a reservation's time is over, A asks the database again and meets B's block.
        const fromA = await a.hit([bucket], at + LEASE_MS);
        expect(fromA.admitted).toBe(false);
        expect((fromA as { retryAfterMs: number }).retryAfterMs).toBeGreaterThan(0);
        expect((fromA as { retryAfterMs: number }).retryAfterMs).toBeLessThanOrEqual(bucket.blockMs);
        expect(admitted).toBeLessThanOrEqual(bucket.limit);
      } finally {
        await close();
      }
    });
  });
}
