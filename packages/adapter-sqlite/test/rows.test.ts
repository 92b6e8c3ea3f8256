import { describe, it, expect } from 'vitest';
import Database from 'better-sqlite3';
import { CompiledQuery, sql } from 'kysely';
import { execute } from '@pmapi/core/sql';
import { openSqliteStore } from '@pmapi/adapter-sqlite';

// Issue 11: the SQLite store builds its rows in JavaScript from better-sqlite3's arrays (src/rows.ts) instead of
// letting better-sqlite3 set each column through V8's API. Callers must not be able to tell: every row is the
// object better-sqlite3 itself gives for the same statement, keys in the same order, through kysely and through
// the direct path alike.
describe('SQLite store rows are the objects better-sqlite3 gives (issue 11)', () => {
  const statements = [
    "select 1 as a, 2.5 as b, 'text' as c, x'00ff10' as d, null as e, 9007199254740991 as f",
    // A name twice: its first place, its last value.
    'select 1 as a, 2 as b, 3 as a',
    // Integer-like names come first in any JavaScript object.
    'select 1 as "z", 2 as "10", 3 as "2"',
    // Names that are not identifiers, or that are properties of every object.
    `select 1 as "with space", 2 as "quote""d", 3 as "constructor", 4 as "toString", 5 as "hasOwnProperty", 6 as "back\\slash"`,
    // Set as the prototype, as better-sqlite3 sets it (a value that is not an object is ignored).
    'select 1 as "__proto__", 2 as b',
    `select x'0001' as "__proto__", 2 as b`,
    // Several rows, and none.
    'select value as v, value * 2 as w from (select 1 as value union all select 2 union all select 3) order by v',
    'select 1 as a where 0',
  ];

  const reference = (sqlText: string) => new Database(':memory:').prepare(sqlText).all();
  const shape = (rows: unknown[]) => rows.map((r) => [Object.getPrototypeOf(r), Object.keys(r as object), Object.values(r as object)]);

  it('through kysely and through the direct path, for every statement', async () => {
    const store = await openSqliteStore();
    try {
      for (const sqlText of statements) {
        const expected = shape(reference(sqlText));
        // Twice each: the first run learns the statement, the second reuses what it learned.
        for (let i = 0; i < 2; i++) {
          const viaKysely = await store.db.executeQuery(CompiledQuery.raw(sqlText));
          expect(shape(viaKysely.rows as unknown[]), sqlText).toEqual(expected);
          const direct = await execute(store.db, CompiledQuery.raw(sqlText));
          expect(shape(direct.rows as unknown[]), sqlText).toEqual(expected);
        }
      }
    } finally {
      await store.close();
    }
  });

  it('bound values are bound as before', async () => {
    const store = await openSqliteStore();
    try {
      const q = CompiledQuery.raw('select ? as a, ? as b, ? as c', ['x', 2, null]);
      expect((await execute(store.db, q)).rows).toEqual([{ a: 'x', b: 2, c: null }]);
      expect((await execute(store.db, CompiledQuery.raw('select ? as a, ? as b, ? as c', ['y', 3, 4]))).rows).toEqual([{ a: 'y', b: 3, c: 4 }]);
    } finally {
      await store.close();
    }
  });

  it('a cached `select *` shows the columns a schema change added, and loses those it dropped', async () => {
    const store = await openSqliteStore();
    try {
      const run = (s: string) => execute(store.db, CompiledQuery.raw(s));
      await run('create table pm_test_rows (a integer, b text)');
      await run("insert into pm_test_rows values (1, 'one')");
      expect((await run('select * from pm_test_rows')).rows).toEqual([{ a: 1, b: 'one' }]);
      await run('alter table pm_test_rows add column c integer default 7');
      const after = (await run('select * from pm_test_rows')).rows as object[];
      expect(after).toEqual([{ a: 1, b: 'one', c: 7 }]);
      expect(Object.keys(after[0]!)).toEqual(['a', 'b', 'c']);
      await run('alter table pm_test_rows drop column b');
      expect((await run('select * from pm_test_rows')).rows).toEqual([{ a: 1, c: 7 }]);
    } finally {
      await store.close();
    }
  });

  it('a failing statement leaves the statement as it was: its rows, and its streamed rows, are objects', async () => {
    const store = await openSqliteStore();
    try {
      const absOf = (v: unknown) => store.db.selectNoFrom(sql<number>`abs(${v})`.as('a'));
      // abs() of the smallest integer overflows: the error is raised while the rows are read.
      await expect(execute(store.db, absOf(-9223372036854775808n).compile())).rejects.toThrow(/overflow/i);
      expect((await execute(store.db, absOf(-3).compile())).rows).toEqual([{ a: 3 }]);
      // The same prepared statement, streamed (kysely's driver iterates it as better-sqlite3 gives it).
      const streamed: unknown[] = [];
      for await (const row of absOf(-4).stream()) streamed.push(row);
      expect(streamed).toEqual([{ a: 4 }]);
    } finally {
      await store.close();
    }
  });
});
