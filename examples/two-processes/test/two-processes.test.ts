import { describe, it, expect, beforeAll, afterAll, inject } from 'vitest';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { run, start } from '../../../test/processes';

/**
 * Issue 16, "Examples": two API server processes (the built
 * examples/two-processes, node:http + toNodeHandler) on one scratch Postgres
 * database, on two ports with nothing in front. Whatever one process did, the
 * other knows at once: data, idempotency keys, rate-limit counters, revocations.
 */
const mainJs = fileURLToPath(new URL('../dist/main.js', import.meta.url));
const pgUrl = inject('pgUrl');
/** The low POST limit both processes get (--post-limit), per token per minute. */
const POST_LIMIT = 12;

interface Started {
  child: ChildProcess;
  baseUrl: string;
  seed?: { workspaceId: string; memberId: string; token: string };
  exited: Promise<number | null>;
}

/** Start a built API process on any free port; resolve with what its `--json` line says once listening. */
async function startApi(args: string[]): Promise<Started> {
  const { child, exited, first } = await start<Pick<Started, 'baseUrl' | 'seed'>>(mainJs, ['--port', '0', '--json', ...args]);
  return { child, exited, ...first };
}

describe.skipIf(!pgUrl)('[postgres] example two-processes: two API processes on one database (issue 16, Examples)', () => {
  let admin: pg.Client;
  let dbName: string;
  let a: Started;
  let b: Started;
  let owner: string;

  const call = async (base: string, token: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const r = await fetch(`${base}/api/v3${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await r.text();
    return { status: r.status, headers: r.headers, text, body: text ? JSON.parse(text) : undefined };
  };
  /** A fresh personal access token of the owner, minted through process A. */
  const newToken = async (name: string) => {
    const t = await call(a.baseUrl, owner, 'POST', '/personal-access-tokens', { name, scopes: ['read', 'write', 'delete'] });
    expect(t.status).toBe(201);
    return { id: t.body.id as string, token: t.body.token as string };
  };

  beforeAll(async () => {
    admin = new pg.Client({ connectionString: pgUrl! });
    admin.on('error', () => {});
    await admin.connect();
    dbName = `pmapi_twoproc_${randomBytes(4).toString('hex')}`;
    await admin.query(`create database ${dbName}`);
    const u = new URL(pgUrl!);
    u.pathname = `/${dbName}`;
    const db = u.toString();
    // Both start at once on the empty database (migrations under an advisory lock); A seeds the workspace.
    [a, b] = await Promise.all([
      startApi(['--db', db, '--seed', '--post-limit', String(POST_LIMIT)]),
      startApi(['--db', db, '--post-limit', String(POST_LIMIT)]),
    ]);
    expect(a.baseUrl).not.toBe(b.baseUrl);
    owner = a.seed!.token;
  }, 30_000);

  afterAll(async () => {
    // Graceful on SIGTERM: both exit 0.
    const codes = await Promise.all([a, b].filter(Boolean).map((p) => (p.child.kill('SIGTERM'), p.exited)));
    await admin?.query(`drop database if exists ${dbName} with (force)`);
    await admin?.end();
    expect(codes).toEqual(codes.map(() => 0));
  });

  it('a write through A is read through B, and B\'s change is what A reads next', async () => {
    const p = await call(a.baseUrl, owner, 'POST', '/projects', { name: 'Written by A' });
    expect(p.status).toBe(201);
    const got = await call(b.baseUrl, owner, 'GET', `/projects/${p.body.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ id: p.body.id, name: 'Written by A' });
    const patched = await call(b.baseUrl, owner, 'PATCH', `/projects/${p.body.id}`, { name: 'Renamed by B', expectedUpdatedAt: got.body.updatedAt });
    expect(patched.status).toBe(200);
    expect((await call(a.baseUrl, owner, 'GET', `/projects/${p.body.id}`)).body.name).toBe('Renamed by B');
    // A cursor signed by one process is accepted by the other (the secret is kept in the database).
    for (const name of ['Second', 'Third']) expect((await call(a.baseUrl, owner, 'POST', '/projects', { name })).status).toBe(201);
    const page1 = await call(a.baseUrl, owner, 'GET', '/projects?limit=1&sort=name');
    expect(page1.body.hasMore).toBe(true);
    const page2 = await call(b.baseUrl, owner, 'GET', `/projects?limit=1&sort=name&cursor=${encodeURIComponent(page1.body.nextCursor)}`);
    expect(page2.status).toBe(200);
    expect(page2.body.data[0].name).not.toBe(page1.body.data[0].name);
  });

  it('an Idempotency-Key answered by A is replayed by B: Idempotency-Replayed: true, the same body, one task', async () => {
    const p = await call(a.baseUrl, owner, 'POST', '/projects', { name: 'Idempotent' });
    const key = `two-processes-${randomBytes(6).toString('hex')}`;
    const body = { name: 'Exactly once', projectId: p.body.id };
    const first = await call(a.baseUrl, owner, 'POST', '/tasks', body, { 'idempotency-key': key });
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotency-replayed')).toBeNull();
    const again = await call(b.baseUrl, owner, 'POST', '/tasks', body, { 'idempotency-key': key });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotency-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    // The same key with another body is refused by B too (spec rule 11: 422).
    const other = await call(b.baseUrl, owner, 'POST', '/tasks', { ...body, name: 'Something else' }, { 'idempotency-key': key });
    expect(other.status).toBe(422);
    const list = await call(b.baseUrl, owner, 'GET', `/tasks?projectId=${p.body.id}&includeTotal=true`);
    expect(list.body.total).toBe(1);
  });

  it(`the rate limiter's counters are shared: ${POST_LIMIT + 10} POSTs spread over both processes admit exactly ${POST_LIMIT}`, async () => {
    const p = await call(a.baseUrl, owner, 'POST', '/projects', { name: 'Rate limited' });
    const { token } = await newToken('rate limit'); // a bucket of its own
    const n = POST_LIMIT + 10;
    const rs = await Promise.all(Array.from({ length: n }, (_, i) =>
      call(i % 2 === 0 ? a.baseUrl : b.baseUrl, token, 'POST', '/tasks', { name: `t${i}`, projectId: p.body.id }).then((r) => ({ ...r, via: i % 2 }))));
    const admitted = rs.filter((r) => r.status === 201);
    const refused = rs.filter((r) => r.status === 429);
    // Per-process counters would admit up to POST_LIMIT in each process (every request here).
    expect(admitted).toHaveLength(POST_LIMIT);
    expect(refused).toHaveLength(n - POST_LIMIT);
    for (const r of admitted) expect(r.headers.get('x-ratelimit-limit')).toBe(String(POST_LIMIT));
    for (const r of refused) {
      expect(r.body.code).toBe('rate_limited');
      expect(r.headers.get('retry-after')).toBe(String(r.body.retryAfter));
    }
    // Once tripped, both processes refuse the token.
    expect((await call(a.baseUrl, token, 'POST', '/tasks', { name: 'late a', projectId: p.body.id })).status).toBe(429);
    expect((await call(b.baseUrl, token, 'POST', '/tasks', { name: 'late b', projectId: p.body.id })).status).toBe(429);
    const list = await call(a.baseUrl, owner, 'GET', `/tasks?projectId=${p.body.id}&includeTotal=true`);
    expect(list.body.total).toBe(POST_LIMIT);
  });

  it('a token revoked through A is refused by B at once', async () => {
    const { id, token } = await newToken('to revoke');
    expect((await call(b.baseUrl, token, 'GET', '/projects')).status).toBe(200);
    const del = await call(a.baseUrl, owner, 'DELETE', `/personal-access-tokens/${id}`);
    expect(del.status).toBe(204);
    const refused = await call(b.baseUrl, token, 'GET', '/projects');
    expect(refused.status).toBe(401);
    expect((await call(a.baseUrl, token, 'GET', '/projects')).status).toBe(401);
    // The owner's own token is untouched in both.
    expect((await call(b.baseUrl, owner, 'GET', '/projects')).status).toBe(200);
  });
});

describe('example two-processes: command line', () => {
  for (const [what, args, message] of [
    ['no database', [], /^pmapi API process: --db \(or DATABASE_URL\) is required/],
    ['a SQLite path (each process needs the one shared Postgres database)', ['--db', 'pm.db'], /^pmapi API process: --db must be a postgres:\/\//],
    ['a bad --post-limit', ['--db', 'postgres://127.0.0.1/x', '--post-limit', '0'], /^pmapi API process: --post-limit must be a whole number ≥ 1, got '0'/],
  ] as const) {
    it(`refuses ${what} with one line and exit code 1`, async () => {
      const { code, stderr } = await run(mainJs, [...args]);
      expect(code).toBe(1);
      expect(stderr.trim()).toMatch(message);
      expect(stderr.trim().split('\n')).toHaveLength(1);
    });
  }
});
