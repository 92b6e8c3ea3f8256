import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { harness, type Harness, type Reply, type StoreFactory } from '../../kit';
import { DAY, sorted } from './helpers';
import { during, harnessPerDescribe, ofType } from '../shared';
import { expectOk as ok, expectProblem as problem, expectInvalid as invalid } from './helpers';

/**
 * Checklists and checklist items (spec "Checklist and Checklist Item"), with
 * the decisions taken where the spec is silent (docs/not-shown.md "Checklists"):
 * name limits, single-line items, appended order, the derived read-only
 * projectId, immutable parents, cascades, project access and the role policy.
 */

const SECOND = 1000;

const ids = (rows: any[]): string[] => rows.map((r) => r.id);

/** The ids a list answered (asserting 200). */
async function listIds(h: Harness, path: string, token?: string): Promise<string[]> {
  return ids(ok(await h.get(path, { token })).data);
}

async function checklist(h: Harness, taskId: string, body: Record<string, unknown> = {}, token?: string): Promise<any> {
  return ok(await h.post('/checklists', { name: 'Checklist', taskId, ...body }, { token }), 201);
}

async function item(h: Harness, checklistId: string, body: Record<string, unknown> = {}, token?: string): Promise<any> {
  return ok(await h.post('/checklist-items', { name: 'Item', checklistId, ...body }, { token }), 201);
}

export function checklistsSuite(factory: StoreFactory): void {

  describe(`[${factory.name}] v3 Checklist and Checklist Item: checklist fields (name, taskId, order, projectId)`, () => {
    const H = harnessPerDescribe(factory);
    let p: any;
    let q: any;
    let task: any;
    beforeAll(async () => {
      p = await H().project({ name: 'Checklists P' });
      q = await H().project({ name: 'Checklists Q' });
      task = await H().task(p.id, { name: 'Has checklists' });
    });

    it('POST /checklists → 201 with the trimmed name, taskId, the task\'s projectId and order 1; GET answers the same', async () => {
      const t = await H().task(p.id);
      const c = ok(await H().post('/checklists', { name: '  Before release \t', taskId: t.id }), 201);
      expect(c.id).toBeTypeOf('string');
      expect(c.name).toBe('Before release');
      expect(c.taskId).toBe(t.id);
      expect(c.projectId).toBe(p.id);
      expect(c.order).toBe(1);
      expect(c.createdAt).toBeTypeOf('string');
      expect(c.updatedAt).toBeTypeOf('string');
      expect(ok(await H().get(`/checklists/${c.id}`))).toEqual(c);
      const u = ok(await H().patch(`/checklists/${c.id}`, { name: '   Renamed  ' }));
      expect(u.name).toBe('Renamed');
    });

    it('name: 255 characters after trimming are accepted, 256 are refused (create and update)', async () => {
      const exact = 'n'.repeat(255);
      const c = await checklist(H(), task.id, { name: `  ${exact}  ` });
      expect(c.name).toBe(exact);
      invalid(await H().post('/checklists', { name: 'n'.repeat(256), taskId: task.id }), 'name');
      invalid(await H().patch(`/checklists/${c.id}`, { name: 'm'.repeat(256) }), 'name');
      expect(ok(await H().get(`/checklists/${c.id}`)).name).toBe(exact);
    });

    it('name is required and may not be blank (create and update)', async () => {
      invalid(await H().post('/checklists', { taskId: task.id }), 'name');
      invalid(await H().post('/checklists', { name: '', taskId: task.id }), 'name');
      invalid(await H().post('/checklists', { name: '  \t ', taskId: task.id }), 'name');
      invalid(await H().post('/checklists', { name: 42, taskId: task.id }), 'name');
      const c = await checklist(H(), task.id, { name: 'Keep' });
      invalid(await H().patch(`/checklists/${c.id}`, { name: '   ' }), 'name');
      invalid(await H().patch(`/checklists/${c.id}`, { name: null }), 'name');
      expect(ok(await H().get(`/checklists/${c.id}`)).name).toBe('Keep');
    });

    it('taskId is required on create', async () => {
      invalid(await H().post('/checklists', { name: 'No task' }), 'taskId');
      invalid(await H().post('/checklists', { name: 'Null task', taskId: null }), 'taskId');
    });

    it('a taskId that is not a task of this workspace → 404 resource_not_found naming taskId (another workspace\'s task too)', async () => {
      const r = problem(await H().post('/checklists', { name: 'Ghost', taskId: 'nosuchtask0000000000' }), 404, 'resource_not_found');
      expect(r.field).toBe('taskId');
      const pb = await H().project({ name: 'Beta project' }, H().b.owner.token);
      const tb = await H().task(pb.id, {}, H().b.owner.token);
      const cross = problem(await H().post('/checklists', { name: 'Cross', taskId: tb.id }), 404, 'resource_not_found');
      expect(cross.field).toBe('taskId');
      expect(await listIds(H(), `/checklists?projectId=${pb.id}`, H().b.owner.token)).toEqual([]);
    });

    it('taskId is immutable: another value → 400 validation_failed (immutable), nothing changes; the same value is accepted', async () => {
      const other = await H().task(p.id, { name: 'Other task' });
      const c = await checklist(H(), task.id, { name: 'Pinned' });
      invalid(await H().patch(`/checklists/${c.id}`, { taskId: other.id }), 'taskId', 'immutable');
      invalid(await H().patch(`/checklists/${c.id}`, { taskId: other.id, name: 'Moved?' }), 'taskId', 'immutable');
      const got = ok(await H().get(`/checklists/${c.id}`));
      expect(got.taskId).toBe(task.id);
      expect(got.name).toBe('Pinned');
      const same = ok(await H().patch(`/checklists/${c.id}`, { taskId: task.id, name: 'Still pinned' }));
      expect(same.taskId).toBe(task.id);
      expect(same.name).toBe('Still pinned');
      // Another value is refused as immutable whether or not it names a task.
      invalid(await H().patch(`/checklists/${c.id}`, { taskId: 'nosuchtask0000000000' }), 'taskId', 'immutable');
      invalid(await H().patch(`/checklists/${c.id}`, { taskId: null }), 'taskId');
      expect(ok(await H().get(`/checklists/${c.id}`)).taskId).toBe(task.id);
    });

    it('order must be a number', async () => {
      invalid(await H().post('/checklists', { name: 'Bad rank', taskId: task.id, order: 'first' }), 'order');
      const c = await checklist(H(), task.id);
      invalid(await H().patch(`/checklists/${c.id}`, { order: 'last' }), 'order');
      expect(ok(await H().get(`/checklists/${c.id}`)).order).toBe(c.order);
    });

    it('another workspace\'s checklists and items are unknown ids: 404 on GET, PATCH, DELETE and as checklistId; never listed', async () => {
      const h = H();
      const tokB = h.b.owner.token;
      const pb = await h.project({ name: 'Beta checklists' }, tokB);
      const tb = await h.task(pb.id, {}, tokB);
      const cb = await checklist(h, tb.id, { name: 'Beta list' }, tokB);
      const ib = await item(h, cb.id, { name: 'Beta item' }, tokB);
      problem(await h.get(`/checklists/${cb.id}`), 404, 'resource_not_found');
      problem(await h.get(`/checklist-items/${ib.id}`), 404, 'resource_not_found');
      problem(await h.patch(`/checklists/${cb.id}`, { name: 'Hijack' }), 404, 'resource_not_found');
      problem(await h.patch(`/checklist-items/${ib.id}`, { completed: true }), 404, 'resource_not_found');
      problem(await h.del(`/checklists/${cb.id}`), 404, 'resource_not_found');
      problem(await h.del(`/checklist-items/${ib.id}`), 404, 'resource_not_found');
      expect(problem(await h.post('/checklist-items', { name: 'Cross', checklistId: cb.id }), 404, 'resource_not_found').field).toBe('checklistId');
      expect(await listIds(h, '/checklists?limit=200')).not.toContain(cb.id);
      expect(await listIds(h, '/checklist-items?limit=200')).not.toContain(ib.id);
      expect(await listIds(h, `/checklists?taskId[eq]=${tb.id}`)).toEqual([]);
      // Untouched in B.
      expect(ok(await h.get(`/checklists/${cb.id}`, { token: tokB })).name).toBe('Beta list');
      expect(ok(await h.get(`/checklist-items/${ib.id}`, { token: tokB })).completed).toBe(false);
    });

    it('omitted order appends per task: max order of the task\'s checklists + 1, the first gets 1', async () => {
      const t1 = await H().task(p.id, { name: 'Order 1' });
      const t2 = await H().task(p.id, { name: 'Order 2' });
      expect((await checklist(H(), t1.id)).order).toBe(1);
      expect((await checklist(H(), t1.id)).order).toBe(2);
      expect((await checklist(H(), t2.id)).order).toBe(1);
      expect((await checklist(H(), t1.id, { order: 10.5 })).order).toBe(10.5);
      expect((await checklist(H(), t1.id)).order).toBe(11.5);
      expect((await checklist(H(), t2.id)).order).toBe(2);
      // A rank below the others does not lower the next appended one.
      expect((await checklist(H(), t2.id, { order: 0.25 })).order).toBe(0.25);
      expect((await checklist(H(), t2.id)).order).toBe(3);
    });

    it('order is a fractional rank: sending the midpoint of the neighbours\' ranks repositions a checklist', async () => {
      const t = await H().task(q.id, { name: 'Reorder' });
      const a = await checklist(H(), t.id, { name: 'a' });
      const b = await checklist(H(), t.id, { name: 'b' });
      const c = await checklist(H(), t.id, { name: 'c' });
      expect([a.order, b.order, c.order]).toEqual([1, 2, 3]);
      expect(await listIds(H(), `/checklists?projectId=${q.id}&taskId[eq]=${t.id}`)).toEqual([a.id, b.id, c.id]);
      const moved = ok(await H().patch(`/checklists/${c.id}`, { order: (a.order + b.order) / 2 }));
      expect(moved.order).toBe(1.5);
      expect(await listIds(H(), `/checklists?projectId=${q.id}&taskId[eq]=${t.id}`)).toEqual([a.id, c.id, b.id]);
      ok(await H().patch(`/checklists/${a.id}`, { order: (moved.order + b.order) / 2 }));
      expect(await listIds(H(), `/checklists?projectId=${q.id}&taskId[eq]=${t.id}`)).toEqual([c.id, a.id, b.id]);
    });

    it('projectId is read-only: sent in a body it is ignored (create and update)', async () => {
      const c = ok(await H().post('/checklists', { name: 'Where', taskId: task.id, projectId: q.id }), 201);
      expect(c.projectId).toBe(p.id);
      const u = ok(await H().patch(`/checklists/${c.id}`, { name: 'Where now', projectId: q.id }));
      expect(u.projectId).toBe(p.id);
      expect(u.name).toBe('Where now');
      expect(ok(await H().get(`/checklists/${c.id}`)).projectId).toBe(p.id);
      expect(await listIds(H(), `/checklists?projectId=${q.id}`)).not.toContain(c.id);
    });
  });

  describe(`[${factory.name}] v3 Checklist and Checklist Item: item fields (single-line name, checklistId, order, completed)`, () => {
    const H = harnessPerDescribe(factory);
    let p: any;
    let task: any;
    let cl: any;
    beforeAll(async () => {
      p = await H().project({ name: 'Items' });
      task = await H().task(p.id);
      cl = await checklist(H(), task.id, { name: 'Items list' });
    });

    it('POST /checklist-items → 201 with the trimmed name, completed false, order 1, checklistId and the task\'s projectId', async () => {
      const c = await checklist(H(), task.id);
      const i = ok(await H().post('/checklist-items', { name: '  Write tests  ', checklistId: c.id }), 201);
      expect(i.id).toBeTypeOf('string');
      expect(i.name).toBe('Write tests');
      expect(i.checklistId).toBe(c.id);
      expect(i.completed).toBe(false);
      expect(i.order).toBe(1);
      expect(i.projectId).toBe(p.id);
      expect(ok(await H().get(`/checklist-items/${i.id}`))).toEqual(i);
    });

    it('name: 1024 characters after trimming are accepted, 1025 are refused (create and update)', async () => {
      const exact = 'i'.repeat(1024);
      const i = await item(H(), cl.id, { name: ` ${exact}\t` });
      expect(i.name).toBe(exact);
      invalid(await H().post('/checklist-items', { name: 'i'.repeat(1025), checklistId: cl.id }), 'name');
      invalid(await H().patch(`/checklist-items/${i.id}`, { name: 'j'.repeat(1025) }), 'name');
      expect(ok(await H().get(`/checklist-items/${i.id}`)).name).toBe(exact);
    });

    it('name is required and may not be blank (create and update)', async () => {
      invalid(await H().post('/checklist-items', { checklistId: cl.id }), 'name');
      invalid(await H().post('/checklist-items', { name: '', checklistId: cl.id }), 'name');
      invalid(await H().post('/checklist-items', { name: '   ', checklistId: cl.id }), 'name');
      const i = await item(H(), cl.id, { name: 'Keep' });
      invalid(await H().patch(`/checklist-items/${i.id}`, { name: ' ' }), 'name');
      expect(ok(await H().get(`/checklist-items/${i.id}`)).name).toBe('Keep');
    });

    for (const [label, br] of [['\\n', '\n'], ['\\r', '\r'], ['\\r\\n', '\r\n'], ['U+2028', '\u2028'], ['U+2029', '\u2029']] as const) {
      it(`a line break (${label}) in an item name → 400 validation_failed, code multiline on name (create and update)`, async () => {
        const before = await listIds(H(), `/checklist-items?checklistId[eq]=${cl.id}&limit=200`);
        invalid(await H().post('/checklist-items', { name: `first${br}second`, checklistId: cl.id }), 'name', 'multiline');
        expect(await listIds(H(), `/checklist-items?checklistId[eq]=${cl.id}&limit=200`)).toEqual(before);
        const i = await item(H(), cl.id, { name: 'One line' });
        invalid(await H().patch(`/checklist-items/${i.id}`, { name: `one${br}two` }), 'name', 'multiline');
        expect(ok(await H().get(`/checklist-items/${i.id}`)).name).toBe('One line');
      });
    }

    it('checklistId is required on create; an unknown one → 404 resource_not_found naming checklistId', async () => {
      invalid(await H().post('/checklist-items', { name: 'Loose' }), 'checklistId');
      const r = problem(await H().post('/checklist-items', { name: 'Ghost', checklistId: 'nosuchchecklist00000' }), 404, 'resource_not_found');
      expect(r.field).toBe('checklistId');
    });

    it('checklistId is immutable: another value → 400 validation_failed (immutable); the same value is accepted', async () => {
      const other = await checklist(H(), task.id, { name: 'Other' });
      const i = await item(H(), cl.id, { name: 'Stay' });
      invalid(await H().patch(`/checklist-items/${i.id}`, { checklistId: other.id }), 'checklistId', 'immutable');
      expect(ok(await H().get(`/checklist-items/${i.id}`)).checklistId).toBe(cl.id);
      expect(await listIds(H(), `/checklist-items?checklistId[eq]=${other.id}`)).toEqual([]);
      const same = ok(await H().patch(`/checklist-items/${i.id}`, { checklistId: cl.id, name: 'Stayed' }));
      expect(same.checklistId).toBe(cl.id);
      expect(same.name).toBe('Stayed');
    });

    it('omitted order appends per checklist: max order of the checklist\'s items + 1, the first gets 1', async () => {
      const c1 = await checklist(H(), task.id);
      const c2 = await checklist(H(), task.id);
      expect((await item(H(), c1.id)).order).toBe(1);
      expect((await item(H(), c1.id)).order).toBe(2);
      expect((await item(H(), c2.id)).order).toBe(1);
      expect((await item(H(), c1.id, { order: 7.25 })).order).toBe(7.25);
      expect((await item(H(), c1.id)).order).toBe(8.25);
      expect((await item(H(), c2.id)).order).toBe(2);
    });

    it('order is a fractional rank: the midpoint of two neighbours moves an item between them', async () => {
      const c = await checklist(H(), task.id);
      const a = await item(H(), c.id, { name: 'a' });
      const b = await item(H(), c.id, { name: 'b' });
      const d = await item(H(), c.id, { name: 'd' });
      ok(await H().patch(`/checklist-items/${d.id}`, { order: (a.order + b.order) / 2 }));
      expect(await listIds(H(), `/checklist-items?projectId=${p.id}&checklistId[eq]=${c.id}`)).toEqual([a.id, d.id, b.id]);
    });

    it('completed defaults to false, toggles with PATCH, and must be a boolean', async () => {
      const i = await item(H(), cl.id, { name: 'Toggle' });
      expect(i.completed).toBe(false);
      expect((await item(H(), cl.id, { name: 'Done already', completed: true })).completed).toBe(true);
      expect(ok(await H().patch(`/checklist-items/${i.id}`, { completed: true })).completed).toBe(true);
      expect(ok(await H().get(`/checklist-items/${i.id}`)).completed).toBe(true);
      expect(ok(await H().patch(`/checklist-items/${i.id}`, { completed: false })).completed).toBe(false);
      invalid(await H().patch(`/checklist-items/${i.id}`, { completed: 'yes' }), 'completed');
      invalid(await H().post('/checklist-items', { name: 'Bad', checklistId: cl.id, completed: 1 }), 'completed');
      expect(ok(await H().get(`/checklist-items/${i.id}`)).completed).toBe(false);
    });

    it('projectId is read-only on items too: sent in a body it is ignored', async () => {
      const other = await H().project({ name: 'Elsewhere' });
      const i = ok(await H().post('/checklist-items', { name: 'Here', checklistId: cl.id, projectId: other.id }), 201);
      expect(i.projectId).toBe(p.id);
      const u = ok(await H().patch(`/checklist-items/${i.id}`, { name: 'Still here', projectId: other.id }));
      expect(u.projectId).toBe(p.id);
    });
  });

  describe(`[${factory.name}] v3 Checklist and Checklist Item: lists (projectId, default sort, filters)`, () => {
    const H = harnessPerDescribe(factory);
    let p: any;
    let q: any;
    let t1: any;
    let t2: any;
    let tq: any;
    const c: Record<string, any> = {};
    const i: Record<string, any> = {};
    let startedAt: string;
    let midAt: string;
    beforeAll(async () => {
      const h = H();
      p = await h.project({ name: 'Lists P' });
      q = await h.project({ name: 'Lists Q' });
      t1 = await h.task(p.id, { name: 't1' });
      t2 = await h.task(p.id, { name: 't2' });
      tq = await h.task(q.id, { name: 'tq' });
      h.clock.advance(SECOND);
      startedAt = new Date(h.clock.now()).toISOString();
      // Created out of rank order, a second apart.
      c.launch = await checklist(h, t1.id, { name: 'Launch plan', order: 3 });
      h.clock.advance(SECOND);
      c.qa = await checklist(h, t2.id, { name: 'QA pass', order: 1 });
      h.clock.advance(SECOND);
      midAt = new Date(h.clock.now()).toISOString();
      c.docs = await checklist(h, t1.id, { name: 'Docs launch', order: 2 });
      h.clock.advance(SECOND);
      c.other = await checklist(h, tq.id, { name: 'Launch elsewhere', order: 0.5 });
      h.clock.advance(SECOND);
      i.b = await item(h, c.launch.id, { name: 'Book venue', order: 2 });
      h.clock.advance(SECOND);
      i.a = await item(h, c.launch.id, { name: 'Announce', order: 1, completed: true });
      h.clock.advance(SECOND);
      i.c = await item(h, c.docs.id, { name: 'Check links', order: 0.5 });
      h.clock.advance(SECOND);
      i.q = await item(h, c.other.id, { name: 'Announce elsewhere', order: 5 });
      h.clock.advance(SECOND);
    });

    it('GET /checklists?projectId=X lists only that project\'s checklists, by order ascending', async () => {
      expect(await listIds(H(), `/checklists?projectId=${p.id}`)).toEqual([c.qa.id, c.docs.id, c.launch.id]);
      expect(await listIds(H(), `/checklists?projectId=${q.id}`)).toEqual([c.other.id]);
    });

    it('without projectId checklists list by -updatedAt: the most recently updated first', async () => {
      expect(await listIds(H(), '/checklists')).toEqual([c.other.id, c.docs.id, c.qa.id, c.launch.id]);
      H().clock.advance(SECOND);
      ok(await H().patch(`/checklists/${c.launch.id}`, { name: 'Launch plan v2' }));
      expect(await listIds(H(), '/checklists')).toEqual([c.launch.id, c.other.id, c.docs.id, c.qa.id]);
      // With projectId the rank still rules.
      expect(await listIds(H(), `/checklists?projectId=${p.id}`)).toEqual([c.qa.id, c.docs.id, c.launch.id]);
      ok(await H().patch(`/checklists/${c.launch.id}`, { name: 'Launch plan' }));
    });

    it('GET /checklist-items?projectId=X lists only that project\'s items, by order ascending; without projectId the default is order too', async () => {
      expect(await listIds(H(), `/checklist-items?projectId=${p.id}`)).toEqual([i.c.id, i.a.id, i.b.id]);
      expect(await listIds(H(), `/checklist-items?projectId=${q.id}`)).toEqual([i.q.id]);
      expect(await listIds(H(), '/checklist-items')).toEqual([i.c.id, i.a.id, i.b.id, i.q.id]);
    });

    it('sort=order and sort=-order are accepted on both lists', async () => {
      expect(await listIds(H(), `/checklists?projectId=${p.id}&sort=-order`)).toEqual([c.launch.id, c.docs.id, c.qa.id]);
      expect(await listIds(H(), '/checklists?sort=order')).toEqual([c.other.id, c.qa.id, c.docs.id, c.launch.id]);
      expect(await listIds(H(), `/checklist-items?sort=-order`)).toEqual([i.q.id, i.b.id, i.a.id, i.c.id]);
    });

    it('checklist filters: name[eq|contains|startsWith]', async () => {
      expect(await listIds(H(), `/checklists?projectId=${p.id}&name[eq]=${encodeURIComponent('QA pass')}`)).toEqual([c.qa.id]);
      expect(sorted(await listIds(H(), `/checklists?name[contains]=aunch`))).toEqual(sorted([c.launch.id, c.docs.id, c.other.id]));
      expect(sorted(await listIds(H(), `/checklists?name[startsWith]=Launch`))).toEqual(sorted([c.launch.id, c.other.id]));
      expect(await listIds(H(), `/checklists?projectId=${p.id}&name[startsWith]=Launch`)).toEqual([c.launch.id]);
    });

    it('checklist filters: taskId[eq|in]', async () => {
      expect(await listIds(H(), `/checklists?taskId[eq]=${t1.id}`)).toEqual(expect.arrayContaining([c.launch.id, c.docs.id]));
      expect(await listIds(H(), `/checklists?projectId=${p.id}&taskId[eq]=${t1.id}`)).toEqual([c.docs.id, c.launch.id]);
      expect(sorted(await listIds(H(), `/checklists?taskId[in]=${t2.id},${tq.id}`))).toEqual(sorted([c.qa.id, c.other.id]));
      expect(await listIds(H(), `/checklists?taskId[eq]=nosuchtask0000000000`)).toEqual([]);
    });

    it('checklist filters: createdAt[gt|gte|lt|lte]', async () => {
      expect(sorted(await listIds(H(), `/checklists?createdAt[gte]=${startedAt}`))).toEqual(sorted([c.launch.id, c.qa.id, c.docs.id, c.other.id]));
      expect(sorted(await listIds(H(), `/checklists?createdAt[gte]=${midAt}`))).toEqual(sorted([c.docs.id, c.other.id]));
      expect(sorted(await listIds(H(), `/checklists?createdAt[gt]=${midAt}`))).toEqual(sorted([c.other.id]));
      expect(sorted(await listIds(H(), `/checklists?createdAt[lt]=${midAt}`))).toEqual(sorted([c.launch.id, c.qa.id]));
      expect(sorted(await listIds(H(), `/checklists?createdAt[lte]=${midAt}`))).toEqual(sorted([c.launch.id, c.qa.id, c.docs.id]));
    });

    it('item filters: name[eq|contains|startsWith], checklistId[eq|in], completed[eq], createdAt range', async () => {
      expect(await listIds(H(), `/checklist-items?name[eq]=Announce`)).toEqual([i.a.id]);
      expect(await listIds(H(), `/checklist-items?name[startsWith]=Announce`)).toEqual([i.a.id, i.q.id]);
      expect(await listIds(H(), `/checklist-items?name[contains]=venue`)).toEqual([i.b.id]);
      expect(await listIds(H(), `/checklist-items?checklistId[eq]=${c.launch.id}`)).toEqual([i.a.id, i.b.id]);
      expect(await listIds(H(), `/checklist-items?checklistId[in]=${c.docs.id},${c.other.id}`)).toEqual([i.c.id, i.q.id]);
      expect(await listIds(H(), `/checklist-items?completed[eq]=true`)).toEqual([i.a.id]);
      expect(await listIds(H(), `/checklist-items?projectId=${p.id}&completed[eq]=false`)).toEqual([i.c.id, i.b.id]);
      const at = ok(await H().get(`/checklist-items/${i.c.id}`)).createdAt;
      expect(sorted(await listIds(H(), `/checklist-items?createdAt[gte]=${at}`))).toEqual(sorted([i.c.id, i.q.id]));
      expect(sorted(await listIds(H(), `/checklist-items?createdAt[lt]=${at}`))).toEqual(sorted([i.a.id, i.b.id]));
    });

    it('operators outside the declared ones are refused with 400', async () => {
      expect((await H().get('/checklists?name[gt]=a')).status).toBe(400);
      expect((await H().get('/checklist-items?completed[in]=true')).status).toBe(400);
      expect((await H().get('/checklist-items?bogus[eq]=1')).status).toBe(400);
    });
  });

  describe(`[${factory.name}] v3 Checklist and Checklist Item: lifecycle events and hard-delete cascades`, () => {
    const H = harnessPerDescribe(factory);
    let p: any;
    beforeAll(async () => {
      p = await H().project({ name: 'Events' });
    });

    it('create, update and delete record checklist.created/updated/removed and checklistItem.created/updated/removed', async () => {
      const h = H();
      const t = await h.task(p.id);
      const made = await during(h, () => checklist(h, t.id, { name: 'Evented' }));
      const c = made.result;
      const [created] = ofType(made.events, 'checklist.created', c.id);
      expect(created).toBeDefined();
      expect(created.aggregateType).toBe('checklist');
      expect(created.projectId).toBe(p.id);
      expect(created.payload).toEqual({ checklist: c });

      const madeItem = await during(h, () => item(h, c.id, { name: 'Evented item' }));
      const [itemCreated] = ofType(madeItem.events, 'checklistItem.created', madeItem.result.id);
      expect(itemCreated).toBeDefined();
      expect(itemCreated.projectId).toBe(p.id);
      expect(itemCreated.payload).toEqual({ checklistItem: madeItem.result });

      h.clock.advance(SECOND);
      const upd = await during(h, () => h.patch(`/checklists/${c.id}`, { name: 'Evented 2' }));
      const [updated] = ofType(upd.events, 'checklist.updated', c.id);
      expect(updated.payload.checklist.name).toBe('Evented 2');
      const updItem = await during(h, () => h.patch(`/checklist-items/${madeItem.result.id}`, { completed: true }));
      expect(ofType(updItem.events, 'checklistItem.updated', madeItem.result.id)).toHaveLength(1);
      expect(ofType(updItem.events, 'checklistItem.updated', madeItem.result.id)[0].payload.checklistItem.completed).toBe(true);

      const other = await item(h, c.id, { name: 'Another' });
      const delItem = await during(h, () => h.del(`/checklist-items/${other.id}`));
      expect(delItem.result.status).toBe(204);
      expect(delItem.result.body).toBeUndefined();
      expect(ofType(delItem.events, 'checklistItem.removed', other.id)).toHaveLength(1);
      expect(ofType(delItem.events, 'checklist.removed')).toHaveLength(0);
      problem(await h.get(`/checklist-items/${other.id}`), 404, 'resource_not_found');
      expect(ok(await h.get(`/checklist-items/${madeItem.result.id}`)).id).toBe(madeItem.result.id);
    });

    it('DELETE /checklists/{id} → 204: its items go too (GET → 404), with checklistItem.removed per item and checklist.removed', async () => {
      const h = H();
      const t = await h.task(p.id);
      const c = await checklist(h, t.id, { name: 'Doomed' });
      const keep = await checklist(h, t.id, { name: 'Survivor' });
      const items = [await item(h, c.id), await item(h, c.id), await item(h, c.id)];
      const kept = await item(h, keep.id);
      const { result, events } = await during(h, () => h.del(`/checklists/${c.id}`));
      expect(result.status).toBe(204);
      expect(result.body).toBeUndefined();
      expect(ofType(events, 'checklist.removed', c.id)).toHaveLength(1);
      expect(ofType(events, 'checklist.removed')).toHaveLength(1);
      expect(sorted(ofType(events, 'checklistItem.removed').map((e) => e.aggregateId))).toEqual(sorted(ids(items)));
      problem(await h.get(`/checklists/${c.id}`), 404, 'resource_not_found');
      for (const x of items) problem(await h.get(`/checklist-items/${x.id}`), 404, 'resource_not_found');
      expect(await listIds(h, `/checklist-items?checklistId[eq]=${c.id}`)).toEqual([]);
      expect(await listIds(h, `/checklists?projectId=${p.id}&taskId[eq]=${t.id}`)).toEqual([keep.id]);
      expect(ok(await h.get(`/checklist-items/${kept.id}`)).checklistId).toBe(keep.id);
      // Hard-deleted: no second delete, no restore, no update.
      problem(await h.del(`/checklists/${c.id}`), 404, 'resource_not_found');
      problem(await h.patch(`/checklists/${c.id}`, { name: 'Zombie' }), 404, 'resource_not_found');
      problem(await h.del(`/checklist-items/${items[0].id}`), 404, 'resource_not_found');
      // An item cannot be added to the gone checklist.
      expect(problem(await h.post('/checklist-items', { name: 'Late', checklistId: c.id }), 404, 'resource_not_found').field).toBe('checklistId');
    });

    it('DELETE /tasks/{id} deletes its checklists and their items, and those of its subtasks, each with a removed event', async () => {
      const h = H();
      const own = await h.project({ name: 'Task deletes' });
      const t = await h.task(own.id, { name: 'Parent' });
      const sub = ok(await h.post('/tasks', { name: 'Sub', parentTaskId: t.id }), 201);
      const subsub = ok(await h.post('/tasks', { name: 'Sub sub', parentTaskId: sub.id }), 201);
      const bystander = await h.task(own.id, { name: 'Bystander' });
      const c1 = await checklist(h, t.id);
      const c2 = await checklist(h, t.id);
      const cs = await checklist(h, sub.id);
      const css = await checklist(h, subsub.id);
      const cb = await checklist(h, bystander.id);
      const items = [await item(h, c1.id), await item(h, c2.id), await item(h, cs.id), await item(h, cs.id), await item(h, css.id)];
      const ib = await item(h, cb.id);
      const { result, events } = await during(h, () => h.del(`/tasks/${t.id}`));
      expect(result.status).toBe(204);
      expect(sorted(ofType(events, 'checklist.removed').map((e) => e.aggregateId))).toEqual(sorted([c1.id, c2.id, cs.id, css.id]));
      expect(sorted(ofType(events, 'checklistItem.removed').map((e) => e.aggregateId))).toEqual(sorted(ids(items)));
      for (const e of [...ofType(events, 'checklist.removed'), ...ofType(events, 'checklistItem.removed')]) expect(e.projectId).toBe(own.id);
      for (const x of [c1, c2, cs, css]) problem(await h.get(`/checklists/${x.id}`), 404, 'resource_not_found');
      for (const x of items) problem(await h.get(`/checklist-items/${x.id}`), 404, 'resource_not_found');
      expect(await listIds(h, `/checklists?projectId=${own.id}`)).toEqual([cb.id]);
      expect(await listIds(h, `/checklist-items?projectId=${own.id}`)).toEqual([ib.id]);
    });

    it('purging a trashed project destroys its tasks\' checklists and items (each announced as removed)', async () => {
      const h = H();
      const doomed = await h.project({ name: 'Doomed checklists' });
      const t = await h.task(doomed.id);
      const sub = ok(await h.post('/tasks', { name: 'Doomed sub', parentTaskId: t.id }), 201);
      const c = await checklist(h, t.id);
      const cs = await checklist(h, sub.id);
      const items = [await item(h, c.id), await item(h, cs.id)];
      expect((await h.del(`/projects/${doomed.id}`)).status).toBe(204);
      // While the project is in the trash its tasks, and so their checklists, stay addressable.
      expect(ok(await h.get(`/checklists/${c.id}`)).id).toBe(c.id);
      h.clock.advance(30 * DAY);
      const { events } = await during(h, () => h.api.jobs.purge());
      expect(sorted(ofType(events, 'checklist.removed').map((e) => e.aggregateId))).toEqual(sorted([c.id, cs.id]));
      expect(sorted(ofType(events, 'checklistItem.removed').map((e) => e.aggregateId))).toEqual(sorted(ids(items)));
      for (const x of [c, cs]) problem(await h.get(`/checklists/${x.id}`), 404, 'resource_not_found');
      for (const x of items) problem(await h.get(`/checklist-items/${x.id}`), 404, 'resource_not_found');
      expect(await listIds(h, `/checklists?projectId=${doomed.id}`)).toEqual([]);
    });

    it('a task moved to another project takes its checklists and their items along (projectId and one updated event each), subtasks\' too', async () => {
      const h = H();
      const from = await h.project({ name: 'From' });
      const to = await h.project({ name: 'To' });
      const t = await h.task(from.id, { name: 'Mover' });
      const sub = ok(await h.post('/tasks', { name: 'Mover sub', parentTaskId: t.id }), 201);
      const subsub = ok(await h.post('/tasks', { name: 'Mover sub sub', parentTaskId: sub.id }), 201);
      const stay = await h.task(from.id, { name: 'Stays' });
      const c = await checklist(h, t.id);
      const cs = await checklist(h, sub.id);
      const css = await checklist(h, subsub.id);
      const cStay = await checklist(h, stay.id);
      const items = [await item(h, c.id), await item(h, c.id), await item(h, cs.id), await item(h, css.id)];
      const iStay = await item(h, cStay.id);
      h.clock.advance(SECOND);
      const { result, events } = await during(h, () => h.patch(`/tasks/${t.id}`, { projectId: to.id }));
      expect(ok(result).projectId).toBe(to.id);
      for (const x of [c, cs, css]) {
        const ev = ofType(events, 'checklist.updated', x.id);
        expect(ev, `checklist.updated for ${x.id}`).toHaveLength(1);
        expect(ev[0].projectId).toBe(to.id);
        expect(ev[0].payload.checklist.projectId).toBe(to.id);
        expect(ok(await h.get(`/checklists/${x.id}`)).projectId).toBe(to.id);
      }
      for (const x of items) {
        const ev = ofType(events, 'checklistItem.updated', x.id);
        expect(ev, `checklistItem.updated for ${x.id}`).toHaveLength(1);
        expect(ev[0].projectId).toBe(to.id);
        expect(ev[0].payload.checklistItem.projectId).toBe(to.id);
        expect(ok(await h.get(`/checklist-items/${x.id}`)).projectId).toBe(to.id);
      }
      expect(ofType(events, 'checklist.updated')).toHaveLength(3);
      expect(ofType(events, 'checklistItem.updated')).toHaveLength(4);
      expect(sorted(await listIds(h, `/checklists?projectId=${to.id}`))).toEqual(sorted([c.id, cs.id, css.id]));
      expect(await listIds(h, `/checklists?projectId=${from.id}`)).toEqual([cStay.id]);
      expect(sorted(await listIds(h, `/checklist-items?projectId=${to.id}`))).toEqual(sorted(ids(items)));
      expect(await listIds(h, `/checklist-items?projectId=${from.id}`)).toEqual([iStay.id]);
      expect(ok(await h.get(`/checklists/${cStay.id}`)).projectId).toBe(from.id);
      // New rows under the moved task land in the new project.
      expect((await checklist(h, t.id)).projectId).toBe(to.id);
      expect((await item(h, c.id)).projectId).toBe(to.id);
    });
  });

  describe(`[${factory.name}] v3 Checklist and Checklist Item: project access and role policy`, () => {
    const H = harnessPerDescribe(factory);
    let secret: any;
    let shared: any;
    let secretTask: any;
    let secretList: any;
    let secretItem: any;
    beforeAll(async () => {
      const h = H();
      // limited, and neither the regular member nor the client belongs to it
      secret = await h.project({ name: 'Secret checklists' });
      secretTask = await h.task(secret.id);
      secretList = await checklist(h, secretTask.id, { name: 'Secret list' });
      secretItem = await item(h, secretList.id, { name: 'Secret item' });
      shared = await h.project({ name: 'Shared checklists', members: [h.a.regular.id, h.a.client.id] });
    });

    const denied = (r: Reply, projectId: string) => {
      expect(problem(r, 403, 'project_access_denied').projectId).toBe(projectId);
    };

    for (const who of ['regular', 'client'] as const) {
      it(`a ${who} member who cannot open the task's project: 403 project_access_denied on create and GET, never listed`, async () => {
        const h = H();
        const token = h.a[who].token;
        denied(await h.post('/checklists', { name: 'Sneak', taskId: secretTask.id }, { token }), secret.id);
        denied(await h.get(`/checklists/${secretList.id}`, { token }), secret.id);
        denied(await h.post('/checklist-items', { name: 'Sneak', checklistId: secretList.id }, { token }), secret.id);
        denied(await h.get(`/checklist-items/${secretItem.id}`, { token }), secret.id);
        denied(await h.patch(`/checklists/${secretList.id}`, { name: 'Renamed' }, { token }), secret.id);
        denied(await h.patch(`/checklist-items/${secretItem.id}`, { completed: true }, { token }), secret.id);
        // A regular member may delete, so the project check answers; a client may not delete at all.
        for (const path of [`/checklist-items/${secretItem.id}`, `/checklists/${secretList.id}`]) {
          const del = await h.del(path, { token });
          if (who === 'regular') denied(del, secret.id);
          else problem(del, 403, 'permission_denied');
        }
        expect(await listIds(h, '/checklists?limit=200', token)).not.toContain(secretList.id);
        expect(await listIds(h, '/checklist-items?limit=200', token)).not.toContain(secretItem.id);
        expect(await listIds(h, `/checklists?taskId[eq]=${secretTask.id}`, token)).toEqual([]);
        expect(await listIds(h, `/checklist-items?checklistId[eq]=${secretList.id}`, token)).toEqual([]);
        denied(await h.get(`/checklists?projectId=${secret.id}`, { token }), secret.id);
        denied(await h.get(`/checklist-items?projectId=${secret.id}`, { token }), secret.id);
        // Nothing was written.
        expect(await listIds(h, `/checklists?projectId=${secret.id}`)).toEqual([secretList.id]);
        expect(await listIds(h, `/checklist-items?projectId=${secret.id}`)).toEqual([secretItem.id]);
        expect(ok(await h.get(`/checklists/${secretList.id}`)).name).toBe('Secret list');
        expect(ok(await h.get(`/checklist-items/${secretItem.id}`)).completed).toBe(false);
      });
    }

    it('the scopes are checklists and checklist-items: a token holding one reads only that resource (and expand needs the other)', async () => {
      const h = H();
      const t = await h.task(shared.id);
      const c = await checklist(h, t.id, { name: 'Scoped' });
      const i = await item(h, c.id, { name: 'Scoped item' });
      const lists = (await h.api.admin.issueToken(h.a.owner.id, { scopes: ['checklists:read'] })).token;
      expect(ok(await h.get(`/checklists/${c.id}`, { token: lists })).id).toBe(c.id);
      expect(problem(await h.get(`/checklist-items/${i.id}`, { token: lists }), 403, 'permission_denied').missingPermissions).toEqual(['checklist-items:read']);
      expect(problem(await h.get('/checklist-items', { token: lists }), 403, 'permission_denied').missingPermissions).toEqual(['checklist-items:read']);
      expect(problem(await h.get(`/checklists/${c.id}?expand=checklistItems`, { token: lists }), 403, 'permission_denied').missingPermissions).toEqual(['checklist-items:read']);
      expect(problem(await h.patch(`/checklists/${c.id}`, { name: 'No' }, { token: lists }), 403, 'permission_denied').missingPermissions).toEqual(['checklists:write']);
      const items = (await h.api.admin.issueToken(h.a.owner.id, { scopes: ['checklist-items:read', 'checklist-items:write'] })).token;
      expect(ok(await h.patch(`/checklist-items/${i.id}`, { completed: true }, { token: items })).completed).toBe(true);
      expect(problem(await h.get(`/checklists/${c.id}`, { token: items }), 403, 'permission_denied').missingPermissions).toEqual(['checklists:read']);
      expect(problem(await h.del(`/checklist-items/${i.id}`, { token: items }), 403, 'permission_denied').missingPermissions).toEqual(['checklist-items:delete']);
      expect(ok(await h.get(`/checklists/${c.id}`)).name).toBe('Scoped');
    });

    it('once a member of the project, the caller reads its checklists', async () => {
      const h = H();
      ok(await h.post(`/projects/${secret.id}/members`, { ids: [h.a.regular.id] }));
      expect(ok(await h.get(`/checklists/${secretList.id}`, { token: h.a.regular.token })).id).toBe(secretList.id);
      expect(await listIds(h, `/checklists?projectId=${secret.id}`, h.a.regular.token)).toEqual([secretList.id]);
      ok(await h.del(`/projects/${secret.id}/members`, { body: { ids: [h.a.regular.id] } }));
      denied(await h.get(`/checklists/${secretList.id}`, { token: h.a.regular.token }), secret.id);
    });

    it('a regular member reads, writes and deletes checklists and items', async () => {
      const h = H();
      const token = h.a.regular.token;
      const t = await h.task(shared.id, {}, token);
      const c = await checklist(h, t.id, { name: 'By regular' }, token);
      const i = await item(h, c.id, { name: 'By regular' }, token);
      expect(ok(await h.get(`/checklists/${c.id}`, { token })).name).toBe('By regular');
      expect(ok(await h.get(`/checklist-items/${i.id}`, { token })).name).toBe('By regular');
      expect(await listIds(h, `/checklists?projectId=${shared.id}`, token)).toContain(c.id);
      expect(await listIds(h, `/checklist-items?projectId=${shared.id}`, token)).toContain(i.id);
      expect(ok(await h.patch(`/checklists/${c.id}`, { name: 'Edited' }, { token })).name).toBe('Edited');
      expect(ok(await h.patch(`/checklist-items/${i.id}`, { completed: true }, { token })).completed).toBe(true);
      expect((await h.del(`/checklist-items/${i.id}`, { token })).status).toBe(204);
      expect((await h.del(`/checklists/${c.id}`, { token })).status).toBe(204);
      problem(await h.get(`/checklists/${c.id}`), 404, 'resource_not_found');
    });

    it('a client (guest role) reads and writes checklists and items, but DELETE → 403 permission_denied and nothing goes', async () => {
      const h = H();
      const token = h.a.client.token;
      const t = await h.task(shared.id);
      const c = await checklist(h, t.id, { name: 'By client' }, token);
      const i = await item(h, c.id, { name: 'By client' }, token);
      expect(ok(await h.get(`/checklists/${c.id}`, { token })).id).toBe(c.id);
      expect(ok(await h.get(`/checklist-items/${i.id}`, { token })).id).toBe(i.id);
      expect(await listIds(h, `/checklists?projectId=${shared.id}`, token)).toContain(c.id);
      expect(await listIds(h, '/checklist-items', token)).toContain(i.id);
      expect(ok(await h.patch(`/checklists/${c.id}`, { name: 'Client edit' }, { token })).name).toBe('Client edit');
      expect(ok(await h.patch(`/checklist-items/${i.id}`, { completed: true }, { token })).completed).toBe(true);
      const di = problem(await h.del(`/checklist-items/${i.id}`, { token }), 403, 'permission_denied');
      expect(di.missingPermissions).toEqual(['checklist-items:delete']);
      const dc = problem(await h.del(`/checklists/${c.id}`, { token }), 403, 'permission_denied');
      expect(dc.missingPermissions).toEqual(['checklists:delete']);
      expect(ok(await h.get(`/checklists/${c.id}`)).name).toBe('Client edit');
      expect(ok(await h.get(`/checklist-items/${i.id}`)).completed).toBe(true);
      // A token the owner narrows to read cannot write either (the scope is the resource's path).
      const readOnly = await h.api.admin.issueToken(h.a.regular.id, { scopes: ['read'] });
      expect(problem(await h.post('/checklists', { name: 'No', taskId: t.id }, { token: readOnly.token }), 403, 'permission_denied').missingPermissions).toEqual(['checklists:write']);
    });
  });

  describe(`[${factory.name}] v3 Checklist and Checklist Item: expand (task, checklistItems, checklist, actors)`, () => {
    const H = harnessPerDescribe(factory);
    let p: any;
    let t: any;
    let c: any;
    let empty: any;
    let items: any[];
    beforeAll(async () => {
      const h = H();
      p = await h.project({ name: 'Expand checklists', members: [h.a.regular.id] });
      t = await h.task(p.id, { name: 'Expanded task' });
      c = await checklist(h, t.id, { name: 'Expanded' });
      empty = await checklist(h, t.id, { name: 'Empty' });
      items = [await item(h, c.id, { name: 'one' }), await item(h, c.id, { name: 'two', completed: true }), await item(h, c.id, { name: 'three' })];
    });

    it('without expand only ids are returned', async () => {
      const got = ok(await H().get(`/checklists/${c.id}`));
      expect(got).not.toHaveProperty('task');
      expect(got).not.toHaveProperty('checklistItems');
      const gi = ok(await H().get(`/checklist-items/${items[0].id}`));
      expect(gi).not.toHaveProperty('checklist');
    });

    it('GET /checklists/{id}?expand=checklistItems returns its items as objects; a checklist without items has []', async () => {
      const got = ok(await H().get(`/checklists/${c.id}?expand=checklistItems`));
      expect(got.id).toBe(c.id);
      expect(Array.isArray(got.checklistItems)).toBe(true);
      expect(sorted(ids(got.checklistItems))).toEqual(sorted(ids(items)));
      const two = got.checklistItems.find((x: any) => x.id === items[1].id);
      expect(two).toEqual(items[1]);
      expect(ok(await H().get(`/checklists/${empty.id}?expand=checklistItems`)).checklistItems).toEqual([]);
      const list = ok(await H().get(`/checklists?projectId=${p.id}&expand=checklistItems`)).data;
      expect(ids(list)).toEqual([c.id, empty.id]);
      expect(sorted(ids(list[0].checklistItems))).toEqual(sorted(ids(items)));
      expect(list[1].checklistItems).toEqual([]);
    });

    it('expand=task returns the task; on items expand=checklist returns the checklist (and checklist.task the task)', async () => {
      const got = ok(await H().get(`/checklists/${c.id}?expand=task`));
      expect(got.taskId).toBe(t.id);
      expect(got.task).toMatchObject({ id: t.id, name: 'Expanded task', projectId: p.id });
      const gi = ok(await H().get(`/checklist-items/${items[0].id}?expand=checklist`));
      expect(gi.checklist).toEqual(c);
      const deep = ok(await H().get(`/checklist-items/${items[0].id}?expand=checklist.task`));
      expect(deep.checklist.id).toBe(c.id);
      expect(deep.checklist.task).toMatchObject({ id: t.id, name: 'Expanded task' });
      const rows = ok(await H().get(`/checklist-items?projectId=${p.id}&expand=checklist`)).data;
      expect(rows).toHaveLength(3);
      for (const r of rows) expect(r.checklist.id).toBe(c.id);
    });

    it('expand=createdByActor,updatedByActor returns the acting member\'s actor on both resources', async () => {
      const h = H();
      ok(await h.patch(`/checklists/${c.id}`, { name: 'Expanded by regular' }, { token: h.a.regular.token }));
      const got = ok(await h.get(`/checklists/${c.id}?expand=createdByActor,updatedByActor`));
      expect(got.createdByActor.id).toBe(got.createdByActorId);
      expect(got.updatedByActor.id).toBe(got.updatedByActorId);
      expect(got.createdByActorId).not.toBe(got.updatedByActorId);
      const gi = ok(await h.get(`/checklist-items/${items[0].id}?expand=createdByActor,updatedByActor`));
      expect(gi.createdByActor.id).toBe(gi.createdByActorId);
      expect(gi.updatedByActor.id).toBe(gi.updatedByActorId);
    });

    it('an unknown expand is 400 expand_unknown_relation', async () => {
      problem(await H().get(`/checklists/${c.id}?expand=bogus`), 400, 'expand_unknown_relation');
      problem(await H().get(`/checklist-items/${items[0].id}?expand=task`), 400, 'expand_unknown_relation');
    });
  });
}
