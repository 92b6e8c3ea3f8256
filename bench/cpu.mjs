// node cpu.mjs CASE [--pg] [--runs N] [--limiter]: the server's CPU and the database's CPU per request, pmapi
// beside the raw handler (with --limiter: pmapi beside pmapi with the database rate limiter on; for deep and
// expand: variant A beside B), for one case of the matrix (matrix.mjs) at 10 connections; runs alternate.
// The server's from its /proc stat (user + system), Postgres's summed over every postgres process (SQLite
// works inside the server). Throughput compares what a request costs; this shows on which side the cost is.
import { readFileSync, readdirSync } from 'node:fs';
const { caseList, cpuTicks, openTarget, loadOnce, WARMUP_SECONDS, startServer, pinLoad } = await import('./matrix.mjs');

const args = process.argv.slice(2).filter((a) => a !== '--');
const PG = args.includes('--pg');
const KINDS = args.includes('--limiter') ? ['pmapi', 'limiter'] : ['raw', 'pmapi'];
const runsAt = args.indexOf('--runs');
const RUNS = runsAt >= 0 ? Number(args[runsAt + 1]) : 2;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const name = args.find((a, i) => !a.startsWith('--') && args[i - 1] !== '--runs') ?? 'post';
pinLoad();
const target = await openTarget({ pg: PG, tasks: Number(process.env.BENCH_TASKS ?? 20000) });
const c = caseList(target.seed).find((x) => x.name === name);
if (!c) throw new Error(`no case ${name}; cases: ${caseList(target.seed).map((x) => x.name).join(', ')}`);
// A case timed against its own variant (deep, expand) compares A with B.
const kinds = c.variants.raw ? KINDS : ['A', 'B'];
/** CPU ticks (1/100 s) a process has used. */
const ticks = (pid) => {
  const t = cpuTicks(pid);
  return t.user + t.sys;
};
const sysTicks = (pid) => cpuTicks(pid).sys;
const postgresTicks = () => {
  let t = 0;
  for (const p of readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    try {
      if (readFileSync(`/proc/${p}/stat`, 'utf8').includes('(postgres)')) t += ticks(p);
    } catch {}
  }
  return t;
};
console.log(`${name} on ${PG ? 'Postgres' : 'SQLite'}, ${SECONDS} s runs at 10 connections`);
for (let r = 0; r < RUNS; r++) {
  for (const kind of kinds) {
    const srv = await startServer(c.variants[kind].server, target.url, {});
    try {
      const v = c.variants[kind];
      await loadOnce(srv.url, v, { seconds: WARMUP_SECONDS, connections: 10 });
      const a = ticks(srv.child.pid); const as = sysTicks(srv.child.pid);
      const p = PG ? postgresTicks() : 0;
      const load0 = process.cpuUsage();
      const res = await loadOnce(srv.url, v, { seconds: SECONDS, connections: 10 });
      const n = res.rps * SECONDS;
      const load = process.cpuUsage(load0);
      const db = PG ? `  Postgres ${(((postgresTicks() - p) * 10000) / n).toFixed(0)} µs/request` : '';
      console.log(`${kind.padEnd(7)} ${res.rps.toFixed(0).padStart(6)} req/s  server ${(((ticks(srv.child.pid) - a) * 10000) / n).toFixed(0)} µs/request (sys ${(((sysTicks(srv.child.pid) - as) * 10000) / n).toFixed(0)})${db}  load ${((load.user + load.system) / n).toFixed(0)} µs/request (${((load.user + load.system) / SECONDS / 1e4).toFixed(0)} % of a core)  (${res.non2xx} not 2xx)`);
    } finally {
      await srv.stop();
    }
  }
}
await target.close();
