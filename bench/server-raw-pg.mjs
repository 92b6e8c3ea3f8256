// The Postgres baseline: raw node:http + pg doing the same statements' work as pmapi — bearer lookup by
// prefix with a SHA-256 check; the same keyset page query and one statement for the page's link rows;
// one row by id and its links; the same insert plus an outbox row in one transaction; a guarded UPDATE
// (… where updated_at = $) plus an outbox row in one transaction — and nothing else. Named (prepared)
// statements throughout. Tasks are answered with the API's JSON (raw-task.mjs), the same bytes as pmapi.
import http from 'node:http';
import { createHash, randomUUID, randomBytes } from 'node:crypto';
import pg from 'pg';
import { LINK_KINDS, cursorAfter, taskOf, tasksOf } from './raw-task.mjs';

const ONE_BATCH = process.env.BENCH_RAW_CREATE === 'onebatch';
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
  const inserted = await c.query({
    name: 'ins',
    text: `insert into tasks (id, team_id, name, project_id, archived, completed, status_id, "order", nice_id, created_at, updated_at, created_by_id, custom_fields)
           values ($1, $2, $3, $4, false, false, $5, $6, $7, $8, $8, $9, '[]') returning *`,
    values: [id, team, body.name, body.projectId, body.statusId, order, nice, now, member],
  });
  const task = taskOf(inserted.rows[0]);
  await outbox(c, team, 'task.created', id, body.projectId, task, now);
  return task;
});

// BENCH_RAW_CREATE=onebatch (bench/onebatch.mjs): an experiment instead of the baseline's create, measuring what a
// create could reach with the project row's lock held for one round trip only. Every create in a project bumps its
// counter, so creates queue on that row (bench/waits.mjs); the baseline holds it over four round trips, pmapi over one
// and the gap before its last write. Here the bump, the insert (niceId and MAX(order) + 1 read by the database in the
// insert's subselects, after the bump holds the lock, so it sees every earlier create), the outbox row (the event's
// niceId and order set into its jsonb body by the database) and the commit go as one simple query: one round trip,
// literals escaped (no prepared statements: Postgres parses each, which a pipeline of prepared ones would not).
const L = (v) => (v === null ? 'null' : pg.Client.prototype.escapeLiteral(String(v)));
const NULLS = ['created_by_actor_id', 'updated_by_actor_id', 'created_by_actor_type', 'updated_by_actor_type', 'description', 'archived_at', 'archived_by_id',
  'completed_at', 'completed_by_id', 'list_id', 'parent_task_id', 'dependency_id', 'recurring_rule_id', 'start_at', 'due_at', 'remind_at', 'story_points',
  'estimate', 'order_list', 'banner', 'embed_url', 'order', 'nice_id'];

const createInOneBatch = async (team, member, body) => {
  const id = randomBytes(9).toString('base64url').replace(/[-_]/g, 'x');
  const now = new Date();
  // The task as it will be stored, but for niceId and order, which the database sets into the event.
  const row = { id, team_id: team, name: body.name, project_id: body.projectId, archived: false, completed: false, status_id: body.statusId, created_at: now, updated_at: now, created_by_id: member, custom_fields: [] };
  for (const k of NULLS) row[k] = null;
  const event = JSON.stringify({ type: 'task.created', payload: { task: taskOf(row) } });
  const [t, p, at] = [L(team), L(body.projectId), L(now.toISOString())];
  const results = await pool.query(`begin;
update projects set task_counter = task_counter + 1 where id = ${p};
insert into tasks (id, team_id, name, project_id, archived, completed, status_id, "order", nice_id, created_at, updated_at, created_by_id, custom_fields)
  values (${L(id)}, ${t}, ${L(body.name)}, ${p}, false, false, ${L(body.statusId)}, coalesce((select max("order") from tasks where team_id = ${t} and project_id = ${p}), 0) + 1,
  (select task_counter::text from projects where id = ${p}), ${at}, ${at}, ${L(member)}, '[]');
insert into outbox (id, team_id, type, aggregate_type, aggregate_id, project_id, body, created_at)
  select ${L(randomUUID())}, ${t}, 'task.created', 'task', k.id, k.project_id,
  jsonb_set(jsonb_set(${L(event)}::jsonb, '{payload,task,niceId}', to_jsonb(k.nice_id)), '{payload,task,order}', to_jsonb(k."order")), ${at} from tasks k where k.id = ${L(id)};
select * from tasks where id = ${L(id)};
commit`);
  return taskOf(results[4].rows[0]);
};

const links = async (c, id) => (await c.query({ name: 'links', text: 'select kind, related_id from links where kind = any($1) and parent_id = $2 order by kind, created_at, related_id', values: [LINK_KINDS, id] })).rows;

const patch = (team, id, body) => tx(async (c) => {
  const expected = new Date(body.expectedUpdatedAt);
  const now = new Date(Math.max(Date.now(), expected.getTime() + 1));
  const { rows } = await c.query({ name: 'upd', text: 'update tasks set name = $1, updated_at = $2 where id = $3 and team_id = $4 and updated_at = $5 returning *', values: [body.name, now, id, team, expected] });
  if (!rows[0]) return null;
  const task = taskOf(rows[0], await links(c, id));
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
    return row ? send(res, 200, taskOf(row, await links(pool, id))) : res.writeHead(404).end();
  }
  if (req.method === 'GET') {
    const limit = Number(url.searchParams.get('limit') ?? 50);
    const { rows } = await pool.query({ name: 'list', text: 'select * from tasks where team_id = $1 and project_id = $2 order by "order", id limit $3', values: [who.team_id, url.searchParams.get('projectId'), limit + 1] });
    const page = rows.slice(0, limit);
    const pageLinks = await pool.query({ name: 'pagelinks', text: 'select parent_id, kind, related_id from links where kind = any($1) and parent_id = any($2) order by kind, parent_id, created_at, related_id', values: [LINK_KINDS, page.map((r) => r.id)] });
    const hasMore = rows.length > limit;
    return send(res, 200, { data: tasksOf(page, pageLinks.rows), limit, hasMore, nextCursor: hasMore ? cursorAfter(page[page.length - 1], who.team_id) : null });
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
  send(res, 201, await (ONE_BATCH ? createInOneBatch : create)(who.team_id, who.member_id, body));
}
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
process.on('SIGINT', () => process.exit(0));
