// The full pipeline: createPmapi + http-node on a SQLite file.
import http from 'node:http';
import { createPmapi } from '@pmapi/core';
import { openSqliteStore } from '@pmapi/adapter-sqlite';
import { openPostgresStore } from '@pmapi/adapter-postgres';
import { toNodeHandler } from '@pmapi/http-node';

const target = process.argv[2];
const store = target.startsWith('postgres') ? await openPostgresStore({ connectionString: target, max: 10 }) : await openSqliteStore({ filename: target });
// Rate limits off: the load generator is one token far above the v3 limits (it would measure 429s).
const api = await createPmapi({ store, onError: (e) => console.error(e), rateLimiter: process.env.BENCH_LIMITS ? undefined : false });
const server = http.createServer(toNodeHandler(api));
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
process.on('SIGINT', () => process.exit(0));
