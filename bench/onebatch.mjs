// node onebatch.mjs [--rounds N] [--connections C]: POST /tasks on Postgres, three servers interleaved (each round in
// another order, a fresh server per run, the matrix's warm-up): the raw baseline (server-raw-pg.mjs), the experiment
// that holds the project row's lock for one round trip (the same server with BENCH_RAW_CREATE=onebatch) and pmapi. Prints each one's
// req/s and its ratio to the baseline by round, then checks what the experiment stored: niceIds and orders distinct
// in the project, and every task.created event carrying its task's niceId and order.
import pg from 'pg';
const { caseList, openTarget, loadOnce, median, pinLoad, startServer, WARMUP_SECONDS } = await import('./matrix.mjs');

const args = process.argv.slice(2).filter((a) => a !== '--');
const opt = (name, dflt) => (args.includes(`--${name}`) ? Number(args[args.indexOf(`--${name}`) + 1]) : dflt);
const ROUNDS = opt('rounds', 3);
const CONNECTIONS = opt('connections', 10);
const SECONDS = 5;

pinLoad();
const target = await openTarget({ pg: true, tasks: Number(process.env.BENCH_TASKS ?? 20_000) });
const post = caseList(target.seed).find((x) => x.name === 'post').variants.raw;

// The experiment is the baseline's server with its create in one round trip (server-raw-pg.mjs, BENCH_RAW_CREATE).
const start = (kind) => (kind === 'onebatch' ? startServer('raw', target.url, { env: { BENCH_RAW_CREATE: 'onebatch' } }) : startServer(kind, target.url, {}));

const KINDS = ['raw', 'onebatch', 'pmapi'];
const got = Object.fromEntries(KINDS.map((k) => [k, []]));
for (let round = 0; round < ROUNDS; round++) {
  for (let i = 0; i < KINDS.length; i++) {
    const kind = KINDS[(i + round) % KINDS.length];
    const srv = await start(kind);
    try {
      await loadOnce(srv.url, post, { seconds: WARMUP_SECONDS, connections: CONNECTIONS });
      const r = await loadOnce(srv.url, post, { seconds: SECONDS, connections: CONNECTIONS });
      if (r.non2xx || r.errors) console.warn(`  ${kind}: ${r.non2xx} not 2xx, ${r.errors} errors`);
      got[kind].push(r.rps);
    } finally {
      await srv.stop();
    }
  }
}
const line = (k) => `${k.padEnd(9)} ${median(got[k]).toFixed(0).padStart(5)} req/s (${got[k].map((x) => x.toFixed(0)).join(' ')})` +
  (k === 'raw' ? '' : `, ratio to raw by round ${got[k].map((x, i) => (x / got.raw[i]).toFixed(2)).join(' ')}, median ${median(got[k].map((x, i) => x / got.raw[i])).toFixed(2)}`);
console.log(`POST /tasks on Postgres, ${CONNECTIONS} connections, ${ROUNDS} rounds of ${SECONDS} s`);
for (const k of KINDS) console.log(line(k));

const db = new pg.Client({ connectionString: target.url });
await db.connect();
const counts = (await db.query('select count(*)::int as n, count(distinct "order")::int as orders, count(distinct nice_id)::int as nice from tasks where project_id = $1', [target.seed.projectId])).rows[0];
console.log(`the project's tasks: ${counts.n}, distinct orders ${counts.orders}, distinct niceIds ${counts.nice}`);
// Every task.created event (the experiment's among them) against its task: niceId and order as stored.
const off = (await db.query(`select count(*)::int as n, count(*) filter (where o.body #>> '{payload,task,niceId}' is distinct from t.nice_id
  or (o.body #>> '{payload,task,order}')::float8 is distinct from t."order")::int as wrong
  from outbox o join tasks t on t.id = o.aggregate_id where o.type = 'task.created'`)).rows[0];
console.log(`task.created events: ${off.n}, with a niceId or order other than their task's: ${off.wrong}`);
await db.end();
await target.close();
