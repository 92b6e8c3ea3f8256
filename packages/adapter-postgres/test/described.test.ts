import { describe, it, expect, inject, beforeAll, afterAll } from 'vitest';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { sql } from 'kysely';
import type { SqlStore } from '@pmapi/core/sql';
import { openPostgresStore } from '@pmapi/adapter-postgres';

const url = inject('pgUrl');

/**
 * Issue 11: a prepared statement's row parsers are built once and reused for
 * each execution while Postgres describes the same columns; when the columns
 * change (another process added one), the rows are parsed by the new ones.
 */
describe.skipIf(!url)('[postgres] row parsers of prepared statements', () => {
  const schema = `ds_${randomBytes(6).toString('hex')}`;
  // A host's pool: pmapi gives its type parsers with each statement, so every connection shares one cache.
  const host = new pg.Pool({ connectionString: url!, max: 2 });
  const admin = new pg.Pool({ connectionString: url!, max: 1 });
  let store: SqlStore;
  beforeAll(async () => {
    store = await openPostgresStore({ pool: host, schema });
    await admin.query(`create table ${schema}.scratch (id text primary key, n integer, at timestamptz(3))`);
    await admin.query(`insert into ${schema}.scratch values ('a', 1, '2026-01-02 03:04:05.6+00'), ('b', null, null)`);
  });
  afterAll(async () => {
    await store.close();
    await host.end();
    await admin.query(`drop schema ${schema} cascade`);
    await admin.end();
  });
  const read = async () => (await sql<Record<string, unknown>>`select * from scratch order by id`.execute(store.db)).rows;

  it('rows parsed by the compiled row parser are the driver\'s rows: odd names, a repeated name, nulls, every common type', async () => {
    const odd = sql<Record<string, unknown>>`select 1 as "we""ird", 'x' as "a b", null::int as n, true as b, '{"k":[1,"two"]}'::jsonb as j, 2.5::float8 as f, 9007199254740993::bigint as big, 2 as n, 'it''s' as "quote'd", ${'v'}::text as v`;
    const driver = (await host.query(`select 1 as "we""ird", 'x' as "a b", null::int as n, true as b, '{"k":[1,"two"]}'::jsonb as j, 2.5::float8 as f, 9007199254740993::bigint as big, 2 as n, 'it''s' as "quote'd", $1::text as v`, ['v'])).rows;
    expect(driver).toEqual([{ 'we"ird': 1, 'a b': 'x', n: 2, b: true, j: { k: [1, 'two'] }, f: 2.5, big: '9007199254740993', "quote'd": "it's", v: 'v' }]);
    // Named from the third run on; described (and its row parser compiled) from then, reused after.
    for (let i = 0; i < 8; i++) expect((await odd.execute(store.db)).rows).toEqual(driver);
  });

  it('parses every execution alike, and a changed description with its own parsers', async () => {
    for (let i = 0; i < 6; i++) {
      expect(await read()).toEqual([{ id: 'a', n: 1, at: '2026-01-02T03:04:05.600Z' }, { id: 'b', n: null, at: null }]);
    }
    await admin.query(`alter table ${schema}.scratch add column seen timestamptz(3) default '2026-07-08 09:10:11.12+00', add column big bigint default 5`);
    // A connection that prepared `select *` before is discarded on "cached plan must not change result type"; the next ones prepare anew.
    let rows: Record<string, unknown>[] | undefined;
    for (let i = 0; i < 8 && !rows; i++) rows = await read().catch(() => undefined);
    for (let i = 0; i < 6; i++) rows = await read();
    expect(rows).toEqual([
      { id: 'a', n: 1, at: '2026-01-02T03:04:05.600Z', seen: '2026-07-08T09:10:11.120Z', big: '5' },
      { id: 'b', n: null, at: null, seen: '2026-07-08T09:10:11.120Z', big: '5' },
    ]);
  });

  it('describes a prepared statement once per connection, and parses its rows from what was described there', async () => {
    // One connection of a pool of one: count what Postgres sends back to describe rows (RowDescription, NoData).
    const one = new pg.Pool({ connectionString: url!, max: 1 });
    const seen = { rows: 0, none: 0 };
    one.on('connect', (c) => {
      const con = (c as unknown as { connection: { on(e: string, f: (msg: any) => void): void } }).connection;
      // Only this test's statement's (the store checks out each connection with its own statements around).
      con.on('rowDescription', (msg: { fields: Array<{ name: string }> }) => { if (msg.fields.map((f) => f.name).join() === 'id,n,at') seen.rows++; });
      con.on('noData', () => seen.none++);
    });
    const s = await openPostgresStore({ pool: one, schema });
    try {
      const runs = 10;
      for (let i = 0; i < runs; i++) {
        const rows = (await sql<Record<string, unknown>>`select id, n, at from scratch where id = ${'a'}`.execute(s.db)).rows;
        expect(rows).toEqual([{ id: 'a', n: 1, at: '2026-01-02T03:04:05.600Z' }]);
      }
      // Unnamed for its first two runs (described each time), named from the third: described once more, then never.
      expect(seen.rows).toBe(3);
      const none = seen.none;
      for (let i = 0; i < runs; i++) {
        const r = await sql`update scratch set n = n where id = ${'zz'}`.execute(s.db);
        expect(r.numAffectedRows).toBe(0n);
      }
      // A statement with no rows: its NoData answer is remembered too.
      expect(seen.none - none).toBe(3);
      // No row at all, and many: the description applied without an answer parses them alike.
      expect((await sql`select id, n, at from scratch where id = ${'none'}`.execute(s.db)).rows).toEqual([]);
      expect((await sql`select id, n, at from scratch where id = ${'b'}`.execute(s.db)).rows).toEqual([{ id: 'b', n: null, at: null }]);
      expect(seen.rows).toBe(3);
    } finally {
      await s.close();
      await one.end();
    }
  });
});
