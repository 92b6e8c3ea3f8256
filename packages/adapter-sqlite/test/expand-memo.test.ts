import { describe, it, expect, afterAll } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createPmapi, fakeClock } from '@pmapi/core';
import { openSqliteStore } from '@pmapi/adapter-sqlite';

// Issue 11: on SQLite the rows an expanded page's hops read (its project, statuses, assignees) are
// remembered between requests while nothing can have changed them (store.changeStamp for the row's table
// and links: this connection's writes, PRAGMA data_version for other connections). The page must show
// exactly what the database holds now (spec "Expansion": expanded objects are the related resources as
// GET would show them), whoever changed them.
describe('SQLite: rows an expanded page remembers never outlive a change (issue 11)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pmapi-expand-memo-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  async function setup(name: string) {
    const file = join(dir, `${name}.db`);
    const statements: string[] = [];
    const clock = fakeClock('2026-03-01T00:00:00.000Z');
    const store = await openSqliteStore({ filename: file, onQuery: (q) => statements.push(q) });
    const api = await createPmapi({ store, clock, rateLimiter: false });
    const ws = await api.admin.createWorkspace({ name: 'W', owner: { name: 'Owner' } });
    const { token } = await api.admin.issueToken(ws.ownerMemberId, { scopes: ['read', 'write', 'delete'] });
    const call = async (method: string, url: string, body?: unknown) => {
      const r = await api.handle({ method, url: `/api/v3${url}`, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
      return { status: r.status, body: r.body === undefined || r.body === '' ? undefined : JSON.parse(String(r.body)) };
    };
    const project = (await call('POST', '/projects', { name: 'Alpha' })).body;
    const task = await call('POST', '/tasks', { projectId: project.id, name: 'T', assignees: [ws.ownerMemberId] });
    expect(task.status).toBe(201);
    const page = async () => {
      const r = await call('GET', `/tasks?projectId=${project.id}&expand=assignees,status,project`);
      expect(r.status).toBe(200);
      return r.body.data[0];
    };
    return { file, statements, store, api, ws, project, page, call };
  }
  const hopReads = (statements: string[]) => statements.filter((q) => /^select/i.test(q) && /from "(members|statuses|projects)" where "team_id" = \? and "id" in/.test(q)).length;

  it('a second page reads no hop again: one statement for the page', async () => {
    const t = await setup('hit');
    try {
      t.statements.length = 0;
      await t.page();
      expect(hopReads(t.statements)).toBe(3);
      t.statements.length = 0;
      const again = await t.page();
      expect(hopReads(t.statements)).toBe(0);
      expect(t.statements.filter((q) => /^select/i.test(q))).toHaveLength(1);
      expect([again.project.name, again.assignees.map((a: { id: string }) => a.id)]).toEqual(['Alpha', [t.ws.ownerMemberId]]);
    } finally {
      await t.api.close();
    }
  });

  it('a write to one hop\'s table reads that hop again and keeps the others', async () => {
    const t = await setup('one-table');
    try {
      await t.page();
      expect((await t.call('PATCH', `/projects/${t.project.id}`, { name: 'Beta' })).status).toBe(200);
      t.statements.length = 0;
      const after = await t.page();
      expect(after.project.name).toBe('Beta');
      // The project's row changed (and so did links, which a project's members are read from: every hop is read).
      expect(hopReads(t.statements)).toBeGreaterThanOrEqual(1);
      t.statements.length = 0;
      await t.page();
      expect(hopReads(t.statements)).toBe(0);
    } finally {
      await t.api.close();
    }
  });

  it('a change committed by another connection to the file (another process) is shown on the next page', async () => {
    const t = await setup('other');
    try {
      await t.page();
      await t.page();
      const other = new Database(t.file);
      other.prepare('update projects set name = ? where id = ?').run('Renamed elsewhere', t.project.id);
      other.prepare('update members set name = ? where id = ?').run('Owner elsewhere', t.ws.ownerMemberId);
      other.close();
      const after = await t.page();
      expect([after.project.name, after.assignees[0].name]).toEqual(['Renamed elsewhere', 'Owner elsewhere']);
    } finally {
      await t.api.close();
    }
  });

  it("a write through the host's own handle (store.db) is shown on the next page", async () => {
    const t = await setup('host');
    try {
      await t.page();
      await t.page();
      await t.store.db.updateTable('statuses').set({ name: 'Changed by host' }).where('team_id', '=', t.ws.id).execute();
      expect((await t.page()).status.name).toBe('Changed by host');
      // A link row alone (a project member added) changes the project's JSON.
      const members = (await t.page()).project.members as string[];
      const other = await t.api.admin.addMember(t.ws.id, { name: 'Bea', role: 'regular' });
      expect((await t.call('PATCH', `/projects/${t.project.id}`, { members: [...members, other.id] })).status).toBe(200);
      expect((await t.page()).project.members).toEqual([...members, other.id]);
    } finally {
      await t.api.close();
    }
  });
});
