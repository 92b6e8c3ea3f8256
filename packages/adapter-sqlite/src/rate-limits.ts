import Database from 'better-sqlite3';
import { rmSync } from 'node:fs';
import { byKeys, inKeyOrder, judgeOneKeyBatch, leaseBook, planOneKeyBatch, previousCounts, verdictOf, windowOf, type BucketHit, type HitOutcome, type RateLimitStore } from '@pmapi/core';
import { checkTablePrefix, tableNames } from './table-prefix';

export interface SqliteRateLimitStoreOptions {
  /** How long a statement waits for another process's lock, ms (default 5000). */
  busyTimeoutMs?: number;
  /** Prefix of the counters' tables (`<prefix>rate_counters`, `<prefix>rate_blocks`): the store's `tablePrefix`. */
  tablePrefix?: string;
}

/**
 * Shared rate-limit counters for SQLite (`createRateLimiter({ store: 'database' })`),
 * kept in a file of their own beside the database (`<file>-limits`) rather
 * than in its tables:
 *
 * - Counting is a write on every request, GETs included. In the main file each
 *   would append to the write-ahead log the data lives in, queue behind the
 *   write transaction in flight on the one connection, and bring checkpoints
 *   (with their fsync) around ever more often. Here it is one prepared
 *   statement on a connection of its own, whose file never syncs.
 * - Every process opening the same database opens the same counters file, so
 *   limits hold across processes as they do on Postgres; SQLite's file locks
 *   make each statement atomic between them.
 * - Like Postgres's unlogged tables, the counters may be lost to an operating
 *   system crash (`synchronous = OFF`): a counters file that no longer reads
 *   back is deleted and started afresh. Losing counters forgives requests;
 *   it never refuses any.
 *
 * A `:memory:` database is this process's alone, and so are its counters.
 * Semantics are those of the generic store (limits/sql.ts): one statement per
 * admitted request (a plain upsert once the previous windows' counts are
 * settled and remembered; one for all the requests that arrive together with
 * the same keys, see hitCapped and hitTogether; a busy client's next requests answered from counts its statement
 * reserved, core limits/lease.ts), an atomic count in every bucket unless a key is blocked,
 * refused requests count nowhere, a block is never shortened or extended.
 * With a table prefix the file may be shared with others (the host's file):
 * the tables carry the prefix, and a damaged file holding anything else is
 * refused (an error), never deleted.
 */
export function sqliteRateLimitStore(filename: string, o: SqliteRateLimitStoreOptions = {}): RateLimitStore & { close(): void } {
  const names = tableNames(checkTablePrefix(o.tablePrefix));
  const counters = names.stored('rate_counters');
  const blocks = names.stored('rate_blocks');
  const db = openCounters(filename, o.busyTimeoutMs ?? 5000, [counters, blocks], names.prefix !== '');
  const counting = new Map<string, Database.Statement>();
  /** Count `by` requests (the first parameter) in every bucket unless one is blocked; each key's new count, and with `withPrevious` its previous window's. */
  const countStatement = (n: number, withPrevious: boolean): Database.Statement => {
    const shape = withPrevious ? `${n}p` : `${n}`;
    let st = counting.get(shape);
    if (!st) {
      const rows = Array.from({ length: n }, () => 'select ? as key, ? as ws').join(' union all ');
      const keys = Array.from({ length: n }, () => '?').join(', ');
      const prev = Array.from({ length: n }, () => 'when ? then ?').join(' ');
      st = db.prepare(`insert into ${counters} (key, window_start, count)
        select v.key, v.ws, ? from (${rows}) as v
        where not exists (select 1 from ${blocks} as b where b.key in (${keys}) and b.until > ?)
        on conflict (key, window_start) do update set count = count + excluded.count
        returning key, count${withPrevious ? `,
          coalesce((select p.count from ${counters} as p where p.key = ${counters}.key and p.window_start = case ${counters}.key ${prev} end), 0) as previous` : ''}`);
      counting.set(shape, st);
    }
    return st;
  };
  const blockQueries = new Map<number, Database.Statement>();
  /** The latest block among `keys` still in force at `now` (0 when none); a refused request's one read, prepared once per key count. */
  const activeBlock = (keys: readonly string[], now: number): number => {
    let st = blockQueries.get(keys.length);
    if (!st) {
      st = db.prepare(`select max(until) as until from ${blocks} where key in (${keys.map(() => '?').join(', ')}) and until > ?`);
      blockQueries.set(keys.length, st);
    }
    return Number((st.get(...keys, now) as { until: number | null }).until ?? 0);
  };
  const forget = db.prepare(`delete from ${counters} where key = ? and window_start < ?`);
  const takeBack = db.prepare(`update ${counters} set count = count - ? where key = ? and window_start = ?`);
  const block = db.prepare(`insert into ${blocks} (key, until) values (?, ?) on conflict (key) do update set until = excluded.until where ${blocks}.until <= ?`);
  /** Add `n` to one key's count, all or none: unless blocked, and only while the sum stays within the cap; the new count, or no row. */
  const countCapped = db.prepare(`insert into ${counters} (key, window_start, count)
    select ?, ?, ? where ? <= ? and not exists (select 1 from ${blocks} as b where b.key = ? and b.until > ?)
    on conflict (key, window_start) do update set count = count + excluded.count where count + excluded.count <= ?
    returning count`).pluck();
  const sweepCounters = db.prepare(`delete from ${counters} where window_start < ?`);
  const sweepBlocks = db.prepare(`delete from ${blocks} where until <= ?`);
  const refuse = db.transaction((keys: ReadonlyArray<{ key: string; start: number }>, tripped: ReadonlyArray<{ key: string; until: number }>, now: number) => {
    for (const k of keys) takeBack.run(1, k.key, k.start);
    for (const t of tripped) block.run(t.key, t.until, now);
    return activeBlock(tripped.map((t) => t.key), now - 1);
  });

  // Previous windows' counts, once settled, come from this process's memo: counting is then a plain upsert.
  const previous = previousCounts();
  // Reservations (core limits/lease.ts): a busy client's batch reserves a few counts more, and its next requests are answered from them.
  const leases = leaseBook();
  /** The counting statement's parameters: `by`, each key's window, the keys again, the instant blocks are judged at. */
  const countParams = (by: number, keys: ReadonlyArray<{ key: string; start: number }>, now: number): unknown[] => {
    const params: unknown[] = [by];
    for (const k of keys) params.push(k.key, k.start);
    for (const k of keys) params.push(k.key);
    params.push(now);
    return params;
  };
  /** One request's count, decided at once (the statements run synchronously on this connection). */
  const countOne = (buckets: readonly BucketHit[], now: number): HitOutcome => {
    const sorted = inKeyOrder(buckets);
    const keys = sorted.map((b) => ({ key: b.key, ...windowOf(now, b.windowMs) }));
    const known = previous.all(keys, now);
    const params = countParams(1, keys, now);
    if (!known) for (const k of keys) params.push(k.key, k.prevStart);
    const counted = countStatement(keys.length, !known).all(...params) as Array<{ key: string; count: number; previous: number }>;
    if (counted.length === 0) {
      const until = activeBlock(sorted.map((b) => b.key), now);
      return { admitted: false, retryAfterMs: Math.max(until - now, 1) };
    }
    for (const k of previous.settle(keys, counted, known, now)) forget.run(k.key, k.prevStart);
    const verdict = verdictOf(buckets, counted, now);
    if (verdict.admitted) {
      if (keys.length === 1) leases.counted(keys[0]!.key, keys[0]!.start, counted[0]!.count);
      return verdict;
    }
    const until = refuse.immediate(keys, verdict.tripped.map((b) => ({ key: b.key, until: now + b.blockMs })), now);
    return { admitted: false, retryAfterMs: until - now };
  };

  // Group commit: the requests that reach the limiter together (in one run of the microtask queue, as
  // http-node's requests do when it hands a turn's requests on at once) are counted in one transaction, each
  // exactly as alone (a client's in arrival order): the file's lock and write-ahead log append are paid once for them.
  // A request on its own is counted at once, as before; no timer is involved.
  type Pending = { buckets: readonly BucketHit[]; now: number; resolve: (o: HitOutcome) => void; reject: (err: unknown) => void };
  let queue: Pending[] = [];

  /**
   * A batch whose requests all count in the same keys and windows, with the previous windows' counts
   * settled and remembered (the steady state of one busy client): one statement adds them all, and each
   * request is judged on the count it would have had counted alone (the counts before it, plus its own)
   * and its own instant. When every one is admitted that is the answer; otherwise (one would trip, or a
   * key is blocked) the counts are taken back inside the same transaction and the requests are counted
   * one by one. Undefined when the batch is not of that kind.
   */
  const hitTogether = (batch: readonly Pending[]): HitOutcome[] | undefined => {
    const first = inKeyOrder(batch[0]!.buckets);
    const keys = first.map((b) => ({ key: b.key, ...windowOf(batch[0]!.now, b.windowMs) }));
    const known = previous.all(keys, batch[0]!.now);
    if (!known) return undefined;
    for (const p of batch) {
      if (p.buckets.length !== first.length) return undefined;
      const sorted = inKeyOrder(p.buckets);
      for (let k = 0; k < sorted.length; k++) {
        const b = sorted[k]!;
        if (b.key !== first[k]!.key || windowOf(p.now, b.windowMs).start !== keys[k]!.start) return undefined;
      }
      if (!previous.all(keys, p.now)) return undefined;
    }
    const n = batch.length;
    const counted = countStatement(keys.length, false).all(...countParams(n, keys, batch[0]!.now)) as Array<{ key: string; count: number }>;
    if (counted.length === 0) return undefined;
    const knownOf = new Map(keys.map((k, i) => [k.key, known[i]!]));
    const outcomes: HitOutcome[] = [];
    for (let i = 0; i < n; i++) {
      const p = batch[i]!;
      // Request i alone would have seen the count before the batch plus i + 1.
      const mine = counted.map((c) => ({ key: c.key, count: c.count - n + i + 1, previous: knownOf.get(c.key)! }));
      const verdict = verdictOf(p.buckets, mine, p.now);
      if (!verdict.admitted) {
        for (const k of keys) takeBack.run(n, k.key, k.start);
        return undefined;
      }
      outcomes.push(verdict);
    }
    // The batch opened these keys' windows: their older windows can go.
    for (const c of counted) if (c.count === n) forget.run(c.key, keys.find((k) => k.key === c.key)!.prevStart);
    return outcomes;
  };
  /**
   * One client's requests on a single key (GET, POST and PATCH in the v3 table), its previous window's count
   * settled and remembered: one statement on its own, no transaction around it, adds them all when they all fit
   * (the count after them stays within what the bucket admits at the earliest of their instants), and each is
   * judged on the count it would have had alone. All or none (`countCapped`): no other process ever sees a
   * count that is taken back. Undefined when the batch is not of that kind or was not counted.
   */
  const hitCapped = (batch: readonly Pending[]): HitOutcome[] | undefined => {
    const plan = planOneKeyBatch(batch, previous);
    if (!plan) return undefined;
    const { key, n, cap, earliest } = plan;
    const extra = leases.extra(plan);
    // A request alone goes this way only to take a reservation; otherwise countOne counts it (one statement either way).
    if (n === 1 && extra === 0) return undefined;
    const count = countCapped.get(key.key, key.start, n + extra, n + extra, cap, key.key, earliest, cap) as number | undefined;
    if (count === undefined) return undefined;
    leases.granted(plan, extra, count);
    const outcomes = judgeOneKeyBatch(batch, plan, count - extra);
    if (count === n + extra) forget.run(key.key, key.prevStart);
    return outcomes;
  };
  /** Requests in one transaction: each client's (the same keys) together where they can be, the rest alone. */
  const countAll = db.transaction((batch: ReadonlyArray<readonly Pending[]>) => batch.map((mine) => {
    const together = hitCapped(mine) ?? (mine.length > 1 && mine[0]!.buckets.length > 1 ? hitTogether(mine) : undefined);
    return together ?? mine.map((p) => countOne(p.buckets, p.now));
  }));
  const flush = () => {
    const batch = queue;
    queue = [];
    // A client's reservation answers what it can without a statement; what is left of it goes back before its key
    // is counted again, so the count is this process's requests exactly.
    const groups: Array<readonly Pending[]> = [];
    const backs: Array<{ key: string; start: number; unspent: number }> = [];
    for (const group of byKeys(batch)) {
      const { served, rest, back } = leases.take(group);
      served.forEach((o, i) => group[i]!.resolve(o));
      if (rest.length) groups.push(rest);
      if (back) backs.push(back);
    }
    if (groups.length === 0) return;
    let outcomes: HitOutcome[][];
    try {
      for (const back of backs) takeBack.run(back.unspent, back.key, back.start);
      // One client: its requests, when they fit, or a request alone, is one statement committing on its own.
      // Several clients share one transaction, so the file's lock and log append are paid once for them all.
      const one = groups.length > 1 ? undefined : groups[0]!;
      const alone = one && (hitCapped(one) ?? (one.length === 1 ? [countOne(one[0]!.buckets, one[0]!.now)] : undefined));
      outcomes = alone ? [alone] : countAll.immediate(groups);
    } catch (err) {
      for (const mine of groups) for (const p of mine) p.reject(err);
      return;
    }
    groups.forEach((mine, k) => mine.forEach((p, i) => p.resolve(outcomes[k]![i]!)));
  };
  return {
    hitNow(buckets: readonly BucketHit[], now: number): HitOutcome | undefined {
      // Requests queued this turn are answered first, in arrival order.
      return queue.length === 0 ? leases.serveOne(buckets, now) : undefined;
    },
    hit(buckets: readonly BucketHit[], now: number): Promise<HitOutcome> {
      if (buckets.length === 0) return Promise.resolve({ admitted: true, buckets: [] });
      return new Promise<HitOutcome>((resolve, reject) => {
        if (queue.push({ buckets, now, resolve, reject }) === 1) queueMicrotask(flush);
      });
    },
    async sweep(now: number, keepMs: number): Promise<number> {
      return Number(sweepCounters.run(now - keepMs).changes) + Number(sweepBlocks.run(now).changes);
    },
    close: () => db.close(),
  };
}

/** The counters' tables, named `counters` and `blocks`. */
const schema = (counters: string, blocks: string) => `
  create table if not exists ${counters} (key text not null, window_start integer not null, count integer not null, primary key (key, window_start)) without rowid;
  create table if not exists ${blocks} (key text not null primary key, until integer not null) without rowid;`;

/**
 * Open the counters file, starting it afresh when it no longer reads back
 * after a crash (counters are disposable) — but only when all it holds is
 * counters: a damaged file with other tables in it (a host's file shared
 * through a table prefix) is refused with an error instead. A file whose
 * catalogue cannot be read at all is deleted only without a prefix (then it
 * is pmapi's alone).
 */
function openCounters(filename: string, busyTimeoutMs: number, tables: [counters: string, blocks: string], prefixed: boolean): Database.Database {
  const connect = (): Database.Database => {
    const db = new Database(filename);
    db.pragma(`busy_timeout = ${busyTimeoutMs}`);
    db.pragma('synchronous = OFF');
    // RETURNING and the multi-row upsert use temporary b-trees: in memory they cost 4 µs, as files 30 µs.
    db.pragma('temp_store = MEMORY');
    return db;
  };
  const ready = (db: Database.Database): Database.Database => {
    if (filename !== ':memory:') db.pragma('journal_mode = WAL');
    db.exec(schema(...tables));
    return db;
  };
  if (filename === ':memory:') return ready(connect());
  let onlyCounters = !prefixed;
  try {
    const db = connect();
    try {
      // Checked before anything is written to the file.
      if ((db.pragma('quick_check', { simple: true }) as string) === 'ok') return ready(db);
      const ours = new Set(tables.map((t) => t.toLowerCase()));
      const objects = db.prepare("select type, name, tbl_name from sqlite_master").all() as Array<{ type: string; name: string; tbl_name: string }>;
      onlyCounters = objects.every((x) => ours.has(x.tbl_name.toLowerCase()));
    } catch {
      // The catalogue does not read back either.
    }
    db.close();
  } catch {
    // Unreadable after a crash.
  }
  if (!onlyCounters) throw new Error(`pmapi: the rate-limit counters file '${filename}' is damaged and holds more than pmapi's counters; it was left as it is (repair or remove it, or set rateLimitFile)`);
  for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(filename + suffix, { force: true });
  return ready(connect());
}
