// Child of amplification.mjs: the full pmapi pipeline (createPmapi + http-node with its default
// 4 MiB body limit) on a SQLite file or a Postgres database, rate limits off. At start it creates a
// workspace, an owner token and one record of every collection a write route names, then sends the
// parent { port, routes: api.routes(), ids, token }. Over IPC it answers
//   { type: 'cpu', seq }      → process.cpuUsage() (µs), RSS and peak RSS (bytes), requests served,
//                                time spent in GC pauses so far (ms, from 'gc' performance entries)
//   { type: 'fixtures', seq } → the fixture ids, after restoring or re-creating any record a DELETE removed
import http from 'node:http';
import { PerformanceObserver } from 'node:perf_hooks';
import { createPmapi } from '@pmapi/core';
import { openSqliteStore } from '@pmapi/adapter-sqlite';
import { openPostgresStore } from '@pmapi/adapter-postgres';
import { toNodeHandler } from '@pmapi/http-node';

const target = process.argv[2];
const store = target.startsWith('postgres') ? await openPostgresStore({ connectionString: target, max: 10 }) : await openSqliteStore({ filename: target });
const api = await createPmapi({
  store,
  onError: (e) => console.error('server-amplification: unexpected error', e),
  rateLimiter: false,
  // A stub, so POST /webhooks/{id}/test answers its real outcome instead of 503 "no sender configured".
  webhookSender: async () => ({ ok: true, status: 200, durationMs: 0, error: null }),
});

const ws = await api.admin.createWorkspace({ name: 'Amplification', owner: { name: 'Bench Owner' } });
const { token } = await api.admin.issueToken(ws.ownerMemberId, { scopes: ['read', 'write', 'delete'] });

async function call(method, path, body) {
  const r = await api.handle({
    method, url: `/api/v3${path}`, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : Buffer.from(JSON.stringify(body)),
  });
  return { status: r.status, body: r.body ? JSON.parse(r.body) : undefined };
}

async function created(method, path, body) {
  const r = await call(method, path, body);
  if (r.status >= 300) throw new Error(`fixture ${method} ${path}: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
  return r.body.id;
}

let n = 0;
const ids = {};
const make = {
  projects: () => created('POST', '/projects', { name: `Amp project ${++n}` }),
  portfolios: () => created('POST', '/portfolios', { name: `Amp portfolio ${++n}` }),
  tasks: () => created('POST', '/tasks', { name: `Amp task ${++n}`, projectId: ids.projects }),
  lists: () => created('POST', '/lists', { name: `Amp list ${++n}`, projectId: ids.projects }),
  statuses: () => created('POST', '/statuses', { name: `Amp status ${++n}`, projectId: ids.projects }),
  labels: () => created('POST', '/labels', { name: `Amp label ${++n}` }),
  roles: () => created('POST', '/roles', { name: `Amp role ${++n}` }),
  webhooks: () => created('POST', '/webhooks', { url: 'https://hooks.invalid/pmapi-bench', events: ['task.created'] }),
  checklists: () => created('POST', '/checklists', { name: `Amp checklist ${++n}`, taskId: ids.tasks }),
  'checklist-items': () => created('POST', '/checklist-items', { name: `Amp item ${++n}`, checklistId: ids.checklists }),
  'personal-access-tokens': () => created('POST', '/personal-access-tokens', { name: `Amp token ${++n}`, scopes: ['read'] }),
};
const RESTORABLE = new Set(['projects', 'portfolios', 'webhooks']);

/** Every fixture exists (and a token is not revoked); projects first, since tasks, lists and statuses live in one. */
async function ensureFixtures() {
  for (const coll of Object.keys(make)) {
    if (ids[coll]) {
      const r = await call('GET', `/${coll}/${ids[coll]}`);
      if (r.status === 200 && (coll !== 'personal-access-tokens' || r.body.status === 'active')) continue;
      if (RESTORABLE.has(coll) && (await call('POST', `/${coll}/${ids[coll]}/restore`)).status === 200) continue;
    }
    ids[coll] = await make[coll]();
  }
  return { ...ids };
}

await ensureFixtures();

let served = 0;
let gcMs = 0;
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) gcMs += e.duration;
}).observe({ entryTypes: ['gc'] });
const handler = toNodeHandler(api);
const server = http.createServer((req, res) => {
  served++;
  handler(req, res);
});

process.on('message', async (m) => {
  if (m.type === 'cpu') {
    const { user, system } = process.cpuUsage();
    process.send({ type: 'cpu', seq: m.seq, user, system, rss: process.memoryUsage.rss(), maxRss: process.resourceUsage().maxRSS * 1024, served, gcMs });
  } else if (m.type === 'fixtures') {
    try {
      process.send({ type: 'fixtures', seq: m.seq, ids: await ensureFixtures() });
    } catch (e) {
      process.send({ type: 'fixtures', seq: m.seq, error: String(e?.stack ?? e) });
    }
  }
});
process.on('disconnect', () => process.exit(0));
process.on('SIGINT', () => process.exit(0));

server.listen(0, '127.0.0.1', () => {
  process.send({ type: 'ready', port: server.address().port, pid: process.pid, routes: api.routes(), ids: { ...ids }, token });
});
