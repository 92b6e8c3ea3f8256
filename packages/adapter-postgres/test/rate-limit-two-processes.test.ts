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

/**
 * Issue 4 "Rate limits": the quickstart runs with createPmapi's default
 * limiter, which on Postgres keeps its counters in the database. Two real
 * server processes sharing one database must enforce one limit together.
 */
describe.skipIf(!url)('[postgres] Limits: two processes on one database share the rate limits', () => {
  let admin: pg.Client;
  let dbName: string;
  let a: { child: ChildProcess; seed: Seed };
  let b: { child: ChildProcess; seed: Seed };

  beforeAll(async () => {
    if (!existsSync(main)) throw new Error(`${main} is missing: run pnpm install (it builds the packages)`);
    admin = new pg.Client({ connectionString: url! });
    admin.on('error', () => {});
    await admin.connect();
    dbName = `pmapi_rl_${randomBytes(4).toString('hex')}`;
    await admin.query(`create database ${dbName}`);
    const u = new URL(url!);
    u.pathname = `/${dbName}`;
    [a, b] = await Promise.all([start(u.toString()), start(u.toString())]);
  }, 60_000);

  afterAll(async () => {
    a?.child.kill('SIGTERM');
    b?.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 200));
    await admin?.query(`drop database if exists ${dbName} with (force)`);
    await admin?.end();
  });

  it('260 POSTs in concurrent waves split across both processes: exactly 200 admitted (the 200/min bucket), 60 refused', async () => {
    // The processes use the wall clock: keep the burst inside one fixed minute window, where
    // the sliding-window estimate is exact (a burst straddling the boundary could be off by one).
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 45_000) await new Promise((r) => setTimeout(r, 60_000 - intoMinute + 250));

    const token = a.seed.teams[0]!.members[0]!.token;
    const servers = [a.seed.baseUrl, b.seed.baseUrl];
    const tag = `two-proc ${randomBytes(3).toString('hex')}`;
    const post = (i: number) =>
      fetch(`${servers[i % 2]}/api/v3/labels`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: `${tag} ${i}` }),
      }).then(async (r) => ({ server: i % 2, status: r.status, headers: Object.fromEntries(r.headers), body: (await r.json()) as any }));
    // Five waves of 52 concurrent requests (26 per process): real races across processes, without
    // queueing so deep on a loaded CI machine that requests time out waiting for a pooled connection.
    const rs: Awaited<ReturnType<typeof post>>[] = [];
    for (let wave = 0; wave < 5; wave++) rs.push(...(await Promise.all(Array.from({ length: 52 }, (_, j) => post(wave * 52 + j)))));

    const ok = rs.filter((r) => r.status === 201);
    const refused = rs.filter((r) => r.status === 429);
    expect(ok).toHaveLength(200);
    expect(refused).toHaveLength(60);
    // Both processes admitted and refused some: the limit is one, not one per process.
    expect(new Set(ok.map((r) => r.server)).size).toBe(2);
    // Every admitted request saw its own count: Remaining runs through 199…0 exactly once across both processes.
    expect(ok.map((r) => r.headers['x-ratelimit-limit'])).toEqual(Array(200).fill('200'));
    expect(ok.map((r) => Number(r.headers['x-ratelimit-remaining'])).sort((x, y) => x - y)).toEqual(Array.from({ length: 200 }, (_, i) => i));
    for (const r of refused) {
      expect(r.body.code).toBe('rate_limited');
      expect(String(r.body.retryAfter)).toBe(r.headers['retry-after']);
      expect(r.body.retryAfter).toBeGreaterThan(60); // the block outlasts the one-minute window
      expect(r.body.retryAfter).toBeLessThanOrEqual(120);
      expect(r.headers['x-ratelimit-limit']).toBeUndefined();
    }

    // Refused requests did nothing; the block holds on both processes.
    const list = await fetch(`${b.seed.baseUrl}/api/v3/labels?name[startsWith]=${encodeURIComponent(tag)}&includeTotal=true&limit=1`, {
      headers: { authorization: `Bearer ${token}` },
    }).then((r) => r.json() as Promise<any>);
    expect(list.total).toBe(200);
    for (const base of servers) {
      const r = await fetch(`${base}/api/v3/labels`, {
        method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: `${tag} late` }),
      });
      expect(r.status).toBe(429);
    }
  }, 60_000);
});
