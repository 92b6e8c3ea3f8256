// pnpm bench: GET /api/v3/tasks?projectId=…&limit=50 and POST /api/v3/tasks through the full pmapi
// pipeline with 100k tasks, beside a raw handler doing the same query and insert (+ outbox row):
// node:http + better-sqlite3 on SQLite, node:http + pg on Postgres (`pnpm bench -- --pg`, server from
// DATABASE_URL or postgres://postgres@127.0.0.1:5432/postgres). Servers run in child processes; load
// comes from this process. Prints req/s and p99 latency for both and the ratio. A benchmark, not a test.
import { fork } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';
import { seed } from './seed.mjs';

const PG = process.argv.includes('--pg');

const TASKS = Number(process.env.BENCH_TASKS ?? 100_000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);

const dir = mkdtempSync(join(tmpdir(), 'pmapi-bench-'));
let base = join(dir, 'seed.db');
let dropDb = async () => {};
if (PG) {
  const adminUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const name = `pmapi_bench_${Date.now().toString(36)}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  base = u.toString();
  dropDb = async () => {
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  };
}
console.log(`seeding ${TASKS} tasks on ${PG ? 'Postgres' : 'SQLite'}…`);
const s = await seed(base, TASKS);

async function start(script, file) {
  if (!PG) copyFileSync(base, file);
  const child = fork(new URL(script, import.meta.url), [PG ? base : file], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const { port } = await new Promise((resolve) => child.once('message', resolve));
  return { child, url: `http://127.0.0.1:${port}` };
}

function load(url, opts) {
  return new Promise((resolve, reject) => {
    autocannon({ url, connections: CONNECTIONS, duration: SECONDS, ...opts }, (err, r) => (err ? reject(err) : resolve(r)));
  });
}

const headers = { authorization: `Bearer ${s.token}`, 'content-type': 'application/json' };
const cases = {
  'GET  /tasks?projectId&limit=50': { path: `/api/v3/tasks?projectId=${s.projectId}&limit=50`, method: 'GET', headers },
  'POST /tasks': { path: '/api/v3/tasks', method: 'POST', headers, body: JSON.stringify({ name: 'bench task', projectId: s.projectId, statusId: s.statusId }) },
};

const results = {};
for (const [name, script] of [['pmapi', './server-pmapi.mjs'], ['raw', PG ? './server-raw-pg.mjs' : './server-raw.mjs']]) {
  const { child, url } = await start(script, join(dir, `${name}.db`));
  results[name] = {};
  for (const [label, c] of Object.entries(cases)) {
    await load(url + c.path, { ...c, duration: 1 }); // warm-up
    const r = await load(url + c.path, c);
    if (r.non2xx) console.warn(`${name} ${label}: ${r.non2xx} non-2xx responses`);
    results[name][label] = { rps: r.requests.average, p99: r.latency.p99 };
  }
  child.kill();
}

console.log(`\n${PG ? 'Postgres' : 'SQLite'}: ${TASKS} tasks, ${CONNECTIONS} connections, ${SECONDS}s per case\n`);
console.log('case                             pmapi req/s  p99 ms |   raw req/s  p99 ms | pmapi/raw');
for (const label of Object.keys(cases)) {
  const p = results.pmapi[label];
  const r = results.raw[label];
  console.log(`${label.padEnd(32)} ${p.rps.toFixed(0).padStart(11)} ${String(p.p99).padStart(7)} | ${r.rps.toFixed(0).padStart(11)} ${String(r.p99).padStart(7)} | ${((p.rps / r.rps) * 100).toFixed(0).padStart(8)} %`);
}
rmSync(dir, { recursive: true, force: true });
await dropDb();
