// The pieces of `pnpm bench`: the seeded target, the cases with their variants and targets, servers
// pinned to one core, load pinned to the other, and one measured run.
import { spawn, execFileSync } from 'node:child_process';
import { copyFileSync, rmSync, existsSync, readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import { scratchDatabase } from './scratch.mjs';
import Database from 'better-sqlite3';
import { seed, deepCursor } from './seed.mjs';

const here = (f) => new URL(f, import.meta.url).pathname;

/** Whether this machine has taskset and two cores to split: the server gets core 0, the load core 1. */
export const PINNED = (() => {
  try {
    execFileSync('taskset', ['-c', '0', 'true']);
    execFileSync('taskset', ['-c', '1', 'true']);
    return true;
  } catch {
    return false;
  }
})();

/** Pin this process (the load generator, every thread) to core 1. */
export function pinLoad() {
  if (PINNED) execFileSync('taskset', ['-a', '-pc', '1', String(process.pid)], { stdio: 'ignore' });
}

/**
 * Seed a database once: a SQLite file (each server run gets a fresh copy) or a fresh Postgres
 * database (dropped by close()). Also pages 50,000 rows deep once, for the deep-cursor case.
 */
export async function openTarget({ pg: usePg, tasks }) {
  const { url, drop } = await scratchDatabase('bench', { pg: usePg });
  console.log(`seeding ${tasks} tasks on ${usePg ? 'Postgres' : 'SQLite'}…`);
  const s = await seed(url, tasks);
  // A cursor 50,000 rows deep (or as deep as the data goes), made by the API itself on the seed.
  const server = await startServer('pmapi', url, {});
  const { cursor, depth } = await deepCursor(s, async (path) => (await fetch(server.url + path, { headers: { authorization: `Bearer ${s.token}` } })).json());
  await server.stop();
  if (!usePg) {
    // The cursor key the API just made lives in the WAL: fold it into the file every run copies.
    const db = new Database(url);
    db.pragma('wal_checkpoint(truncate)');
    db.close();
  }
  s.deepCursor = cursor;
  s.depth = depth;
  return {
    pg: !!usePg,
    url,
    seed: s,
    close: drop,
  };
}

/** `BENCH_BASELINE=minimal` (run.mjs `--baseline minimal`): the first raw handlers, which answer less than pmapi. */
const MINIMAL = process.env.BENCH_BASELINE === 'minimal';
const SCRIPTS = {
  pmapi: './server-pmapi.mjs', limiter: './server-pmapi.mjs',
  rawSqlite: MINIMAL ? './server-raw-minimal.mjs' : './server-raw.mjs', rawPg: MINIMAL ? './server-raw-pg-minimal.mjs' : './server-raw-pg.mjs',
};

/**
 * A fresh server process on core 0: `kind` pmapi, limiter (pmapi with the database rate limiter) or raw.
 * BENCH_NODE_FLAGS: Node flags for the server (e.g. `--trace-deopt`, `--max-semi-space-size=32`). `env`: variables
 * for this server alone.
 */
export async function startServer(kind, target, { copyFrom, env: extra } = {}) {
  const isPg = target.startsWith('postgres');
  const script = kind === 'raw' ? (isPg ? SCRIPTS.rawPg : SCRIPTS.rawSqlite) : SCRIPTS[kind];
  let file = target;
  if (copyFrom) {
    copyFileSync(copyFrom, file);
    for (const ext of ['-wal', '-shm']) if (existsSync(file + ext)) rmSync(file + ext);
  }
  const argv = [process.execPath, ...(process.env.BENCH_NODE_FLAGS ? process.env.BENCH_NODE_FLAGS.split(' ') : []), here(script), file];
  const env = { ...process.env, ...(kind === 'limiter' ? { BENCH_LIMITER: '1' } : {}), ...extra };
  const child = PINNED
    ? spawn('taskset', ['-c', '0', ...argv], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], env })
    : spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], env });
  const { port } = await new Promise((resolve, reject) => {
    child.once('message', resolve);
    child.once('exit', (code) => reject(new Error(`${kind} server exited (${code})`)));
  });
  return {
    child,
    url: `http://127.0.0.1:${port}`,
    rss: () => new Promise((resolve) => {
      child.on('message', function on(m) {
        if (m?.type === 'rss') {
          child.off('message', on);
          resolve(m);
        }
      });
      child.send({ type: 'rss' });
    }),
    stop: () => new Promise((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once('exit', resolve);
      child.kill('SIGKILL');
    }),
  };
}

/**
 * The cases. Each has variants measured interleaved (A B C A B C …) and a comparison:
 *  - `raw`: pmapi's throughput over the raw handler's (≥ target), and the rate limiter's cost (pmapi
 *    with the database limiter on against off, ≤ 10 % slower);
 *  - `time`: the time per request of variant B over variant A (≤ target).
 */
export function caseList(s) {
  const auth = { authorization: `Bearer ${s.token}` };
  const json = { ...auth, 'content-type': 'application/json' };
  const page = (q) => `/api/v3/tasks?projectId=${s.projectId}${q}`;
  // GET by id: each request a different task among the first 1,000.
  const ids = s.taskIds.slice(0, 1000);
  const getById = () => ({
    method: 'GET', headers: auth,
    requests: [{ setupRequest: (req, ctx) => ({ ...req, path: `/api/v3/tasks/${ids[(ctx.n = ((ctx.n ?? Math.floor(Math.random() * ids.length)) + 1) % ids.length)]}` }) }],
  });
  // PATCH: each request edits a task no other request in flight is editing, with the updatedAt the task's last answer
  // gave (a 409 gives the current one). autocannon starts every request with a fresh context, so tasks are handed
  // out here, round-robin, skipping those in flight: two PATCHes of one task at once would race (one 409).
  const stamps = new Map();
  const patchTasks = s.taskIds.slice(2000, 2200);
  const inFlight = new Set();
  let nextTask = 0;
  let edits = 0;
  const patch = () => ({
    method: 'PATCH', headers: json,
    requests: [{
      setupRequest: (req, ctx) => {
        do ctx.task = patchTasks[nextTask++ % patchTasks.length];
        while (inFlight.has(ctx.task));
        inFlight.add(ctx.task);
        const body = { name: `renamed ${++edits}`, ...(stamps.has(ctx.task) ? { expectedUpdatedAt: stamps.get(ctx.task) } : {}) };
        return { ...req, path: `/api/v3/tasks/${ctx.task}`, body: JSON.stringify(body) };
      },
      onResponse: (status, body, ctx) => {
        inFlight.delete(ctx.task);
        try {
          const b = JSON.parse(body);
          const at = status === 200 ? b.updatedAt : b.currentUpdatedAt;
          if (at) stamps.set(ctx.task, at);
        } catch {}
      },
    }],
    // Before a run: the current stamps of the tasks (any server answers GET /tasks/{id} with updatedAt).
    prepare: async (url) => {
      // The PATCHes a previous run left in flight (autocannon stops without their answers) may still be running on
      // the server: let them finish before the stamps are read, or their tasks' stamps would be stale (a 409 each).
      await new Promise((resolve) => setTimeout(resolve, 250));
      stamps.clear();
      inFlight.clear();
      await Promise.all(patchTasks.map(async (id) => {
        const r = await fetch(`${url}/api/v3/tasks/${id}`, { headers: auth });
        stamps.set(id, (await r.json()).updatedAt);
      }));
    },
  });
  const post = { method: 'POST', headers: json, path: '/api/v3/tasks', body: JSON.stringify({ name: 'bench task', projectId: s.projectId, statusId: s.statusId }) };
  return [
    { name: 'list50', label: 'GET /tasks?projectId&limit=50', compare: 'raw', target: { sqlite: 1.2, pg: 1.0 },
      variants: { raw: { server: 'raw', req: { method: 'GET', headers: auth, path: page('&limit=50') } } } },
    { name: 'list200', label: 'GET /tasks?…&limit=200', compare: 'raw', target: { sqlite: 1.2, pg: 1.0 },
      variants: { raw: { server: 'raw', req: { method: 'GET', headers: auth, path: page('&limit=200') } } } },
    { name: 'get', label: 'GET /tasks/{id}', compare: 'raw', target: { sqlite: 1.0, pg: 0.9 },
      variants: { raw: { server: 'raw', req: getById() } } },
    { name: 'deep', label: `page ${s.depth.toLocaleString('en')} rows deep (vs page 1)`, compare: 'time', target: { sqlite: 1.2, pg: 1.2 },
      variants: {
        A: { server: 'pmapi', req: { method: 'GET', headers: auth, path: page('&limit=50') } },
        B: { server: 'pmapi', req: { method: 'GET', headers: auth, path: page(`&limit=50&cursor=${encodeURIComponent(s.deepCursor)}`) } },
      } },
    { name: 'expand', label: 'expand=assignees,status,project (vs none)', compare: 'time', target: { sqlite: 1.6, pg: 1.6 },
      variants: {
        A: { server: 'pmapi', req: { method: 'GET', headers: auth, path: page('&limit=50') } },
        B: { server: 'pmapi', req: { method: 'GET', headers: auth, path: page('&limit=50&expand=assignees,status,project') } },
      } },
    { name: 'post', label: 'POST /tasks (+ outbox row)', compare: 'raw', target: { sqlite: 0.8, pg: 0.85 },
      variants: { raw: { server: 'raw', req: post } } },
    { name: 'patch', label: 'PATCH /tasks/{id} expectedUpdatedAt', compare: 'raw', target: { sqlite: 0.8, pg: 0.8 },
      variants: { raw: { server: 'raw', req: patch() } } },
  ].map((c) => {
    if (c.compare !== 'raw') return c;
    // pmapi, and pmapi with the database rate limiter, send exactly what the raw handler is sent.
    const req = c.variants.raw.req;
    return { ...c, variants: { raw: c.variants.raw, pmapi: { server: 'pmapi', req }, limiter: { server: 'limiter', req } } };
  });
}

/**
 * The seconds of load a fresh server gets before a measured run. Node's compilers take a few seconds of load
 * to reach the steady state: measured second by second (bench/phases.mjs, GET /tasks/{id} at 10 connections),
 * every variant ran at a third to two thirds of its steady rate in its first 3 s (pmapi with the database
 * limiter, whose code is the largest, the longest), so a 1 s warm-up measured part of the warm-up, more of it
 * the more code a variant runs. BENCH_WARMUP sets it.
 */
export const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP ?? 4);

/** One autocannon run: requests per second, p50/p99 latency, and the responses that were not 2xx. */
export function loadOnce(base, req, { seconds, connections }) {
  const { prepare, ...opts } = req.req ?? req;
  return (async () => {
    if (prepare) await prepare(base);
    return new Promise((resolve, reject) => {
      autocannon({ url: base + (opts.path ?? ''), connections, duration: seconds, ...opts }, (err, r) => {
        if (err) return reject(err);
        resolve({ rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx, errors: r.errors + r.timeouts });
      });
    });
  })();
}

/** CPU time a process has used, in ticks of 1/100 s (its /proc stat): user and system. */
export function cpuTicks(pid) {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return { user: Number(f[11]), sys: Number(f[12]) };
}

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/**
 * The raw handler and pmapi must answer the GET cases with the same JSON (a list's `nextCursor` aside:
 * both sign one, with different keys), or a ratio would compare different work. Throws on a difference.
 */
export async function checkSameAnswers(target) {
  const raw = await startServer('raw', target.url, {});
  const pmapi = await startServer('pmapi', target.url, {});
  try {
    const s = target.seed;
    const headers = { authorization: `Bearer ${s.token}` };
    for (const path of [`/api/v3/tasks/${s.taskIds[3]}`, `/api/v3/tasks?projectId=${s.projectId}&limit=50`, `/api/v3/tasks?projectId=${s.projectId}&limit=200`]) {
      const [a, b] = await Promise.all([raw, pmapi].map(async (srv) => {
        const r = await fetch(srv.url + path, { headers });
        const body = await r.json();
        if (r.status !== 200) throw new Error(`${path}: ${r.status} ${JSON.stringify(body)}`);
        if (body.nextCursor) body.nextCursor = typeof body.nextCursor;
        return JSON.stringify(body);
      }));
      if (a !== b) throw new Error(`the raw handler and pmapi answer ${path} differently:\nraw   ${a.slice(0, 400)}\npmapi ${b.slice(0, 400)}`);
    }
  } finally {
    await Promise.all([raw.stop(), pmapi.stop()]);
  }
}
