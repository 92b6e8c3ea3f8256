import { describe, it, expect, beforeAll } from 'vitest';
import { renameDuplicateFolders } from '@pmapi/core/sql';
import type { StoreFactory } from '../../kit';
import { during, harnessPerDescribe, ofType } from '../shared';
import { expectOk as ok, expectProblem as problem, expectInvalid as invalid } from './helpers';

/**
 * Project folders (spec "Project": `projectFolderId` is the folder within the
 * portfolio, null is unfiled; "Other resources": fields not shown, decisions
 * in docs/not-shown.md "Project folders"): name, portfolioId, order, the
 * portfolio rule on projects, unfiling on delete, and the role policy.
 */

export function projectFoldersSuite(factory: StoreFactory): void {
  describe(`[${factory.name}] v3 Project folders: fields (name, portfolioId, order) and their rules`, () => {
    const H = harnessPerDescribe(factory);
    let other: any;
    beforeAll(async () => {
      other = ok(await H().post('/portfolios', { name: 'Folders elsewhere' }), 201);
    });

    it('POST /project-folders → 201: trimmed name, the General portfolio by default, order appended; GET answers the same', async () => {
      const a = ok(await H().post('/project-folders', { name: '  Clients \t' }), 201);
      expect(a.name).toBe('Clients');
      expect(a.portfolioId).toBe(H().a.generalPortfolioId);
      const b = ok(await H().post('/project-folders', { name: 'Internal' }), 201);
      expect(b.order).toBe(a.order + 1);
      expect(ok(await H().get(`/project-folders/${a.id}`))).toEqual(a);
      // Appending is per portfolio: the first folder of another portfolio gets order 1.
      const c = ok(await H().post('/project-folders', { name: 'Clients', portfolioId: other.id }), 201);
      expect(c.order).toBe(1);
      expect(c.portfolioId).toBe(other.id);
    });

    it('name: required, 1-100 characters after trimming (create and update)', async () => {
      invalid(await H().post('/project-folders', {}), 'name');
      invalid(await H().post('/project-folders', { name: '   ' }), 'name');
      invalid(await H().post('/project-folders', { name: 'n'.repeat(101) }), 'name');
      const f = ok(await H().post('/project-folders', { name: 'n'.repeat(100) }), 201);
      invalid(await H().patch(`/project-folders/${f.id}`, { name: '' }), 'name');
      invalid(await H().patch(`/project-folders/${f.id}`, { name: 'm'.repeat(101) }), 'name');
      expect(ok(await H().get(`/project-folders/${f.id}`)).name).toBe('n'.repeat(100));
    });

    it('name is unique within the portfolio: a duplicate create or rename is 409 conflict', async () => {
      ok(await H().post('/project-folders', { name: 'Unique one' }), 201);
      problem(await H().post('/project-folders', { name: 'Unique one' }), 409, 'conflict');
      const f = ok(await H().post('/project-folders', { name: 'Unique two' }), 201);
      problem(await H().patch(`/project-folders/${f.id}`, { name: 'Unique one' }), 409, 'conflict');
      // The same name in another portfolio is fine.
      ok(await H().post('/project-folders', { name: 'Unique one', portfolioId: other.id }), 201);
    });

    it('concurrent creates of one name in one portfolio: exactly one is 201, every other is 409 conflict on name, and one folder exists', async () => {
      const n = 6;
      const replies = await Promise.all(Array.from({ length: n }, () => H().post('/project-folders', { name: 'Raced create' })));
      const created = replies.filter((r) => r.status === 201);
      expect(created, JSON.stringify(replies.map((r) => r.body))).toHaveLength(1);
      for (const r of replies.filter((x) => x.status !== 201)) expect(problem(r, 409, 'conflict').field).toBe('name');
      const listed = ok(await H().get('/project-folders?name[eq]=Raced%20create')).data;
      expect(listed.map((f: any) => f.id)).toEqual([created[0]!.body.id]);
    });

    it('concurrent renames of different folders to one name: exactly one succeeds, the others are 409 conflict on name and keep their names', async () => {
      const n = 5;
      const folders = [];
      for (let i = 0; i < n; i++) folders.push(ok(await H().post('/project-folders', { name: `Rename racer ${i}` }), 201));
      const replies = await Promise.all(folders.map((f) => H().patch(`/project-folders/${f.id}`, { name: 'Raced rename' })));
      const renamed = replies.filter((r) => r.status === 200);
      expect(renamed, JSON.stringify(replies.map((r) => r.body))).toHaveLength(1);
      for (const r of replies.filter((x) => x.status !== 200)) expect(problem(r, 409, 'conflict').field).toBe('name');
      const names = await Promise.all(folders.map(async (f) => ok(await H().get(`/project-folders/${f.id}`)).name));
      expect(names.filter((x) => x === 'Raced rename')).toHaveLength(1);
      // A create racing a rename to the same name: one of the two wins.
      const spare = ok(await H().post('/project-folders', { name: 'Rename racer spare' }), 201);
      const [a, b] = await Promise.all([H().post('/project-folders', { name: 'Create or rename' }), H().patch(`/project-folders/${spare.id}`, { name: 'Create or rename' })]);
      expect([a.status, b.status].sort()).toEqual(a.status === 201 ? [201, 409] : [200, 409]);
    });

    it('concurrent creates of different names each append: distinct orders after the last folder', async () => {
      const pf = ok(await H().post('/portfolios', { name: 'Appending concurrently' }), 201);
      const first = ok(await H().post('/project-folders', { name: 'Append 0', portfolioId: pf.id }), 201);
      const replies = await Promise.all([1, 2, 3, 4, 5].map((i) => H().post('/project-folders', { name: `Append ${i}`, portfolioId: pf.id })));
      const orders = replies.map((r) => ok(r, 201).order as number).sort((x, y) => x - y);
      expect(orders).toEqual([first.order + 1, first.order + 2, first.order + 3, first.order + 4, first.order + 5]);
    });

    it('the store itself refuses a second folder of the same name in a portfolio (unique index), whatever writes it', async () => {
      const f = ok(await H().post('/project-folders', { name: 'Stored once' }), 201);
      const row = await H().store.db.selectFrom('project_folders').selectAll().where('id', '=', f.id).executeTakeFirstOrThrow();
      await expect(H().store.db.insertInto('project_folders').values({ ...row, id: `${f.id.slice(0, -4)}dup0` }).execute()).rejects.toSatisfy((e: unknown) => H().store.dialect.isUniqueViolation(e));
      // Case and other portfolios are distinct names (the API check compares names exactly).
      ok(await H().post('/project-folders', { name: 'stored once' }), 201);
    });

    it('migration 0023: folders stored twice under one name before the index keep the oldest; the others get "Name (2)", "Name (3)" (free, at most 100 characters)', async () => {
      const h = H();
      const pf = ok(await h.post('/portfolios', { name: 'Duplicated before' }), 201);
      const a = ok(await h.post('/project-folders', { name: 'Twice', portfolioId: pf.id }), 201);
      ok(await h.post('/project-folders', { name: 'Twice (2)', portfolioId: pf.id }), 201);
      const long = ok(await h.post('/project-folders', { name: 'L'.repeat(100), portfolioId: pf.id }), 201);
      // As the store was before the index: copies of the same name, created later.
      await h.store.db.schema.dropIndex('project_folders_portfolio_name').execute();
      try {
        const copy = async (f: any, suffix: string) => {
          const row = await h.store.db.selectFrom('project_folders').selectAll().where('id', '=', f.id).executeTakeFirstOrThrow();
          await h.store.db.insertInto('project_folders').values({ ...row, id: `${f.id.slice(0, -2)}${suffix}`, created_at: h.store.dialect.encode('timestamp', Date.parse(f.createdAt) + 1) }).execute();
          return `${f.id.slice(0, -2)}${suffix}`;
        };
        const twiceB = await copy(a, 'x1');
        const twiceC = await copy(a, 'x2');
        const longB = await copy(long, 'x3');
        expect(await renameDuplicateFolders(h.store.db, h.store.dialect, h.clock.now())).toBe(3);
        expect(ok(await h.get(`/project-folders/${a.id}`)).name).toBe('Twice');
        const renamed = [ok(await h.get(`/project-folders/${twiceB}`)).name, ok(await h.get(`/project-folders/${twiceC}`)).name].sort();
        expect(renamed).toEqual(['Twice (3)', 'Twice (4)']);
        expect(ok(await h.get(`/project-folders/${longB}`)).name).toBe(`${'L'.repeat(96)} (2)`);
        expect(await renameDuplicateFolders(h.store.db, h.store.dialect, h.clock.now())).toBe(0);
      } finally {
        await h.store.db.schema.createIndex('project_folders_portfolio_name').unique().on('project_folders').columns(['portfolio_id', 'name']).execute();
      }
    });

    it('portfolioId is set once (changing it is 400 immutable); an unknown or other-workspace portfolio is 404', async () => {
      const f = ok(await H().post('/project-folders', { name: 'Fixed place' }), 201);
      invalid(await H().patch(`/project-folders/${f.id}`, { portfolioId: other.id }), 'portfolioId', 'immutable');
      problem(await H().post('/project-folders', { name: 'Nowhere', portfolioId: 'nosuchportfolio' }), 404, 'resource_not_found');
      problem(await H().post('/project-folders', { name: 'Elsewhere', portfolioId: H().b.generalPortfolioId }), 404, 'resource_not_found');
    });

    it('another workspace never sees them (404 and empty list)', async () => {
      const f = ok(await H().post('/project-folders', { name: 'Private to A' }), 201);
      problem(await H().get(`/project-folders/${f.id}`, { token: H().b.owner.token }), 404, 'resource_not_found');
      expect(ok(await H().get('/project-folders', { token: H().b.owner.token })).data).toEqual([]);
    });

    it('a portfolio purged for good takes its folders with it (projectFolder.removed)', async () => {
      const pf = ok(await H().post('/portfolios', { name: 'Short-lived' }), 201);
      const f = ok(await H().post('/project-folders', { name: 'In short-lived', portfolioId: pf.id }), 201);
      expect((await H().del(`/portfolios/${pf.id}`)).status).toBe(204);
      // Trashed, the portfolio keeps its folders (a restore brings everything back).
      ok(await H().get(`/project-folders/${f.id}`));
      const { events } = await during(H(), async () => {
        H().clock.advance(31 * 24 * 3600 * 1000);
        await H().api.jobs.purge();
      });
      expect(ofType(events, 'projectFolder.removed', f.id)).toHaveLength(1);
      problem(await H().get(`/project-folders/${f.id}`), 404, 'resource_not_found');
    });

    it('policy: a regular member creates, renames and deletes folders; a guest reads them but cannot write (403)', async () => {
      const f = ok(await H().post('/project-folders', { name: 'By regular' }, { token: H().a.regular.token }), 201);
      ok(await H().patch(`/project-folders/${f.id}`, { name: 'By regular 2' }, { token: H().a.regular.token }));
      ok(await H().get(`/project-folders/${f.id}`, { token: H().a.client.token }));
      problem(await H().post('/project-folders', { name: 'By guest' }, { token: H().a.client.token }), 403, 'permission_denied');
      problem(await H().del(`/project-folders/${f.id}`, { token: H().a.client.token }), 403, 'permission_denied');
      expect((await H().del(`/project-folders/${f.id}`, { token: H().a.regular.token })).status).toBe(204);
    });
  });

  describe(`[${factory.name}] v3 Project: projectFolderId (folder within the portfolio; null is unfiled)`, () => {
    const H = harnessPerDescribe(factory);
    let other: any;
    let folder: any;
    let foreign: any;
    beforeAll(async () => {
      other = ok(await H().post('/portfolios', { name: 'Second portfolio' }), 201);
      folder = ok(await H().post('/project-folders', { name: 'Filed' }), 201);
      foreign = ok(await H().post('/project-folders', { name: 'Other portfolio folder', portfolioId: other.id }), 201);
    });

    it('a project is created unfiled (null) or in a folder of its portfolio; PATCH files and unfiles it', async () => {
      const p = await H().project({ name: 'Unfiled' });
      expect(p.projectFolderId).toBeNull();
      const q = await H().project({ name: 'In folder', projectFolderId: folder.id });
      expect(q.projectFolderId).toBe(folder.id);
      expect(ok(await H().patch(`/projects/${p.id}`, { projectFolderId: folder.id })).projectFolderId).toBe(folder.id);
      expect(ok(await H().patch(`/projects/${p.id}`, { projectFolderId: null })).projectFolderId).toBeNull();
    });

    it("a folder of another portfolio is 400 validation_failed (folder_portfolio_mismatch), on create and update, and nothing is written", async () => {
      invalid(await H().post('/projects', { name: 'Wrong folder', projectFolderId: foreign.id }), 'projectFolderId', 'folder_portfolio_mismatch');
      expect(ok(await H().get('/projects?name[eq]=Wrong%20folder')).data).toEqual([]);
      ok(await H().post('/projects', { name: 'Right folder', portfolioId: other.id, projectFolderId: foreign.id }), 201);
      const p = await H().project({ name: 'Stays unfiled' });
      invalid(await H().patch(`/projects/${p.id}`, { projectFolderId: foreign.id }), 'projectFolderId', 'folder_portfolio_mismatch');
      expect(ok(await H().get(`/projects/${p.id}`)).projectFolderId).toBeNull();
    });

    it('an unknown folder id is 404 resource_not_found naming projectFolderId', async () => {
      const r = problem(await H().post('/projects', { name: 'Ghost folder', projectFolderId: 'nosuchfolder' }), 404, 'resource_not_found');
      expect(JSON.stringify(r)).toContain('projectFolderId');
    });

    it('projects filter by projectFolderId (eq, null) and expand projectFolder', async () => {
      const f = ok(await H().post('/project-folders', { name: 'Filter me' }), 201);
      const p = await H().project({ name: 'Filtered in', projectFolderId: f.id });
      const listed = ok(await H().get(`/projects?projectFolderId[eq]=${f.id}&expand=projectFolder`)).data;
      expect(listed.map((x: any) => x.id)).toEqual([p.id]);
      expect(listed[0].projectFolder.id).toBe(f.id);
      const unfiled = ok(await H().get('/projects?projectFolderId[null]=true&limit=200')).data.map((x: any) => x.id);
      expect(unfiled).not.toContain(p.id);
    });

    it('deleting a folder unfiles its projects (projectFolderId null) with project.updated for each, and removes the folder for good', async () => {
      const f = ok(await H().post('/project-folders', { name: 'Doomed' }), 201);
      const p1 = await H().project({ name: 'Doomed 1', projectFolderId: f.id });
      const p2 = await H().project({ name: 'Doomed 2', projectFolderId: f.id });
      const bystander = await H().project({ name: 'Bystander', projectFolderId: folder.id });
      const { events } = await during(H(), async () => expect((await H().del(`/project-folders/${f.id}`)).status).toBe(204));
      expect(ofType(events, 'projectFolder.removed', f.id)).toHaveLength(1);
      for (const p of [p1, p2]) {
        expect(ok(await H().get(`/projects/${p.id}`)).projectFolderId).toBeNull();
        const updated = ofType(events, 'project.updated', p.id);
        expect(updated).toHaveLength(1);
        expect(updated[0].payload.project.projectFolderId).toBeNull();
      }
      expect(ofType(events, 'project.updated', bystander.id)).toHaveLength(0);
      expect(ok(await H().get(`/projects/${bystander.id}`)).projectFolderId).toBe(folder.id);
      problem(await H().get(`/project-folders/${f.id}`), 404, 'resource_not_found');
    });

    it('a trashed project is unfiled too, so restoring it does not point at a folder that is gone', async () => {
      const f = ok(await H().post('/project-folders', { name: 'Trash test' }), 201);
      const p = await H().project({ name: 'Trashed filed', projectFolderId: f.id });
      expect((await H().del(`/projects/${p.id}`)).status).toBe(204);
      expect((await H().del(`/project-folders/${f.id}`)).status).toBe(204);
      expect(ok(await H().post(`/projects/${p.id}/restore`)).projectFolderId).toBeNull();
    });

    it('project folder lifecycle events: created, updated, removed carry the folder', async () => {
      const { events, result } = await during(H(), async () => {
        const f = ok(await H().post('/project-folders', { name: 'Evented' }), 201);
        ok(await H().patch(`/project-folders/${f.id}`, { name: 'Evented 2' }));
        await H().del(`/project-folders/${f.id}`);
        return f;
      });
      expect(ofType(events, 'projectFolder.created', result.id)[0].payload.projectFolder.name).toBe('Evented');
      expect(ofType(events, 'projectFolder.updated', result.id)[0].payload.projectFolder.name).toBe('Evented 2');
      expect(ofType(events, 'projectFolder.removed', result.id)).toHaveLength(1);
    });
  });
}
