// pnpm bench [-- --pg] [--runs N] [--seconds S] [--connections 10,50] [--cases list50,post] [--soak] [--baseline minimal]
//
// The performance matrix of issue 11: pmapi beside raw node:http handlers (better-sqlite3 on SQLite,
// pg on Postgres) doing the same statements' work and answering the same JSON (checked before any
// run: a raw handler that skipped the link rows or the API's field shapes would measure less work),
// on 100k tasks. Each run is a fresh server pinned
// to core 0 (taskset), the load from this process pinned to core 1, a warm-up of WARMUP_SECONDS (matrix.mjs, 4 s), then the measured
// seconds; the variants of a case alternate, each run in another order (A B C, B C A, C A B, …: no variant always
// runs first, so a drift of the machine within a round does not favour one), at least 3 runs each, at each number of
// connections. It prints medians with min–max and each comparison beside its target: the median of the rounds'
// ratios (a round runs each variant once, back to back), so the machine's drift between rounds cancels out. `--soak` adds 5
// minutes of mixed load at 16 connections, sampling the server's RSS. A benchmark: it gates nothing.
// --baseline minimal: the first raw handlers (server-raw-minimal.mjs), which answer less than pmapi; set before matrix.mjs loads.
if (process.argv.includes('minimal') && process.argv.includes('--baseline')) process.env.BENCH_BASELINE = 'minimal';
const { PINNED, caseList, checkSameAnswers, loadOnce, WARMUP_SECONDS, median, openTarget, pinLoad, startServer } = await import('./matrix.mjs');
import { join } from 'node:path';

const argv = process.argv.slice(2).filter((a) => a !== '--');
const opt = (name, dflt) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : dflt;
};
const PG = argv.includes('--pg');
const RUNS = Math.max(3, Number(opt('runs', process.env.BENCH_RUNS ?? 3)));
const SECONDS = Number(opt('seconds', process.env.BENCH_SECONDS ?? 5));
const CONNECTIONS = String(opt('connections', '10,50')).split(',').map(Number);
const ONLY = opt('cases', '') ? new Set(opt('cases', '').split(',')) : null;
const SOAK = argv.includes('--soak');
const SOAK_MINUTES = Number(opt('soak-minutes', 5));
const store = PG ? 'pg' : 'sqlite';

pinLoad();
const target = await openTarget({ pg: PG, tasks: Number(process.env.BENCH_TASKS ?? 100_000) });
const s = target.seed;
const runFile = join(target.url, '..', 'run.db');
if (process.env.BENCH_BASELINE === 'minimal') {
  console.log('baseline: the minimal raw handlers (no link rows, columns as stored): not the same JSON as pmapi');
} else {
  await checkSameAnswers(target);
  console.log('the raw handler and pmapi answer GET /tasks/{id} and both pages with the same JSON');
}

async function measure(variant, connections) {
  const server = await startServer(variant.server, PG ? target.url : runFile, PG ? {} : { copyFrom: target.url });
  try {
    await loadOnce(server.url, variant, { seconds: WARMUP_SECONDS, connections });
    return await loadOnce(server.url, variant, { seconds: SECONDS, connections });
  } finally {
    await server.stop();
  }
}

const fmt = (n, d = 0) => n.toFixed(d);
const results = [];
for (const c of caseList(s)) {
  if (ONLY && !ONLY.has(c.name)) continue;
  for (const connections of CONNECTIONS) {
    const got = Object.fromEntries(Object.keys(c.variants).map((k) => [k, []]));
    for (let run = 0; run < RUNS; run++) {
      const variants = Object.entries(c.variants);
      for (let i = 0; i < variants.length; i++) {
        const [k, v] = variants[(i + run) % variants.length];
        const r = await measure(v, connections);
        if (r.non2xx || r.errors) console.warn(`  ${c.name} ${k} c=${connections}: ${r.non2xx} non-2xx, ${r.errors} errors`);
        got[k].push(r);
      }
    }
    const stat = (k) => {
      const rps = got[k].map((r) => r.rps);
      return { med: median(rps), min: Math.min(...rps), max: Math.max(...rps), p99: median(got[k].map((r) => r.p99)) };
    };
    // Each round's ratio (its runs were close in time): the machine's drift between rounds cancels out of it.
    const rounds = (num, den) => {
      const xs = got[num].map((r, i) => r.rps / got[den][i].rps);
      return { med: median(xs), min: Math.min(...xs), max: Math.max(...xs), all: xs };
    };
    const ratios = c.compare === 'raw' ? { ratio: rounds('pmapi', 'raw'), limiter: rounds('pmapi', 'limiter') } : { ratio: rounds('A', 'B') };
    const row = { c, connections, ratios, stats: Object.fromEntries(Object.keys(got).map((k) => [k, stat(k)])) };
    const line = Object.entries(row.stats).map(([k, v]) => `${k} ${fmt(v.med)} (${fmt(v.min)}–${fmt(v.max)}) p99 ${v.p99} ms`).join(' | ');
    const each = Object.entries(ratios).map(([k, v]) => `${k} by round ${v.all.map((x) => fmt(x, 2)).join(' ')}`).join('; ');
    console.log(`${c.name} c=${connections}: ${line}; ${each}`);
    results.push(row);
  }
}

let soak;
if (SOAK) {
  console.log(`soak: ${SOAK_MINUTES} min of mixed load at 16 connections…`);
  const server = await startServer('pmapi', PG ? target.url : runFile, PG ? {} : { copyFrom: target.url });
  // Every connection cycles through one request of each case (the PATCH keeps its per-connection stamps).
  const variants = caseList(s).filter((c) => ['list50', 'get', 'expand', 'post', 'patch', 'deep'].includes(c.name)).map((c) => c.variants.pmapi ?? c.variants.B);
  const requests = variants.flatMap((v) => v.req.requests ?? [{ method: v.req.method, path: v.req.path, headers: v.req.headers, body: v.req.body }]);
  const mixed = { req: { headers: variants[0].req.headers, requests, prepare: async (url) => { for (const v of variants) await v.req.prepare?.(url); } } };
  const samples = [];
  const t0 = Date.now();
  const sampler = setInterval(async () => {
    const m = await server.rss();
    samples.push({ t: (Date.now() - t0) / 60_000, rss: m.rss, heap: m.heap });
    if (process.env.BENCH_VERBOSE) console.log(`  ${samples.at(-1).t.toFixed(2)} min: rss ${(m.rss / 2 ** 20).toFixed(1)} MiB, heap ${(m.heap / 2 ** 20).toFixed(1)} MiB, external ${(m.external / 2 ** 20).toFixed(1)} MiB`);
  }, 5_000);
  const r = await loadOnce(server.url, mixed, { seconds: SOAK_MINUTES * 60, connections: 16 });
  clearInterval(sampler);
  await server.stop();
  // Minute 1 and the last minute, each as the median of its samples (one every 5 s).
  const within = (a, b) => median(samples.filter((x) => x.t >= a && x.t < b).map((x) => x.rss));
  const heapWithin = (a, b) => median(samples.filter((x) => x.t >= a && x.t < b).map((x) => x.heap));
  soak = { m1: within(0.5, 1.5), end: within(SOAK_MINUTES - 1, SOAK_MINUTES + 1), peak: Math.max(...samples.map((x) => x.rss)), heap1: heapWithin(0.5, 1.5), heapEnd: heapWithin(SOAK_MINUTES - 1, SOAK_MINUTES + 1), rps: r.rps, non2xx: r.non2xx };
}

const MB = (b) => `${(b / 2 ** 20).toFixed(1)} MiB`;
console.log(`\n${PG ? 'Postgres' : 'SQLite'}: ${s.taskIds.length.toLocaleString('en')} tasks; ${RUNS} runs × ${SECONDS} s per variant after a ${WARMUP_SECONDS} s warm-up, interleaved; ${PINNED ? 'server on core 0, load on core 1' : 'NOT pinned (no taskset)'}`);
console.log('req/s are medians (min–max) of the runs. A ratio is the median (min–max) of the rounds\' ratios: each round runs every variant of a case once, one after another, so a drift of the machine between rounds cancels out of it.\n');
console.log(`| case | conns | pmapi req/s | raw req/s | pmapi/raw | target | limiter on req/s | on vs off | target |`);
console.log(`|---|---|---|---|---|---|---|---|---|`);
const mark = (ok) => (ok ? '✓' : '✗ MISS');
for (const { c, connections, stats, ratios } of results) {
  const t = c.target[store];
  const span = (v) => `${fmt(v.med)} (${fmt(v.min)}–${fmt(v.max)})`;
  const times = (v) => `${fmt(v.med, 2)}× (${fmt(v.min, 2)}–${fmt(v.max, 2)})`;
  const ratio = ratios.ratio.med;
  if (c.compare === 'raw') {
    // The limiter's cost: throughput without it over with it, less 1 (the median round's, with the rounds' spread).
    const pct = (x) => fmt((x - 1) * 100, 1);
    const lim = ratios.limiter;
    console.log(`| ${c.label} | ${connections} | ${span(stats.pmapi)} | ${span(stats.raw)} | ${times(ratios.ratio)} | ≥ ${t}× ${mark(ratio >= t)} | ${span(stats.limiter)} | ${pct(lim.med)} % slower (${pct(lim.min)}–${pct(lim.max)}) | ≤ 10 % ${mark(lim.med <= 1.1)} |`);
  } else {
    console.log(`| ${c.label} | ${connections} | A ${span(stats.A)}, B ${span(stats.B)} | | time B/A ${times(ratios.ratio)} | ≤ ${t}× ${mark(ratio <= t)} | | | |`);
  }
}
if (soak) {
  const growth = soak.end / soak.m1 - 1;
  console.log(`| RSS after ${SOAK_MINUTES} min mixed load (minute ${SOAK_MINUTES} vs minute 1), 16 conns | | minute 1: ${MB(soak.m1)}, minute ${SOAK_MINUTES}: ${MB(soak.end)} (medians of the minute; peak ${MB(soak.peak)}; JS heap ${MB(soak.heap1)} → ${MB(soak.heapEnd)}; ${fmt(soak.rps)} req/s, ${soak.non2xx} not 2xx) | | ${fmt(growth * 100, 1)} % | ≤ 10 % ${mark(growth <= 0.1)} | | | |`);
} else {
  console.log('| RSS after 5 min mixed load | | not run (add --soak) | | | | | | |');
}
await target.close();
