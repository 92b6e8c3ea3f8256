import { judge, windowOf, type BucketHit, type HitOutcome, type OneKeyBatch } from './rules';

/** How long a process answers from counts it reserved before it asks the database again (and sees other processes' blocks). */
export const LEASE_MS = 1000;
/**
 * The most counts one reservation takes beyond its own batch. It binds only
 * where a bucket's limit is far above the v3 table's (a tenth of the room
 * left binds first: at most 300 for GET's 3,000). There, at 20,000 GETs a
 * second, a busy client renewed a 256-count reservation about 70 times a
 * second: the database limiter on SQLite cost 9 µs of CPU a GET, 3 µs at 4,096
 * (bench/ab.mjs).
 */
export const LEASE_MAX = 4096;
/** A reservation takes at most this share of the room the bucket had left, so other processes sharing the bucket keep the rest. */
export const LEASE_SHARE = 0.1;
/** At most this many keys' reservations are remembered; when full the book starts afresh (what the forgotten ones held stays counted until their window ends). */
const LEASE_KEYS = 10_000;

interface Lease {
  key: string;
  /** The window the reserved counts were added to. */
  start: number;
  /** The previous window's settled count, for judging the requests answered from the reservation. */
  previous: number;
  /** The count the next request answered here is judged on (this process's requests, in order). */
  next: number;
  /** The key's count once the reservation is spent: what the database holds for it. */
  last: number;
  /** Reserved counts are answered until this instant, then the database is asked again. */
  until: number;
  /** Requests answered from the reservation so far (sizes the next one). */
  used: number;
}

/**
 * A database rate-limit store's reservations (both database stores use one):
 * when one statement counts a busy client's batch on a single key, it adds a
 * few counts more than the batch (`extra`), and the requests that follow on
 * that key in this process are answered from those reserved counts without a
 * statement, each judged on exactly the count and instant it would have had
 * counted alone (`take`). The reservation ends when spent, at the end of its
 * window, or `LEASE_MS` after it was taken; what is left of it is given back to
 * the database (`take` says what) before the key is counted again, so another
 * process's block binds here within `LEASE_MS` and no window keeps counts that
 * answered nobody. For one process the answers are those of counting one by
 * one; processes sharing a bucket never admit more than its limit between them
 * (reserved counts are counted), but one may be refused while another holds
 * reserved room (at most a tenth of the room that was left, and `LEASE_MAX`).
 *
 * A reservation is only taken with room to spare: its size grows with the use
 * the last one had (twice that, at least the batch) and never passes
 * `LEASE_SHARE` of the room the key's last count left, so near a limit counting
 * is one by one again, exactly as without reservations.
 */
export interface LeaseBook {
  /**
   * A client's requests (one set of keys, arrival order): those its
   * reservation answers, from the first on (their outcomes, in order), the
   * rest, which the store counts, and — when there is a rest — what the
   * reservation added and nobody used, which the store takes back from its
   * window before counting (the reservation ends there).
   */
  take<P extends { buckets: readonly BucketHit[]; now: number }>(requests: readonly P[]): {
    served: HitOutcome[];
    rest: readonly P[];
    back: { key: string; start: number; unspent: number } | undefined;
  };
  /**
   * One single-key request answered from its key's reservation, as `take`
   * would answer it, or undefined with nothing changed when the reservation
   * cannot (none, spent, ended, another window): the store then counts it.
   */
  serveOne(buckets: readonly BucketHit[], now: number): HitOutcome | undefined;
  /** How many counts to reserve beyond a plan's own requests (0: none). */
  extra(plan: OneKeyBatch): number;
  /** The plan's statement added its requests and `extra` more: the key's count is now `count`. */
  granted(plan: OneKeyBatch, extra: number, count: number): void;
  /** A single-key request was counted alone (no reservation): the key's count in the window starting at `start` is now `count`. */
  counted(key: string, start: number, count: number): void;
}

export function leaseBook(): LeaseBook {
  const leases = new Map<string, Lease>();
  const put = (lease: Lease) => {
    if (leases.size >= LEASE_KEYS && !leases.has(lease.key)) leases.clear();
    leases.set(lease.key, lease);
  };
  /** The lease's next count for a request on its key, judged as counted alone; undefined (the lease unchanged) when the lease cannot answer it. */
  const serveNext = (lease: Lease, b: BucketHit, now: number): HitOutcome | undefined => {
    if (lease.next > lease.last || now >= lease.until) return undefined;
    const { start } = windowOf(now, b.windowMs);
    if (start !== lease.start) return undefined;
    const { admitted, limit, remaining, resetMs } = judge(b, lease.next, lease.previous, now);
    // An instant before the reservation's (a clock moved back): counted by the database instead.
    if (!admitted) return undefined;
    lease.next++;
    lease.used++;
    return { admitted: true, buckets: [{ limit, remaining, resetMs }] };
  };
  /** Answer requests from the lease while it holds counts, lasts, and stays in its window. */
  const serve = (lease: Lease, requests: ReadonlyArray<{ buckets: readonly BucketHit[]; now: number }>): HitOutcome[] => {
    const out: HitOutcome[] = [];
    for (const p of requests) {
      const verdict = serveNext(lease, p.buckets[0]!, p.now);
      if (!verdict) break;
      out.push(verdict);
    }
    return out;
  };
  return {
    take(requests) {
      const first = requests[0]!.buckets;
      const lease = first.length === 1 ? leases.get(first[0]!.key) : undefined;
      if (!lease) return { served: [], rest: requests, back: undefined };
      const served = serve(lease, requests);
      if (served.length === requests.length) return { served, rest: [], back: undefined };
      const rest = served.length ? requests.slice(served.length) : requests;
      if (lease.next > lease.last) return { served, rest, back: undefined };
      const unspent = lease.last - lease.next + 1;
      lease.last = lease.next - 1;
      return { served, rest, back: { key: lease.key, start: lease.start, unspent } };
    },
    serveOne(buckets, now) {
      const lease = buckets.length === 1 ? leases.get(buckets[0]!.key) : undefined;
      return lease && serveNext(lease, buckets[0]!, now);
    },
    extra(plan) {
      const lease = leases.get(plan.key.key);
      // Sized from what this process last saw of the key in this window; a key it has not counted here reserves nothing yet.
      if (!lease || lease.start !== plan.key.start) return 0;
      const room = plan.cap - lease.last - plan.n;
      return Math.max(0, Math.min(LEASE_MAX, Math.max(plan.n, 2 * lease.used), Math.floor(room * LEASE_SHARE)));
    },
    granted(plan, extra, count) {
      put({ key: plan.key.key, start: plan.key.start, previous: plan.previous, next: count - extra + 1, last: count, until: plan.earliest + LEASE_MS, used: 0 });
    },
    counted(key, start, count) {
      const lease = leases.get(key);
      if (lease && lease.start === start) {
        lease.next = count + 1;
        lease.last = count;
      } else {
        put({ key, start, previous: 0, next: count + 1, last: count, until: 0, used: 0 });
      }
    },
  };
}
