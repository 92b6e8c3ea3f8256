// pnpm --filter @pmapi/bench profile -- CASE [--pg] [--raw] [--seconds N]: one case of the bench under a
// CPU profile of the pmapi server (node --cpu-prof), then the functions with the most self time and the
// pmapi/kysely/driver frames with the most total time. Where a case misses its target, this shows why.
// KEEP=1 keeps the .cpuprofile and prints its folder.
import { spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { caseList, openTarget, loadOnce, WARMUP_SECONDS } from './matrix.mjs';

const args = process.argv.slice(2).filter((a) => a !== '--');
const PG = args.includes('--pg');
const RAW = args.includes('--raw');
const name = args.find((a) => !a.startsWith('--')) ?? 'list50';
const secIdx = args.indexOf('--seconds');
const SECONDS = secIdx >= 0 ? Number(args[secIdx + 1]) : 6;

const target = await openTarget({ pg: PG, tasks: Number(process.env.BENCH_TASKS ?? 100_000) });
const c = caseList(target.seed).find((x) => x.name === name);
if (!c) throw new Error(`no case ${name}; cases: ${caseList(target.seed).map((x) => x.name).join(', ')}`);
const profDir = mkdtempSync(join(tmpdir(), 'pmapi-prof-'));
const file = PG ? target.url : join(profDir, 'db.sqlite');
if (!PG) copyFileSync(target.url, file);
const script = new URL(RAW ? (PG ? './server-raw-pg.mjs' : './server-raw.mjs') : './server-pmapi.mjs', import.meta.url).pathname;
const child = spawn(process.execPath, ['--cpu-prof', `--cpu-prof-dir=${profDir}`, script, file], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], env: { ...process.env, ...(process.env.BENCH_VARIANT === 'limiter' ? { BENCH_LIMITER: '1' } : {}) } });
const { port } = await new Promise((resolve) => child.once('message', resolve));
const base = `http://127.0.0.1:${port}`;
const variant = RAW ? c.variants.raw : process.env.BENCH_VARIANT ? c.variants[process.env.BENCH_VARIANT] : (c.variants.pmapi ?? c.variants.B);
await loadOnce(base, variant, { seconds: WARMUP_SECONDS, connections: 10 });
const r = await loadOnce(base, variant, { seconds: SECONDS, connections: 10 });
console.log(`${name}: ${r.rps.toFixed(0)} req/s under the profiler (${r.non2xx} not 2xx)`);
child.kill('SIGINT');
await new Promise((resolve) => child.once('exit', resolve));
const prof = JSON.parse(readFileSync(join(profDir, readdirSync(profDir).find((f) => f.endsWith('.cpuprofile'))), 'utf8'));
const byId = new Map(prof.nodes.map((n) => [n.id, n]));
const self = new Map();
for (let i = 0; i < prof.samples.length; i++) self.set(prof.samples[i], (self.get(prof.samples[i]) ?? 0) + (prof.timeDeltas[i] ?? 0));
const parent = new Map();
for (const n of prof.nodes) for (const ch of n.children ?? []) parent.set(ch, n.id);
const label = (n) => `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.replace(/^.*\/(node_modules\/\.pnpm\/[^/]+\/node_modules\/)?/, '')}:${n.callFrame.lineNumber + 1}`;
const selfBy = new Map();
const totalBy = new Map();
let all = 0;
for (const [id, t] of self) {
  all += t;
  const n = byId.get(id);
  selfBy.set(label(n), (selfBy.get(label(n)) ?? 0) + t);
  const seen = new Set();
  for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
    const l = label(byId.get(cur));
    if (seen.has(l)) continue;
    seen.add(l);
    totalBy.set(l, (totalBy.get(l) ?? 0) + t);
  }
}
const top = (m, k) => [...m].sort((a, b) => b[1] - a[1]).slice(0, k).map(([l, t]) => `${((t / all) * 100).toFixed(1).padStart(5)} %  ${l}`).join('\n');
console.log(`\nself time (top 30)\n${top(selfBy, 30)}`);
const ours = new Map([...totalBy].filter(([l]) => !/^\((root|program|idle|garbage collector)\)/.test(l) && !/ node:|^(processTicksAndRejections|runMicrotasks|emit|listOnTimeout|processTimers) /.test(l)));
console.log(`\ntotal time by function, self and callees (top 45)\n${top(ours, 45)}`);
if (!process.env.KEEP) rmSync(profDir, { recursive: true, force: true }); else console.log(profDir);
await target.close();
