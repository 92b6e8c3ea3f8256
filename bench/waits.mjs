// node waits.mjs CASE [--seconds S] [--rounds N]: on Postgres, what the database's backends are doing while one case
// of the matrix runs at 10 connections, raw and pmapi alternating (N rounds, default 2). pg_stat_activity is sampled
// every few milliseconds; it prints the mean number of backends in each state (wait event, state), then the same for
// the backends that hold a lock another one waits for (a row lock's holder: where its time goes decides how fast
// requests serialised on that row can go), and the WAL written per request.
//
// For POST /tasks it shows why the case swings from round to round: every create in one project bumps the project's
// counter, so creates queue on that row (most backends wait on Lock:transactionid, in raw and pmapi alike). The
// holder's time is the client's gap before its next statement (`idle in transaction`: the server's event loop,
// busy with the other requests) and the commit's WAL flush (IO:WALSync, longer when the backend waits for a core):
// both grow with the CPU the server takes from the core Postgres shares, so a small difference in a request's
// CPU moves the whole serialised queue.
import pg from 'pg';
const { caseList, openTarget, loadOnce, startServer, pinLoad, WARMUP_SECONDS } = await import('./matrix.mjs');

const args = process.argv.slice(2).filter((a) => a !== '--');
const opt = (name, dflt) => (args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1] : dflt);
const name = args.find((a) => !a.startsWith('--') && !/^\d+$/.test(a)) ?? 'post';
const SECONDS = Number(opt('seconds', 5));
const ROUNDS = Number(opt('rounds', 2));

pinLoad();
const target = await openTarget({ pg: true, tasks: Number(process.env.BENCH_TASKS ?? 20_000) });
const c = caseList(target.seed).find((x) => x.name === name);
if (!c) throw new Error(`no case ${name}`);
const mon = new pg.Client({ connectionString: target.url });
await mon.connect();

const STATE = `coalesce(wait_event_type, '-') || ':' || coalesce(wait_event, '-') || ' ' || state`;
// Backends that others wait for and that do not wait themselves: where the holder of a contended lock spends its time.
const HOLDERS = `select ${STATE} || ' after ' || left(regexp_replace(query, '"', '', 'g'), 24) as w, count(*)::int as n from pg_stat_activity b
  where b.pid in (select unnest(pg_blocking_pids(a.pid)) from pg_stat_activity a where a.datname = current_database())
  and coalesce(b.wait_event_type, '') <> 'Lock' group by 1`;
const ALL = `select ${STATE} as w, count(*)::int as n from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() group by 1`;

const show = (rows) => rows.map(([w, n]) => `    ${n.toFixed(2).padStart(5)}  ${w}`).join('\n');
for (let round = 0; round < ROUNDS; round++) {
  for (const kind of round % 2 ? ['pmapi', 'raw'] : ['raw', 'pmapi']) {
    const v = c.variants[kind];
    const srv = await startServer(v.server, target.url, {});
    try {
      await loadOnce(srv.url, v, { seconds: WARMUP_SECONDS, connections: 10 });
      const lsn = (await mon.query('select pg_current_wal_lsn() as l')).rows[0].l;
      const stop = { done: false };
      // One sampler at a time on the monitor's connection: the two queries alternate.
      const sampled = (async () => {
        const all = new Map(); const held = new Map(); let n = 0;
        while (!stop.done) {
          for (const r of (await mon.query(ALL)).rows) all.set(r.w, (all.get(r.w) ?? 0) + r.n);
          for (const r of (await mon.query(HOLDERS)).rows) held.set(r.w, (held.get(r.w) ?? 0) + r.n);
          n++;
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
        const mean = (m) => [...m].map(([w, k]) => [w, k / n]).filter(([, k]) => k >= 0.01).sort((a, b) => b[1] - a[1]);
        return { all: mean(all), held: mean(held) };
      })();
      const r = await loadOnce(srv.url, v, { seconds: SECONDS, connections: 10 });
      stop.done = true;
      const { all, held } = await sampled;
      const wal = (await mon.query('select pg_wal_lsn_diff(pg_current_wal_lsn(), $1)::float8 as b', [lsn])).rows[0].b;
      console.log(`${kind}: ${r.rps.toFixed(0)} req/s, ${(wal / (r.rps * SECONDS)).toFixed(0)} WAL bytes/request`);
      console.log(`  backends by state (mean):\n${show(all)}`);
      console.log(`  holders of a lock another backend waits for (mean):\n${held.length ? show(held) : '    none'}`);
    } finally {
      await srv.stop();
    }
  }
}
await mon.end();
await target.close();
