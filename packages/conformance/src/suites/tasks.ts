import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { harness, type Harness, type Reply, type StoreFactory } from '../kit';
import { during, harnessPerDescribe, ofType } from './shared';
import { expectOk as ok, expectProblem as problem, expectInvalid as invalid } from './resources/helpers';

const ids = (rows: any[]) => rows.map((r) => r.id);

export function tasksSuite(factory: StoreFactory): void {

  /** Mint extra owner tokens so bulk fixtures never lean on one token's rate-limit budget. */
  function tokenPool(h: Harness) {
    let n = 0;
    let tok = h.a.owner.token;
    return async () => {
      if (++n % 90 === 0) tok = (await h.api.admin.issueToken(h.a.owner.id, { scopes: ['read', 'write', 'delete'] })).token;
      return tok;
    };
  }

  async function getTask(h: Harness, id: string): Promise<any> {
    return ok(await h.get(`/tasks/${id}`));
  }

  async function defaultStatusOf(h: Harness, projectId: string): Promise<string | null> {
    return ok(await h.get(`/projects/${projectId}`)).defaultStatusId;
  }

  async function statusesOf(h: Harness, projectId: string): Promise<any[]> {
    return ok(await h.get(`/statuses?projectId=${projectId}&limit=200`)).data;
  }

  describe(`[${factory.name}] v3 Task: a PATCH answers the row as stored (spec "Standard operations": Update answers 200, the resource; Events "Body envelope": updated events carry the full current resource)`, () => {
    const H = harnessPerDescribe(factory);

    it('plain, relation-changing and project-moving updates: the answer and the task.updated payload equal a fresh GET', async () => {
      const h = H();
      const p = await h.project({ name: 'Stored rows' });
      const q = await h.project({ name: 'Stored rows, elsewhere' });
      const label = ok(await h.post('/labels', { name: 'stored-row-label' }), 201);
      const t = ok(await h.post('/tasks', { projectId: p.id, name: 'parent', assignees: [h.a.owner.id] }), 201);
      ok(await h.post('/tasks', { projectId: p.id, name: 'child', parentTaskId: t.id }), 201);
      const patches: Record<string, unknown>[] = [
        { name: 'renamed' },
        { labels: [label.id], assignees: [h.a.regular.id, h.a.owner.id] },
        { projectId: q.id },
        { description: 'after the move', expectedUpdatedAt: null },
      ];
      for (const body of patches) {
        h.clock.advance(1000);
        if ('expectedUpdatedAt' in body) body.expectedUpdatedAt = (await getTask(h, t.id)).updatedAt;
        const { result, events } = await during(h, () => h.patch(`/tasks/${t.id}`, body));
        const answer = ok(result);
        const fresh = await getTask(h, t.id);
        expect(answer, JSON.stringify(body)).toEqual(fresh);
        const [updated] = ofType(events, 'task.updated', t.id);
        expect(updated.payload.task, JSON.stringify(body)).toEqual(fresh);
      }
    });
  });

  describe(`[${factory.name}] v3 Task: name (1-1024 after trimming, promotional content)`, () => {
    const H = harnessPerDescribe(factory);
    let p: any;
    beforeAll(async () => {
      p = await H().project();
    });

    it('trims the name', async () => {
      const t = ok(await H().post('/tasks', { name: '   Write the report  ', projectId: p.id }), 201);
      expect(t.name).toBe('Write the report');
      const u = ok(await H().patch(`/tasks/${t.id}`, { name: '  Renamed \t' }));
      expect(u.name).toBe('Renamed');
    });

    it('accepts 1024 characters (after trimming) and rejects 1025', async () => {
      const exact = 'x'.repeat(1024);
      const t = ok(await H().post('/tasks', { name: exact, projectId: p.id }), 201);
      expect(t.name).toBe(exact);
      const padded = ok(await H().post('/tasks', { name: `  ${exact}  `, projectId: p.id }), 201);
      expect(padded.name).toBe(exact);
      const one = ok(await H().post('/tasks', { name: 'y', projectId: p.id }), 201);
      expect(one.name).toBe('y');
      invalid(await H().post('/tasks', { name: 'x'.repeat(1025), projectId: p.id }), 'name');
      invalid(await H().patch(`/tasks/${t.id}`, { name: 'z'.repeat(1025) }), 'name');
      expect((await getTask(H(), t.id)).name).toBe(exact);
    });

    it('rejects a blank name (empty after trimming) on create and update', async () => {
      invalid(await H().post('/tasks', { name: '   ', projectId: p.id }), 'name');
      invalid(await H().post('/tasks', { name: '', projectId: p.id }), 'name');
      const t = await H().task(p.id, { name: 'Keep me' });
      invalid(await H().patch(`/tasks/${t.id}`, { name: '   ' }), 'name');
      expect((await getTask(H(), t.id)).name).toBe('Keep me');
    });

    it('requires a name on create', async () => {
      invalid(await H().post('/tasks', { projectId: p.id }), 'name');
    });

    it('rejects promotional names with code promotional_content (create and update)', async () => {
      const before = ok(await H().get(`/tasks?projectId=${p.id}&limit=200`)).data.length;
      invalid(await H().post('/tasks', { name: 'Buy now: cheap casino chips', projectId: p.id }), 'name', 'promotional_content');
      invalid(
        await H().post('/tasks', { name: 'see https://a.example https://b.example https://c.example', projectId: p.id }),
        'name',
        'promotional_content',
      );
      expect(ok(await H().get(`/tasks?projectId=${p.id}&limit=200`)).data.length).toBe(before);
      const t = await H().task(p.id, { name: 'Plain' });
      invalid(await H().patch(`/tasks/${t.id}`, { name: 'FREE MONEY inside' }), 'name', 'promotional_content');
      expect((await getTask(H(), t.id)).name).toBe('Plain');
      // Two links are not spam.
      ok(await H().post('/tasks', { name: 'compare https://a.example and https://b.example', projectId: p.id }), 201);
    });
  });

  describe(`[${factory.name}] v3 Task: projectId on create (project_not_specified, parent's project)`, () => {
    const H = harnessPerDescribe(factory);
    let p: any;
    let q: any;
    beforeAll(async () => {
      p = await H().project();
      q = await H().project();
    });

    it('without projectId and parentTaskId → 400 project_not_specified', async () => {
      problem(await H().post('/tasks', { name: 'Orphan' }), 400, 'project_not_specified');
    });

    it("with only parentTaskId the subtask lands in the parent's project", async () => {
      const parent = await H().task(q.id);
      const sub = ok(await H().post('/tasks', { name: 'Sub', parentTaskId: parent.id }), 201);
      expect(sub.projectId).toBe(q.id);
      expect(sub.parentTaskId).toBe(parent.id);
      expect(sub.statusId).toBe(await defaultStatusOf(H(), q.id));
    });

    it('a parent in another project → validation_failed', async () => {
      const parent = await H().task(q.id);
      invalid(await H().post('/tasks', { name: 'Sub', parentTaskId: parent.id, projectId: p.id }), 'parentTaskId');
      const subs = ok(await H().get(`/tasks?parentTaskId[eq]=${parent.id}`)).data;
      expect(subs).toEqual([]);
    });

    it('a projectId of another workspace → 404 resource_not_found', async () => {
      const foreign = ok(await H().post('/projects', { name: 'Foreign' }, { token: H().b.owner.token }), 201);
      const b = problem(await H().post('/tasks', { name: 'X', projectId: foreign.id }), 404, 'resource_not_found');
      expect(b.field).toBe('projectId');
    });
  });

  describe(`[${factory.name}] v3 Task: default status (task_no_default_status)`, () => {
    const H = harnessPerDescribe(factory);

    it("statusId omitted → the project's first active status (= defaultStatusId)", async () => {
      const p = await H().project();
      const [todo] = await statusesOf(H(), p.id);
      const early = ok(await H().post('/statuses', { name: 'Early', projectId: p.id, order: 10 }), 201);
      ok(await H().post('/statuses', { name: 'Late', projectId: p.id, order: 500 }), 201);
      ok(await H().patch(`/statuses/${early.id}`, { archived: true }));
      // "Early" has the lowest order but is archived: "To do" is the first active one.
      const def = await defaultStatusOf(H(), p.id);
      expect(def).toBe(todo.id);
      const t = await H().task(p.id);
      expect(t.statusId).toBe(def);
      // Archive "To do" too: now "Late" is first.
      ok(await H().patch(`/statuses/${todo.id}`, { archived: true }));
      const late = (await statusesOf(H(), p.id)).find((s) => s.name === 'Late');
      expect(await defaultStatusOf(H(), p.id)).toBe(late.id);
      expect((await H().task(p.id)).statusId).toBe(late.id);
    });

    it('an explicit statusId is kept; null is allowed', async () => {
      const p = await H().project();
      const other = ok(await H().post('/statuses', { name: 'Other', projectId: p.id }), 201);
      expect((await H().task(p.id, { statusId: other.id })).statusId).toBe(other.id);
      expect((await H().task(p.id, { statusId: null })).statusId).toBeNull();
    });

    it('a statusId of another project → validation_failed', async () => {
      const p = await H().project();
      const q = await H().project();
      invalid(await H().post('/tasks', { name: 'X', projectId: p.id, statusId: await defaultStatusOf(H(), q.id) }), 'statusId');
    });

    it('a project whose statuses are all archived → 400 task_no_default_status', async () => {
      const p = await H().project();
      for (const s of await statusesOf(H(), p.id)) ok(await H().patch(`/statuses/${s.id}`, { archived: true }));
      problem(await H().post('/tasks', { name: 'Nowhere', projectId: p.id }), 400, 'task_no_default_status');
      expect(ok(await H().get(`/tasks?projectId=${p.id}`)).data).toEqual([]);
      // An explicit status (even an archived one) or null still works.
      ok(await H().post('/tasks', { name: 'No column', projectId: p.id, statusId: null }), 201);
    });
  });

  describe(`[${factory.name}] v3 Task: niceId (per-project counter)`, () => {
    const H = harnessPerDescribe(factory);

    it("counts '1', '2', '3' per project, independently", async () => {
      const p = await H().project();
      const q = await H().project();
      const a1 = await H().task(p.id);
      const b1 = await H().task(q.id);
      const a2 = await H().task(p.id);
      const a3 = await H().task(p.id);
      const b2 = await H().task(q.id);
      expect([a1.niceId, a2.niceId, a3.niceId]).toEqual(['1', '2', '3']);
      expect([b1.niceId, b2.niceId]).toEqual(['1', '2']);
    });

    it('is read-only: a sent niceId is ignored', async () => {
      const p = await H().project();
      const t = ok(await H().post('/tasks', { name: 'X', projectId: p.id, niceId: '999' }), 201);
      expect(t.niceId).toBe('1');
    });

    it('20 concurrent creates in one project get 20 distinct niceIds', async () => {
      const p = await H().project();
      const rs = await Promise.all(Array.from({ length: 20 }, (_, i) => H().post('/tasks', { name: `C${i}`, projectId: p.id })));
      for (const r of rs) ok(r, 201);
      const nice = rs.map((r) => r.body.niceId).sort((x, y) => Number(x) - Number(y));
      expect(nice).toEqual(Array.from({ length: 20 }, (_, i) => String(i + 1)));
    });

    it('20 concurrent creates in one project get 20 distinct auto orders, rising with niceId (the MAX(order) is read under the counter\'s lock)', async () => {
      const p = await H().project();
      const rs = await Promise.all(Array.from({ length: 20 }, (_, i) => H().post('/tasks', { name: `O${i}`, projectId: p.id })));
      const tasks = rs.map((r) => ok(r, 201)).sort((x, y) => Number(x.niceId) - Number(y.niceId));
      expect(tasks.map((t) => t.order)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    });
  });

  describe(`[${factory.name}] v3 Task: order (auto order, sibling subtasks cannot share a rank)`, () => {
    const H = harnessPerDescribe(factory);

    it('auto order is MAX(order)+1 in the project, increasing', async () => {
      const p = await H().project();
      const t1 = await H().task(p.id);
      const t2 = await H().task(p.id);
      expect(t2.order).toBe(t1.order + 1);
      const t3 = await H().task(p.id, { order: 10.5 });
      expect(t3.order).toBe(10.5);
      const t4 = await H().task(p.id);
      expect(t4.order).toBe(11.5);
      // Subtasks count towards the project's maximum.
      const sub = await H().task(p.id, { parentTaskId: t1.id });
      expect(sub.order).toBe(12.5);
      // Another project has its own sequence.
      const q = await H().project();
      const q1 = await H().task(q.id);
      const q2 = await H().task(q.id);
      expect(q2.order).toBe(q1.order + 1);
      expect(q1.order).toBeLessThan(11.5);
    });

    it('a subtask sent with the order of an existing sibling → 409 conflict; non-siblings may share', async () => {
      const p = await H().project();
      const parent = await H().task(p.id);
      const other = await H().task(p.id);
      const s1 = await H().task(p.id, { parentTaskId: parent.id });
      problem(await H().post('/tasks', { name: 'Dup', projectId: p.id, parentTaskId: parent.id, order: s1.order }), 409, 'conflict');
      expect(ok(await H().get(`/tasks?parentTaskId[eq]=${parent.id}`)).data.map((t: any) => t.id)).toEqual([s1.id]);
      // Same rank under a different parent, or at the top level: fine.
      const cousin = ok(await H().post('/tasks', { name: 'Cousin', projectId: p.id, parentTaskId: other.id, order: s1.order }), 201);
      expect(cousin.order).toBe(s1.order);
      const top = ok(await H().post('/tasks', { name: 'Top', projectId: p.id, order: s1.order }), 201);
      expect(top.order).toBe(s1.order);
      // A fresh rank between is fine; moving a sibling onto s1's rank is not.
      const s2 = ok(await H().post('/tasks', { name: 'S2', projectId: p.id, parentTaskId: parent.id, order: s1.order + 0.5 }), 201);
      problem(await H().patch(`/tasks/${s2.id}`, { order: s1.order }), 409, 'conflict');
      expect((await getTask(H(), s2.id)).order).toBe(s1.order + 0.5);
      // Re-parenting the cousin next to s1 (same rank) collides too.
      problem(await H().patch(`/tasks/${cousin.id}`, { parentTaskId: parent.id }), 409, 'conflict');
      expect((await getTask(H(), cousin.id)).parentTaskId).toBe(other.id);
    });
  });

  describe(`[${factory.name}] v3 States and transitions: task completed and archived`, () => {
    const H = harnessPerDescribe(factory);
    let p: any;
    beforeAll(async () => {
      p = await H().project({ accessType: 'public' });
    });

    it('completed true stamps completedAt (the clock) and completedById; false clears them', async () => {
      const t = await H().task(p.id);
      expect(t.completed).toBe(false);
      expect(t.completedAt).toBeNull();
      expect(t.completedById).toBeNull();
      H().clock.advance(60_000);
      const at = new Date(H().clock.now()).toISOString();
      const done = ok(await H().patch(`/tasks/${t.id}`, { completed: true }, { token: H().a.regular.token }));
      expect(done.completed).toBe(true);
      expect(done.completedAt).toBe(at);
      expect(done.completedById).toBe(H().a.regular.id);
      expect(await getTask(H(), t.id)).toMatchObject({ completed: true, completedAt: at, completedById: H().a.regular.id });
      // Sending completed true again keeps the first stamp.
      H().clock.advance(1000);
      const again = ok(await H().patch(`/tasks/${t.id}`, { completed: true }));
      expect(again.completedAt).toBe(at);
      expect(again.completedById).toBe(H().a.regular.id);
      const undone = ok(await H().patch(`/tasks/${t.id}`, { completed: false }));
      expect(undone).toMatchObject({ completed: false, completedAt: null, completedById: null });
    });

    it('created completed is stamped too; stamps sent by the client are ignored', async () => {
      const at = new Date(H().clock.now()).toISOString();
      const t = ok(await H().post('/tasks', {
        name: 'Born done', projectId: p.id, completed: true, completedAt: '2020-01-01T00:00:00.000Z', completedById: 'someone',
      }), 201);
      expect(t).toMatchObject({ completed: true, completedAt: at, completedById: H().a.owner.id });
    });

    it('archived true stamps archivedAt and archivedById; false clears them', async () => {
      const t = await H().task(p.id);
      expect(t).toMatchObject({ archived: false, archivedAt: null, archivedById: null });
      H().clock.advance(5_000);
      const at = new Date(H().clock.now()).toISOString();
      const arch = ok(await H().patch(`/tasks/${t.id}`, { archived: true }));
      expect(arch).toMatchObject({ archived: true, archivedAt: at, archivedById: H().a.owner.id });
      expect(await getTask(H(), t.id)).toMatchObject({ archived: true, archivedAt: at });
      const back = ok(await H().patch(`/tasks/${t.id}`, { archived: false }));
      expect(back).toMatchObject({ archived: false, archivedAt: null, archivedById: null });
    });
  });

  describe(`[${factory.name}] v3 States and transitions: task dependency rule (task_dependency_incomplete)`, () => {
    const H = harnessPerDescribe(factory);
    let p: any;
    beforeAll(async () => {
      p = await H().project();
    });

    it('completing a task whose dependency is incomplete → 400 and nothing changes; works once the dependency is done', async () => {
      const dep = await H().task(p.id, { name: 'First' });
      const t = await H().task(p.id, { name: 'Second', dependencyId: dep.id });
      expect(t.dependencyId).toBe(dep.id);
      H().clock.advance(1000);
      problem(await H().patch(`/tasks/${t.id}`, { completed: true, name: 'Second (done)' }), 400, 'task_dependency_incomplete');
      const after = await getTask(H(), t.id);
      expect(after).toMatchObject({ name: 'Second', completed: false, completedAt: null, completedById: null });
      expect(after.updatedAt).toBe(t.updatedAt);
      // Creating it already completed is refused the same way.
      problem(await H().post('/tasks', { name: 'Third', projectId: p.id, dependencyId: dep.id, completed: true }), 400, 'task_dependency_incomplete');
      ok(await H().patch(`/tasks/${dep.id}`, { completed: true }));
      const done = ok(await H().patch(`/tasks/${t.id}`, { completed: true }));
      expect(done.completed).toBe(true);
    });

    it('dropping the dependency in the same PATCH allows completing', async () => {
      const dep = await H().task(p.id);
      const t = await H().task(p.id, { dependencyId: dep.id });
      const done = ok(await H().patch(`/tasks/${t.id}`, { completed: true, dependencyId: null }));
      expect(done).toMatchObject({ completed: true, dependencyId: null });
    });

    it('the workspace setting allowCompletingBlockedTasks lets a blocked task complete', async () => {
      const dep = await H().task(p.id);
      const t = await H().task(p.id, { dependencyId: dep.id });
      problem(await H().patch(`/tasks/${t.id}`, { completed: true }), 400, 'task_dependency_incomplete');
      await H().api.admin.setWorkspaceSettings(H().a.id, { allowCompletingBlockedTasks: true });
      try {
        const done = ok(await H().patch(`/tasks/${t.id}`, { completed: true }));
        expect(done.completed).toBe(true);
        expect((await getTask(H(), dep.id)).completed).toBe(false);
      } finally {
        await H().api.admin.setWorkspaceSettings(H().a.id, { allowCompletingBlockedTasks: false });
      }
      const t2 = await H().task(p.id, { dependencyId: dep.id });
      problem(await H().patch(`/tasks/${t2.id}`, { completed: true }), 400, 'task_dependency_incomplete');
    });

    it('the setting of another workspace does not apply', async () => {
      await H().api.admin.setWorkspaceSettings(H().b.id, { allowCompletingBlockedTasks: true });
      const dep = await H().task(p.id);
      const t = await H().task(p.id, { dependencyId: dep.id });
      problem(await H().patch(`/tasks/${t.id}`, { completed: true }), 400, 'task_dependency_incomplete');
    });

    it('a task cannot depend on itself → validation_failed', async () => {
      const t = await H().task(p.id);
      invalid(await H().patch(`/tasks/${t.id}`, { dependencyId: t.id }), 'dependencyId');
      expect((await getTask(H(), t.id)).dependencyId).toBeNull();
    });
  });

  describe(`[${factory.name}] v3 Task: assignees, labels, subscribers (replace on update, sub-routes, filters)`, () => {
    const H = harnessPerDescribe(factory);
    let p: any;
    let labelIds: string[];
    let m: { owner: string; regular: string; client: string };
    beforeAll(async () => {
      p = await H().project({ accessType: 'public' });
      labelIds = ok(await H().get('/labels?limit=200')).data.map((l: any) => l.id);
      expect(labelIds.length).toBeGreaterThanOrEqual(3);
      m = { owner: H().a.owner.id, regular: H().a.regular.id, client: H().a.client.id };
    });

    const sorted = (xs: string[]) => [...xs].sort();
    const filter = async (q: string) => ids(ok(await H().get(`/tasks?projectId=${p.id}&${q}`)).data);

    it('sets are seeded on create, replaced by PATCH, kept when omitted', async () => {
      const t = ok(await H().post('/tasks', {
        name: 'Sets', projectId: p.id, assignees: [m.owner, m.regular], labels: [labelIds[0], labelIds[1]], subscribers: [m.client],
      }), 201);
      expect(sorted(t.assignees)).toEqual(sorted([m.owner, m.regular]));
      expect(sorted(t.labels)).toEqual(sorted([labelIds[0]!, labelIds[1]!]));
      expect(t.subscribers).toEqual([m.client]);
      const r = ok(await H().patch(`/tasks/${t.id}`, { assignees: [m.client], labels: [labelIds[2]] }));
      expect(r.assignees).toEqual([m.client]);
      expect(r.labels).toEqual([labelIds[2]]);
      expect(r.subscribers).toEqual([m.client]);
      const kept = ok(await H().patch(`/tasks/${t.id}`, { name: 'Sets renamed' }));
      expect(kept).toMatchObject({ assignees: [m.client], labels: [labelIds[2]], subscribers: [m.client] });
      const cleared = ok(await H().patch(`/tasks/${t.id}`, { subscribers: [] }));
      expect(cleared.subscribers).toEqual([]);
      expect(cleared.assignees).toEqual([m.client]);
      expect(await getTask(H(), t.id)).toMatchObject({ assignees: [m.client], labels: [labelIds[2]], subscribers: [] });
      expect(await filter(`assigneeId[eq]=${m.regular}`)).not.toContain(t.id);
      expect(await filter(`assigneeId[eq]=${m.client}`)).toContain(t.id);
      expect(await filter(`labelId[eq]=${labelIds[0]}`)).not.toContain(t.id);
      expect(await filter(`labelId[eq]=${labelIds[2]}`)).toContain(t.id);
    });

    it('an unknown member id in a set → 404 m2m_target_not_found, nothing changed', async () => {
      const t = await H().task(p.id, { assignees: [m.owner] });
      const b = problem(await H().patch(`/tasks/${t.id}`, { assignees: [m.regular, H().b.owner.id] }), 404, 'm2m_target_not_found');
      expect(b.missing).toEqual([H().b.owner.id]);
      expect((await getTask(H(), t.id)).assignees).toEqual([m.owner]);
    });

    for (const [rel, filterName] of [['assignees', 'assigneeId'], ['labels', 'labelId'], ['subscribers', 'subscriberId']] as const) {
      it(`POST/DELETE /tasks/{id}/${rel} add and remove single ids; re-adding is a no-op; ${filterName} follows`, async () => {
        const pick = () => (rel === 'labels' ? [labelIds[0]!, labelIds[1]!] : [m.owner, m.regular]);
        const [x, y] = pick();
        const t = await H().task(p.id);
        expect(t[rel]).toEqual([]);
        expect(await filter(`${filterName}[eq]=${x}`)).not.toContain(t.id);
        const added = ok(await H().post(`/tasks/${t.id}/${rel}`, { ids: [x] }));
        expect(added.id).toBe(t.id);
        expect(added[rel]).toEqual([x]);
        expect(await filter(`${filterName}[eq]=${x}`)).toContain(t.id);
        const again = ok(await H().post(`/tasks/${t.id}/${rel}`, { ids: [x, y, y] }));
        expect(sorted(again[rel])).toEqual(sorted([x!, y!]));
        expect(await filter(`${filterName}[in]=${y}`)).toContain(t.id);
        const removed = ok(await H().req('DELETE', `/tasks/${t.id}/${rel}`, { body: { ids: [x] } }));
        expect(removed[rel]).toEqual([y]);
        expect((await getTask(H(), t.id))[rel]).toEqual([y]);
        expect(await filter(`${filterName}[eq]=${x}`)).not.toContain(t.id);
        expect(await filter(`${filterName}[eq]=${y}`)).toContain(t.id);
        // Removing an id that is not linked is a no-op.
        const noop = ok(await H().req('DELETE', `/tasks/${t.id}/${rel}`, { body: { ids: [x] } }));
        expect(noop[rel]).toEqual([y]);
      });
    }

    it('a sub-route with an unknown id → 404 m2m_target_not_found and nothing added', async () => {
      const t = await H().task(p.id);
      const b = problem(await H().post(`/tasks/${t.id}/assignees`, { ids: [m.owner, H().b.owner.id] }), 404, 'm2m_target_not_found');
      expect(b.missing).toEqual([H().b.owner.id]);
      expect((await getTask(H(), t.id)).assignees).toEqual([]);
    });
  });

  describe(`[${factory.name}] v3 Endpoints with extra rules: PATCH /tasks/{id} moves the task and its subtree`, () => {
    const H = harnessPerDescribe(factory);

    /** A source project with a list, a root task in it with a two-level subtree. */
    async function tree() {
      const src = await H().project();
      const srcList = ok(await H().post('/lists', { name: 'Src list', projectId: src.id }), 201);
      await H().task(src.id, { name: 'filler' }); // niceId 1 in the source
      const root = await H().task(src.id, { name: 'Root', listId: srcList.id });
      const child = await H().task(src.id, { name: 'Child', parentTaskId: root.id, listId: srcList.id });
      const child2 = await H().task(src.id, { name: 'Child 2', parentTaskId: root.id });
      const grand = await H().task(src.id, { name: 'Grandchild', parentTaskId: child.id });
      return { src, srcList, root, child, child2, grand, nodes: [root, child, child2, grand] };
    }

    /** A target project whose first list and first status are archived, so "first non-archived / active" matters. */
    async function target() {
      const dst = await H().project();
      await H().task(dst.id, { name: 'already here' }); // niceId 1 in the target
      const [todo] = await statusesOf(H(), dst.id);
      const doing = ok(await H().post('/statuses', { name: 'Doing', projectId: dst.id, order: 200 }), 201);
      ok(await H().post('/statuses', { name: 'Done', projectId: dst.id, order: 300 }), 201);
      ok(await H().patch(`/statuses/${todo.id}`, { archived: true }));
      const oldList = ok(await H().post('/lists', { name: 'Old', projectId: dst.id, order: 1 }), 201);
      const list = ok(await H().post('/lists', { name: 'Current', projectId: dst.id, order: 2 }), 201);
      ok(await H().post('/lists', { name: 'Later', projectId: dst.id, order: 3 }), 201);
      ok(await H().patch(`/lists/${oldList.id}`, { archived: true }));
      return { dst, doing, list };
    }

    async function unchanged(t: Awaited<ReturnType<typeof tree>>) {
      for (const n of t.nodes) {
        const now = await getTask(H(), n.id);
        expect(now).toMatchObject({ projectId: t.src.id, niceId: n.niceId, statusId: n.statusId, listId: n.listId });
      }
    }

    it('moves every node to the target with fresh niceIds, first active status and first non-archived list', async () => {
      const t = await tree();
      const { dst, doing, list } = await target();
      expect(await defaultStatusOf(H(), dst.id)).toBe(doing.id);
      const moved = ok(await H().patch(`/tasks/${t.root.id}`, { projectId: dst.id }));
      expect(moved).toMatchObject({ projectId: dst.id, statusId: doing.id, listId: list.id, parentTaskId: null });
      const after = await Promise.all(t.nodes.map((n) => getTask(H(), n.id)));
      for (const a of after) expect(a.projectId).toBe(dst.id);
      const [root, child, child2, grand] = after;
      // Structure kept.
      expect(child.parentTaskId).toBe(t.root.id);
      expect(child2.parentTaskId).toBe(t.root.id);
      expect(grand.parentTaskId).toBe(t.child.id);
      // Status: everyone had one, everyone gets the target's first active one.
      for (const a of after) expect(a.statusId).toBe(doing.id);
      // List: those that had one get the target's first non-archived list; the others stay without.
      expect(root.listId).toBe(list.id);
      expect(child.listId).toBe(list.id);
      expect(child2.listId).toBeNull();
      expect(grand.listId).toBeNull();
      // Fresh niceIds from the target's counter (it already used '1').
      expect(after.map((a) => a.niceId).sort()).toEqual(['2', '3', '4', '5']);
      expect((await H().task(dst.id)).niceId).toBe('6');
      // The source's counter is not reused.
      expect((await H().task(t.src.id)).niceId).toBe('6');
      // Lists of the source no longer show them; the target's do.
      expect(ids(ok(await H().get(`/tasks?projectId=${t.src.id}&limit=200`)).data)).not.toContain(t.grand.id);
      expect(ids(ok(await H().get(`/tasks?projectId=${dst.id}&limit=200`)).data)).toEqual(expect.arrayContaining(ids(t.nodes)));
    });

    it('an explicit listId/statusId of the target is used for the root', async () => {
      const t = await tree();
      const { dst, list } = await target();
      const later = (await statusesOf(H(), dst.id)).find((s) => s.name === 'Done');
      const moved = ok(await H().patch(`/tasks/${t.root.id}`, { projectId: dst.id, statusId: later.id, listId: list.id }));
      expect(moved).toMatchObject({ projectId: dst.id, statusId: later.id, listId: list.id });
      expect((await getTask(H(), t.grand.id)).projectId).toBe(dst.id);
    });

    it('a task without a status or list keeps none after the move', async () => {
      const src = await H().project();
      const { dst } = await target();
      const t = await H().task(src.id, { statusId: null });
      const moved = ok(await H().patch(`/tasks/${t.id}`, { projectId: dst.id }));
      expect(moved).toMatchObject({ projectId: dst.id, statusId: null, listId: null, niceId: '2' });
    });

    it('explicit listId (or milestoneId) from another project → move_target_milestone_mismatch; nothing moved', async () => {
      const t = await tree();
      const { dst } = await target();
      problem(await H().patch(`/tasks/${t.root.id}`, { projectId: dst.id, listId: t.srcList.id }), 400, 'move_target_milestone_mismatch');
      problem(await H().patch(`/tasks/${t.root.id}`, { projectId: dst.id, milestoneId: t.srcList.id }), 400, 'move_target_milestone_mismatch');
      await unchanged(t);
    });

    it('explicit statusId (or taskGroupId) from another project → move_target_taskgroup_mismatch; nothing moved', async () => {
      const t = await tree();
      const { dst } = await target();
      const srcStatus = await defaultStatusOf(H(), t.src.id);
      problem(await H().patch(`/tasks/${t.root.id}`, { projectId: dst.id, statusId: srcStatus }), 400, 'move_target_taskgroup_mismatch');
      problem(await H().patch(`/tasks/${t.root.id}`, { projectId: dst.id, taskGroupId: srcStatus }), 400, 'move_target_taskgroup_mismatch');
      await unchanged(t);
    });

    it('target without a non-archived list, when the task had one → move_target_no_default_milestone', async () => {
      const t = await tree();
      const dst = await H().project();
      const l = ok(await H().post('/lists', { name: 'Archived', projectId: dst.id }), 201);
      ok(await H().patch(`/lists/${l.id}`, { archived: true }));
      problem(await H().patch(`/tasks/${t.root.id}`, { projectId: dst.id }), 400, 'move_target_no_default_milestone');
      await unchanged(t);
      // A task without a list moves there fine.
      const plain = await H().task(t.src.id);
      expect(ok(await H().patch(`/tasks/${plain.id}`, { projectId: dst.id })).projectId).toBe(dst.id);
    });

    it('target without an active status → move_target_no_default_taskgroup', async () => {
      const t = await tree();
      const dst = await H().project();
      ok(await H().post('/lists', { name: 'L', projectId: dst.id }), 201);
      for (const s of await statusesOf(H(), dst.id)) ok(await H().patch(`/statuses/${s.id}`, { archived: true }));
      problem(await H().patch(`/tasks/${t.root.id}`, { projectId: dst.id }), 400, 'move_target_no_default_taskgroup');
      await unchanged(t);
    });

    it('PATCH projectId on a subtask → move_subtask_must_move_with_parent', async () => {
      const t = await tree();
      const { dst } = await target();
      problem(await H().patch(`/tasks/${t.child.id}`, { projectId: dst.id }), 400, 'move_subtask_must_move_with_parent');
      problem(await H().patch(`/tasks/${t.grand.id}`, { projectId: dst.id }), 400, 'move_subtask_must_move_with_parent');
      await unchanged(t);
      // The same projectId is not a move.
      ok(await H().patch(`/tasks/${t.child.id}`, { projectId: t.src.id, name: 'Child renamed' }));
      expect((await getTask(H(), t.child.id)).name).toBe('Child renamed');
    });

    it('a target project of another workspace → 404 resource_not_found', async () => {
      const t = await tree();
      const foreign = ok(await H().post('/projects', { name: 'Foreign' }, { token: H().b.owner.token }), 201);
      const b = problem(await H().patch(`/tasks/${t.root.id}`, { projectId: foreign.id }), 404, 'resource_not_found');
      expect(b.field).toBe('projectId');
      await unchanged(t);
    });
  });

  describe(`[${factory.name}] v3 Limits: moved task subtree (200 nodes, task_subtask_chain_too_deep)`, () => {
    const H = harnessPerDescribe(factory);
    let src: any;
    let dst: any;
    let root: any;
    let leaf: any;
    let extra: any;
    let snapshot: Map<string, string>;

    beforeAll(async () => {
      const h = H();
      const tok = tokenPool(h);
      src = await h.project();
      dst = await h.project();
      // 1 root + 9 children + 190 grandchildren = 200 nodes, depth 2; then one more grandchild = 201.
      root = await h.task(src.id, { name: 'root' }, await tok());
      const children: any[] = [];
      for (let i = 0; i < 9; i++) children.push(await h.task(src.id, { name: `c${i}`, parentTaskId: root.id }, await tok()));
      for (let i = 0; i < 190; i++) {
        leaf = await h.task(src.id, { name: `g${i}`, parentTaskId: children[i % 9].id }, await tok());
      }
      extra = await h.task(src.id, { name: 'one too many', parentTaskId: children[0].id }, await tok());
      const page1 = ok(await h.get(`/tasks?projectId=${src.id}&limit=200`));
      const page2 = ok(await h.get(`/tasks?projectId=${src.id}&limit=200&cursor=${encodeURIComponent(page1.nextCursor)}`));
      snapshot = new Map([...page1.data, ...page2.data].map((t: any) => [t.id, t.niceId]));
    }, 30_000);

    it('201 nodes → 400 task_subtask_chain_too_deep and nothing moved', async () => {
      expect(snapshot.size).toBe(201);
      problem(await H().patch(`/tasks/${root.id}`, { projectId: dst.id }), 400, 'task_subtask_chain_too_deep');
      for (const t of [root, leaf, extra]) {
        const now = await getTask(H(), t.id);
        expect(now.projectId).toBe(src.id);
        expect(now.niceId).toBe(snapshot.get(t.id));
      }
      expect(ok(await H().get(`/tasks?projectId=${dst.id}`)).data).toEqual([]);
      // The target's counter was not consumed either.
      expect((await H().task(dst.id, { name: 'probe' })).niceId).toBe('1');
    });

    it('200 nodes move fine', async () => {
      // Detach the extra leaf: the subtree is back to 200 nodes.
      ok(await H().patch(`/tasks/${extra.id}`, { parentTaskId: null }));
      const moved = ok(await H().patch(`/tasks/${root.id}`, { projectId: dst.id }));
      expect(moved.projectId).toBe(dst.id);
      expect((await getTask(H(), leaf.id)).projectId).toBe(dst.id);
      expect((await getTask(H(), extra.id)).projectId).toBe(src.id);
      const inDst = ok(await H().get(`/tasks?projectId=${dst.id}&limit=200&includeTotal=true`));
      expect(inDst.total).toBe(201); // 200 moved + the probe
      expect(ok(await H().get(`/tasks?projectId=${src.id}&includeTotal=true`)).total).toBe(1);
      expect(new Set(inDst.data.map((t: any) => t.niceId)).size).toBe(inDst.data.length);
    });
  });

  describe(`[${factory.name}] v3 Task: parentTaskId changes (cycles, self parent)`, () => {
    const H = harnessPerDescribe(factory);

    it('making a task a child of its own subtask → validation_failed', async () => {
      const p = await H().project();
      const a = await H().task(p.id);
      const b = await H().task(p.id, { parentTaskId: a.id });
      const c = await H().task(p.id, { parentTaskId: b.id });
      invalid(await H().patch(`/tasks/${a.id}`, { parentTaskId: c.id }), 'parentTaskId');
      invalid(await H().patch(`/tasks/${a.id}`, { parentTaskId: b.id }), 'parentTaskId');
      expect((await getTask(H(), a.id)).parentTaskId).toBeNull();
    });

    it('a task as its own parent → validation_failed', async () => {
      const p = await H().project();
      const a = await H().task(p.id);
      invalid(await H().patch(`/tasks/${a.id}`, { parentTaskId: a.id }), 'parentTaskId');
      expect((await getTask(H(), a.id)).parentTaskId).toBeNull();
    });

    it('re-parenting within the project and detaching work; a parent in another project is refused', async () => {
      const p = await H().project();
      const q = await H().project();
      const a = await H().task(p.id);
      const b = await H().task(p.id);
      const foreign = await H().task(q.id);
      expect(ok(await H().patch(`/tasks/${b.id}`, { parentTaskId: a.id })).parentTaskId).toBe(a.id);
      invalid(await H().patch(`/tasks/${b.id}`, { parentTaskId: foreign.id }), 'parentTaskId');
      expect(ok(await H().patch(`/tasks/${b.id}`, { parentTaskId: null })).parentTaskId).toBeNull();
    });
  });

  describe(`[${factory.name}] v3 Task: delete (permanent, subtree, dependants)`, () => {
    const H = harnessPerDescribe(factory);

    it('DELETE → 204; the task and its subtree are gone for good; dependants get dependencyId null', async () => {
      const p = await H().project();
      const root = await H().task(p.id, { name: 'root' });
      const child = await H().task(p.id, { name: 'child', parentTaskId: root.id });
      const grand = await H().task(p.id, { name: 'grand', parentTaskId: child.id });
      const dependsOnRoot = await H().task(p.id, { name: 'after root', dependencyId: root.id });
      const dependsOnGrand = await H().task(p.id, { name: 'after grand', dependencyId: grand.id });
      const bystander = await H().task(p.id, { name: 'bystander' });
      const r = await H().del(`/tasks/${root.id}`);
      expect(r.status).toBe(204);
      expect(r.body).toBeUndefined();
      for (const t of [root, child, grand]) problem(await H().get(`/tasks/${t.id}`), 404, 'resource_not_found');
      expect((await getTask(H(), dependsOnRoot.id)).dependencyId).toBeNull();
      expect((await getTask(H(), dependsOnGrand.id)).dependencyId).toBeNull();
      expect((await getTask(H(), bystander.id)).name).toBe('bystander');
      expect(sortedIds(ok(await H().get(`/tasks?projectId=${p.id}`)).data)).toEqual(sortedIds([dependsOnRoot, dependsOnGrand, bystander]));
      // Permanent: no restore route, a second delete is 404.
      problem(await H().del(`/tasks/${root.id}`), 404, 'resource_not_found');
      expect((await H().post(`/tasks/${root.id}/restore`)).status).not.toBe(200);
      // One task.removed per destroyed task.
      const mine = new Set(ids([root, child, grand, dependsOnRoot, dependsOnGrand, bystander]));
      const removed = (await H().outbox()).filter((e) => e.type === 'task.removed' && mine.has(e.aggregateId)).map((e) => e.aggregateId);
      expect(removed.sort()).toEqual([root.id, child.id, grand.id].sort());
    });

    it('deleting a subtask leaves its parent', async () => {
      const p = await H().project();
      const root = await H().task(p.id);
      const child = await H().task(p.id, { parentTaskId: root.id });
      expect((await H().del(`/tasks/${child.id}`)).status).toBe(204);
      expect((await getTask(H(), root.id)).id).toBe(root.id);
      expect(ok(await H().get(`/tasks/${root.id}?expand=subtasks`)).subtasks).toEqual([]);
    });
  });

  describe(`[${factory.name}] v3 Task: list query (default sort, scope, filters)`, () => {
    const H = harnessPerDescribe(factory);
    let p: any;
    let q: any;
    let t: Record<string, any>;
    beforeAll(async () => {
      const h = H();
      p = await h.project({ accessType: 'public' });
      q = await h.project();
      t = {};
      t.c = await h.task(p.id, { name: 'c', order: 30, dueAt: '2026-03-10T00:00:00.000Z' });
      h.clock.advance(1000);
      t.a = await h.task(p.id, { name: 'a', order: 10, dueAt: '2026-03-05T00:00:00.000Z' });
      h.clock.advance(1000);
      t.b = await h.task(p.id, { name: 'b', order: 20 });
      h.clock.advance(1000);
      t.sub = await h.task(p.id, { name: 'sub', order: 40, parentTaskId: t.a.id });
      h.clock.advance(1000);
      t.q1 = await h.task(q.id, { name: 'q1', order: 1 });
      h.clock.advance(1000);
      t.reg = await h.task(p.id, { name: 'by regular', order: 50 }, h.a.regular.token);
      h.clock.advance(1000);
      t.c = ok(await h.patch(`/tasks/${t.c.id}`, { completed: true }));
      h.clock.advance(1000);
      t.b = ok(await h.patch(`/tasks/${t.b.id}`, { archived: true }));
    });
    const list = async (qs: string) => {
      const r = ok(await H().get(`/tasks?${qs}`));
      return r.data as any[];
    };

    it('with projectId the default sort is order', async () => {
      const rows = await list(`projectId=${p.id}`);
      expect(rows.map((r) => r.name)).toEqual(['a', 'b', 'c', 'sub', 'by regular']);
      expect(rows.every((r) => r.projectId === p.id)).toBe(true);
    });

    it('without projectId the default sort is -updatedAt (all projects)', async () => {
      const rows = await list('');
      expect(rows.map((r) => r.name).slice(0, 6)).toEqual(['b', 'c', 'by regular', 'q1', 'sub', 'a']);
      const stamps = rows.map((r) => r.updatedAt);
      expect([...stamps].sort().reverse()).toEqual(stamps);
    });

    it('scope=personal → empty page; scope=project/both list tasks; scope=bogus → invalid_query_param', async () => {
      const personal = ok(await H().get('/tasks?scope=personal'));
      expect(personal.data).toEqual([]);
      expect(personal.hasMore).toBe(false);
      expect((await list('scope=project')).length).toBeGreaterThanOrEqual(6);
      expect((await list('scope=both')).length).toBeGreaterThanOrEqual(6);
      const b = problem(await H().get('/tasks?scope=bogus'), 400, 'invalid_query_param');
      expect(b.name).toBe('scope');
      expect(b.allowed).toEqual(expect.arrayContaining(['project', 'personal', 'both']));
    });

    it('completed[eq] and archived[eq]', async () => {
      expect(ids(await list(`projectId=${p.id}&completed[eq]=true`))).toEqual([t.c.id]);
      expect(ids(await list(`projectId=${p.id}&completed[eq]=false`))).not.toContain(t.c.id);
      expect((await list(`projectId=${p.id}&completed[eq]=false`)).length).toBe(4);
      expect(ids(await list(`projectId=${p.id}&archived[eq]=true`))).toEqual([t.b.id]);
      expect(ids(await list(`projectId=${p.id}&archived[eq]=false`))).not.toContain(t.b.id);
    });

    it('dueAt ranges', async () => {
      expect(ids(await list(`projectId=${p.id}&dueAt[gte]=2026-03-05T00:00:00.000Z&dueAt[lt]=2026-03-10T00:00:00.000Z`))).toEqual([t.a.id]);
      expect(ids(await list(`projectId=${p.id}&dueAt[gt]=2026-03-05T00:00:00.000Z`))).toEqual([t.c.id]);
      expect(ids(await list(`projectId=${p.id}&dueAt[lte]=2026-03-10T00:00:00.000Z`))).toEqual([t.a.id, t.c.id]);
    });

    it('parentTaskId[eq], niceId[in], createdById[eq], createdByActorId[eq]', async () => {
      expect(ids(await list(`parentTaskId[eq]=${t.a.id}`))).toEqual([t.sub.id]);
      expect(ids(await list(`projectId=${p.id}&niceId[in]=${t.c.niceId},${t.b.niceId}`))).toEqual([t.b.id, t.c.id]);
      expect(ids(await list(`projectId=${p.id}&createdById[eq]=${H().a.regular.id}`))).toEqual([t.reg.id]);
      expect(t.reg.createdById).toBe(H().a.regular.id);
      expect(t.reg.createdByActorId).toBeTypeOf('string');
      expect(t.reg.createdByActorId).not.toBe(t.a.createdByActorId);
      expect(ids(await list(`createdByActorId[eq]=${t.reg.createdByActorId}`))).toEqual([t.reg.id]);
      const ownerRows = await list(`projectId=${p.id}&createdByActorId[eq]=${t.a.createdByActorId}`);
      expect(ownerRows.map((r) => r.name)).toEqual(['a', 'b', 'c', 'sub']);
    });
  });

  describe(`[${factory.name}] v3 Task: expand (subtasks, parentTask, labels, assignees)`, () => {
    const H = harnessPerDescribe(factory);

    it('subtasks and parentTask', async () => {
      const p = await H().project();
      const root = await H().task(p.id, { name: 'root' });
      const s1 = await H().task(p.id, { name: 's1', parentTaskId: root.id });
      const s2 = await H().task(p.id, { name: 's2', parentTaskId: root.id });
      const r = ok(await H().get(`/tasks/${root.id}?expand=subtasks`));
      expect(sortedIds(r.subtasks)).toEqual(sortedIds([s1, s2]));
      expect(r.subtasks.find((x: any) => x.id === s1.id)).toMatchObject({ name: 's1', parentTaskId: root.id });
      const c = ok(await H().get(`/tasks/${s1.id}?expand=parentTask`));
      expect(c.parentTaskId).toBe(root.id);
      expect(c.parentTask).toMatchObject({ id: root.id, name: 'root' });
      const top = ok(await H().get(`/tasks/${root.id}?expand=parentTask`));
      expect(top.parentTask).toBeNull();
      expect(ok(await H().get(`/tasks/${root.id}`)).subtasks).toBeUndefined();
    });

    it('labels and assignees: objects replace the id arrays', async () => {
      const p = await H().project();
      const label = ok(await H().post('/labels', { name: 'Expand me', color: '#112233' }), 201);
      const t = await H().task(p.id, { assignees: [H().a.regular.id], labels: [label.id] });
      const r = ok(await H().get(`/tasks/${t.id}?expand=labels,assignees`));
      expect(r.labels).toHaveLength(1);
      expect(r.labels[0]).toMatchObject({ id: label.id, name: 'Expand me' });
      expect(r.assignees).toHaveLength(1);
      expect(r.assignees[0]).toMatchObject({ id: H().a.regular.id, name: 'Alpha Regular' });
      // On lists too.
      const rows = ok(await H().get(`/tasks?projectId=${p.id}&expand=assignees`)).data;
      expect(rows[0].assignees[0]).toMatchObject({ id: H().a.regular.id });
      expect(rows[0].labels).toEqual([label.id]);
    });
  });
}

function sortedIds(rows: any[]): string[] {
  return rows.map((r) => r.id).sort();
}
