// pnpm --filter @pmapi/bench amplification [-- --pg]
//
// Issue 9 item 1: the worst bodies we can construct (each within the 4 MiB body limit), sent to every
// write route of api.routes() (POST/PATCH/DELETE, {id} = a real record of that collection), against:
//   - no request uses more than 50 ms of server CPU
//   - no answer is larger than 64 KiB
//   - server RSS grows by less than 50 MiB over 20 of the worst requests (3 in flight at a time)
//   - a concurrent GET /api/v3/projects?limit=50 stays under 50 ms
// The server (server-amplification.mjs) runs in a child process on 127.0.0.1 and reports
// process.cpuUsage() over IPC before and after each request; the GET loop runs in a worker thread so
// building and sending bodies here does not delay it. Order: warm-up → RSS step and a full sweep with
// the GET loop running → a quiet full sweep (no GET loop) whose CPU figures are the ones held to the
// target (the loaded sweep's CPU includes the GETs served meanwhile; printed for reference).
// SQLite temp file by default; --pg: a fresh database on DATABASE_URL or
// postgres://postgres@127.0.0.1:5432/postgres, dropped afterwards. A benchmark, not a test: prints
// PASS/MISS per target and exits 0 either way. AMP_JSON=file also writes every measured request there.
import { fork } from 'node:child_process';
import http from 'node:http';
import { scratchDatabase } from './scratch.mjs';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';

const LIMIT = 4 * 1024 * 1024; // http-node's default body limit
const TARGET_CPU_MS = 50;
const TARGET_ANSWER_BYTES = 64 * 1024;
const TARGET_RSS_MIB = 50;
const TARGET_GET_MS = 50;
const RSS_REQUESTS = 20;
const RSS_PARALLEL = 3;

// ---------------------------------------------------------------------------
// The concurrent reader (worker thread): GET one after another until told to stop, latencies by phase.

async function getLoop() {
  const { url, token } = workerData;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const phases = new Map();
  let phase = 'idle';
  let stop = false;
  parentPort.on('message', (m) => {
    if (m.phase) phase = m.phase;
    if (m.stop) stop = true;
  });
  const get = () => new Promise((resolve, reject) => {
    const req = http.get(url, { agent, headers: { authorization: `Bearer ${token}` } }, (res) => {
      res.on('data', () => {});
      res.on('end', () => resolve(res.statusCode));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
  while (!stop) {
    const t0 = process.hrtime.bigint();
    let status;
    try {
      status = await get();
    } catch {
      status = 0;
    }
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    let p = phases.get(phase);
    if (!p) phases.set(phase, (p = { ms: [], bad: 0 }));
    p.ms.push(ms);
    if (status !== 200) p.bad++;
    // Let the phase/stop messages in between requests.
    await new Promise((r) => setImmediate(r));
  }
  agent.destroy();
  parentPort.postMessage(Object.fromEntries(phases));
}

// ---------------------------------------------------------------------------
// Bodies

/** The array field a route's body is about: its rule answers for the 1M-element array. */
const MAIN_FIELD = {
  'personal-access-tokens': 'scopes', roles: 'permissions', webhooks: 'events', projects: 'members', portfolios: 'members',
  tasks: 'assignees', lists: 'assignees', statuses: 'assignees',
};
function mainField(route) {
  const segs = route.path.split('/').filter(Boolean);
  if (segs.length === 3 && !['restore', 'rotate-secret', 'test'].includes(segs[2])) return 'ids'; // sub-resource body {"ids": [...]}
  return MAIN_FIELD[segs[0]] ?? 'ids';
}

const b = (s) => Buffer.from(s, 'utf8');
/** `unit` repeated as many times as fits between head and tail within the limit, joined by `sep`. */
function fill(head, unit, sep, tail, max = LIMIT) {
  const n = Math.floor((max - head.length - tail.length + sep.length) / (unit.length + sep.length));
  return { text: head + Array(n).fill(unit).join(sep) + tail, n };
}
/** Arrays of `per` zeros (under the 1000-item cap), `count` of them, in the field's array. */
function spread(field, count, per) {
  const inner = `[${Array(per).fill('0').join(',')}]`;
  return `{"${field}":[${Array(count).fill(inner).join(',')}]}`;
}
function nested(depth) {
  return '['.repeat(depth) + ']'.repeat(depth);
}

const KINDS = [
  { kind: 'array-1M', what: '~1M short invalid strings in the main array field', body: (f) => b(fill(`{"${f}":[`, '"!"', ',', ']}').text) },
  { kind: 'array-999', what: '999 invalid strings in the main array field (just under the array cap)', body: (f) => b(`{"${f}":[${Array(999).fill('"!"').join(',')}]}`) },
  { kind: 'ids-1M', what: '{"ids": [~1M items]}', body: () => b(fill('{"ids":[', '"!"', ',', ']}').text) },
  {
    kind: 'keys-350k', what: 'an object of 350k unknown keys', body: () => {
      const parts = [];
      for (let i = 0; i < 350_000; i++) parts.push(`"${i.toString(36)}":0`);
      return b(`{${parts.join(',')}}`);
    },
  },
  { kind: 'nest-2M', what: 'brackets nested 2,000,000 deep', body: () => b(nested(2_000_000)) },
  { kind: 'depth-32', what: '~4 MiB of {"a":[[[…]]],…} nested to exactly the depth cap (32)', body: () => b(fill('{"a":[', nested(30), ',', ']}').text) },
  {
    kind: 'depth-33', what: 'the same, the last item one level too deep', body: () => {
      const last = nested(31);
      return b(fill('{"a":[', nested(30), ',', `,${last}]}`).text);
    },
  },
  { kind: 'values-99k', what: '99 arrays × 999 values in the main field (under every cap)', body: (f) => b(spread(f, 99, 999)) },
  { kind: 'values-200k', what: '201 arrays × 999 values in the main field (over the 100k-values cap)', body: (f) => b(spread(f, 201, 999)) },
  { kind: 'surrogates-4M', what: 'a ~4 MiB string of \\ud800 escapes in name', body: () => b(fill('{"name":"', '\\ud800', '', '"}').text) },
  { kind: 'key-4M', what: 'one 4 MiB key', body: () => b(`{"${'k'.repeat(LIMIT - 8)}":1}`) },
  { kind: 'string-4M', what: 'a 4 MiB valid string in name', body: () => b(`{"name":"${'a'.repeat(LIMIT - 11)}"}`) },
  { kind: 'utf8-ff-4M', what: '4 MiB of 0xFF bytes (invalid UTF-8)', body: () => Buffer.alloc(LIMIT, 0xff) },
  {
    kind: 'utf8-tail-4M', what: '~4 MiB of valid 2-byte UTF-8 in name, one invalid byte at the end', body: () => {
      const head = b('{"name":"');
      const tail = Buffer.from([0xc3, 0x28, 0x22, 0x7d]); // an invalid 2-byte sequence, then "}
      const mid = Buffer.from('é'.repeat(Math.floor((LIMIT - head.length - tail.length) / 2)), 'utf8');
      return Buffer.concat([head, mid, tail]);
    },
  },
];
const bodyCache = new Map();
function bodyOf(k, field) {
  const key = `${k.kind}\0${k.body.length ? field : ''}`;
  let buf = bodyCache.get(key);
  if (!buf) {
    buf = k.body(field);
    if (buf.length > LIMIT) throw new Error(`${k.kind} is ${buf.length} bytes, over the ${LIMIT} limit`);
    bodyCache.set(key, buf);
  }
  return buf;
}

// ---------------------------------------------------------------------------
// The parent

function stats(ms) {
  const s = [...ms].sort((x, y) => x - y);
  const at = (q) => (s.length ? s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)] : NaN);
  return { n: s.length, max: s.length ? s[s.length - 1] : NaN, p99: at(0.99), p50: at(0.5) };
}
const mib = (bytes) => bytes / (1024 * 1024);
const fmtBytes = (n) => (n >= 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${n} B`);

async function main() {
  const PG = process.argv.includes('--pg');
  const started = Date.now();
  const { url: target, drop: dropDb } = await scratchDatabase('amplification', { pg: PG });

  const child = fork(new URL('./server-amplification.mjs', import.meta.url), [target], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const ready = await new Promise((resolve, reject) => {
    child.once('message', resolve);
    child.once('exit', (code) => reject(new Error(`server exited (${code}) before it was ready`)));
  });
  const { port, token } = ready;
  let ids = ready.ids;
  const base = `http://127.0.0.1:${port}/api/v3`;

  // IPC request/answer with the child.
  let seq = 0;
  const waiting = new Map();
  child.on('message', (m) => {
    const w = waiting.get(m.seq);
    if (w) {
      waiting.delete(m.seq);
      w(m);
    }
  });
  const ask = (type) => new Promise((resolve) => {
    const s = ++seq;
    waiting.set(s, resolve);
    child.send({ type, seq: s });
  });

  const agent = new http.Agent({ keepAlive: true, maxSockets: RSS_PARALLEL });
  function send(method, path, body) {
    return new Promise((resolve, reject) => {
      const req = http.request(`${base}${path}`, {
        method, agent,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': body.length },
      }, (res) => {
        let bytes = 0;
        let head = '';
        res.on('data', (c) => {
          bytes += c.length;
          if (head.length < 400) head += c.toString('utf8', 0, 400);
        });
        res.on('end', () => resolve({ status: res.statusCode, bytes, head: head.slice(0, 400) }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(body);
    });
  }

  const writeRoutes = ready.routes.filter((r) => r.method !== 'GET');
  const pathOf = (route) => {
    const coll = route.path.split('/').filter(Boolean)[0];
    return route.path.replace('{id}', () => {
      if (!ids[coll]) throw new Error(`no fixture id for ${coll}`);
      return ids[coll];
    });
  };
  const deletesRecord = (route) => route.method === 'DELETE' && route.path.split('/').filter(Boolean).length === 2;

  /** One request, alone, between two CPU readings of the server. */
  async function measured(k, route) {
    const body = bodyOf(k, mainField(route));
    const path = pathOf(route);
    const before = await ask('cpu');
    const t0 = process.hrtime.bigint();
    const r = await send(route.method, path, body);
    const wallMs = Number(process.hrtime.bigint() - t0) / 1e6;
    const after = await ask('cpu');
    const cpuMs = (after.user + after.system - before.user - before.system) / 1000;
    if (deletesRecord(route)) {
      const f = await ask('fixtures');
      if (f.error) throw new Error(f.error);
      ids = f.ids;
    }
    return { kind: k.kind, route: `${route.method} ${route.path}`, sent: body.length, status: r.status, bytes: r.bytes, cpuMs, wallMs, gcMs: after.gcMs - before.gcMs, head: r.head, gets: after.served - before.served - 1 };
  }

  async function sweep() {
    const out = [];
    for (const k of KINDS) for (const route of writeRoutes) out.push(await measured(k, route));
    return out;
  }

  console.log(`pmapi amplification bench: ${PG ? 'Postgres' : 'SQLite (temp file)'}, ${writeRoutes.length} write routes × ${KINDS.length} body kinds, body limit ${LIMIT} bytes`);
  process.stdout.write('building bodies… ');
  for (const k of KINDS) for (const route of writeRoutes) bodyOf(k, mainField(route));
  console.log(`${bodyCache.size} bodies, ${mib([...bodyCache.values()].reduce((s, x) => s + x.length, 0)).toFixed(0)} MiB`);

  // Warm-up: every kind once to POST /projects, a few GETs.
  const postProjects = writeRoutes.find((r) => r.method === 'POST' && r.path === '/projects');
  for (const k of KINDS) await measured(k, postProjects);
  for (let i = 0; i < 50; i++) await new Promise((resolve, reject) => http.get(`${base}/projects?limit=50`, { agent, headers: { authorization: `Bearer ${token}` } }, (res) => res.resume().on('end', resolve)).on('error', reject));

  // The reader starts.
  const worker = new Worker(new URL(import.meta.url), { workerData: { url: `${base}/projects?limit=50`, token } });
  const phase = (p) => worker.postMessage({ phase: p });
  const gets = new Promise((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  phase('idle');
  await new Promise((r) => setTimeout(r, 1000));

  // RSS: 20 of the worst requests, 3 in flight at a time; nothing forces a GC.
  process.stdout.write('RSS step… ');
  phase('rss');
  const rss0 = await ask('cpu');
  const patRoute = writeRoutes.find((r) => r.method === 'POST' && r.path === '/personal-access-tokens');
  const worst = [bodyOf(KINDS.find((k) => k.kind === 'array-1M'), 'scopes'), bodyOf(KINDS.find((k) => k.kind === 'keys-350k'), 'scopes')];
  const rssStatuses = new Map();
  for (let i = 0; i < RSS_REQUESTS; i += RSS_PARALLEL) {
    const wave = [];
    for (let j = i; j < Math.min(RSS_REQUESTS, i + RSS_PARALLEL); j++) wave.push(send('POST', pathOf(patRoute), worst[j % 2]));
    for (const r of await Promise.all(wave)) rssStatuses.set(r.status, (rssStatuses.get(r.status) ?? 0) + 1);
  }
  const rss1 = await ask('cpu');
  console.log(`${mib(rss0.rss).toFixed(1)} → ${mib(rss1.rss).toFixed(1)} MiB`);

  process.stdout.write('sweep with the GET loop running… ');
  phase('sweep');
  let t = Date.now();
  const loaded = await sweep();
  console.log(`${loaded.length} requests, ${((Date.now() - t) / 1000).toFixed(1)} s`);
  worker.postMessage({ stop: true });
  const getPhases = await gets;
  await worker.terminate();

  process.stdout.write('quiet sweep… ');
  t = Date.now();
  const quiet = await sweep();
  console.log(`${quiet.length} requests, ${((Date.now() - t) / 1000).toFixed(1)} s`);
  const end = await ask('cpu');

  // ---- Report
  const all = [...quiet, ...loaded];
  const top = (rows, key) => rows.reduce((a, r) => (r[key] > a[key] ? r : a));
  const cpuWorst = top(quiet, 'cpuMs');
  const cpuWorstLoaded = top(loaded, 'cpuMs');
  const bytesWorst = top(all, 'bytes');
  const fails = all.filter((r) => r.status >= 500);
  const growth = mib(rss1.rss - rss0.rss);
  const underLoad = [...(getPhases.rss?.ms ?? []), ...(getPhases.sweep?.ms ?? [])];
  const g = stats(underLoad);
  const gIdle = stats(getPhases.idle?.ms ?? []);
  const badGets = (getPhases.rss?.bad ?? 0) + (getPhases.sweep?.bad ?? 0);
  const mark = (ok) => (ok ? 'PASS' : 'MISS');

  console.log(`\n${PG ? 'Postgres' : 'SQLite'}: ${writeRoutes.length} write routes × ${KINDS.length} kinds, ${all.length} measured requests, ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
  const rows = [
    [`server CPU per request ≤ ${TARGET_CPU_MS} ms`, `${cpuWorst.cpuMs.toFixed(1)} ms  ${cpuWorst.kind} → ${cpuWorst.route}`, mark(cpuWorst.cpuMs <= TARGET_CPU_MS)],
    [`  (same, requests over ${TARGET_CPU_MS} ms)`, `${quiet.filter((r) => r.cpuMs > TARGET_CPU_MS).length} of ${quiet.length}; quiet-sweep CPU p99 ${stats(quiet.map((r) => r.cpuMs)).p99.toFixed(1)} ms; the worst spent ${cpuWorst.gcMs.toFixed(1)} ms in atomic GC pauses`, ''],
    [`answer size ≤ 64 KiB`, `${fmtBytes(bytesWorst.bytes)}  ${bytesWorst.kind} → ${bytesWorst.route}`, mark(bytesWorst.bytes <= TARGET_ANSWER_BYTES)],
    [`RSS growth, ${RSS_REQUESTS} worst × ${RSS_PARALLEL} ∥ < ${TARGET_RSS_MIB} MiB`, `${growth.toFixed(1)} MiB  (${mib(rss0.rss).toFixed(0)} → ${mib(rss1.rss).toFixed(0)} MiB; statuses ${[...rssStatuses].map(([s, c]) => `${s}×${c}`).join(' ')})`, mark(growth < TARGET_RSS_MIB)],
    [`concurrent GET latency < ${TARGET_GET_MS} ms`, `max ${g.max.toFixed(1)} ms, p99 ${g.p99.toFixed(1)} ms, p50 ${g.p50.toFixed(1)} ms (n=${g.n}${badGets ? `, ${badGets} non-200` : ''}; max during the RSS step ${stats(getPhases.rss?.ms ?? []).max.toFixed(1)}, during the sweep ${stats(getPhases.sweep?.ms ?? []).max.toFixed(1)}; alone: max ${gIdle.max.toFixed(1)}, p99 ${gIdle.p99.toFixed(1)} ms)`, mark(g.max < TARGET_GET_MS && badGets === 0)],
    [`no answer ≥ 500`, fails.length ? `${fails.length} of ${all.length}: ${[...new Set(fails.map((r) => `${r.status} ${r.kind} → ${r.route}`))].slice(0, 5).join('; ')}` : `0 of ${all.length}`, mark(fails.length === 0)],
  ];
  const w0 = Math.max(...rows.map((r) => r[0].length));
  console.log(`${'target'.padEnd(w0)}  result  measured`);
  for (const [a, m, r] of rows) console.log(`${a.padEnd(w0)}  ${r.padEnd(6)}  ${m}`);
  console.log(`(CPU target held to the quiet sweep; the sweep under the GET loop peaked at ${cpuWorstLoaded.cpuMs.toFixed(1)} ms, ${cpuWorstLoaded.kind} → ${cpuWorstLoaded.route}, incl. ${cpuWorstLoaded.gets} GETs served meanwhile.)`);
  console.log(`server RSS: start of the RSS step ${mib(rss0.rss).toFixed(0)} MiB, end of the run ${mib(end.rss).toFixed(0)} MiB, peak ${mib(end.maxRss).toFixed(0)} MiB`);

  console.log('\nper body kind: CPU and answer size over every write route in the quiet sweep, statuses over both sweeps (! = over target)');
  const kw = Math.max(...KINDS.map((k) => k.kind.length));
  console.log(`${'kind'.padEnd(kw)}  ${'sent'.padStart(10)}  ${'CPU max'.padStart(8)}  ${'CPU p50'.padStart(7)}  ${'answer max'.padStart(10)}  ${'statuses'.padEnd(24)}  worst-CPU route`);
  const flag = (ok) => (ok ? ' ' : '!');
  for (const k of KINDS) {
    const rs = quiet.filter((r) => r.kind === k.kind);
    const c = top(rs, 'cpuMs');
    const by = top(rs, 'bytes');
    const st = new Map();
    for (const r of all) if (r.kind === k.kind) st.set(r.status, (st.get(r.status) ?? 0) + 1);
    const statuses = [...st].sort((x, y) => x[0] - y[0]).map(([s, n]) => `${s}×${n}`).join(' ');
    const sent = Math.max(...rs.map((r) => r.sent));
    const p50 = stats(rs.map((r) => r.cpuMs)).p50;
    console.log(`${k.kind.padEnd(kw)}  ${fmtBytes(sent).padStart(10)}  ${c.cpuMs.toFixed(1).padStart(7)}${flag(c.cpuMs <= TARGET_CPU_MS)}  ${p50.toFixed(1).padStart(7)}  ${fmtBytes(by.bytes).padStart(9)}${flag(by.bytes <= TARGET_ANSWER_BYTES)}  ${statuses.padEnd(24)}  ${c.route}`);
  }
  if (fails.length) {
    console.log('\nanswers ≥ 500 (first of each kind and route):');
    const seen = new Set();
    for (const r of fails) {
      const key = `${r.kind} ${r.route}`;
      if (seen.has(key)) continue;
      seen.add(key);
      console.log(`  ${r.status} ${key}: ${r.head.slice(0, 200)}`);
    }
  }
  const overBytes = all.filter((r) => r.bytes > TARGET_ANSWER_BYTES);
  if (overBytes.length) {
    console.log(`\nanswers over 64 KiB (${overBytes.length}):`);
    const seen = new Set();
    for (const r of overBytes) {
      const key = `${r.kind} ${r.route}`;
      if (seen.has(key)) continue;
      seen.add(key);
      console.log(`  ${fmtBytes(r.bytes)} ${r.status} ${key}: ${r.head.slice(0, 160)}`);
    }
  }
  const overCpu = quiet.filter((r) => r.cpuMs > TARGET_CPU_MS).sort((x, y) => y.cpuMs - x.cpuMs);
  if (overCpu.length) {
    console.log(`\nrequests over ${TARGET_CPU_MS} ms CPU in the quiet sweep (${overCpu.length}; worst 15):`);
    for (const r of overCpu.slice(0, 15)) console.log(`  ${r.cpuMs.toFixed(1).padStart(7)} ms (atomic GC pauses ${r.gcMs.toFixed(1)} ms, wall ${r.wallMs.toFixed(0)} ms)  ${String(r.status).padEnd(3)} ${r.kind} → ${r.route}`);
  }

  // AMP_JSON=file: every measured request and the GET latencies, for a closer look.
  if (process.env.AMP_JSON) {
    const { writeFileSync } = await import('node:fs');
    writeFileSync(process.env.AMP_JSON, JSON.stringify({ store: PG ? 'postgres' : 'sqlite', quiet, loaded, gets: getPhases, rss: { before: rss0, after: rss1, end } }));
  }

  agent.destroy();
  child.kill();
  await new Promise((r) => child.once('exit', r));
  await dropDb();
}

// Last, so every declaration above is initialised.
if (isMainThread) await main();
else await getLoop();
