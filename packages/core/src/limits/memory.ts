import { judge, windowOf, type BucketHit, type HitOutcome, type RateLimitStore } from './rules';

interface Counter {
  windowMs: number;
  /** Fixed-window start → requests counted in it (at most the current and previous window are kept). */
  windows: Map<number, number>;
}

/** Sweep stale keys every this many hits, so a long-running process does not accumulate them. */
const SWEEP_EVERY = 10_000;

/**
 * Counters in this process's memory: exact and atomic for one process (each
 * `hit` runs to completion without awaiting), shared by nobody else.
 */
export function memoryRateLimitStore(): RateLimitStore & { size(): number } {
  const counters = new Map<string, Counter>();
  const blocks = new Map<string, number>();
  let hits = 0;

  function sweepSync(now: number, keepMs?: number): number {
    let removed = 0;
    for (const [key, c] of counters) {
      const keep = keepMs ?? 2 * c.windowMs;
      for (const start of c.windows.keys()) {
        if (start < now - keep) {
          c.windows.delete(start);
          removed++;
        }
      }
      if (c.windows.size === 0) counters.delete(key);
    }
    for (const [key, until] of blocks) {
      if (until <= now) {
        blocks.delete(key);
        removed++;
      }
    }
    return removed;
  }

  function hitSync(buckets: readonly BucketHit[], now: number): HitOutcome {
    if (++hits % SWEEP_EVERY === 0) sweepSync(now);
    let blockedUntil = 0;
    for (const b of buckets) {
      const until = blocks.get(b.key);
      if (until !== undefined && until > now) blockedUntil = Math.max(blockedUntil, until);
    }
    if (blockedUntil) return { admitted: false, retryAfterMs: blockedUntil - now };

    const verdicts = buckets.map((b) => {
      const { start, prevStart } = windowOf(now, b.windowMs);
      let c = counters.get(b.key);
      if (!c) counters.set(b.key, (c = { windowMs: b.windowMs, windows: new Map() }));
      for (const s of c.windows.keys()) if (s < prevStart) c.windows.delete(s);
      const current = (c.windows.get(start) ?? 0) + 1;
      return { b, c, start, ...judge(b, current, c.windows.get(prevStart) ?? 0, now), current };
    });
    const tripped = verdicts.filter((v) => !v.admitted);
    if (tripped.length) {
      let until = 0;
      for (const { b } of tripped) {
        blocks.set(b.key, now + b.blockMs);
        until = Math.max(until, now + b.blockMs);
      }
      return { admitted: false, retryAfterMs: until - now };
    }
    for (const v of verdicts) v.c.windows.set(v.start, v.current);
    return { admitted: true, buckets: verdicts.map(({ limit, remaining, resetMs }) => ({ limit, remaining, resetMs })) };
  }

  return {
    hit: async (buckets, now) => hitSync(buckets, now),
    hitNow: hitSync,
    sweep: async (now, keepMs) => sweepSync(now, keepMs),
    size: () => counters.size + blocks.size,
  };
}
