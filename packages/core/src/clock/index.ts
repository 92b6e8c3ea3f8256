/**
 * All time in pmapi comes from a Clock: stamps, expiries, purge, cursors.
 *
 * @example const clock = fakeClock('2026-01-01T00:00:00Z'); clock.advance(60_000);
 */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
}

/** The wall clock. */
export const systemClock: Clock = { now: () => Date.now() };

/** A clock that only moves when told to, for tests. */
export interface FakeClock extends Clock {
  set(at: number | string | Date): void;
  advance(ms: number): void;
}

export function fakeClock(start: number | string | Date = '2026-01-01T00:00:00.000Z'): FakeClock {
  let t = toMs(start);
  return {
    now: () => t,
    set: (at) => {
      t = toMs(at);
    },
    advance: (ms) => {
      t += ms;
    },
  };
}

function toMs(v: number | string | Date): number {
  if (typeof v === 'number') return v;
  return new Date(v).getTime();
}

/** ISO 8601 UTC with milliseconds, the wire format of every timestamp. */
export function iso(ms: number): string {
  return new Date(ms).toISOString();
}
