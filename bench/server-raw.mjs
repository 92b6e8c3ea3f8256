// The baseline: raw node:http + better-sqlite3 doing the same work — bearer lookup by prefix with a
// SHA-256 check, the same keyset query, the same insert plus an outbox row — and nothing else.
import http from 'node:http';
import { createHash, randomUUID, randomBytes } from 'node:crypto';
import Database from 'better-sqlite3';

const db = new Database(process.argv[2]);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
const tokenQ = db.prepare('select t.hash, t.team_id, m.id as member_id from access_tokens t join members m on m.id = t.member_id where t.prefix = ?');
const listQ = db.prepare('select * from tasks where team_id = ? and project_id = ? order by "order", id limit 51');
const counterQ = db.prepare('update projects set task_counter = task_counter + 1 where id = ? returning task_counter');
const maxQ = db.prepare('select max("order") as m from tasks where team_id = ? and project_id = ?');
const insertQ = db.prepare(`insert into tasks (id, team_id, name, project_id, archived, completed, status_id, "order", nice_id, created_at, updated_at, created_by_id)
  values (?, ?, ?, ?, 0, 0, ?, ?, ?, ?, ?, ?)`);
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

function auth(req) {
  const m = /^Bearer svc_user_([0-9A-Za-z]+)_/.exec(req.headers.authorization ?? '');
  const row = m && tokenQ.get(m[1]);
  if (!row || createHash('sha256').update(req.headers.authorization.slice(7)).digest('hex') !== row.hash) return null;
  return row;
}

const server = http.createServer((req, res) => {
  const who = auth(req);
  if (!who) {
    res.writeHead(401).end();
    return;
  }
  const url = new URL(req.url, 'http://x');
  if (req.method === 'GET') {
    const rows = listQ.all(who.team_id, url.searchParams.get('projectId'));
    const data = rows.slice(0, 50).map((r) => ({ ...r, createdAt: new Date(r.created_at).toISOString() }));
    const body = JSON.stringify({ data, limit: 50, hasMore: rows.length > 50, nextCursor: null });
    res.writeHead(200, { 'content-type': 'application/json' }).end(body);
    return;
  }
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const task = create(who.team_id, who.member_id, JSON.parse(Buffer.concat(chunks).toString()));
    res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify(task));
  });
});
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
