// Build a database with one workspace, one project, three more members and N tasks: the workspace,
// project and members through the real API, the tasks with one bulk insert (the columns the API
// writes), each task with one or two assignees (links rows, as the API writes them).
import { createPmapi } from '@pmapi/core';
import { openSqliteStore } from '@pmapi/adapter-sqlite';
import { openPostgresStore } from '@pmapi/adapter-postgres';

/** `target`: a SQLite file path or a postgres:// URL. */
export async function seed(target, n) {
  const store = target.startsWith('postgres') ? await openPostgresStore({ connectionString: target }) : await openSqliteStore({ filename: target });
  const api = await createPmapi({ store, rateLimiter: false });
  const ws = await api.admin.createWorkspace({ name: 'Bench', owner: { name: 'Bench Owner' } });
  const members = [ws.ownerMemberId];
  for (const name of ['Ada', 'Grace', 'Linus']) members.push((await api.admin.addMember(ws.id, { name, role: 'regular' })).id);
  const { token } = await api.admin.issueToken(ws.ownerMemberId, { scopes: ['read', 'write', 'delete'] });
  const call = async (method, url, body) => {
    const r = await api.handle({ method, url, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: body && JSON.stringify(body) });
    return JSON.parse(r.body);
  };
  const project = await call('POST', '/api/v3/projects', { name: 'Bench project' });
  const first = await call('POST', '/api/v3/tasks', { name: 'task 0', projectId: project.id, assignees: [members[0]] });
  const template = await store.db.selectFrom('tasks').selectAll().where('id', '=', first.id).executeTakeFirstOrThrow();
  const link = await store.db.selectFrom('links').selectAll().where('parent_id', '=', first.id).executeTakeFirstOrThrow();
  const taskIds = [first.id];
  await store.transaction(async (trx) => {
    const rows = [];
    const links = [];
    const flush = async () => {
      if (rows.length) await trx.insertInto('tasks').values(rows.splice(0)).execute();
      if (links.length) await trx.insertInto('links').values(links.splice(0)).execute();
    };
    for (let i = 1; i < n; i++) {
      const id = `bench${String(i).padStart(9, '0')}`;
      taskIds.push(id);
      rows.push({ ...template, id, name: `task ${i}`, order: i + 1, nice_id: String(i + 1) });
      links.push({ ...link, parent_id: id, related_id: members[i % 4] });
      if (i % 3 === 0) links.push({ ...link, parent_id: id, related_id: members[(i + 1) % 4] });
      if (rows.length === 300) await flush();
    }
    await flush();
    await trx.updateTable('projects').set({ task_counter: n }).where('id', '=', project.id).execute();
  });
  // Fresh statistics, as autovacuum would eventually gather them.
  if (target.startsWith('postgres')) await store.db.executeQuery({ sql: 'analyze', parameters: [], query: { kind: 'RawNode' } });
  else await store.db.executeQuery({ sql: 'pragma wal_checkpoint(truncate)', parameters: [], query: { kind: 'RawNode' } });
  await api.close();
  return { token, projectId: project.id, statusId: first.statusId, teamId: ws.id, taskIds, members };
}

/**
 * The cursor the API itself hands out `depth` rows into the seeded project (min(50,000, tasks − 200): as deep as
 * the data goes), paging 200 at a time with `get(path)`, which answers a path's JSON (over HTTP or in process).
 */
export async function deepCursor(s, get) {
  const depth = Math.min(50_000, s.taskIds.length - 200);
  let cursor = null;
  for (let seen = 0; seen < depth; seen += 200) {
    cursor = (await get(`/api/v3/tasks?projectId=${s.projectId}&limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)).nextCursor;
  }
  return { cursor, depth };
}
