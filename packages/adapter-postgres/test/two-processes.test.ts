import { describe, it, expect, beforeAll, afterAll, inject } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const url = inject('pgUrl');
const main = fileURLToPath(new URL('../../../examples/quickstart/dist/main.js', import.meta.url));

interface Seed {
  baseUrl: string;
  teams: { id: string; members: { id: string; role: string; token: string }[] }[];
}

function start(db: string): Promise<{ child: ChildProcess; seed: Seed }> {
  const child = spawn(process.execPath, [main, '--port', '0', '--json', '--db', db], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString('utf8');
      const nl = out.indexOf('\n');
      if (nl !== -1) resolve({ child, seed: JSON.parse(out.slice(0, nl)) as Seed });
    });
    child.on('exit', (code) => reject(new Error(`quickstart exited with ${code}`)));
  });
}

/** Issue 3: two real server processes (the quickstart on --db postgres://…) sharing one database. */
describe.skipIf(!url)('[postgres] two processes on one database, hammered concurrently', () => {
  let admin: pg.Client;
  let dbName: string;
  let a: { child: ChildProcess; seed: Seed };
  let b: { child: ChildProcess; seed: Seed };
  let token: string;
  let projectId: string;

  const call = (base: string, path: string, init: { method?: string; body?: unknown; headers?: Record<string, string> } = {}) =>
    fetch(`${base}/api/v3${path}`, {
      method: init.method ?? 'GET',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...(init.headers ?? {}) },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    }).then(async (r) => ({ status: r.status, body: r.status === 204 ? undefined : ((await r.json()) as any) }));

  beforeAll(async () => {
    if (!existsSync(main)) throw new Error(`${main} is missing: run pnpm install (it builds the packages)`);
    admin = new pg.Client({ connectionString: url! });
    admin.on('error', () => {});
    await admin.connect();
    dbName = `pmapi_2p_${randomBytes(4).toString('hex')}`;
    await admin.query(`create database ${dbName}`);
    const u = new URL(url!);
    u.pathname = `/${dbName}`;
    // Both start at once: migrations must not trip over each other.
    [a, b] = await Promise.all([start(u.toString()), start(u.toString())]);
    token = a.seed.teams[0]!.members[0]!.token;
    const p = await call(a.seed.baseUrl, '/projects', { method: 'POST', body: { name: 'Shared' } });
    expect(p.status).toBe(201);
    projectId = p.body.id;
  }, 60_000);

  afterAll(async () => {
    a?.child.kill('SIGTERM');
    b?.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 200));
    await admin.query(`drop database if exists ${dbName} with (force)`);
    await admin.end();
  });

  const servers = () => [a.seed.baseUrl, b.seed.baseUrl];

  it("a token issued by one process works on the other (state lives in the database)", async () => {
    const r = await call(b.seed.baseUrl, `/projects/${projectId}`);
    expect(r.status).toBe(200);
  });

  it('the same Idempotency-Key sent to both processes at once executes once (v3 rule 11)', async () => {
    const key = `two-proc-${randomBytes(4).toString('hex')}`;
    const rs = await Promise.all(Array.from({ length: 20 }, (_, i) =>
      call(servers()[i % 2]!, '/tasks', { method: 'POST', body: { name: 'exactly once', projectId }, headers: { 'idempotency-key': key } })));
    expect(rs.map((r) => r.status)).toEqual(Array(20).fill(201));
    expect(new Set(rs.map((r) => r.body.id)).size).toBe(1);
    const list = await call(a.seed.baseUrl, `/tasks?projectId=${projectId}&name[eq]=exactly%20once&includeTotal=true`);
    expect(list.body.total).toBe(1);
  });

  it('concurrent task creates in one project through both processes get unique niceIds', async () => {
    const rs = await Promise.all(Array.from({ length: 40 }, (_, i) =>
      call(servers()[i % 2]!, '/tasks', { method: 'POST', body: { name: `n ${i}`, projectId } })));
    expect(rs.map((r) => r.status)).toEqual(Array(40).fill(201));
    expect(new Set(rs.map((r) => r.body.niceId)).size).toBe(40);
  });

  it('concurrent PATCHes with one expectedUpdatedAt: exactly one 200, the rest 409 stale_write (v3 rule 10)', async () => {
    const t = await call(a.seed.baseUrl, '/tasks', { method: 'POST', body: { name: 'contended', projectId } });
    const rs = await Promise.all(Array.from({ length: 16 }, (_, i) =>
      call(servers()[i % 2]!, `/tasks/${t.body.id}`, { method: 'PATCH', body: { name: `winner ${i}`, expectedUpdatedAt: t.body.updatedAt } })));
    expect(rs.filter((r) => r.status === 200)).toHaveLength(1);
    const losers = rs.filter((r) => r.status !== 200);
    expect(losers).toHaveLength(15);
    for (const l of losers) expect(l.body.code).toBe('stale_write');
    const final = await call(b.seed.baseUrl, `/tasks/${t.body.id}`);
    expect(final.body.name).toBe(rs.find((r) => r.status === 200)!.body.name);
  });
});
