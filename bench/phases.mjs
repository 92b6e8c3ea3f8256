// node phases.mjs CASE [--pg] [VARIANT]: one server of one variant, loaded in consecutive 1 s runs at 10 connections, each run's
// throughput and server CPU per request: whether a variant's cost is steady or changes over its life.
const { caseList, cpuTicks, loadOnce, openTarget, pinLoad, startServer } = await import('./matrix.mjs');
const args = process.argv.slice(2).filter((a) => a !== '--');
const PG = args.includes('--pg');
const [name = 'get', kind = 'limiter'] = args.filter((a) => !a.startsWith('--'));
pinLoad();
const target = await openTarget({ pg: PG, tasks: Number(process.env.BENCH_TASKS ?? 20000) });
const v = caseList(target.seed).find((x) => x.name === name).variants[kind];
const srv = await startServer(v.server, target.url, {});
const line = [];
for (let k = 0; k < Number(process.env.RUNS ?? 12); k++) {
  const t = cpuTicks(srv.child.pid);
  const r = await loadOnce(srv.url, v, { seconds: 1, connections: 10 });
  const u = cpuTicks(srv.child.pid);
  line.push(`${r.rps.toFixed(0)}/${(((u.user + u.sys - t.user - t.sys) * 10000) / r.rps).toFixed(0)}`);
  if (process.env.PAUSE) await new Promise((res) => setTimeout(res, Number(process.env.PAUSE)));
}
console.log(`${kind}: req/s / µs CPU per request, 1 s each: ${line.join('  ')}`);
await srv.stop();
await target.close();
