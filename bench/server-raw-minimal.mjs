// The minimal SQLite baseline (`pnpm bench -- --baseline minimal`), kept for comparison with earlier figures:
// the raw handler as issue 11 first measured it. It does less than pmapi: a page reads no link rows
// (assignees, labels, …), prints one instant and the rest of the columns as stored (snake_case, 0/1,
// customFields as text), and signs no cursor. The default baseline (server-raw.mjs) answers pmapi's JSON.
import http from 'node:http';
import { createHash, randomUUID, randomBytes } from 'node:crypto';
import Database from 'better-sqlite3';

const db = new Database(process.argv[2]);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
const tokenQ = db.prepare('select t.hash, t.team_id, m.id as member_id from access_tokens t join members m on m.id = t.member_id where t.prefix = ?');
const listQ = db.prepare('select * from tasks where team_id = ? and project_id = ? order by "order", id limit ?');
const oneQ = db.prepare('select * from tasks where id = ? and team_id = ?');
const counterQ = db.prepare('update projects set task_counter = task_counter + 1 where id = ? returning task_counter');
const maxQ = db.prepare('select max("order") as m from tasks where team_id = ? and project_id = ?');
const insertQ = db.prepare(`insert into tasks (id, team_id, name, project_id, archived, completed, status_id, "order", nice_id, created_at, updated_at, created_by_id)
  values (?, ?, ?, ?, 0, 0, ?, ?, ?, ?, ?, ?)`);
const updateQ = db.prepare('update tasks set name = ?, updated_at = ? where id = ? and team_id = ? and updated_at = ? returning *');
const outboxQ = db.prepare('insert into outbox (id, team_id, type, aggregate_type, aggregate_id, project_id, body, created_at) values (?, ?, ?, ?, ?, ?, ?, ?)');
const create = db.transaction((team, member, body) => {
  const id = randomBytes(9).toString('base64url').replace(/[-_]/g, 'x');
  const now = Date.now();
  const nice = String(counterQ.get(body.projectId).task_counter);
  const order = (maxQ.get(team, body.projectId).m ?? 0) + 1;
  insertQ.run(id, team, body.name, body.projectId, body.statusId, order, nice, now, now, member);
  const task = { id, name: body.name, projectId: body.projectId, statusId: body.statusId, order, niceId: nice, createdAt: new Date(now).toISOString() };
  outboxQ.run(randomUUID(), team, 'task.created', 'task', id, body.projectId, JSON.stringify({ type: 'task.created', payload: { task } }), now);
  return task;
});
const shown = (r) => ({ ...r, createdAt: new Date(r.created_at).toISOString(), updatedAt: new Date(r.updated_at).toISOString() });
const patch = db.transaction((team, id, body) => {
  const expected = Date.parse(body.expectedUpdatedAt);
  const row = updateQ.get(body.name, Math.max(Date.now(), expected + 1), id, team, expected);
  if (!row) return null;
  const task = shown(row);
  outboxQ.run(randomUUID(), team, 'task.updated', 'task', id, row.project_id, JSON.stringify({ type: 'task.updated', payload: { task } }), row.updated_at);
  return task;
});

function auth(req) {
  const m = /^Bearer svc_user_([0-9A-Za-z]+)_/.exec(req.headers.authorization ?? '');
  const row = m && tokenQ.get(m[1]);
  if (!row || createHash('sha256').update(req.headers.authorization.slice(7)).digest('hex') !== row.hash) return null;
  return row;
}

const send = (res, status, body) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));

const server = http.createServer((req, res) => {
  const who = auth(req);
  if (!who) return res.writeHead(401).end();
  const url = new URL(req.url, 'http://x');
  const id = url.pathname.split('/')[4];
  if (req.method === 'GET' && id) {
    const row = oneQ.get(id, who.team_id);
    return row ? send(res, 200, shown(row)) : res.writeHead(404).end();
  }
  if (req.method === 'GET') {
    const limit = Number(url.searchParams.get('limit') ?? 50);
    const rows = listQ.all(who.team_id, url.searchParams.get('projectId'), limit + 1);
    const data = rows.slice(0, limit).map((r) => ({ ...r, createdAt: new Date(r.created_at).toISOString() }));
    return send(res, 200, { data, limit, hasMore: rows.length > limit, nextCursor: null });
  }
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = JSON.parse(Buffer.concat(chunks).toString());
    if (req.method === 'PATCH') {
      const task = patch(who.team_id, id, body);
      if (task) return send(res, 200, task);
      const current = oneQ.get(id, who.team_id);
      return send(res, 409, { code: 'stale_write', currentUpdatedAt: current && new Date(current.updated_at).toISOString() });
    }
    send(res, 201, create(who.team_id, who.member_id, body));
  });
});
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
process.on('SIGINT', () => process.exit(0));
