// node syscalls.mjs CASE [--pg] [--seconds S]: each variant of one case (raw, pmapi, pmapi with the database
// limiter) once at 10 connections, printing the server's read and write system calls per request (its
// /proc/PID/io syscr and syscw) beside its CPU per request. On a VM a socket write that wakes another process
// costs tens of microseconds, so the number of writes per request is a cost of its own.
import { readFileSync } from 'node:fs';
const { caseList, cpuTicks, loadOnce, WARMUP_SECONDS, openTarget, pinLoad, startServer } = await import('./matrix.mjs');

const args = process.argv.slice(2).filter((a) => a !== '--');
const PG = args.includes('--pg');
const i = args.indexOf('--seconds');
const SECONDS = i >= 0 ? Number(args[i + 1]) : 3;
const name = args.find((a, k) => !a.startsWith('--') && args[k - 1] !== '--seconds') ?? 'get';
pinLoad();
const target = await openTarget({ pg: PG, tasks: Number(process.env.BENCH_TASKS ?? 20000) });
const c = caseList(target.seed).find((x) => x.name === name);
if (!c) throw new Error(`no case ${name}`);
const io = (pid) => Object.fromEntries(readFileSync(`/proc/${pid}/io`, 'utf8').trim().split('\n').map((l) => l.split(': ')).map(([k, v]) => [k, Number(v)]));
for (const [kind, v] of Object.entries(c.variants)) {
  const srv = await startServer(v.server, target.url, {});
  try {
    await loadOnce(srv.url, v, { seconds: WARMUP_SECONDS, connections: 10 });
    const a = io(srv.child.pid);
    const t = cpuTicks(srv.child.pid);
    const r = await loadOnce(srv.url, v, { seconds: SECONDS, connections: 10 });
    const b = io(srv.child.pid);
    const u = cpuTicks(srv.child.pid);
    const n = r.rps * SECONDS;
    console.log(`${kind.padEnd(8)} ${r.rps.toFixed(0).padStart(6)} req/s  reads ${((b.syscr - a.syscr) / n).toFixed(2)}  writes ${((b.syscw - a.syscw) / n).toFixed(2)} per request  CPU ${(((u.user + u.sys - t.user - t.sys) * 10000) / n).toFixed(0)} µs/request (user ${(((u.user - t.user) * 10000) / n).toFixed(0)}, system ${(((u.sys - t.sys) * 10000) / n).toFixed(0)})`);
  } finally {
    await srv.stop();
  }
}
await target.close();
