import { createPmapi, createRateLimiter } from '@pmapi/core';
import { openPostgresStore } from '@pmapi/adapter-postgres';
import { createNodeServer } from '@pmapi/http-node';
import { createWebhookSender } from '@pmapi/webhooks';
import { parseApiProcessArgs } from './args';

/**
 * One pmapi API server process (node:http + toNodeHandler) of several on one
 * Postgres database (issue 16, "Examples"). Start it twice, on two ports, with
 * the same --db and the same secrets: everything a request depends on lives in
 * the database, so either process answers any request the same way.
 *
 *   node examples/two-processes/dist/main.js --db postgres://postgres@127.0.0.1:5432/pm --port 3001 --seed
 *   node examples/two-processes/dist/main.js --db postgres://postgres@127.0.0.1:5432/pm --port 3002
 */
const USAGE = `pmapi API process: run two or more on one Postgres database.

Options:
  --db URL        postgres:// URL, the same in every process (default: DATABASE_URL); required
  --port N        port on 127.0.0.1 (default 3000; 0 = any free port)
  --seed          create a demo workspace and print its owner's token (run it in one process only)
  --post-limit N  POSTs per token per minute (replaces the v3 table's POST buckets; default: the spec's limits)
  --json          print one line of JSON ({ baseUrl, pid, seed }) once listening
  --allow-loopback-webhooks  register http://localhost, 127.0.0.1 and [::1] receivers (local development only)
  --help          this text

Environment: PMAPI_SECRET, the cursor-signing secret; the same in every process, or unset in all
(then one is generated once and kept in the database, which every process reads).`;

async function main(): Promise<void> {
  const { values, port, postLimit, db } = parseApiProcessArgs(process.argv.slice(2));
  if (values.help) {
    console.log(USAGE);
    return;
  }

  // Migrations run under an advisory lock: processes starting at once do not trip over each other.
  const store = await openPostgresStore({ connectionString: db });
  const sender = createWebhookSender({ allowLoopback: values['allow-loopback-webhooks'] });
  const api = await createPmapi({
    store,
    // Unset: generated once and kept in the database. Set: must be the same in every process.
    ...(process.env.PMAPI_SECRET ? { secret: process.env.PMAPI_SECRET } : {}),
    // Counters in the database: a limit holds for all processes together, not per process.
    rateLimiter: createRateLimiter({
      store: 'database',
      sqlStore: store,
      ...(postLimit !== undefined ? { limits: { POST: [{ limit: postLimit, windowMs: 60_000, keyBy: 'token' }] } } : {}),
    }),
    // POST /webhooks/{id}/test sends from here; other deliveries are examples/worker's (or any process's worker).
    webhookSender: sender,
    ...(values['allow-loopback-webhooks'] ? { webhooks: { allowLoopback: true } } : {}),
  });

  const seed = values.seed ? await seedWorkspace(api) : undefined;

  const server = createNodeServer(api);
  await new Promise<void>((resolve, reject) => {
    const failed = (err: NodeJS.ErrnoException) => {
      void api.close().catch(() => undefined);
      reject(err.code === 'EADDRINUSE' ? new Error(`port ${port} on 127.0.0.1 is already in use; choose another with --port`) : err);
    };
    server.once('error', failed);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', failed);
      resolve();
    });
  });
  const addr = server.address();
  const baseUrl = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : port}`;

  // Background jobs are safe in every process at once: purge deletes what is due, reminders and
  // recurring rules claim their work in the database (a second runner skips or finds nothing to do).
  const purge = setInterval(() => void api.jobs.purge().catch((e) => console.error('purge failed', e)), 60_000);
  const planning = setInterval(() => {
    void api.jobs.reminders().catch((e) => console.error('reminders job failed', e));
    void api.jobs.recurring().catch((e) => console.error('recurring job failed', e));
  }, 15_000);
  purge.unref();
  planning.unref();

  // Graceful shutdown: stop accepting, let requests in flight finish (cut off after 10 s), close; exit 0.
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    if (!values.json) console.log(`${signal}: shutting down`);
    clearInterval(purge);
    clearInterval(planning);
    const drained = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    setTimeout(() => server.closeAllConnections(), 10_000).unref();
    drained
      .then(() => sender.close())
      .then(() => api.close())
      .then(
        () => process.exit(0),
        (err) => {
          console.error(`pmapi API process: shutdown failed: ${err instanceof Error ? err.message : err}`);
          process.exit(1);
        },
      );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  // The ready line last: whoever waits for it may signal at once, and the handlers are in place.
  if (values.json) {
    process.stdout.write(`${JSON.stringify({ baseUrl, pid: process.pid, ...(seed ? { seed } : {}) })}\n`);
  } else {
    console.log(`pmapi API process ${process.pid} listening on ${baseUrl}/api/v3`);
    if (seed) console.log(`Workspace ${seed.workspaceId}; owner token ${seed.token}\n  curl -s -H "Authorization: Bearer ${seed.token}" ${baseUrl}/api/v3/projects`);
  }
}

/** A demo workspace with an owner and a token that may do everything (`--seed`). */
async function seedWorkspace(api: Awaited<ReturnType<typeof createPmapi>>): Promise<{ workspaceId: string; memberId: string; token: string }> {
  const ws = await api.admin.createWorkspace({ name: 'Demo', owner: { name: 'Demo Owner' } });
  const { token } = await api.admin.issueToken(ws.ownerMemberId, { scopes: ['read', 'write', 'delete'], name: 'two-processes demo' });
  return { workspaceId: ws.id, memberId: ws.ownerMemberId, token };
}

main().catch((err) => {
  console.error(`pmapi API process: ${err instanceof Error ? err.message : err}`);
  process.exit(1);
});
