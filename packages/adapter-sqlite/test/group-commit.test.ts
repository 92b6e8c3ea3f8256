// Group commit on SQLite (issue 11): the transactions waiting on the connection when one finishes run in
// the same SQLite transaction, each in a savepoint, and commit together. The rules do not change: each
// transaction is all or nothing, and none answers success before the commit holding its writes succeeded.
import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { sql, type Kysely } from 'kysely';
import { createPmapi } from '@pmapi/core';
import { openSqliteStore } from '@pmapi/adapter-sqlite';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'pmapi-group-'));
  dirs.push(dir);
  const file = join(dir, 'pm.db');
  const statements: string[] = [];
  const store = await openSqliteStore({ filename: file, onQuery: (q) => statements.push(q) });
  await sql`create table host_rows (name text primary key)`.execute(store.db);
  const other = new Database(file, { readonly: true });
  /** The rows another connection (another process) sees: only committed ones. */
  const committed = () => (other.prepare('select name from host_rows order by name').all() as Array<{ name: string }>).map((r) => r.name);
  const insert = (trx: Kysely<any>, name: string) => sql`insert into host_rows (name) values (${name})`.execute(trx);
  return { store, statements, committed, insert, close: async () => { other.close(); await store.close(); } };
}

describe('SQLite group commit', () => {
  it('transactions that wait together commit together, each all or nothing: a failed one leaves no row, the others stay', async () => {
    const t = await setup();
    try {
      t.statements.length = 0;
      const results = await Promise.allSettled(['a', 'b', 'c', 'd'].map((name) => t.store.transaction(async (trx) => {
        await t.insert(trx, name);
        await t.insert(trx, `${name}2`);
        if (name === 'c') throw new Error('c fails after writing');
        return name;
      })));
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
      expect(t.committed()).toEqual(['a', 'a2', 'b', 'b2', 'd', 'd2']);
      // One commit for the four (the rule above holds whether or not they group; this shows that they did).
      expect(t.statements.filter((q) => q === 'commit')).toHaveLength(1);
    } finally {
      await t.close();
    }
  });

  it('the first of a group failing rolls back only itself; the rest commit', async () => {
    const t = await setup();
    try {
      const results = await Promise.allSettled(['a', 'b', 'c'].map((name) => t.store.transaction(async (trx) => {
        await t.insert(trx, name);
        if (name === 'a') throw new Error('a fails');
      })));
      expect(results.map((r) => r.status)).toEqual(['rejected', 'fulfilled', 'fulfilled']);
      expect(t.committed()).toEqual(['b', 'c']);
    } finally {
      await t.close();
    }
  });

  it('none answers success before its writes are committed: another connection sees them when it does', async () => {
    const t = await setup();
    try {
      const seen: Array<[string, boolean]> = [];
      await Promise.all(['a', 'b', 'c', 'd', 'e'].map((name) => t.store.transaction(async (trx) => {
        await t.insert(trx, name);
      }).then(() => seen.push([name, t.committed().includes(name)]))));
      expect(seen.map(([, visible]) => visible)).toEqual([true, true, true, true, true]);
    } finally {
      await t.close();
    }
  });

  it('when SQLite abandons the transaction (a trigger raises ROLLBACK), every member so far fails; those queued after commit alone', async () => {
    const t = await setup();
    try {
      await sql`create trigger host_rows_boom before insert on host_rows when new.name = 'boom' begin select raise(rollback, 'boom'); end`.execute(t.store.db);
      const results = await Promise.allSettled(['a', 'b', 'boom', 'c'].map((name) => t.store.transaction(async (trx) => {
        await t.insert(trx, name);
        return name;
      })));
      // a and b wrote in the abandoned transaction: they must not answer success.
      expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected', 'fulfilled']);
      expect(t.committed()).toEqual(['c']);
      // The store is usable afterwards.
      await t.store.transaction((trx) => t.insert(trx, 'd'));
      expect(t.committed()).toEqual(['c', 'd']);
    } finally {
      await t.close();
    }
  });

  it('over the API: of concurrent creates, the valid ones are stored and answered 201, the invalid one 400 with nothing stored', async () => {
    const store = await openSqliteStore();
    const api = await createPmapi({ store, rateLimiter: false });
    try {
      const ws = await api.admin.createWorkspace({ name: 'W', owner: { name: 'Owner' } });
      const { token } = await api.admin.issueToken(ws.ownerMemberId, { scopes: ['read', 'write'] });
      const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
      // Warm up (the first write creates the member's actor, the second has its token remembered).
      for (const name of ['W1', 'W2']) expect((await api.handle({ method: 'POST', url: '/api/v3/projects', headers, body: JSON.stringify({ name }) })).status).toBe(201);
      const bodies = [{ name: 'P1' }, { name: 'P2' }, { name: 42 }, { name: 'P4' }];
      const answers = await Promise.all(bodies.map((b) => api.handle({ method: 'POST', url: '/api/v3/projects', headers, body: JSON.stringify(b) })));
      expect(answers.map((r) => r.status)).toEqual([201, 201, 400, 201]);
      const list = await api.handle({ method: 'GET', url: '/api/v3/projects?limit=100', headers });
      const names = (JSON.parse(String(list.body)) as { data: Array<{ name: string }> }).data.map((p) => p.name).sort();
      expect(names).toEqual(['P1', 'P2', 'P4', 'W1', 'W2']);
    } finally {
      await api.close();
    }
  });
});
