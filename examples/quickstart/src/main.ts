import http from 'node:http';
import { parseArgs } from 'node:util';
import { createPmapi } from '@pmapi/core';
import { openSqliteStore } from '@pmapi/adapter-sqlite';
import { openPostgresStore } from '@pmapi/adapter-postgres';
import { toNodeHandler } from '@pmapi/http-node';
import { createWebhookSender, createWebhookWorker } from '@pmapi/webhooks';
import { seedDemo } from './seed';

const USAGE = `pmapi quickstart: the v3 API on SQLite with two demo workspaces.

Options:
  --port N     port on 127.0.0.1 (default 3000; 0 = any free port)
  --db PATH    SQLite file, or a postgres:// URL (default: DATABASE_URL if set, else in-memory SQLite)
  --json       print one line of JSON (baseUrl, teams, members, tokens) once listening
  --allow-private-webhooks  deliver webhooks to private and loopback addresses (local development only)
  --help       this text`;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      port: { type: 'string', default: '3000' },
      db: { type: 'string' },
      json: { type: 'boolean', default: false },
      'allow-private-webhooks': { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
    allowPositionals: false,
  });
  if (values.help) {
    console.log(USAGE);
    return;
  }
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port must be 0-65535, got '${values.port}'`);

  const db = values.db ?? process.env.DATABASE_URL;
  const store = db && /^postgres(ql)?:\/\//.test(db) ? await openPostgresStore({ connectionString: db }) : await openSqliteStore(db ? { filename: db } : {});
  // Webhooks: signed deliveries by an in-process worker (a separate process can run createWebhookWorker instead).
  const sender = createWebhookSender({ allowPrivateTargets: values['allow-private-webhooks'] });
  const api = await createPmapi({ store, webhookSender: sender });
  const worker = createWebhookWorker({ store, sender, onError: (e) => console.error('webhook worker', e) });
  worker.start(1000);
  const teams = await seedDemo(api);
  const server = http.createServer(toNodeHandler(api));
  // Destroy trashed rows past retention once a minute.
  const purge = setInterval(() => void api.jobs.purge().catch((e) => console.error('purge failed', e)), 60_000);
  purge.unref();

  server.listen(port, '127.0.0.1', () => {
    const addr = server.address();
    const actual = typeof addr === 'object' && addr ? addr.port : port;
    const baseUrl = `http://127.0.0.1:${actual}`;
    if (values.json) {
      process.stdout.write(`${JSON.stringify({ baseUrl, teams })}\n`);
      return;
    }
    console.log(`pmapi quickstart listening on ${baseUrl}  (v3 at ${baseUrl}/api/v3)\n`);
    for (const [i, t] of teams.entries()) {
      console.log(`Workspace ${i === 0 ? 'Acme' : 'Globex'} (${t.id})`);
      for (const m of t.members) console.log(`  ${m.role.padEnd(8)} member ${m.id}  token ${m.token}`);
    }
    const tok = teams[0]!.members[0]!.token;
    console.log(`\nTry:\n  curl -s -H "Authorization: Bearer ${tok}" ${baseUrl}/api/v3/projects`);
    console.log(`  curl -s -H "Authorization: Bearer ${tok}" -H "Content-Type: application/json" \\\n    -d '{"name":"Launch"}' ${baseUrl}/api/v3/projects`);
  });

  const stop = () => {
    server.close();
    worker.stop();
    void api.close().finally(() => process.exit(0));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
