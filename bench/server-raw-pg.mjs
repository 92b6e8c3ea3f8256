// The Postgres baseline: raw node:http + pg doing the same work — bearer lookup by prefix with a SHA-256
// check, the same keyset query, the same insert plus an outbox row in one transaction — and nothing else.
import http from 'node:http';
import { createHash, randomUUID, randomBytes } from 'node:crypto';
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.argv[2], max: 10 });
pool.on('error', () => {});

async function auth(req) {
  const m = /^Bearer svc_user_([0-9A-Za-z]+)_/.exec(req.headers.authorization ?? '');
  if (!m) return null;
  const { rows } = await pool.query({ name: 'auth', text: 'select t.hash, t.team_id, m.id as member_id from access_tokens t join members m on m.id = t.member_id where t.prefix = $1', values: [m[1]] });
  const row = rows[0];
  if (!row || createHash('sha256').update(req.headers.authorization.slice(7)).digest('hex') !== row.hash) return null;
  return row;
}

async function create(team, member, body) {
  const c = await pool.connect();
  try {
    await c.query('begin');
    const id = randomBytes(9).toString('base64url').replace(/[-_]/g, 'x');
    const now = new Date();
    const nice = String((await c.query({ name: 'nice', text: 'update projects set task_counter = task_counter + 1 where id = $1 returning task_counter', values: [body.projectId] })).rows[0].task_counter);
    const order = ((await c.query({ name: 'max', text: 'select max("order") as m from tasks where team_id = $1 and project_id = $2', values: [team, body.projectId] })).rows[0].m ?? 0) + 1;
    await c.query({
      name: 'ins',
      text: `insert into tasks (id, team_id, name, project_id, archived, completed, status_id, "order", nice_id, created_at, updated_at, created_by_id)
             values ($1, $2, $3, $4, false, false, $5, $6, $7, $8, $8, $9)`,
      values: [id, team, body.name, body.projectId, body.statusId, order, nice, now, member],
    });
    const task = { id, name: body.name, projectId: body.projectId, statusId: body.statusId, order, niceId: nice, createdAt: now.toISOString() };
    await c.query({ name: 'outbox', text: 'insert into outbox (id, team_id, type, aggregate_type, aggregate_id, project_id, body, created_at) values ($1, $2, $3, $4, $5, $6, $7, $8)',
      values: [randomUUID(), team, 'task.created', 'task', id, body.projectId, JSON.stringify({ type: 'task.created', payload: { task } }), now] });
    await c.query('commit');
    return task;
  } catch (e) {
    await c.query('rollback').catch(() => {});
    throw e;
  } finally {
    c.release();
  }
}

const server = http.createServer((req, res) => {
  handle(req, res).catch(() => {
    if (!res.headersSent) res.writeHead(500).end();
  });
});

async function handle(req, res) {
  const who = await auth(req);
  if (!who) return res.writeHead(401).end();
  const url = new URL(req.url, 'http://x');
  if (req.method === 'GET') {
    const { rows } = await pool.query({ name: 'list', text: 'select * from tasks where team_id = $1 and project_id = $2 order by "order", id limit 51', values: [who.team_id, url.searchParams.get('projectId')] });
    const data = rows.slice(0, 50).map((r) => ({ ...r, createdAt: r.created_at.toISOString() }));
    return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data, limit: 50, hasMore: rows.length > 50, nextCursor: null }));
  }
  const chunks = [];
  for await (const c of req) chunks.push(c);
  const task = await create(who.team_id, who.member_id, JSON.parse(Buffer.concat(chunks).toString()));
  res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify(task));
}
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
