import { describe, it, expect, inject, beforeAll, afterAll } from 'vitest';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { sql } from 'kysely';
import type { SqlStore } from '@pmapi/core/sql';
import { openPostgresStore } from '@pmapi/adapter-postgres';

const url = inject('pgUrl');

/**
 * Issue 11: a transaction's `begin` travels with its first statement (one
 * round trip, not two). Whatever the timing, a transaction stays all or
 * nothing: a failing statement leaves none of the earlier ones, a failing
 * first statement leaves the connection usable, and an empty transaction
 * leaves no transaction open behind it.
 */
describe.skipIf(!url)('[postgres] begin sent with the first statement', () => {
  const schema = `bg_${randomBytes(6).toString('hex')}`;
  // One connection, so every transaction below runs on the same one (the first prepares `begin`, the rest pipeline it).
  const pool = new pg.Pool({ connectionString: url!, max: 1 });
  const other = new pg.Pool({ connectionString: url!, max: 1 });
  let store: SqlStore;
  /** What each call of client.query sent: its text, or the kind of query object it was given. */
  const sent: string[] = [];

  beforeAll(async () => {
    pool.on('connect', (client) => {
      const query = client.query.bind(client) as (...a: unknown[]) => unknown;
      (client as unknown as { query: (...a: unknown[]) => unknown }).query = (config: unknown, ...rest: unknown[]) => {
        const c = config as { text?: string; constructor?: { name?: string } } | string;
        sent.push(typeof c === 'string' ? c : c.constructor?.name === 'Object' || c.constructor?.name === undefined ? String(c.text) : `${c.constructor!.name}:${c.text}`);
        return query(config, ...rest);
      };
    });
    store = await openPostgresStore({ pool, schema });
    await sql`create table ${sql.table(`${schema}.scratch`)} (id text primary key)`.execute(store.db);
  });
  afterAll(async () => {
    await store.close();
    await other.query(`drop schema ${schema} cascade`);
    await pool.end();
    await other.end();
  });
  const ids = async () => (await other.query(`select id from ${schema}.scratch order by id`)).rows.map((r) => r.id as string);
  const insert = (db: SqlStore['db'], id: string) => db.insertInto('scratch').values({ id }).execute();
  const queriesOf = (from: number) => sent.slice(from).filter((t) => !/search_path/.test(t));

  it('the first transaction on a connection prepares begin; the next ones send it with their first statement', async () => {
    await store.transaction(async (trx) => insert(trx, 'a1'));
    const from = sent.length;
    await store.transaction(async (trx) => {
      await insert(trx, 'a2');
      await insert(trx, 'a3');
    });
    const q = queriesOf(from);
    // Three round trips: begin + the first insert, the second insert, commit.
    expect(q).toHaveLength(3);
    expect(q[0]).toMatch(/^BeginThenQuery:insert into "scratch"/);
    expect(q[2]).toBe('commit');
    expect(q.some((t) => /^begin$/i.test(t))).toBe(false);
    expect(await ids()).toEqual(['a1', 'a2', 'a3']);
  });

  it('a statement failing after the pipelined begin undoes the ones before it', async () => {
    await expect(store.transaction(async (trx) => {
      await insert(trx, 'b1');
      await insert(trx, 'a1'); // unique violation
    })).rejects.toMatchObject({ code: '23505' });
    expect(await ids()).not.toContain('b1');
  });

  it('a failing first statement rolls back, and the connection serves the next transaction', async () => {
    await expect(store.transaction(async (trx) => insert(trx, 'a1'))).rejects.toMatchObject({ code: '23505' });
    await store.transaction(async (trx) => {
      await insert(trx, 'c1');
      await insert(trx, 'c2');
    });
    expect(await ids()).toEqual(expect.arrayContaining(['c1', 'c2']));
  });

  it('a transaction that runs nothing sends nothing and leaves no transaction open', async () => {
    const from = sent.length;
    await store.transaction(async () => undefined);
    expect(queriesOf(from)).toEqual([]);
    // Outside any transaction, a write is visible to another connection at once.
    await insert(store.db, 'd1');
    expect(await ids()).toContain('d1');
  });

  it('a rolled-back transaction leaves nothing, and a thrown error before any statement sends nothing', async () => {
    await expect(store.transaction(async (trx) => {
      await insert(trx, 'e1');
      throw new Error('changed my mind');
    })).rejects.toThrow('changed my mind');
    const from = sent.length;
    await expect(store.transaction(async () => {
      throw new Error('before anything');
    })).rejects.toThrow('before anything');
    expect(queriesOf(from)).toEqual([]);
    expect(await ids()).not.toContain('e1');
  });
});
