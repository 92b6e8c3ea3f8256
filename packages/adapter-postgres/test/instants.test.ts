import { describe, it, expect, inject, beforeAll, afterAll } from 'vitest';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { sql } from 'kysely';
import type { SqlStore } from '@pmapi/core/sql';
import { createPmapi, fakeClock } from '@pmapi/core';
import { instantText, openPostgresStore } from '@pmapi/adapter-postgres';

const url = inject('pgUrl');

/**
 * Issue 11: pmapi's statements read timestamptz as the wire format's ISO 8601
 * text (spec: every instant is ISO 8601 UTC with milliseconds), made from the
 * server's text by moving characters instead of through two Dates. Whatever
 * the server prints, the value is the one the driver's own parser gives.
 */
describe('instantText: timestamptz text as ISO 8601', () => {
  const driver = pg.types.getTypeParser(pg.types.builtins.TIMESTAMPTZ, 'text') as (s: string) => unknown;
  it('UTC text becomes the ISO string a Date prints (fraction cut to milliseconds, padded)', () => {
    const cases: Array<[string, string]> = [
      ['2026-01-02 03:04:05.678+00', '2026-01-02T03:04:05.678Z'],
      ['2026-01-02 03:04:05.6+00', '2026-01-02T03:04:05.600Z'],
      ['2026-01-02 03:04:05.61+00', '2026-01-02T03:04:05.610Z'],
      ['2026-01-02 03:04:05+00', '2026-01-02T03:04:05.000Z'],
      ['2026-01-02 03:04:05.123999+00', '2026-01-02T03:04:05.123Z'],
      ['0999-12-31 23:59:59.999+00', '0999-12-31T23:59:59.999Z'],
    ];
    for (const [text, iso] of cases) {
      expect(instantText(text)).toBe(iso);
      expect((driver(text) as Date).toISOString()).toBe(iso);
    }
  });
  it('anything else is left to the driver: another offset, a year past 9999, BC, infinity', () => {
    for (const text of ['2026-01-02 03:04:05.678+01', '2026-01-02 08:34:05.678+05:30', '12026-01-02 03:04:05+00', '0044-03-15 12:00:00+00 BC', 'infinity', '-infinity']) {
      expect(typeof instantText(text)).not.toBe('string');
      expect(instantText(text)).toEqual(driver(text));
    }
  });
});

describe.skipIf(!url)('[postgres] instants read by pmapi', () => {
  const schema = `ts_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Pool({ connectionString: url!, max: 1 });
  let store: SqlStore;
  beforeAll(async () => {
    store = await openPostgresStore({ connectionString: url!, schema, max: 1 });
  });
  afterAll(async () => {
    await store.close();
    await admin.query(`drop schema ${schema} cascade`);
    await admin.end();
  });

  it('come back as the ISO text of the instant the server holds, for a thousand random instants', async () => {
    const ms = Array.from({ length: 1000 }, (_, i) => (i === 0 ? 0 : Math.floor(Math.random() * 253402300799999)));
    const { rows } = await sql<{ t: unknown }>`select ('epoch'::timestamptz + x * interval '1 millisecond')::timestamptz(3) as t from unnest(${ms}::bigint[]) as x`.execute(store.db);
    expect(rows.map((r) => r.t)).toEqual(ms.map((m) => new Date(m).toISOString()));
  });

  it("on a host's pool: pmapi's statements read ISO text, the host's own queries on the same connections keep the driver's Dates", async () => {
    const host = new pg.Pool({ connectionString: url!, max: 1, options: '-c TimeZone=UTC' });
    const hosted = await openPostgresStore({ pool: host, schema });
    try {
      const at = "select '2026-05-06 07:08:09.1+00'::timestamptz as t";
      const mine = await sql<{ t: unknown }>`select '2026-05-06 07:08:09.1+00'::timestamptz as t`.execute(hosted.db);
      expect(mine.rows[0]!.t).toBe('2026-05-06T07:08:09.100Z');
      const theirs = (await host.query(at)).rows[0].t;
      expect(theirs).toBeInstanceOf(Date);
      expect((theirs as Date).toISOString()).toBe('2026-05-06T07:08:09.100Z');
    } finally {
      await hosted.close();
      await host.end();
    }
  });

  it('with the session in another time zone, come back as the driver parses them, and the API answers the same instants', async () => {
    const clock = fakeClock('2026-03-04T05:06:07.890Z');
    const api = await createPmapi({ store, clock, rateLimiter: false });
    const ws = await api.admin.createWorkspace({ name: 'Zones', owner: { name: 'Owner' } });
    const { token } = await api.admin.issueToken(ws.ownerMemberId, { scopes: ['read', 'write'] });
    const call = (method: string, path: string, body?: unknown) =>
      api.handle({ method, url: `/api/v3${path}`, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, ...(body ? { body: JSON.stringify(body) } : {}) });
    const project = JSON.parse(String((await call('POST', '/projects', { name: 'P' })).body));
    const task = JSON.parse(String((await call('POST', '/tasks', { projectId: project.id, name: 'T' })).body));
    expect(task.createdAt).toBe('2026-03-04T05:06:07.890Z');
    // A host's pool whose connections talk in India's time (+05:30): the server prints local times.
    const kolkata = new pg.Pool({ connectionString: url!, max: 1, options: '-c TimeZone=Asia/Kolkata' });
    const fresh = await openPostgresStore({ pool: kolkata, schema });
    try {
      const { rows } = await sql<{ t: unknown; zone: string }>`select created_at as t, current_setting('TimeZone') as zone from tasks where id = ${task.id}`.execute(fresh.db);
      expect(rows[0]!.zone).toBe('Asia/Kolkata');
      expect(rows[0]!.t).toBeInstanceOf(Date);
      const api2 = await createPmapi({ store: fresh, clock, rateLimiter: false });
      const read = async (path: string) => JSON.parse(String((await api2.handle({ method: 'GET', url: `/api/v3${path}`, headers: { authorization: `Bearer ${token}` } })).body));
      const got = await read(`/tasks/${task.id}`);
      const list = await read(`/tasks?projectId=${project.id}`);
      expect(got.createdAt).toBe('2026-03-04T05:06:07.890Z');
      expect(list.data[0].createdAt).toBe('2026-03-04T05:06:07.890Z');
      await api2.close();
    } finally {
      await fresh.close();
      await kolkata.end();
    }
    await api.close();
  });
});
