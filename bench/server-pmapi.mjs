// The full pipeline: createPmapi + http-node on a SQLite file or a Postgres database.
// BENCH_LIMITER=1 turns on the database rate limiter with the v3 table's buckets raised far above the
// load (the same statements run; nothing is refused); BENCH_LIMITER_STORE=memory: the in-memory limiter instead,
// to tell the limiter's own cost from its store's. Over IPC it answers { type: 'rss' } with its RSS.
import http from 'node:http';
import { createPmapi, createRateLimiter, V3_RATE_LIMITS } from '@pmapi/core';
import { openSqliteStore } from '@pmapi/adapter-sqlite';
import { openPostgresStore } from '@pmapi/adapter-postgres';
import { toNodeHandler } from '@pmapi/http-node';

const target = process.argv[2];
const store = target.startsWith('postgres') ? await openPostgresStore({ connectionString: target, max: 10 }) : await openSqliteStore({ filename: target });
const raised = Object.fromEntries(Object.entries(V3_RATE_LIMITS).map(([m, rules]) => [m, rules.map((r) => ({ ...r, limit: 1_000_000_000 }))]));
const rateLimiter = process.env.BENCH_LIMITER ? createRateLimiter({ store: process.env.BENCH_LIMITER_STORE === 'memory' ? 'memory' : 'database', sqlStore: store, limits: raised }) : false;
const api = await createPmapi({ store, onError: (e) => console.error(e), rateLimiter });
const server = http.createServer(toNodeHandler(api));
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
process.on('message', (m) => {
  if (m?.type === 'rss') {
    const u = process.memoryUsage();
    process.send({ type: 'rss', rss: u.rss, heap: u.heapUsed, external: u.external });
  }
});
process.on('SIGINT', () => process.exit(0));
