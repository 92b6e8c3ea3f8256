// node statements.mjs: the SQLite statements behind GET /tasks/{id}, a 50-row and a 200-row page, and the
// bearer lookup, timed directly on better-sqlite3 (no HTTP, no kysely, no JavaScript around them), beside the
// raw handler's statements (bench/server-raw.mjs) with its JavaScript shaping. Shows how much of a request
// is the database's work and how much is everything else.
import Database from 'better-sqlite3';
import { openSqliteStore } from '@pmapi/adapter-sqlite';
import { createPmapi } from '@pmapi/core';
import { scratchDatabase } from './scratch.mjs';
import { seed } from './seed.mjs';

const { url, drop } = await scratchDatabase('statements', { pg: false });
const s = await seed(url, Number(process.env.TASKS ?? 5000));
const seen = [];
const store = await openSqliteStore({ filename: url, onQuery: (q) => seen.push(q) });
const api = await createPmapi({ store, rateLimiter: false });
const auth = { authorization: `Bearer ${s.token}` };
const captured = {};
for (const [name, path] of [['get', `/tasks/${s.taskIds[5]}`], ['list50', `/tasks?projectId=${s.projectId}&limit=50`], ['list200', `/tasks?projectId=${s.projectId}&limit=200`]]) {
  seen.length = 0;
  const r = await api.handle({ method: 'GET', url: `/api/v3${path}`, headers: auth });
  if (r.status !== 200) throw new Error(`${name}: ${r.status}`);
  captured.token = seen[0];
  captured[name] = seen[seen.length - 1];
}
await api.close();

const db = new Database(url);
db.function('pm_iso', { deterministic: true }, (x) => new Date(x).toISOString());
db.function('pm_json_number', { deterministic: true }, (x) => JSON.stringify(x));
const time = (label, run, n) => {
  for (let i = 0; i < n / 10; i++) run(i);
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) run(i);
  console.log(`${(Number(process.hrtime.bigint() - t0) / n / 1000).toFixed(1).padStart(8)} µs  ${label}`);
};
const prefix = s.token.split('_')[2];
const byId = (i) => [s.taskIds[i % 1000], s.teamId];
const one = db.prepare(captured.get), tok = db.prepare(captured.token);
const rawOne = db.prepare('select * from tasks where id = ? and team_id = ?');
const rawTok = db.prepare('select t.hash, t.team_id, m.id as member_id from access_tokens t join members m on m.id = t.member_id where t.prefix = ?');
const rawList = db.prepare('select * from tasks where team_id = ? and project_id = ? order by "order", id limit ?');
const shape = (r) => ({ ...r, createdAt: new Date(r.created_at).toISOString(), updatedAt: new Date(r.updated_at).toISOString() });
console.log('pmapi statement (JSON built by SQLite)          raw handler statement + JSON.stringify of its rows');
time('bearer lookup (pmapi)', () => tok.all(prefix), 20000);
time('bearer lookup (raw)', () => rawTok.all(prefix), 20000);
time('task by id (pmapi, JSON text)', (i) => one.all(...byId(i)), 20000);
time('task by id (raw, rows → JSON)', (i) => JSON.stringify(rawOne.all(...byId(i)).map(shape)), 20000);
for (const [name, limit] of [['list50', 50], ['list200', 200]]) {
  const page = db.prepare(captured[name]);
  time(`${name} page (pmapi, JSON text)`, () => page.all(s.teamId, s.projectId, limit + 1), 2000);
  time(`${name} page (raw, rows → JSON)`, () => JSON.stringify(rawList.all(s.teamId, s.projectId, limit + 1).map(shape)), 2000);
}
db.close();
await drop();
