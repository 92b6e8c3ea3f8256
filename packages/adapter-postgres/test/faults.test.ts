import { describe, it, expect, beforeAll, afterAll, inject } from 'vitest';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { sql } from 'kysely';
import { createPmapi, createRateLimiter, type Pmapi } from '@pmapi/core';
import type { SqlStore } from '@pmapi/core/sql';
import { openPostgresStore } from '@pmapi/adapter-postgres';

const url = inject('pgUrl');

/** Issue 3 "Faults": connections killed mid-transaction, timeouts, an outage of the database. */
describe.skipIf(!url)('[postgres] faults: the process survives, nothing is half-written, clients get 503 + Retry-After', () => {
  let admin: pg.Client;
  let store: SqlStore;
  let api: Pmapi;
  let token: string;
  let projectId: string;
  let killBeforeCommit = false;
  let dbName: string;

  beforeAll(async () => {
    const base = new URL(url!);
    dbName = `pmapi_faults_${randomBytes(4).toString('hex')}`;
    admin = new pg.Client({ connectionString: url! });
    admin.on('error', () => {});
    await admin.connect();
    await admin.query(`create database ${dbName}`);
    base.pathname = `/${dbName}`;
    const inner = await openPostgresStore({ connectionString: base.toString(), queryTimeoutMs: 500, connectionTimeoutMs: 1000, max: 4 });
    // A store whose next transaction loses its connection right before COMMIT.
    store = {
      ...inner,
      transaction: (fn) =>
        inner.transaction(async (trx) => {
          const r = await fn(trx);
          if (killBeforeCommit) {
            killBeforeCommit = false;
            const pid = (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx)).rows[0]!.pid;
            await admin.query('select pg_terminate_backend($1)', [pid]);
          }
          return r;
        }),
    };
    // Rate-limit counters in memory: the faults are injected into this store's write transactions, which the
    // database-backed limiter (the default on Postgres) would otherwise take in their place.
    api = await createPmapi({ store, onError: () => {}, rateLimiter: createRateLimiter({ store: 'memory' }) });
    const ws = await api.admin.createWorkspace({ name: 'Faults', owner: { name: 'F' } });
    token = (await api.admin.issueToken(ws.ownerMemberId, { scopes: ['read', 'write', 'delete'] })).token;
    projectId = JSON.parse((await call('POST', '/projects', { name: 'Faulty' })).body as string).id;
  });

  afterAll(async () => {
    await api?.close();
    await admin.query(`drop database if exists ${dbName} with (force)`);
    await admin.end();
  });

  function call(method: string, path: string, body?: unknown) {
    return api.handle({
      method, url: `/api/v3${path}`,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  }

  async function countTasks(name: string) {
    const list = JSON.parse((await call('GET', `/tasks?projectId=${projectId}&name[eq]=${encodeURIComponent(name)}&includeTotal=true`)).body as string);
    return list.total as number;
  }

  it('a connection killed mid-transaction answers 503 with Retry-After and writes nothing (no row, no event)', async () => {
    killBeforeCommit = true;
    const r = await call('POST', '/tasks', { name: 'doomed', projectId });
    expect(r.status).toBe(503);
    expect(r.headers['retry-after']).toBe('1');
    expect(JSON.parse(r.body as string).code).toBe('service_unavailable');
    expect(await countTasks('doomed')).toBe(0);
    const events = await store.db.selectFrom('outbox').select('id').where('type', '=', 'task.created').execute();
    const tasks = await store.db.selectFrom('tasks').select('id').execute();
    expect(events.length).toBe(tasks.length);
    // The process and the pool carry on.
    let ok = await call('POST', '/tasks', { name: 'after the kill', projectId });
    for (let i = 0; i < 5 && ok.status === 503; i++) ok = await call('POST', '/tasks', { name: 'after the kill', projectId });
    expect(ok.status).toBe(201);
  });

  it('killing every backend under load: only 201s and 503s, and every 201 is stored with its event', async () => {
    const results: { status: number; id?: string; body?: string }[] = [];
    let stop = false;
    // 25 rounds of killing every backend, 20 ms apart, while the load runs on; the load outlasts them.
    const killer = (async () => {
      for (let round = 0; round < 25 && !stop; round++) {
        await admin.query(`select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()`, [dbName]);
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    await Promise.all(Array.from({ length: 6 }, async (_, w) => {
      for (let i = 0; i < 25; i++) {
        const r = await call('POST', '/tasks', { name: `load ${w}-${i}`, projectId });
        results.push({ status: r.status, id: r.status === 201 ? JSON.parse(r.body as string).id : undefined, ...(r.status !== 201 && r.status !== 503 ? { body: r.body as string } : {}) });
      }
    }));
    stop = true;
    await killer;
    const statuses = new Set(results.map((r) => r.status));
    expect([...statuses].sort(), JSON.stringify(results.filter((r) => r.status !== 201 && r.status !== 503).slice(0, 3))).toEqual([...statuses].filter((s) => s === 201 || s === 503).sort());
    expect(results.some((r) => r.status === 201)).toBe(true);
    const created = results.filter((r) => r.id).map((r) => r.id!);
    const rows = await store.db.selectFrom('tasks').select('id').where('id', 'in', created).execute();
    expect(rows.length).toBe(created.length);
    const events = await store.db.selectFrom('outbox').select('aggregate_id').where('type', '=', 'task.created').execute();
    const tasks = await store.db.selectFrom('tasks').select('id').execute();
    expect(events.length).toBe(tasks.length);
  });

  it('a statement blocked past the query timeout answers 503 and rolls back', async () => {
    const holder = new pg.Client({ connectionString: (() => { const u = new URL(url!); u.pathname = `/${dbName}`; return u.toString(); })() });
    holder.on('error', () => {});
    await holder.connect();
    try {
      await holder.query('begin');
      await holder.query('select id from projects where id = $1 for update', [projectId]);
      const r = await call('PATCH', `/projects/${projectId}`, { description: 'blocked' });
      expect(r.status).toBe(503);
      expect(r.headers['retry-after']).toBe('1');
    } finally {
      await holder.query('rollback');
      await holder.end();
    }
    const after = JSON.parse((await call('GET', `/projects/${projectId}`)).body as string);
    expect(after.description).toBeNull();
  });

  it('an outage of the database (connections refused, then back) is survived without a 500', async () => {
    await admin.query(`alter database ${dbName} allow_connections false`);
    await admin.query(`select pg_terminate_backend(pid) from pg_stat_activity where datname = $1`, [dbName]);
    const down = await Promise.all([call('GET', `/tasks?projectId=${projectId}`), call('POST', '/tasks', { name: 'during outage', projectId })]);
    for (const r of down) {
      expect(r.status).toBe(503);
      expect(r.headers['retry-after']).toBe('1');
    }
    await admin.query(`alter database ${dbName} allow_connections true`);
    // Pooled connections that died during the outage may fail once more (503, never 500); then it works.
    let up = await call('POST', '/tasks', { name: 'after outage', projectId });
    for (let i = 0; i < 5 && up.status === 503; i++) up = await call('POST', '/tasks', { name: 'after outage', projectId });
    expect(up.status).toBe(201);
  });
});

describe.skipIf(!url)('[postgres] schemas: two stores in two schemas of one database migrate and work side by side', () => {
  it('each store creates its own tables even though the other schema has them', async () => {
    const a = `s_${randomBytes(4).toString('hex')}`;
    const b = `s_${randomBytes(4).toString('hex')}`;
    const one = await openPostgresStore({ connectionString: url!, schema: a, max: 2 });
    const two = await openPostgresStore({ connectionString: url!, schema: b, max: 2 });
    try {
      for (const s of [one, two]) {
        const api = await createPmapi({ store: s, rateLimiter: false });
        const ws = await api.admin.createWorkspace({ name: 'S', owner: { name: 'S' } });
        expect(ws.id).toBeTypeOf('string');
      }
      const counts = await Promise.all([one, two].map((s) => sql<{ n: number }>`select count(*)::int as n from workspaces`.execute(s.db)));
      expect(counts.map((c) => c.rows[0]!.n)).toEqual([1, 1]);
    } finally {
      await one.db.schema.dropSchema(a).cascade().execute();
      await two.db.schema.dropSchema(b).cascade().execute();
      await one.close();
      await two.close();
    }
  });
});
