// The minimal Postgres baseline (`pnpm bench -- --baseline minimal`), kept for comparison with earlier figures:
// the raw handler as issue 11 first measured it. It does less than pmapi: a page reads no link rows
// (assignees, labels, …), prints one instant and the rest of the columns as stored (snake_case, 0/1,
// customFields as text), and signs no cursor. The default baseline (server-raw-pg.mjs) answers pmapi's JSON.
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

async function tx(fn) {
  const c = await pool.connect();
  try {
    await c.query('begin');
    const r = await fn(c);
    await c.query('commit');
    return r;
  } catch (e) {
    await c.query('rollback').catch(() => {});
    throw e;
  } finally {
    c.release();
  }
}

const outbox = (c, team, type, id, projectId, task, now) => c.query({
  name: 'outbox', text: 'insert into outbox (id, team_id, type, aggregate_type, aggregate_id, project_id, body, created_at) values ($1, $2, $3, $4, $5, $6, $7, $8)',
  values: [randomUUID(), team, type, 'task', id, projectId, JSON.stringify({ type, payload: { task } }), now],
});

const create = (team, member, body) => tx(async (c) => {
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
  await outbox(c, team, 'task.created', id, body.projectId, task, now);
  return task;
});

const shown = (r) => ({ ...r, createdAt: r.created_at.toISOString(), updatedAt: r.updated_at.toISOString() });

const patch = (team, id, body) => tx(async (c) => {
  const expected = new Date(body.expectedUpdatedAt);
  const now = new Date(Math.max(Date.now(), expected.getTime() + 1));
  const { rows } = await c.query({ name: 'upd', text: 'update tasks set name = $1, updated_at = $2 where id = $3 and team_id = $4 and updated_at = $5 returning *', values: [body.name, now, id, team, expected] });
  if (!rows[0]) return null;
  const task = shown(rows[0]);
  await outbox(c, team, 'task.updated', id, rows[0].project_id, task, now);
  return task;
});

const one = async (team, id) => (await pool.query({ name: 'one', text: 'select * from tasks where id = $1 and team_id = $2', values: [id, team] })).rows[0];
const send = (res, status, body) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));

const server = http.createServer((req, res) => {
  handle(req, res).catch(() => {
    if (!res.headersSent) res.writeHead(500).end();
  });
});

async function handle(req, res) {
  const who = await auth(req);
  if (!who) return res.writeHead(401).end();
  const url = new URL(req.url, 'http://x');
  const id = url.pathname.split('/')[4];
  if (req.method === 'GET' && id) {
    const row = await one(who.team_id, id);
    return row ? send(res, 200, shown(row)) : res.writeHead(404).end();
  }
  if (req.method === 'GET') {
    const limit = Number(url.searchParams.get('limit') ?? 50);
    const { rows } = await pool.query({ name: 'list', text: 'select * from tasks where team_id = $1 and project_id = $2 order by "order", id limit $3', values: [who.team_id, url.searchParams.get('projectId'), limit + 1] });
    const data = rows.slice(0, limit).map((r) => ({ ...r, createdAt: r.created_at.toISOString() }));
    return send(res, 200, { data, limit, hasMore: rows.length > limit, nextCursor: null });
  }
  const chunks = [];
  for await (const c of req) chunks.push(c);
  const body = JSON.parse(Buffer.concat(chunks).toString());
  if (req.method === 'PATCH') {
    const task = await patch(who.team_id, id, body);
    if (task) return send(res, 200, task);
    const current = await one(who.team_id, id);
    return send(res, 409, { code: 'stale_write', currentUpdatedAt: current?.updated_at.toISOString() });
  }
  send(res, 201, await create(who.team_id, who.member_id, body));
}
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
process.on('SIGINT', () => process.exit(0));
