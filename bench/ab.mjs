// node ab.mjs CASE [--pg] [--limiter] [--pairs N] [--seconds S] [--connections C]: two variants of one case of the matrix,
// measured in N pairs (default 8), each pair in a random order, at C connections (default 10): the server's CPU per request (its /proc stat,
// user + system) and the throughput, with medians and each pair's difference. Variants: raw and pmapi; with
// --limiter, pmapi and pmapi with the database rate limiter (BENCH_LIMITER_STORE=memory: the in-memory one); for
// deep and expand, A and B. For effects of a few percent, which the machine's drift from one run to the next
// (often more than that) hides in a fixed-order alternation: a pair's two runs are close in time, and no variant
// is always first. With --env NAME=VALUE: pmapi, and pmapi with that variable set (a temporary switch in the code
// under test measures two code paths of one build).
import { readFileSync, readdirSync } from 'node:fs';
const { caseList, cpuTicks, loadOnce, WARMUP_SECONDS, median, openTarget, pinLoad, startServer } = await import('./matrix.mjs');

const args = process.argv.slice(2).filter((a) => a !== '--');
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : dflt;
};
const PG = args.includes('--pg');
const PAIRS = Number(opt('pairs', 8));
const SECONDS = Number(opt('seconds', 3));
const CONNS = Number(opt('connections', 10));
const name = args.find((a, i) => !a.startsWith('--') && !['--pairs', '--seconds', '--connections', '--env'].includes(args[i - 1])) ?? 'get';
const ENV = opt('env', undefined);
pinLoad();
const target = await openTarget({ pg: PG, tasks: Number(process.env.BENCH_TASKS ?? 20000) });
const c = caseList(target.seed).find((x) => x.name === name);
if (!c) throw new Error(`no case ${name}; cases: ${caseList(target.seed).map((x) => x.name).join(', ')}`);
const kinds = ENV ? ['pmapi', 'env'] : !c.variants.raw ? ['A', 'B'] : args.includes('--limiter') ? ['pmapi', 'limiter'] : ['raw', 'pmapi'];
if (ENV) {
  c.variants.pmapi ??= c.variants.B;
  c.variants.env = c.variants.pmapi;
}
const envOf = (kind) => (kind === 'env' ? Object.fromEntries([ENV.split(/=(.*)/s).slice(0, 2)]) : {});
const ticks = (pid) => {
  const t = cpuTicks(pid);
  return t.user + t.sys;
};
// The database's CPU (every postgres process alive at both readings: the pool's backends live through a run)
// and the whole machine's busy time, per request: on two cores the throughput is what all three leave each other.
const pgTicks = () => {
  const m = new Map();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const raw = readFileSync(`/proc/${d}/stat`, 'utf8');
      if (!raw.includes('(postgres)')) continue;
      const f = raw.split(') ')[1].split(' ');
      m.set(d, Number(f[11]) + Number(f[12]));
    } catch {}
  }
  return m;
};
const pgDelta = (a, b) => [...b].reduce((t, [pid, v]) => t + (a.has(pid) ? v - a.get(pid) : 0), 0);
const busy = () => {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  return f[0] + f[1] + f[2] + f[5] + f[6] + f[7];
};
const cpu = Object.fromEntries(kinds.map((k) => [k, []]));
const dbCpu = Object.fromEntries(kinds.map((k) => [k, []]));
const all = Object.fromEntries(kinds.map((k) => [k, []]));
const rps = Object.fromEntries(kinds.map((k) => [k, []]));
console.log(`${name} on ${PG ? 'Postgres' : 'SQLite'}: ${kinds.join(' vs ')}, ${PAIRS} pairs of ${SECONDS} s runs at ${CONNS} connections, each pair in random order`);
for (let i = 0; i < PAIRS; i++) {
  for (const kind of Math.random() < 0.5 ? kinds : [...kinds].reverse()) {
    const v = c.variants[kind];
    const srv = await startServer(v.server, target.url, { env: envOf(kind) });
    try {
      await loadOnce(srv.url, v, { seconds: WARMUP_SECONDS, connections: CONNS });
      const a = ticks(srv.child.pid);
      const pa = PG ? pgTicks() : null;
      const ba = busy();
      const r = await loadOnce(srv.url, v, { seconds: SECONDS, connections: CONNS });
      all[kind].push(((busy() - ba) * 10000) / (r.rps * SECONDS));
      if (PG) dbCpu[kind].push((pgDelta(pa, pgTicks()) * 10000) / (r.rps * SECONDS));
      if (r.non2xx || r.errors) console.warn(`  ${kind}: ${r.non2xx} not 2xx, ${r.errors} errors`);
      cpu[kind].push(((ticks(srv.child.pid) - a) * 10000) / (r.rps * SECONDS));
      rps[kind].push(r.rps);
    } finally {
      await srv.stop();
    }
  }
}
const [a, b] = kinds;
for (const k of kinds) console.log(`${k.padEnd(7)} server ${median(cpu[k]).toFixed(0)} µs/request (${cpu[k].map((x) => x.toFixed(0)).join(' ')}), ${PG ? `Postgres ${median(dbCpu[k]).toFixed(0)} µs, ` : ''}machine ${median(all[k]).toFixed(0)} µs, ${median(rps[k]).toFixed(0)} req/s`);
const diffs = cpu[b].map((x, i) => x - cpu[a][i]);
console.log(`${b} − ${a}: ${median(diffs).toFixed(0)} µs/request median (pairs: ${diffs.map((x) => x.toFixed(0)).join(' ')}); throughput ${b}/${a} ${(median(rps[b]) / median(rps[a])).toFixed(3)}`);
await target.close();
