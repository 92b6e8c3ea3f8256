import { describe, it, expect, inject, beforeAll, afterAll } from 'vitest';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { CompiledQuery, sql } from 'kysely';
import { executeTogether, holdStatement, sendHeld, type SqlStore } from '@pmapi/core/sql';
import { createPmapi, type Pmapi } from '@pmapi/core';
import { openPostgresStore } from '@pmapi/adapter-postgres';

const url = inject('pgUrl');

/**
 * Issue 11: statements a transaction sends together (core's
 * `Repo.together`, `executeTogether`) leave in one socket write and run in
 * order in the transaction, each seeing what the ones before it did. A
 * failure fails the statements after it with the same error, and the
 * transaction undoes the ones before it.
 */
describe.skipIf(!url)('[postgres] a transaction\'s statements sent together', () => {
  const schema = `tg_${randomBytes(6).toString('hex')}`;
  // One connection: every transaction below runs on the same one.
  const pool = new pg.Pool({ connectionString: url!, max: 1 });
  const other = new pg.Pool({ connectionString: url!, max: 1 });
  let store: SqlStore;
  /** Socket writes (each a flush of what pg queued) on the store's connection. */
  let flushes = 0;
  /** What each of them carried, as text. */
  const written: string[] = [];

  beforeAll(async () => {
    pool.on('connect', (client) => {
      const socket = (client as unknown as { connection: { stream: { _write: (...a: unknown[]) => unknown; _writev?: (...a: unknown[]) => unknown } } }).connection.stream;
      const write = socket._write.bind(socket);
      socket._write = (...a: unknown[]) => {
        flushes++;
        written.push(Buffer.from(a[0] as Buffer).toString('latin1'));
        return write(...a);
      };
      const writev = socket._writev?.bind(socket);
      if (writev) {
        socket._writev = (...a: unknown[]) => {
          flushes++;
          written.push((a[0] as Array<{ chunk: Buffer | string }>).map((c) => Buffer.from(c.chunk).toString('latin1')).join(''));
          return writev(...a);
        };
      }
    });
    store = await openPostgresStore({ pool, schema });
    await sql`create table ${sql.table(`${schema}.counter`)} (id text primary key, n integer not null)`.execute(store.db);
    await sql`create table ${sql.table(`${schema}.item`)} (id text primary key, n integer not null)`.execute(store.db);
    await other.query(`insert into ${schema}.counter values ('c', 0)`);
  });
  afterAll(async () => {
    await store.close();
    await other.query(`drop schema ${schema} cascade`);
    await pool.end();
    await other.end();
  });

  const bump = () => CompiledQuery.raw(`update ${schema}.counter set n = n + 1 where id = 'c' returning n`, []);
  const readBack = () => CompiledQuery.raw(`select n from ${schema}.counter where id = 'c'`, []);
  const insertItem = (id: string, n: number) => CompiledQuery.raw(`insert into ${schema}.item values ($1, $2)`, [id, n]);
  const counter = async () => Number((await other.query(`select n from ${schema}.counter where id = 'c'`)).rows[0].n);
  const items = async () => (await other.query(`select id from ${schema}.item order by id`)).rows.map((r) => r.id as string);

  it('three statements in one write, answered in order, the later ones seeing the earlier ones', async () => {
    const before = await counter();
    let during = 0;
    const answers = await store.transaction(async (trx) => {
      await sql`select 1`.execute(trx); // the transaction has begun
      const from = flushes;
      const a = await executeTogether(trx, [bump(), bump(), readBack()]);
      during = flushes - from;
      return a;
    });
    expect(during).toBe(1);
    expect(answers.map((a) => a.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
    const rows = answers.map((a) => (a as PromiseFulfilledResult<{ rows: Array<{ n: number }> }>).value.rows[0]!.n);
    expect(rows).toEqual([before + 1, before + 2, before + 2]);
    expect(await counter()).toBe(before + 2);
  });

  it('as the first statements of a transaction, its begin goes in the same write', async () => {
    const before = await counter();
    let during = 0;
    await store.transaction(async (trx) => {
      const from = flushes;
      await executeTogether(trx, [bump(), insertItem('first', 1)]);
      during = flushes - from;
    });
    expect(during).toBe(1);
    expect(await counter()).toBe(before + 1);
    expect(await items()).toContain('first');
  });

  it('a failing statement fails the ones after it with its own error, and the transaction undoes the ones before it', async () => {
    await other.query(`insert into ${schema}.item values ('taken', 0)`);
    const before = await counter();
    let answers: Awaited<ReturnType<typeof executeTogether>> = [];
    await expect(store.transaction(async (trx) => {
      await sql`select 1`.execute(trx);
      answers = await executeTogether(trx, [bump(), insertItem('taken', 1), insertItem('after', 2)]);
      const failed = answers.find((a) => a.status === 'rejected') as PromiseRejectedResult | undefined;
      if (failed) throw failed.reason;
    })).rejects.toMatchObject({ code: '23505' });
    expect(answers.map((a) => a.status)).toEqual(['fulfilled', 'rejected', 'rejected']);
    // Not "current transaction is aborted": the error that happened.
    expect((answers[2] as PromiseRejectedResult).reason).toBe((answers[1] as PromiseRejectedResult).reason);
    expect(await counter()).toBe(before);
    expect(await items()).not.toContain('after');
    // The connection serves the next transaction.
    await store.transaction(async (trx) => executeTogether(trx, [bump(), bump()]));
    expect(await counter()).toBe(before + 2);
  });

  it('a held statement leaves in the same write as the next one, and is answered then', async () => {
    const before = await counter();
    let during = 0;
    let settledEarly = false;
    const n = await store.transaction(async (trx) => {
      await sql`select 1`.execute(trx);
      const from = flushes;
      const held = (await holdStatement(trx, bump()))!;
      held.answer.then(() => (settledEarly = true));
      await new Promise((r) => setTimeout(r, 20));
      // Nothing was sent yet.
      expect(flushes - from).toBe(0);
      expect(settledEarly).toBe(false);
      const after = await trx.executeQuery<{ n: number }>(readBack());
      during = flushes - from;
      expect(Number((await held.answer).rows[0] && (await held.answer).rows.length)).toBe(1);
      return Number(after.rows[0]!.n);
    });
    expect(during).toBe(1);
    // The read after the held bump saw it.
    expect(n).toBe(before + 1);
    expect(await counter()).toBe(before + 1);
  });

  it('held statements leave with the commit; sendHeld sends them on their own', async () => {
    const before = await counter();
    let commitFrom = 0;
    await store.transaction(async (trx) => {
      await sql`select 1`.execute(trx);
      await holdStatement(trx, insertItem('with-commit', 1));
      commitFrom = written.length;
    });
    // One write carries the held insert and the commit (a later one gives the host pool's search_path back).
    const sent = written.slice(commitFrom);
    expect(sent[0]).toMatch(/insert into .*item[\s\S]*commit/);
    expect(sent.slice(1).join('')).not.toMatch(/insert into|commit/);
    expect(await items()).toContain('with-commit');
    await store.transaction(async (trx) => {
      await sql`select 1`.execute(trx);
      const held = (await holdStatement(trx, bump()))!;
      await sendHeld(trx);
      expect(Number((await held.answer).rows.length)).toBe(1);
    });
    expect(await counter()).toBe(before + 1);
  });

  it('a held statement that fails fails the commit it left with, with its own error, and nothing is kept', async () => {
    await other.query(`insert into ${schema}.item values ('dup', 0) on conflict do nothing`);
    const before = await counter();
    await expect(store.transaction(async (trx) => {
      await trx.executeQuery(bump());
      await holdStatement(trx, insertItem('dup', 1));
    })).rejects.toMatchObject({ code: '23505' });
    expect(await counter()).toBe(before);
    // And one that fails fails the next statement the same way.
    await expect(store.transaction(async (trx) => {
      await holdStatement(trx, insertItem('dup', 1));
      await trx.executeQuery(bump());
    })).rejects.toMatchObject({ code: '23505' });
    expect(await counter()).toBe(before);
  });

  it('a rollback drops what is held: it is never sent', async () => {
    const before = await counter();
    await expect(store.transaction(async (trx) => {
      await sql`select 1`.execute(trx);
      await holdStatement(trx, bump());
      throw new Error('changed my mind');
    })).rejects.toThrow('changed my mind');
    expect(await counter()).toBe(before);
    // The connection goes on as usual.
    await store.transaction(async (trx) => trx.executeQuery(bump()));
    expect(await counter()).toBe(before + 1);
  });

  it('with prepare: false the statements run one after another, with the same answers', async () => {
    const plain = await openPostgresStore({ connectionString: url!, schema, prepare: false, migrate: false });
    try {
      const before = await counter();
      const answers = await plain.transaction(async (trx) => executeTogether(trx, [bump(), readBack()]));
      expect(answers.map((a) => (a as PromiseFulfilledResult<{ rows: Array<{ n: number }> }>).value.rows[0]!.n)).toEqual([before + 1, before + 1]);
      // Nothing is held: the caller runs it.
      expect(await plain.transaction(async (trx) => holdStatement(trx, bump()))).toBeUndefined();
    } finally {
      await plain.close();
    }
  });
});

/**
 * Issue 11 through the API: a task create's insert, its event's outbox row
 * and its delivery jobs leave with the commit. An insert that fails there
 * still fails the request with its own error, and nothing of it is kept.
 */
describe.skipIf(!url)('[postgres] a create whose held insert fails writes nothing', () => {
  const schema = `th_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Pool({ connectionString: url!, max: 2, options: `-c search_path=${schema}` });
  let store: SqlStore;
  let api: Pmapi;
  let token: string;
  const call = async (method: string, path: string, body?: unknown) => {
    const r = await api.handle({ method, url: `/api/v3${path}`, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, ...(body ? { body: JSON.stringify(body) } : {}) });
    return { status: r.status, body: r.body ? JSON.parse(String(r.body)) : undefined };
  };
  beforeAll(async () => {
    store = await openPostgresStore({ connectionString: url!, schema });
    api = await createPmapi({ store, rateLimiter: false });
    const ws = await api.admin.createWorkspace({ name: 'Held', owner: { name: 'Owner' } });
    token = (await api.admin.issueToken(ws.ownerMemberId, { scopes: ['read', 'write', 'delete'] })).token;
    // A task named 'refused' is refused by the database as a duplicate would be.
    await admin.query(`create function refuse_task() returns trigger language plpgsql as $$ begin
      if new.name = 'refused' then raise unique_violation using message = 'refused by the test'; end if; return new; end $$`);
    await admin.query('create trigger refuse_task before insert on tasks for each row execute function refuse_task()');
  });
  afterAll(async () => {
    await api.close();
    await admin.query(`drop schema ${schema} cascade`);
    await admin.end();
  });

  it('answers 409 conflict; no task, no event, no job, and the niceId counter is not moved', async () => {
    const p = await call('POST', '/projects', { name: 'P' });
    const hook = await call('POST', '/webhooks', { url: 'https://receiver.invalid/hook', events: ['task.*'] });
    expect(hook.status).toBe(201);
    const first = await call('POST', '/tasks', { projectId: p.body.id, name: 'kept' });
    expect(first.status).toBe(201);
    const count = async () => (await admin.query(
      `select (select count(*) from tasks)::int as tasks, (select count(*) from outbox where type = 'task.created')::int as events,
              (select count(*) from webhook_jobs where event_type = 'task.created')::int as jobs,
              (select task_counter from projects where id = $1)::int as counter`, [p.body.id])).rows[0];
    const before = await count();
    expect(before.jobs).toBe(1);
    const refused = await call('POST', '/tasks', { projectId: p.body.id, name: 'refused' });
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe('conflict');
    expect(await count()).toEqual(before);
    // The next create goes on from where the counter was.
    const next = await call('POST', '/tasks', { projectId: p.body.id, name: 'next' });
    expect(next.status).toBe(201);
    expect(next.body.niceId).toBe(String(Number(first.body.niceId) + 1));
    expect((await count()).jobs).toBe(2);
  });
});
