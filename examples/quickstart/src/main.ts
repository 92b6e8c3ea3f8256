import http from 'node:http';
import { createDirectoryBlobStore, createMemoryBlobStore, createPmapi } from '@pmapi/core';
import { openSqliteStore } from '@pmapi/adapter-sqlite';
import { openPostgresStore } from '@pmapi/adapter-postgres';
import { applyServerDeadlines, toNodeHandler } from '@pmapi/http-node';
import { createUrlFetcher, createWebhookSender, createWebhookWorker } from '@pmapi/webhooks';
import { createSharpThumbnailer } from '@pmapi/thumbnails';
import { seedDemo, demoNames } from './seed';
import { demoSignIn, memberFromCookie } from './demo-sign-in';
import { parseQuickstartArgs } from './args';

const USAGE = `pmapi quickstart: the v3 API on SQLite with two demo workspaces.

Options:
  --port N     port on 127.0.0.1 (default 3000; 0 = any free port)
  --db PATH    SQLite file, or a postgres:// URL (default: DATABASE_URL if set, else in-memory SQLite)
  --no-migrate  do not apply migrations on start (refuse a database that is behind; run pmapi migrate --db ...)
  --json       print one line of JSON (baseUrl, teams, members, tokens) once listening
  --files DIR  directory for file bytes (default: in memory with in-memory SQLite, else DIR = <db file>.files or ./pmapi-files)
  --allow-private-webhooks  deliver webhooks to private and loopback addresses (local development only)
  --allow-loopback-webhooks  register and deliver to http://localhost, 127.0.0.1 and [::1] receivers (local development)
  --no-webhook-worker  do not deliver webhooks in this process (run examples/worker: node examples/worker/dist/main.js --db ... beside it)
  --help       this text`;

async function main(): Promise<void> {
  const { values, port, target } = parseQuickstartArgs(process.argv.slice(2));
  if (values.help) {
    console.log(USAGE);
    return;
  }
  const migrate = !values['no-migrate'];
  const store =
    target?.kind === 'postgres'
      ? await openPostgresStore({ connectionString: target.connectionString, migrate })
      : await openSqliteStore(target ? { filename: target.filename, migrate } : { migrate });

  // Listen first: the OAuth issuer (the auth URL) is this server's address, known once the port is.
  let dispatch: http.RequestListener = (_req, res) => {
    res.writeHead(503, { 'retry-after': '1' }).end();
  };
  // Header, request and keep-alive deadlines (http-node's defaults), checked every second.
  const server = applyServerDeadlines(http.createServer({ connectionsCheckingInterval: 1_000 }, (req, res) => dispatch(req, res)));
  // A port in use is one line and exit code 1 (main's catch), not an unhandled 'error' event.
  await new Promise<void>((resolve, reject) => {
    const failed = (err: NodeJS.ErrnoException) => {
      void store.close().catch(() => undefined);
      reject(err.code === 'EADDRINUSE' ? new Error(`port ${port} on 127.0.0.1 is already in use; stop what is listening there or choose another with --port`) : err);
    };
    server.once('error', failed);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', failed);
      resolve();
    });
  });
  const addr = server.address();
  const baseUrl = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : port}`;

  // Webhooks: signed deliveries by an in-process worker (a separate process can run createWebhookWorker instead).
  const sender = createWebhookSender({ allowPrivateTargets: values['allow-private-webhooks'], allowLoopback: values['allow-loopback-webhooks'] });
  // File bytes: a directory beside the database (memory for the in-memory demo), thumbnails by sharp,
  // upload-from-URL through the same SSRF-safe connector as webhooks (public targets only).
  const filesDir = values.files ?? (!target ? undefined : target.kind === 'postgres' ? 'pmapi-files' : `${target.filename}.files`);
  const fetcher = createUrlFetcher();
  const api = await createPmapi({
    store,
    webhookSender: sender,
    ...(values['allow-loopback-webhooks'] ? { webhooks: { allowLoopback: true } } : {}),
    files: {
      store: filesDir ? createDirectoryBlobStore(filesDir) : createMemoryBlobStore(),
      publicUrl: baseUrl,
      thumbnailer: createSharpThumbnailer(),
      fetcher,
    },
    // The OAuth 2.1 server on the same origin; the demo sign-in stands in for the application's own.
    oauth: {
      issuer: baseUrl,
      currentMember: (req) => memberFromCookie(req.headers.cookie),
      signInUrl: (returnTo) => `/demo/sign-in?returnTo=${encodeURIComponent(returnTo)}`,
    },
  });
  // The in-process worker (off with --no-webhook-worker when examples/worker runs it in a process of its own).
  const worker = values['no-webhook-worker'] ? undefined : createWebhookWorker({ store, sender, onError: (e) => console.error('webhook worker', e) });
  worker?.start(1000);
  const teams = await seedDemo(api);
  const redirectUris = ['http://127.0.0.1:8976/callback', 'http://localhost:8976/callback'];
  const pub = await api.admin.registerOAuthClient({ name: 'Demo public app', type: 'public', redirectUris });
  const conf = await api.admin.registerOAuthClient({ name: 'Demo server app', type: 'confidential', redirectUris });
  const oauthClients = [
    { clientId: pub.clientId, type: 'public', redirectUris },
    { clientId: conf.clientId, clientSecret: conf.clientSecret, type: 'confidential', redirectUris },
  ];
  const signIn = demoSignIn(teams, demoNames);
  const v3 = toNodeHandler(api);
  dispatch = (req, res) => {
    if (!signIn(req, res)) v3(req, res);
  };
  // Destroy trashed rows past retention once a minute.
  const purge = setInterval(() => void api.jobs.purge().catch((e) => console.error('purge failed', e)), 60_000);
  purge.unref();
  // Thumbnails of new files and removal of bytes whose file is gone, every two seconds.
  const fileJobs = setInterval(() => void api.jobs.processFiles().catch((e) => console.error('file jobs failed', e)), 2_000);
  fileJobs.unref();
  // Overdue reminders from due dates and reminders that come due, and tasks of recurring rules, every 15 seconds (each on its own: one failing does not hold up the other).
  const planning = setInterval(() => {
    void api.jobs.reminders().catch((e) => console.error('reminders job failed', e));
    void api.jobs.recurring().catch((e) => console.error('recurring job failed', e));
  }, 15_000);
  planning.unref();

  // Graceful shutdown: stop accepting and let requests in flight finish, stop the webhook worker after
  // the round in flight, then close the store; exit 0. Requests still running after 10 s are cut off.
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    if (!values.json) console.log(`\n${signal}: shutting down`);
    clearInterval(purge);
    clearInterval(fileJobs);
    clearInterval(planning);
    const drained = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    setTimeout(() => server.closeAllConnections(), 10_000).unref();
    Promise.all([drained, worker?.stop()])
      .then(() => fetcher.close())
      .then(() => api.close())
      .then(
        () => process.exit(0),
        (err) => {
          console.error(`pmapi quickstart: shutdown failed: ${err instanceof Error ? err.message : err}`);
          process.exit(1);
        },
      );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  // The ready line last: whoever waits for it may signal at once, and the handlers are in place.
  if (values.json) {
    process.stdout.write(`${JSON.stringify({ baseUrl, teams, authUrl: baseUrl, oauthClients })}\n`);
  } else {
    console.log(`pmapi quickstart listening on ${baseUrl}  (v3 at ${baseUrl}/api/v3, OAuth at ${baseUrl}/.well-known/oauth-authorization-server)\n`);
    for (const [i, t] of teams.entries()) {
      console.log(`Workspace ${i === 0 ? 'Acme' : 'Globex'} (${t.id})`);
      for (const m of t.members) console.log(`  ${m.role.padEnd(8)} member ${m.id}  token ${m.token}`);
    }
    console.log(`\nOAuth demo clients (redirect URIs ${redirectUris.join(', ')}):`);
    for (const c of oauthClients) console.log(`  ${c.type.padEnd(12)} client_id ${c.clientId}${c.clientSecret ? `  client_secret ${c.clientSecret}` : ''}`);
    const tok = teams[0]!.members[0]!.token;
    console.log(`\nTry:\n  curl -s -H "Authorization: Bearer ${tok}" ${baseUrl}/api/v3/projects`);
    console.log(`  curl -s -H "Authorization: Bearer ${tok}" -H "Content-Type: application/json" \\\n    -d '{"name":"Launch"}' ${baseUrl}/api/v3/projects`);
  }
}

main().catch((err) => {
  console.error(`pmapi quickstart: ${err instanceof Error ? err.message : err}`);
  process.exit(1);
});
