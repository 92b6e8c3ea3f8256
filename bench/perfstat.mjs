// node perfstat.mjs CASE [--pg] [--seconds S]: perf stat of the server process for each variant of one case
// (raw, pmapi, limiter; two rounds) under the same load: CPU time, context switches, page faults per request, and
// cycles, instructions and cache misses where the machine counts them (a VM often does not: those are left out).
import { spawn } from 'node:child_process';
const { caseList, loadOnce, WARMUP_SECONDS, openTarget, pinLoad, startServer } = await import('./matrix.mjs');
const args = process.argv.slice(2).filter((a) => a !== '--');
const PG = args.includes('--pg');
const i = args.indexOf('--seconds');
const SECONDS = i >= 0 ? Number(args[i + 1]) : 4;
const name = args.find((a, k) => !a.startsWith('--') && args[k - 1] !== '--seconds') ?? 'get';
pinLoad();
const target = await openTarget({ pg: PG, tasks: Number(process.env.BENCH_TASKS ?? 20000) });
const c = caseList(target.seed).find((x) => x.name === name);
const events = 'task-clock,cycles,instructions,context-switches,cpu-migrations,page-faults,cache-misses';
for (const [kind, v] of [...Object.entries(c.variants), ...Object.entries(c.variants)]) {
  const srv = await startServer(v.server, target.url, {});
  try {
    await loadOnce(srv.url, v, { seconds: WARMUP_SECONDS, connections: 10 });
    const perf = spawn('perf', ['stat', '-x', ',', '-e', events, '-p', String(srv.child.pid)], { stdio: ['ignore', 'ignore', 'pipe'] });
    let out = '';
    perf.stderr.on('data', (d) => (out += d));
    await new Promise((r) => setTimeout(r, 100));
    const r = await loadOnce(srv.url, v, { seconds: SECONDS, connections: 10 });
    perf.kill('SIGINT');
    await new Promise((r) => perf.once('exit', r));
    const n = r.rps * SECONDS;
    const f = Object.fromEntries(out.trim().split('\n').map((l) => l.split(',')).filter((p) => p.length > 2 && Number.isFinite(Number(p[0]))).map((p) => [p[2], Number(p[0])]));
    console.log(`${kind.padEnd(8)} ${r.rps.toFixed(0).padStart(6)} req/s ` + Object.entries(f).map(([k, x]) => `${k} ${(k === 'task-clock' ? (x * 1000) / n : x / n).toFixed(k === 'task-clock' || k === 'cycles' || k === 'instructions' ? 0 : 3)}`).join('  '));
  } finally {
    await srv.stop();
  }
}
await target.close();
