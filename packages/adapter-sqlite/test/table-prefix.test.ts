// Issue 16, "At home in the host's database": openSqliteStore({ filename, tablePrefix }) shares the host
// application's SQLite file. Every object pmapi creates there (tables, indexes, kysely's migration tables, the
// rate-limit counters) carries the prefix, every statement it runs uses the prefixed names, and the host's own
// `tasks`, `members`, `projects`, `users`, `outbox`, `links`, … (other columns, other rows) are left untouched.
import { afterEach, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPmapi, createRateLimiter, fakeClock, sqlRateLimitStore } from '@pmapi/core';
import { harness, type Harness } from '@pmapi/conformance';
import { openSqliteStore, sqliteRateLimitStore } from '@pmapi/adapter-sqlite';

const dirs: string[] = [];
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempFile(name = 'host.db') {
  const d = mkdtempSync(join(tmpdir(), 'pmapi-prefix-'));
  dirs.push(d);
  return join(d, name);
}

/**
 * The host application's own database: tables named as pmapi's are (with other columns), an index named as one of
 * pmapi's indexes, a table named as kysely's migration table, a view and a trigger, each with rows.
 */
function makeHostFile(file: string) {
  const db = new Database(file);
  db.exec(`
    create table tasks (id integer primary key, title text not null, done integer not null default 0);
    create table members (handle text primary key, karma integer);
    create table projects (code text primary key, budget real);
    create table users (email text primary key, password_hash text);
    create table outbox (seq integer primary key autoincrement, topic text, payload blob);
    create table links (href text, rel text);
    create table pmapi_migrations (version integer, applied text);
    create table rate_counters (bucket text, hits integer);
    create index links_parent_order on links (rel, href);
    create index tasks_overdue_scan on tasks (done);
    create view open_tasks as select id, title from tasks where done = 0;
    create trigger outbox_on_task after insert on tasks begin insert into outbox (topic, payload) values ('task', new.title); end;
    insert into tasks (title) values ('host task one'), ('host task two');
    insert into members values ('alice', 10), ('bob', 3);
    insert into projects values ('HOST-1', 1500.5);
    insert into users values ('alice@host.invalid', 'x');
    insert into links values ('https://host.invalid/a', 'self');
    insert into pmapi_migrations values (7, 'host migration table');
    insert into rate_counters values ('host-bucket', 99);
  `);
  db.close();
}

/** Everything the host file holds that is not pmapi's: its catalogue and every row of its tables. */
function hostSnapshot(file: string, prefix: string) {
  const db = new Database(file, { readonly: true });
  try {
    const objects = (db.prepare('select type, name, tbl_name, sql from sqlite_master order by type, name').all() as Array<{ type: string; name: string; tbl_name: string; sql: string | null }>)
      .filter((o) => !o.tbl_name.toLowerCase().startsWith(prefix) && o.name !== 'sqlite_sequence');
    const rows: Record<string, unknown[]> = {};
    for (const o of objects) if (o.type === 'table') rows[o.name] = db.prepare(`select * from "${o.name}" order by rowid`).all();
    return { objects, rows };
  } finally {
    db.close();
  }
}

/** Every object in the file that the host did not create. */
function pmapiObjects(file: string, host: ReturnType<typeof hostSnapshot>) {
  const db = new Database(file, { readonly: true });
  try {
    const hostNames = new Set(host.objects.map((o) => o.name));
    return (db.prepare('select type, name, tbl_name from sqlite_master').all() as Array<{ type: string; name: string; tbl_name: string }>)
      .filter((o) => !hostNames.has(o.name) && o.name !== 'sqlite_sequence');
  } finally {
    db.close();
  }
}

/** Objects SQLite names itself (a primary key's index): named after their table, which must be prefixed. */
const carriesPrefix = (o: { name: string; tbl_name: string }, prefix: string) =>
  o.name.startsWith(prefix) || (o.name.startsWith('sqlite_autoindex_') && o.tbl_name.startsWith(prefix));

const ALL = ['read', 'write', 'delete'];

describe('openSqliteStore({ tablePrefix }): beside the host tables in the host file', () => {
  it('runs real API work (writes with outbox events, the fast JSON list, relations) in the host file; the host\'s tables, index, view, trigger and rows are untouched', async () => {
    // An unprefixed store first, in the same process: its statements, cached by shape, must not be reused by the prefixed one
    // (that would write into the host's `tasks`).
    const plain = await harness({ name: 'plain', open: (o) => openSqliteStore({ onQuery: o?.onQuery }) });
    cleanups.push(() => plain.close());
    const pp = await plain.project({ name: 'Plain' });
    await plain.task(pp.id, { name: 'plain task' });
    expect((await plain.get(`/tasks?projectId=${pp.id}`)).body.data).toHaveLength(1);

    const file = tempFile();
    makeHostFile(file);
    const before = hostSnapshot(file, 'pm_');
    const h: Harness = await harness({ name: 'prefixed', open: (o) => openSqliteStore({ filename: file, tablePrefix: 'pm_', onQuery: o?.onQuery }) });
    cleanups.push(() => h.close());

    const project = await h.project({ name: 'Hosted project' });
    const label = await h.post('/labels', { name: 'hosted-label' });
    expect(label.status, JSON.stringify(label.body)).toBe(201);
    const t1 = await h.task(project.id, { name: 'first', labels: [label.body.id], assignees: [h.a.regular.id] });
    const t2 = await h.task(project.id, { name: 'second' });
    const patched = await h.patch(`/tasks/${t2.id}`, { name: 'second, renamed' });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);

    // The list takes the fast JSON path (json_object built by SQLite, relation ids from the prefixed links table).
    let list: any;
    const statements = await h.countQueries(async () => {
      list = await h.get(`/tasks?projectId=${project.id}&sort=name`);
    });
    expect(list.status, JSON.stringify(list.body)).toBe(200);
    expect(list.body.data.map((t: any) => t.name)).toEqual(['first', 'second, renamed']);
    expect(list.body.data[0]).toMatchObject({ id: t1.id, labels: [label.body.id], assignees: [h.a.regular.id] });
    const page = statements.find((s) => s.includes('json_object('));
    expect(page, statements.join('\n')).toBeDefined();
    expect(page).toContain('"pm_tasks"');
    expect(page).toContain('"pm_links"');
    // No statement names an unprefixed pmapi table.
    for (const s of statements) expect(s).not.toMatch(/(from|join|into|update)\s+"(tasks|links|members|projects|outbox)"/);

    // The writes' events are in pmapi's outbox.
    const events = await h.outbox();
    expect(events.map((e) => e.type)).toEqual(expect.arrayContaining(['task.created', 'task.updated', 'project.created']));
    const raw = new Database(file, { readonly: true });
    try {
      expect((raw.prepare('select count(*) as n from pm_outbox').get() as { n: number }).n).toBe(events.length);
      expect((raw.prepare('select count(*) as n from pm_tasks').get() as { n: number }).n).toBe(2);
      expect((raw.prepare('select count(*) as n from pm_pmapi_migrations').get() as { n: number }).n).toBeGreaterThan(20);
    } finally {
      raw.close();
    }

    // Through store.db pmapi's tables keep their plain names, and its introspection shows pmapi's tables only.
    const tables = (await h.store.db.introspection.getTables()).map((t) => t.name);
    expect(tables).toEqual(expect.arrayContaining(['tasks', 'links', 'outbox', 'pmapi_migrations']));
    expect(tables.some((t) => t.startsWith('pm_'))).toBe(false);
    expect((await h.store.db.selectFrom('tasks').select('name').orderBy('name').execute()).map((r) => r.name)).toEqual(['first', 'second, renamed']);

    // Every object pmapi created carries the prefix; the host's are as they were.
    const created = pmapiObjects(file, before);
    expect(created.filter((o) => !carriesPrefix(o, 'pm_'))).toEqual([]);
    expect(created.map((o) => o.name)).toEqual(expect.arrayContaining(['pm_tasks', 'pm_links', 'pm_outbox', 'pm_pmapi_migrations', 'pm_pmapi_migrations_lock', 'pm_links_parent', 'pm_tasks_overdue_scan']));
    // Migration 0031 drops pmapi's links_parent_order: its own (prefixed), never the host's index of that name.
    expect(created.map((o) => o.name)).not.toContain('pm_links_parent_order');
    expect(hostSnapshot(file, 'pm_')).toEqual(before);

    // The unprefixed store still works on its own tables.
    expect((await plain.get(`/tasks?projectId=${pp.id}`)).body.data.map((t: any) => t.name)).toEqual(['plain task']);
  });

  it('reopened, it runs no migration again and finds its data; the database rate limiter counts in prefixed tables (here: in the host file itself)', async () => {
    const file = tempFile();
    makeHostFile(file);
    const before = hostSnapshot(file, 'pm_');
    const first = await openSqliteStore({ filename: file, tablePrefix: 'pm_' });
    const api1 = await createPmapi({ store: first, rateLimiter: false });
    const ws = await api1.admin.createWorkspace({ name: 'Hosted', owner: { name: 'Owner' } });
    const { token } = await api1.admin.issueToken(ws.ownerMemberId, { scopes: ALL });
    await api1.close();

    const ddl: string[] = [];
    const clock = fakeClock(Date.UTC(2026, 10, 26, 12));
    const store = await openSqliteStore({ filename: file, tablePrefix: 'pm_', rateLimitFile: file, onQuery: (q) => { if (/^\s*(create|alter|drop)\b/i.test(q)) ddl.push(q); } });
    const api = await createPmapi({ store, clock, rateLimiter: createRateLimiter({ store: 'database', sqlStore: store, limits: { GET: [{ limit: 3, windowMs: 60_000, keyBy: 'token', blockMs: 30_000 }] } }) });
    cleanups.push(() => api.close());
    expect(ddl).toEqual([]);
    const get = () => api.handle({ method: 'GET', url: '/api/v3/members', headers: { authorization: `Bearer ${token}` } });
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await get()).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    // Past the block and both sliding windows: admitted again, and the data from before the reopen is there.
    clock.advance(121_000);
    const again = await get();
    expect(again.status).toBe(200);
    expect(JSON.parse(String(again.body)).data.map((m: any) => m.name)).toEqual(['Owner']);

    // The counters went to pmapi's prefixed tables in the host file; no side file was made.
    expect(existsSync(`${file}-limits`)).toBe(false);
    const raw = new Database(file, { readonly: true });
    try {
      expect((raw.prepare('select count(*) as n from pm_rate_counters').get() as { n: number }).n).toBeGreaterThan(0);
      expect((raw.prepare('select count(*) as n from pm_rate_blocks').get() as { n: number }).n).toBe(1);
    } finally {
      raw.close();
    }
    const created = pmapiObjects(file, before);
    expect(created.filter((o) => !carriesPrefix(o, 'pm_'))).toEqual([]);
    expect(hostSnapshot(file, 'pm_')).toEqual(before);
  });

  it('migrate: false judges the prefixed installation: refused while pending (the host\'s own pmapi_migrations table does not count), opened once migrated', async () => {
    const file = tempFile();
    makeHostFile(file);
    await expect(openSqliteStore({ filename: file, tablePrefix: 'pm_', migrate: false })).rejects.toThrow(/pending|migrat/i);
    await (await openSqliteStore({ filename: file, tablePrefix: 'pm_' })).close();
    const store = await openSqliteStore({ filename: file, tablePrefix: 'pm_', migrate: false });
    cleanups.push(() => store.close());
    expect((await store.db.selectFrom('pmapi_migrations').select('name').execute()).length).toBeGreaterThan(20);
  });

  it('the rate-limit side file (default <filename>-limits) holds only prefixed tables', async () => {
    const file = tempFile();
    makeHostFile(file);
    const store = await openSqliteStore({ filename: file, tablePrefix: 'pmapi_' });
    const api = await createPmapi({ store, rateLimiter: createRateLimiter({ store: 'database', sqlStore: store, limits: { GET: [{ limit: 1, windowMs: 60_000, keyBy: 'token' }] } }) });
    cleanups.push(() => api.close());
    const ws = await api.admin.createWorkspace({ name: 'Side', owner: { name: 'Owner' } });
    const { token } = await api.admin.issueToken(ws.ownerMemberId, { scopes: ALL });
    const get = () => api.handle({ method: 'GET', url: '/api/v3/members', headers: { authorization: `Bearer ${token}` } });
    expect((await get()).status).toBe(200);
    expect((await get()).status).toBe(429);
    const side = new Database(`${file}-limits`, { readonly: true });
    try {
      const objects = side.prepare('select name, tbl_name from sqlite_master').all() as Array<{ name: string; tbl_name: string }>;
      expect(objects.map((o) => o.tbl_name).sort()).toEqual(['pmapi_rate_blocks', 'pmapi_rate_counters']);
      expect(objects.filter((o) => !carriesPrefix(o, 'pmapi_'))).toEqual([]);
    } finally {
      side.close();
    }
  });

  it('counters kept in a damaged host file: refused with an error, the file left byte for byte as it was (never deleted)', () => {
    const file = tempFile();
    const db = new Database(file);
    db.exec('create table notes (id integer primary key, body text)');
    const insert = db.prepare('insert into notes (body) values (?)');
    db.transaction(() => { for (let i = 0; i < 500; i++) insert.run(`note ${i} ${'.'.repeat(100)}`); })();
    db.close();
    // Scribble over a page of the host's table: quick_check fails, the catalogue still reads.
    const fd = openSync(file, 'r+');
    writeSync(fd, Buffer.alloc(200, 0xff), 0, 200, 4096 * 3 + 100);
    closeSync(fd);
    const bytes = readFileSync(file);
    expect(() => sqliteRateLimitStore(file, { tablePrefix: 'pm_' })).toThrow(/damaged and holds more than pmapi's counters/);
    expect(() => sqliteRateLimitStore(file)).toThrow(/damaged/);
    expect(readFileSync(file).equals(bytes)).toBe(true);
  });

  it('the generic database counters (sqlRateLimitStore, public) on a prefixed store count in pm_rate_counters, not the host\'s rate_counters', async () => {
    const file = tempFile();
    makeHostFile(file);
    const before = hostSnapshot(file, 'pm_');
    const store = await openSqliteStore({ filename: file, tablePrefix: 'pm_' });
    cleanups.push(() => store.close());
    const limits = sqlRateLimitStore(store);
    const bucket = { key: 'GET:0:token:t1', limit: 2, windowMs: 60_000, blockMs: 30_000 };
    const now = Date.UTC(2026, 10, 26, 12);
    const outcomes = [];
    for (let i = 0; i < 3; i++) outcomes.push((await limits.hit([bucket], now + i)).admitted);
    expect(outcomes).toEqual([true, true, false]);
    expect((await limits.hit([bucket], now + 10)).admitted).toBe(false);
    const raw = new Database(file, { readonly: true });
    try {
      expect(raw.prepare('select key, count from pm_rate_counters').all()).toEqual([{ key: bucket.key, count: 2 }]);
      expect(raw.prepare('select key from pm_rate_blocks').all()).toEqual([{ key: bucket.key }]);
    } finally {
      raw.close();
    }
    expect(hostSnapshot(file, 'pm_')).toEqual(before);
  });

  it('two prefixes in one file are two separate pmapi installations', async () => {
    const file = tempFile();
    makeHostFile(file);
    const open = async (tablePrefix: string) => {
      const store = await openSqliteStore({ filename: file, tablePrefix });
      const api = await createPmapi({ store, rateLimiter: false });
      cleanups.push(() => api.close());
      return api;
    };
    const a = await open('a_');
    const b = await open('b_');
    await a.admin.createWorkspace({ name: 'In A', owner: { name: 'A owner' } });
    const wb = await b.admin.createWorkspace({ name: 'In B', owner: { name: 'B owner' } });
    const { token } = await b.admin.issueToken(wb.ownerMemberId, { scopes: ALL });
    const r = await b.handle({ method: 'GET', url: '/api/v3/members', headers: { authorization: `Bearer ${token}` } });
    expect(JSON.parse(String(r.body)).data.map((m: any) => m.name)).toEqual(['B owner']);
    const raw = new Database(file, { readonly: true });
    try {
      expect((raw.prepare('select count(*) as n from a_members').get() as { n: number }).n).toBe(1);
      expect((raw.prepare('select count(*) as n from b_members').get() as { n: number }).n).toBe(1);
    } finally {
      raw.close();
    }
  });

  it.each([[''], ['1pm'], ['pm-'], ['pm tasks'], ['p'.repeat(32)], ['sqlite_pm'], ['SQLITE_x'], [42]])('refuses tablePrefix %j naming the option, before touching the file', async (bad) => {
    const file = tempFile();
    await expect(openSqliteStore({ filename: file, tablePrefix: bad as string })).rejects.toThrow(/tablePrefix/);
    expect(existsSync(file)).toBe(false);
    expect(() => sqliteRateLimitStore(file, { tablePrefix: bad as string })).toThrow(/tablePrefix/);
    expect(existsSync(file)).toBe(false);
  });

  it('accepts the longest and mixed-case prefixes', async () => {
    for (const tablePrefix of ['P'.repeat(31), '_Pm9_']) {
      const store = await openSqliteStore({ tablePrefix });
      const api = await createPmapi({ store, rateLimiter: false });
      cleanups.push(() => api.close());
      const ws = await api.admin.createWorkspace({ name: 'Ok', owner: { name: 'Owner' } });
      expect(ws.id).toBeTruthy();
      const names = (await store.db.selectFrom('sqlite_master').select('name').where('type', '=', 'table').execute()).map((r) => r.name as string);
      expect(names.filter((n) => !n.startsWith(tablePrefix))).toEqual([]);
    }
  });
});
