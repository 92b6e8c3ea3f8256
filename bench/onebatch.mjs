// node onebatch.mjs [--rounds N] [--connections C]: POST /tasks on Postgres, three servers interleaved (each round in
// another order, a fresh server per run, the matrix's warm-up): the raw baseline (server-raw-pg.mjs), the experiment
// that holds the project row's lock for one round trip (server-raw-pg-onebatch.mjs) and pmapi. Prints each one's
// req/s and its ratio to the baseline by round, then checks what the experiment stored: niceIds and orders distinct
// in the project, and the last task.created event carrying the task's niceId and order.
import { spawn } from 'node:child_process';
import pg from 'pg';
const { caseList, openTarget, loadOnce, median, pinLoad, startServer, PINNED, WARMUP_SECONDS } = await import('./matrix.mjs');

const args = process.argv.slice(2).filter((a) => a !== '--');
const opt = (name, dflt) => (args.includes(`--${name}`) ? Number(args[args.indexOf(`--${name}`) + 1]) : dflt);
const ROUNDS = opt('rounds', 3);
const CONNECTIONS = opt('connections', 10);
const SECONDS = 5;

pinLoad();
const target = await openTarget({ pg: true, tasks: Number(process.env.BENCH_TASKS ?? 20_000) });
const post = caseList(target.seed).find((x) => x.name === 'post').variants.raw;

async function start(kind) {
  if (kind !== 'onebatch') return startServer(kind, target.url, {});
  const argv = [process.execPath, new URL('./server-raw-pg-onebatch.mjs', import.meta.url).pathname, target.url];
  const child = PINNED ? spawn('taskset', ['-c', '0', ...argv], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }) : spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const { port } = await new Promise((resolve) => child.once('message', resolve));
  return { url: `http://127.0.0.1:${port}`, stop: async () => { child.kill('SIGINT'); await new Promise((resolve) => child.once('exit', resolve)); } };
}

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
const last = (await db.query(`select o.body #>> '{payload,task,niceId}' as nice, o.body #>> '{payload,task,order}' as ord, t.nice_id, t."order"::text as "order"
  from outbox o join tasks t on t.id = o.aggregate_id where o.type = 'task.created' order by o.created_at desc limit 1`)).rows[0];
console.log(`the last task.created event: niceId ${last.nice} order ${last.ord}; the task: niceId ${last.nice_id} order ${last.order}`);
await db.end();
await target.close();
