import { sql, type Kysely } from 'kysely';
import type { DialectSupport } from '../dialect';
import { runCached } from '../statement-cache';

/** One bucket's counter for this request: its key and the starts of its current and previous fixed windows. */
export interface CounterKey {
  key: string;
  start: number;
  prevStart: number;
}

/** What counting answered for one key: the count now (this request included) and the previous window's. */
export interface Counted {
  key: string;
  count: number;
  previous: number;
}

/**
 * The one statement an admitted request costs: count the request in every
 * bucket at once (an atomic multi-row upsert, so concurrent requests on a key
 * get distinct counts in any process) unless one of the keys is under an
 * active block, and return each key's new count — with `withPrevious`, beside
 * its previous window's count (otherwise the caller knows those already).
 * No rows: a block is running, and nothing was counted.
 *
 * `keys` must be sorted (concurrent multi-row upserts then lock rows in one
 * order). The SQL text depends only on the number of keys and on
 * `withPrevious`, and is compiled once for each.
 */
export async function countUnlessBlocked(db: Kysely<any>, d: DialectSupport, keys: readonly CounterKey[], now: number, withPrevious = true): Promise<Counted[] | undefined> {
  const params: unknown[] = [];
  for (const k of keys) params.push(k.key, k.start);
  for (const k of keys) params.push(k.key);
  params.push(now);
  if (withPrevious) for (const k of keys) params.push(k.key, k.prevStart);
  const r = await runCached<{ key: string; count: unknown; previous?: unknown }>(db, d.name, `rate:count:${keys.length}:${withPrevious ? 'p' : ''}`, params, () => {
    const rows = sql.join(keys.map((k) => sql`select ${k.key} as key, cast(${k.start} as bigint) as ws`), sql` union all `);
    const prev = sql.join(keys.map((k) => sql`when ${k.key} then cast(${k.prevStart} as bigint)`), sql` `);
    // Tables through sql.table/sql.ref, so a store that renames pmapi's tables (SQLite's tablePrefix) renames these too.
    const [counters, blocks] = ['rate_counters', 'rate_blocks'];
    const c = (column: string) => sql.ref(`${counters}.${column}`);
    const previous = withPrevious
      ? sql`, coalesce((select p.count from ${sql.table(counters)} as p where p.key = ${c('key')} and p.window_start = case ${c('key')} ${prev} end), 0) as previous`
      : sql``;
    const q = sql<{ key: string; count: unknown; previous?: unknown }>`insert into ${sql.table(counters)} (key, window_start, count)
      select v.key, v.ws, 1 from (${rows}) as v
      where not exists (select 1 from ${sql.table(blocks)} as b where b.key in (${sql.join(keys.map((k) => k.key))}) and b.until > ${now})
      on conflict (key, window_start) do update set count = ${c('count')} + 1
      returning key, count${previous}`;
    return { compile: () => q.compile(db) };
  });
  if (r.rows.length === 0) return undefined;
  return r.rows.map((row) => ({ key: row.key, count: Number(row.count), previous: Number(row.previous ?? 0) }));
}

/**
 * Count `n` requests together on one key, all or none: unless the key is
 * under an active block, add `n` to its current window's count if the sum
 * stays within `cap`, and return the new count. Undefined: nothing was
 * counted (blocked, or the sum would pass the cap). One statement, atomic
 * under concurrency like the single count: no other request ever sees a count
 * that is later taken back.
 */
export async function countTogether(db: Kysely<any>, d: DialectSupport, key: CounterKey, n: number, cap: number, now: number): Promise<number | undefined> {
  // Parameters in the order the text holds them (runCached checks it), every number cast to bigint.
  const params = [key.key, key.start, n, n, cap, key.key, now, n, n, cap];
  const r = await runCached<{ count: unknown }>(db, d.name, 'rate:count-together', params, () => {
    const [counters, blocks] = ['rate_counters', 'rate_blocks'];
    const c = (column: string) => sql.ref(`${counters}.${column}`);
    const big = (v: number) => sql`cast(${v} as bigint)`;
    const q = sql<{ count: unknown }>`insert into ${sql.table(counters)} (key, window_start, count)
      select ${key.key}, ${big(key.start)}, ${big(n)}
      where ${big(n)} <= ${big(cap)}
        and not exists (select 1 from ${sql.table(blocks)} as b where b.key = ${key.key} and b.until > ${now})
      on conflict (key, window_start) do update set count = ${c('count')} + ${big(n)}
      where ${c('count')} + ${big(n)} <= ${big(cap)}
      returning count`;
    return { compile: () => q.compile(db) };
  });
  return r.rows.length === 0 ? undefined : Number(r.rows[0]!.count);
}

/** The latest end of an active block on any of these keys (0: none). */
export async function activeBlock(db: Kysely<any>, keys: readonly string[], now: number): Promise<number> {
  const rows = await db.selectFrom('rate_blocks').select('until').where('key', 'in', keys as string[]).where('until', '>', now).execute();
  return rows.reduce((m, r) => Math.max(m, Number(r.until)), 0);
}

/** A key's first request in a new window: forget its windows before the previous one. */
export async function forgetOldWindows(db: Kysely<any>, key: string, before: number): Promise<void> {
  await db.deleteFrom('rate_counters').where('key', '=', key).where('window_start', '<', before).execute();
}

/** Take `n` counts back from one key's window: what a reservation added and nobody used (limits/lease.ts). */
export async function giveBack(db: Kysely<any>, key: string, start: number, n: number): Promise<void> {
  await db.updateTable('rate_counters').set((eb) => ({ count: eb('count', '-', n) }))
    .where('key', '=', key).where('window_start', '=', start).execute();
}

/**
 * Take a refused request's counts back and block each tripped key unless a
 * block already runs (its retry neither shortens nor extends the block);
 * returns the latest end of the tripped keys' blocks. One key per decrement:
 * a statement never holds one counter while waiting for another, so this
 * cannot deadlock with a concurrent (sorted) multi-row count.
 */
export async function refuse(db: Kysely<any>, counted: readonly CounterKey[], tripped: ReadonlyArray<{ key: string; until: number }>, now: number): Promise<number> {
  for (const k of counted) {
    await db.updateTable('rate_counters').set((eb) => ({ count: eb('count', '-', 1) }))
      .where('key', '=', k.key).where('window_start', '=', k.start).execute();
  }
  await db.insertInto('rate_blocks').values(tripped.map((t) => ({ key: t.key, until: t.until })))
    .onConflict((oc) => oc.column('key').doUpdateSet((eb) => ({ until: eb.ref('excluded.until') })).where('rate_blocks.until', '<=', now))
    .execute();
  return activeBlock(db, tripped.map((t) => t.key), now - 1);
}

/** Forget counters older than `before` and blocks that have ended; returns how many rows went. */
export async function sweepRateLimits(db: Kysely<any>, before: number, now: number): Promise<number> {
  const c = await db.deleteFrom('rate_counters').where('window_start', '<', before).executeTakeFirst();
  const b = await db.deleteFrom('rate_blocks').where('until', '<=', now).executeTakeFirst();
  return Number(c.numDeletedRows) + Number(b.numDeletedRows);
}
