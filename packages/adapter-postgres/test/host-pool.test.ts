// Issue 16, "At home in the host's database": openPostgresStore({ pool, schema }) with the host application's
// own pg Pool puts every pmapi table in that schema, leaves the host's search_path and tables alone, and never
// ends the host's pool.
import { describe, it, expect, inject } from 'vitest';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createPmapi } from '@pmapi/core';
import { openPostgresStore } from '@pmapi/adapter-postgres';

const url = inject('pgUrl');

describe.skipIf(!url)("[postgres] openPostgresStore with the host's pool and a schema", () => {
  it('creates its tables in the schema even beside a host `users` table, keeps the host search_path, and never ends the pool', async () => {
    const host = new pg.Pool({ connectionString: url!, max: 3 });
    const hostSchema = `host_${randomBytes(4).toString('hex')}`;
    const schema = `pm_${randomBytes(4).toString('hex')}`;
    try {
      // The host's own database: its own schema first on its search path, with a `users` table pmapi must not touch.
      await host.query(`create schema ${hostSchema}`);
      await host.query(`create table ${hostSchema}.users (handle text primary key, karma int not null)`);
      await host.query(`insert into ${hostSchema}.users values ('host-user', 7)`);
      host.on('connect', (c) => { void c.query(`set search_path to ${hostSchema}, public`); });
      // Clients made before the listener: set them too.
      await Promise.all([0, 1, 2].map(async () => {
        const c = await host.connect();
        await c.query(`set search_path to ${hostSchema}, public`);
        c.release();
      }));

      const store = await openPostgresStore({ pool: host, schema });
      const api = await createPmapi({ store });
      const ws = await api.admin.createWorkspace({ name: 'Hosted', owner: { name: 'Owner' } });
      const { token } = await api.admin.issueToken(ws.ownerMemberId, { scopes: ['read', 'write'] });
      const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
      const project = await api.handle({ method: 'POST', url: '/api/v3/projects', headers: auth, body: JSON.stringify({ name: 'Hosted project' }) });
      expect(project.status).toBe(201);
      // Many requests, so every pooled connection has been pmapi's and the host's in turn.
      for (let i = 0; i < 6; i++) {
        const r = await api.handle({ method: 'GET', url: '/api/v3/members', headers: auth });
        expect(r.status).toBe(200);
        const [hostView] = (await host.query('select current_schema() as s, (select karma from users where handle = $1) as karma', ['host-user'])).rows;
        expect(hostView).toEqual({ s: hostSchema, karma: 7 });
      }

      const tables = async (s: string) => (await host.query('select table_name from information_schema.tables where table_schema = $1', [s])).rows.map((r) => r.table_name as string);
      expect(await tables(schema)).toEqual(expect.arrayContaining(['tasks', 'projects', 'users', 'members', 'outbox']));
      expect(await tables(hostSchema)).toEqual(['users']);
      expect((await host.query(`select count(*)::int as n from ${hostSchema}.users`)).rows[0].n).toBe(1);

      await api.close();
      // The host's pool is still the host's: it answers after pmapi closed.
      expect((await host.query('select 1 as one')).rows[0].one).toBe(1);
      expect(host.listenerCount('error')).toBe(0);
    } finally {
      await host.query(`drop schema if exists ${schema} cascade`).catch(() => undefined);
      await host.query(`drop schema if exists ${hostSchema} cascade`).catch(() => undefined);
      await host.end();
    }
  });

  it('never ends the host pool with prepare: false either (kysely ends a pool it is handed directly)', async () => {
    const schema = `pm_${randomBytes(4).toString('hex')}`;
    const admin = new pg.Pool({ connectionString: url!, max: 1 });
    await admin.query(`create schema ${schema}`);
    // No schema option: the host's pool already points at the schema pmapi is to use.
    const host = new pg.Pool({ connectionString: url!, max: 2, options: `-c search_path=${schema}` });
    try {
      const store = await openPostgresStore({ pool: host, prepare: false });
      await store.close();
      expect((await host.query('select 1 as one')).rows[0].one).toBe(1);
      expect(host.listenerCount('error')).toBe(0);
    } finally {
      await host.end().catch(() => undefined);
      await admin.query(`drop schema if exists ${schema} cascade`).catch(() => undefined);
      await admin.end();
    }
  });

  it('a failed open leaves the host pool without pmapi listeners', async () => {
    // Nothing listens on port 1: the open fails at its first query.
    const host = new pg.Pool({ connectionString: 'postgres://postgres@127.0.0.1:1/none', connectionTimeoutMillis: 2000 });
    try {
      await expect(openPostgresStore({ pool: host, onConnectionError: () => {} })).rejects.toThrow();
      expect(host.listenerCount('error')).toBe(0);
      expect(host.listenerCount('connect')).toBe(0);
    } finally {
      await host.end();
    }
  });
});
