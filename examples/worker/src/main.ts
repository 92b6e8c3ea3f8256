import { openSqliteStore } from '@pmapi/adapter-sqlite';
import { openPostgresStore } from '@pmapi/adapter-postgres';
import { createWebhookSender, createWebhookWorker } from '@pmapi/webhooks';
import { parseWorkerArgs } from './args';

/**
 * The webhook worker in a process of its own (issue 16, "Examples"): it
 * delivers the jobs every API process writes to the shared database (the
 * outbox), so API processes can run with no worker of their own. One command:
 *
 *   node examples/worker/dist/main.js --db postgres://postgres@127.0.0.1:5432/pm
 *
 * Several workers may run against one Postgres database: each claims due jobs
 * with a lease (FOR UPDATE SKIP LOCKED), so no job goes to two workers at once.
 * SIGTERM/SIGINT stop it gracefully: no new round, the round in flight
 * finishes (its deliveries recorded), the store closes, exit 0.
 */
const USAGE = `pmapi webhook worker: delivers webhooks from a pmapi database.

Options:
  --db URL|PATH   postgres:// URL or SQLite file (default: DATABASE_URL); required
  --interval MS   pause between rounds when idle (default 1000, at least 10)
  --allow-private-webhooks  deliver to private and loopback addresses (local development only)
  --allow-loopback-webhooks  deliver to http://localhost, 127.0.0.1 and [::1] receivers (local development only)
  --help          this text`;

async function main(): Promise<void> {
  const { values, interval, db } = parseWorkerArgs(process.argv.slice(2));
  if (values.help) {
    console.log(USAGE);
    return;
  }
  const store = /^postgres(ql)?:\/\//.test(db) ? await openPostgresStore({ connectionString: db }) : await openSqliteStore({ filename: db });
  const sender = createWebhookSender({ allowPrivateTargets: values['allow-private-webhooks'], allowLoopback: values['allow-loopback-webhooks'] });
  const worker = createWebhookWorker({ store, sender, onError: (e) => console.error('webhook worker', e) });
  worker.start(interval);

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(JSON.stringify({ worker: 'stopping', signal }));
    worker.stop()
      .then(() => store.close())
      .then(
        () => process.exit(0),
        (err) => {
          console.error(`pmapi webhook worker: shutdown failed: ${err instanceof Error ? err.message : err}`);
          process.exit(1);
        },
      );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  // Announced once the signal handlers are in place: a SIGTERM sent on seeing this line stops it gracefully.
  console.log(JSON.stringify({ worker: 'started', pid: process.pid }));
}

main().catch((err) => {
  console.error(`pmapi webhook worker: ${err instanceof Error ? err.message : err}`);
  process.exit(1);
});
