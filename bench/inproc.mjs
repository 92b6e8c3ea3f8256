// node inproc.mjs [--pg] CASE…: in-process CPU cost per request of api.handle (no HTTP), with the
// statements each request runs. CPU time (process.cpuUsage), so it stays meaningful on a busy machine.
// Cases: get, list50, list200, expand, deep (the 50-task page reached by cursor min(50,000, TASKS − 200) rows deep), post, patch; add "+limiter" for the database rate limiter (e.g. get+limiter), "+mem"
// for the in-memory one.
// CONC=k hands k requests at once, as http-node hands a turn's requests on (default 1: one after another).
// NOREADS=1 leaves the store's `reads` out: every statement outside a transaction on a connection of its own.
import { createPmapi, createRateLimiter, V3_RATE_LIMITS } from '@pmapi/core';
import { openSqliteStore } from '@pmapi/adapter-sqlite';
import { openPostgresStore } from '@pmapi/adapter-postgres';
import { scratchDatabase } from './scratch.mjs';
import { seed, deepCursor } from './seed.mjs';
import { Session } from 'node:inspector/promises';
import { writeFileSync, mkdirSync } from 'node:fs';

const args = process.argv.slice(2).filter((a) => a !== '--');
const PG = args.includes('--pg');
const cases = args.filter((a) => !a.startsWith('--'));
const N = Number(process.env.N ?? 3000);
const CONC = Number(process.env.CONC ?? 1);
const { url, drop } = await scratchDatabase('inproc', { pg: PG });
const s = await seed(url, Number(process.env.TASKS ?? 5000));
const raised = Object.fromEntries(Object.entries(V3_RATE_LIMITS).map(([m, rules]) => [m, rules.map((r) => ({ ...r, limit: 1_000_000_000 }))]));
for (const c of cases) {
  const [name, lim] = c.split('+');
  let statements = [];
  const dur = new Map();
  const onQuery = (q, ms) => { statements.push(q); const k = q.slice(0, 60); dur.set(k, (dur.get(k) ?? 0) + ms); };
  const store = PG ? await openPostgresStore({ connectionString: url, onQuery }) : await openSqliteStore({ filename: url, onQuery });
  if (process.env.NOREADS) delete store.reads;
  const api = await createPmapi({ store, rateLimiter: lim ? createRateLimiter({ store: lim === 'mem' ? 'memory' : 'database', sqlStore: store, limits: raised }) : false });
  const auth = { authorization: `Bearer ${s.token}`, 'content-type': 'application/json' };
  let i = 0;
  const stamps = new Map();
  // The cursor the API itself hands out that many rows deep (as matrix.mjs makes it).
  const deep = name === 'deep' ? (await deepCursor(s, async (path) => JSON.parse((await api.handle({ method: 'GET', url: path, headers: auth })).body))).cursor : undefined;
  const req = () => {
    i++;
    if (name === 'get') return { method: 'GET', url: `/api/v3/tasks/${s.taskIds[i % 1000]}`, headers: auth };
    if (name === 'list50') return { method: 'GET', url: `/api/v3/tasks?projectId=${s.projectId}&limit=50`, headers: auth };
    if (name === 'list200') return { method: 'GET', url: `/api/v3/tasks?projectId=${s.projectId}&limit=200`, headers: auth };
    if (name === 'deep') return { method: 'GET', url: `/api/v3/tasks?projectId=${s.projectId}&limit=50&cursor=${encodeURIComponent(deep)}`, headers: auth };
    if (name === 'expand') return { method: 'GET', url: `/api/v3/tasks?projectId=${s.projectId}&limit=50&expand=assignees,status,project`, headers: auth };
    if (name === 'post') return { method: 'POST', url: '/api/v3/tasks', headers: auth, body: JSON.stringify({ name: 'bench task', projectId: s.projectId, statusId: s.statusId }) };
    if (name === 'patch') { const id = s.taskIds[2000 + (i % 100)]; return { method: 'PATCH', url: `/api/v3/tasks/${id}`, headers: auth, body: JSON.stringify({ name: `r${i}`, ...(stamps.has(id) ? { expectedUpdatedAt: stamps.get(id) } : {}) }), id }; }
    throw new Error('case ' + name);
  };
  const one = async () => {
    const r = req();
    const res = await api.handle(r);
    if (res.status >= 300) throw new Error(`${res.status} ${res.body}`);
    if (r.id) stamps.set(r.id, JSON.parse(res.body).updatedAt);
  };
  for (let k = 0; k < 300; k++) await one();
  statements = [];
  await one();
  const shown = [...statements];
  let session;
  if (process.env.PROF) { session = new Session(); session.connect(); await session.post('Profiler.enable'); await session.post('Profiler.setSamplingInterval', { interval: 50 }); await session.post('Profiler.start'); }
  dur.clear();
  const c0 = process.cpuUsage(); const t0 = performance.now();
  for (let k = 0; k < N; k += CONC) await (CONC === 1 ? one() : Promise.all(Array.from({ length: CONC }, one)));
  const cpu = process.cpuUsage(c0); const wall = performance.now() - t0;
  if (session) { const { profile } = await session.post('Profiler.stop'); mkdirSync(process.env.PROF, { recursive: true }); writeFileSync(`${process.env.PROF}/${c}.cpuprofile`, JSON.stringify(profile)); session.disconnect(); }
  console.log(`${c}: ${((cpu.user + cpu.system) / N).toFixed(1)} µs CPU/request (user ${(cpu.user / N).toFixed(0)}, sys ${(cpu.system / N).toFixed(0)}) (${(wall * 1000 / N).toFixed(1)} µs wall), ${shown.length} statements (${(statements.length / (N + 1)).toFixed(2)} per request over the run)`);
  if (process.env.DUR) console.log(`   ${(statements.filter((q) => /^commit/i.test(q)).length / N).toFixed(3)} commits per request`);
  if (process.env.DUR) for (const [k, v] of dur) console.log(`   ${(v * 1000 / N).toFixed(1)} µs  ${k}`);
  if (process.env.SHOW) for (const q of shown) console.log("   ", q.replace(/\s+/g, " "));
  await api.close();
}
await drop();
