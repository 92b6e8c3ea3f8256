// Build a SQLite file with one workspace, one project and N tasks, through the real API for the
// workspace and project and with one bulk insert for the tasks (same columns the API writes).
import { createPmapi } from '@pmapi/core';
import { openSqliteStore } from '@pmapi/adapter-sqlite';
import { openPostgresStore } from '@pmapi/adapter-postgres';

/** `target`: a SQLite file path or a postgres:// URL. */
export async function seed(target, n) {
  const store = target.startsWith('postgres') ? await openPostgresStore({ connectionString: target }) : await openSqliteStore({ filename: target });
  const api = await createPmapi({ store });
  const ws = await api.admin.createWorkspace({ name: 'Bench', owner: { name: 'Bench Owner' } });
  const { token } = await api.admin.issueToken(ws.ownerMemberId, { scopes: ['read', 'write', 'delete'] });
  const call = async (method, url, body) => {
    const r = await api.handle({ method, url, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: body && JSON.stringify(body) });
    return JSON.parse(r.body);
  };
  const project = await call('POST', '/api/v3/projects', { name: 'Bench project' });
  const first = await call('POST', '/api/v3/tasks', { name: 'task 0', projectId: project.id });
  const template = await store.db.selectFrom('tasks').selectAll().where('id', '=', first.id).executeTakeFirstOrThrow();
  await store.transaction(async (trx) => {
    const rows = [];
    for (let i = 1; i < n; i++) {
      rows.push({ ...template, id: `bench${String(i).padStart(9, '0')}`, name: `task ${i}`, order: i + 1, nice_id: String(i + 1) });
      if (rows.length === 300) await trx.insertInto('tasks').values(rows.splice(0)).execute();
    }
    if (rows.length) await trx.insertInto('tasks').values(rows).execute();
    await trx.updateTable('projects').set({ task_counter: n }).where('id', '=', project.id).execute();
  });
  // Fresh statistics, as autovacuum would eventually gather them.
  if (target.startsWith('postgres')) await store.db.executeQuery({ sql: 'analyze', parameters: [], query: { kind: 'RawNode' } });
  await api.close();
  return { token, projectId: project.id, statusId: first.statusId, teamId: ws.id };
}
