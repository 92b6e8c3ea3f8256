import { describe, it, expect, inject, beforeAll, afterAll } from 'vitest';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { sql, type Kysely } from 'kysely';
import type { SqlStore } from '@pmapi/core/sql';
import { createPmapi, createRateLimiter, fakeClock } from '@pmapi/core';
import { openPostgresStore } from '@pmapi/adapter-postgres';

const url = inject('pgUrl');

/**
 * Issue 11: statements sent outside a transaction through `store.reads` in one
 * run of the microtask queue (concurrent requests' authentications and reads)
 * go to Postgres on one connection, in one write, each with its own Sync:
 * each answered on its own, an error failing only its statement.
 */
describe.skipIf(!url)('[postgres] statements outside transactions sent together', () => {
  const schema = `rt_${randomBytes(6).toString('hex')}`;
  // A host's pool, so checkouts can be counted.
  const host = new pg.Pool({ connectionString: url!, max: 4 });
  const admin = new pg.Pool({ connectionString: url!, max: 1 });
  let store: SqlStore;
  let reads: Kysely<any>;
  let checkouts = 0;
  /** Writes to the server's socket (a corked batch of messages is one). */
  let writes = 0;
  const counted = new WeakSet<object>();
  host.on('acquire', (client) => {
    checkouts++;
    const socket = (client as unknown as { connection: { stream: Record<string, (...a: unknown[]) => unknown> } }).connection.stream;
    if (counted.has(socket)) return;
    counted.add(socket);
    for (const m of ['_write', '_writev'] as const) {
      const original = socket[m]!;
      socket[m] = function (this: unknown, ...a: unknown[]) {
        writes++;
        return original.apply(this, a);
      };
    }
  });
  beforeAll(async () => {
    store = await openPostgresStore({ pool: host, schema });
    reads = store.reads!;
    await admin.query(`create table ${schema}.scratch (id integer primary key, note text)`);
  });
  afterAll(async () => {
    await store.close();
    await host.end();
    await admin.query(`drop schema ${schema} cascade`);
    await admin.end();
  });
  const value = (v: number) => sql<{ v: number; pid: number }>`select ${v}::int as v, pg_backend_pid() as pid`.execute(reads);

  it('concurrent statements share one checkout and one server connection, each answered with its own rows', async () => {
    expect(reads).toBeDefined();
    for (let round = 0; round < 3; round++) {
      checkouts = 0;
      writes = 0;
      const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => value(i * 7 + round)));
      expect(answers.map((a) => a.rows[0]!.v)).toEqual(Array.from({ length: 12 }, (_, i) => i * 7 + round));
      expect(new Set(answers.map((a) => a.rows[0]!.pid)).size).toBe(1);
      expect(checkouts).toBe(1);
      // All twelve in one write; on a host's pool the checkout sets pmapi's search_path and the release gives
      // the host's back: two more.
      expect(writes).toBe(3);
    }
  });

  it('more than 32 at once go in several writes, every answer to its own statement', async () => {
    checkouts = 0;
    const answers = await Promise.all(Array.from({ length: 70 }, (_, i) => value(i)));
    expect(answers.map((a) => a.rows[0]!.v)).toEqual(Array.from({ length: 70 }, (_, i) => i));
    expect(checkouts).toBe(3);
  });

  it('an error fails only its own statement; the others, writes included, commit on their own; the connection stays usable', async () => {
    const sent = [
      sql`insert into scratch (id, note) values (1, 'first')`.execute(reads),
      sql`select 1 / ${0}::int as boom`.execute(reads),
      sql`insert into scratch (id, note) values (1, 'duplicate')`.execute(reads),
      sql`insert into scratch (id, note) values (2, 'after the errors')`.execute(reads),
      value(5),
    ];
    const settled = await Promise.allSettled(sent);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'fulfilled', 'fulfilled']);
    expect(((settled[1] as PromiseRejectedResult).reason as { code?: string }).code).toBe('22012');
    expect(((settled[2] as PromiseRejectedResult).reason as { code?: string }).code).toBe('23505');
    expect((settled[0] as PromiseFulfilledResult<{ numAffectedRows?: bigint }>).value.numAffectedRows).toBe(1n);
    const rows = (await admin.query(`select id, note from ${schema}.scratch order by id`)).rows;
    expect(rows).toEqual([{ id: 1, note: 'first' }, { id: 2, note: 'after the errors' }]);
    // Every connection of the pool still answers (none was left mid-pipeline).
    const after = await Promise.all(Array.from({ length: 6 }, (_, i) => value(100 + i)));
    expect(after.map((a) => a.rows[0]!.v)).toEqual([100, 101, 102, 103, 104, 105]);
  });

  it('prepared statements are named and reused across trains, and a failing one leaves none half-prepared', async () => {
    // The same text many times: named from its third sighting, parsed in one train and bound in the next.
    for (let round = 0; round < 4; round++) {
      const answers = await Promise.all(Array.from({ length: 5 }, (_, i) => sql<{ n: number }>`select count(*)::int + ${i}::int as n from scratch`.execute(reads)));
      expect(answers.map((a) => a.rows[0]!.n)).toEqual([2, 3, 4, 5, 6]);
    }
    // A statement that fails to prepare (an unknown column) in a train, sent often enough to be named.
    for (let round = 0; round < 4; round++) {
      const settled = await Promise.allSettled([
        sql`select nope from scratch where id = ${1}`.execute(reads),
        value(round),
      ]);
      expect(settled[0]!.status).toBe('rejected');
      expect(((settled[0] as PromiseRejectedResult).reason as { code?: string }).code).toBe('42703');
      expect((settled[1] as PromiseFulfilledResult<{ rows: Array<{ v: number }> }>).value.rows[0]!.v).toBe(round);
    }
  });

  it('a transaction begun on reads runs on a connection of its own, beside statements sent together', async () => {
    const outside = Promise.all([value(1), value(2)]);
    const inside = reads.transaction().execute(async (trx) => {
      await sql`insert into scratch (id, note) values (3, 'in a transaction')`.execute(trx);
      const mine = (await sql<{ n: number }>`select count(*)::int as n from scratch where id = 3`.execute(trx)).rows[0]!.n;
      expect(mine).toBe(1);
      throw new Error('roll back');
    });
    await expect(inside).rejects.toThrow('roll back');
    expect((await outside).map((a) => a.rows[0]!.v)).toEqual([1, 2]);
    expect((await admin.query(`select count(*)::int as n from ${schema}.scratch where id = 3`)).rows[0].n).toBe(0);
    await reads.transaction().execute(async (trx) => {
      await sql`insert into scratch (id, note) values (4, 'committed')`.execute(trx);
    });
    expect((await admin.query(`select note from ${schema}.scratch where id = 4`)).rows[0].note).toBe('committed');
  });

  it('concurrent GETs share their authentications, their counting and their reads: two checkouts for eight requests, the answers each its own', async () => {
    // Its own schema: the API's tables beside the scratch table's.
    const apiSchema = `${schema}_api`;
    const apiStore = await openPostgresStore({ pool: host, schema: apiSchema });
    // A fixed instant 150 s into a 5-minute window: the previous window's count is settled, so every batch is
    // counted with one statement (a wall clock a moment into a new window would count them one by one).
    const clock = fakeClock('2026-01-01T00:02:30.000Z');
    const api = await createPmapi({ store: apiStore, clock, rateLimiter: createRateLimiter({ store: 'database', sqlStore: apiStore }) });
    try {
      const ws = await api.admin.createWorkspace({ name: 'Together', owner: { name: 'Owner' } });
      const token = (await api.admin.issueToken(ws.ownerMemberId, { scopes: ['read', 'write'] })).token;
      const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
      const project = JSON.parse(String((await api.handle({ method: 'POST', url: '/api/v3/projects', headers, body: JSON.stringify({ name: 'P' }) })).body));
      const ids: string[] = [];
      for (let i = 0; i < 8; i++) {
        const r = await api.handle({ method: 'POST', url: '/api/v3/tasks', headers, body: JSON.stringify({ projectId: project.id, name: `t${i}` }) });
        ids.push(JSON.parse(String(r.body)).id);
      }
      // Warm: statements named and prepared, the limiter's previous window settled or not, lastUsedAt written.
      for (let round = 0; round < 2; round++) await Promise.all(ids.map((id) => api.handle({ method: 'GET', url: `/api/v3/tasks/${id}`, headers })));
      checkouts = 0;
      const answers = await Promise.all(ids.map((id) => api.handle({ method: 'GET', url: `/api/v3/tasks/${id}`, headers })));
      expect(answers.map((r) => r.status)).toEqual(Array(8).fill(200));
      expect(answers.map((r) => JSON.parse(String(r.body)).name)).toEqual(ids.map((_, i) => `t${i}`));
      // Each counted on its own: eight different counts left.
      expect(new Set(answers.map((r) => r.headers['x-ratelimit-remaining'])).size).toBe(8);
      // Eight authentications in one write; then, the limiter having room, the eight counts (one statement) and
      // the eight reads started beside them in one more (http/handle.ts, limits/sql.ts).
      expect(checkouts).toBe(2);
    } finally {
      await api.close();
      await admin.query(`drop schema ${apiSchema} cascade`);
    }
  });

  it('is absent with prepare: false (a pooler in transaction mode may split a pipeline across server connections)', async () => {
    const plain = await openPostgresStore({ connectionString: url!, schema, prepare: false, max: 1 });
    try {
      expect(plain.reads).toBeUndefined();
    } finally {
      await plain.close();
    }
  });
});
