import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { harness, type Harness, type StoreFactory } from '../../kit';
import { HEX6_LOWER, problem } from './helpers';
import { during, harnessPerDescribe, ofType } from '../shared';
import { expectOk, expectProblem, sorted } from './helpers';

export function statusesSuite(factory: StoreFactory): void {
  describe(`[${factory.name}] Statuses (docs/not-shown.md: board columns)`, () => {
    let h: Harness;
    let pid: string;
    beforeAll(async () => {
      h = await harness(factory);
      pid = (await h.project({ name: 'Board' })).id;
    });
    afterAll(() => h.close());

    it('a new project has exactly one status, "To do"', async () => {
      const p = await h.project({ name: 'Fresh board' });
      const r = await h.get(`/statuses?projectId=${p.id}`);
      expect(r.status).toBe(200);
      expect(r.body.data).toHaveLength(1);
      expect(r.body.data[0]).toMatchObject({ name: 'To do', projectId: p.id, archived: false });
    });

    it('create (order MAX+100, palette colour), update and delete', async () => {
      const c = await h.post('/statuses', { name: '  Review  ', projectId: pid });
      expect(c.status).toBe(201);
      expect(c.body).toMatchObject({ name: 'Review', projectId: pid, archived: false });
      expect(c.body.color).toMatch(HEX6_LOWER);
      const first = (await h.get(`/statuses?projectId=${pid}`)).body.data[0];
      expect(c.body.order).toBe(first.order + 100);
      const u = await h.patch(`/statuses/${c.body.id}`, { name: 'In review', color: '#112233' });
      expect(u.status).toBe(200);
      expect(u.body).toMatchObject({ name: 'In review', color: '#112233' });
      expect((await h.get(`/statuses/${c.body.id}`)).body.name).toBe('In review');
      const d = await h.del(`/statuses/${c.body.id}`);
      expect(d.status).toBe(204);
      expect(problem(await h.get(`/statuses/${c.body.id}`))).toEqual({ status: 404, code: 'resource_not_found' });
    });

    it('GET /statuses?projectId= returns that project\'s statuses in order', async () => {
      const other = await h.project({ name: 'Other board' });
      const s1 = await h.post('/statuses', { name: 'Doing', projectId: pid });
      const s2 = await h.post('/statuses', { name: 'Done', projectId: pid });
      const r = await h.get(`/statuses?projectId=${pid}`);
      const names = r.body.data.map((s: any) => s.name);
      expect(names.slice(-2)).toEqual(['Doing', 'Done']);
      expect(r.body.data.every((s: any) => s.projectId === pid)).toBe(true);
      expect(s2.body.order).toBe(s1.body.order + 100);
      const o = await h.get(`/statuses?projectId=${other.id}`);
      expect(o.body.data.map((s: any) => s.name)).toEqual(['To do']);
    });

    it('create without projectId is 400 project_not_specified', async () => {
      const r = await h.post('/statuses', { name: 'Orphan' });
      expect(problem(r)).toEqual({ status: 400, code: 'project_not_specified' });
    });

    it('projectId is immutable', async () => {
      const other = await h.project({ name: 'Elsewhere board' });
      const s = await h.post('/statuses', { name: 'Fixed', projectId: pid });
      const r = await h.patch(`/statuses/${s.body.id}`, { projectId: other.id });
      expect(problem(r)).toEqual({ status: 400, code: 'validation_failed' });
      expect(r.body.errors[0]).toMatchObject({ field: 'projectId', code: 'immutable' });
    });

    it('deleting a status leaves its tasks with statusId null', async () => {
      const s = await h.post('/statuses', { name: 'Doomed', projectId: pid });
      const t = await h.task(pid, { statusId: s.body.id });
      expect(t.statusId).toBe(s.body.id);
      expect((await h.del(`/statuses/${s.body.id}`)).status).toBe(204);
      const got = await h.get(`/tasks/${t.id}`);
      expect(got.status).toBe(200);
      expect(got.body.statusId).toBeNull();
    });
  });

  describe(`[${factory.name}] v3 Events: membership relations status (assignees, hiddenFor): sub-routes, replace-the-set bodies, expands and events`, () => {
    const H = harnessPerDescribe(factory);
    let pid: string;
    let roles: Record<'owner' | 'manager' | 'regular' | 'client', string>;
    const links = (events: any[], type: string) => ofType(events, type).map((e) => [e.payload.relatedId, e.payload.relation, e.payload.parentId]).sort();
    beforeAll(async () => {
      pid = (await H().project({ name: 'Status relations', members: [H().a.regular.id] })).id;
      roles = H().a.roleIds;
    });
    const column = async (body: Record<string, unknown> = {}) => expectOk(await H().post('/statuses', { name: 'Column', projectId: pid, ...body }), 201);

    it('create with assignees and hiddenFor: status.created, then one status.assignees.added / status.hiddenFor.added per id', async () => {
      const { result: s, events } = await during(H(), () => column({ assignees: [H().a.regular.id, H().a.owner.id], hiddenFor: [roles.client] }));
      expect(sorted(s.assignees)).toEqual(sorted([H().a.regular.id, H().a.owner.id]));
      expect(s.hiddenFor).toEqual([roles.client]);
      expect(ofType(events, 'status.created', s.id)).toHaveLength(1);
      expect(links(events, 'status.assignees.added')).toEqual(sorted([H().a.regular.id, H().a.owner.id]).map((m) => [m, 'assignees', s.id]));
      expect(links(events, 'status.hiddenFor.added')).toEqual([[roles.client, 'hiddenFor', s.id]]);
    });

    it('POST and DELETE /statuses/{id}/assignees add and remove members, each with its event', async () => {
      const s = await column();
      const add = await during(H(), () => H().post(`/statuses/${s.id}/assignees`, { ids: [H().a.regular.id] }));
      expect(expectOk(add.result).assignees).toEqual([H().a.regular.id]);
      expect(links(add.events, 'status.assignees.added')).toEqual([[H().a.regular.id, 'assignees', s.id]]);
      const rm = await during(H(), () => H().del(`/statuses/${s.id}/assignees`, { body: { ids: [H().a.regular.id] } }));
      expect(expectOk(rm.result).assignees).toEqual([]);
      expect(links(rm.events, 'status.assignees.removed')).toEqual([[H().a.regular.id, 'assignees', s.id]]);
      expect(expectOk(await H().get(`/statuses/${s.id}`)).assignees).toEqual([]);
    });

    it('POST /statuses/{id}/hidden-for adds roles; DELETE /statuses/{id}/hidden-for and POST /statuses/{id}/hidden-for/remove remove them, each with its event', async () => {
      const s = await column();
      const add = await during(H(), () => H().post(`/statuses/${s.id}/hidden-for`, { ids: [roles.client, roles.regular, roles.manager] }));
      expect(sorted(expectOk(add.result).hiddenFor)).toEqual(sorted([roles.client, roles.regular, roles.manager]));
      expect(links(add.events, 'status.hiddenFor.added')).toEqual(sorted([roles.client, roles.regular, roles.manager]).map((r) => [r, 'hiddenFor', s.id]));
      const rm = await during(H(), () => H().post(`/statuses/${s.id}/hidden-for/remove`, { ids: [roles.regular] }));
      expect(sorted(expectOk(rm.result).hiddenFor)).toEqual(sorted([roles.client, roles.manager]));
      expect(links(rm.events, 'status.hiddenFor.removed')).toEqual([[roles.regular, 'hiddenFor', s.id]]);
      const del = await during(H(), () => H().del(`/statuses/${s.id}/hidden-for`, { body: { ids: [roles.manager] } }));
      expect(expectOk(del.result).hiddenFor).toEqual([roles.client]);
      expect(links(del.events, 'status.hiddenFor.removed')).toEqual([[roles.manager, 'hiddenFor', s.id]]);
    });

    it('PATCH with assignees / hiddenFor REPLACES each set: removed and added events for the difference; omitting the key leaves it', async () => {
      const s = await column({ assignees: [H().a.regular.id], hiddenFor: [roles.client, roles.regular] });
      const { result, events } = await during(H(), () => H().patch(`/statuses/${s.id}`, { assignees: [H().a.owner.id], hiddenFor: [roles.client] }));
      const u = expectOk(result);
      expect(u.assignees).toEqual([H().a.owner.id]);
      expect(u.hiddenFor).toEqual([roles.client]);
      expect(links(events, 'status.assignees.removed')).toEqual([[H().a.regular.id, 'assignees', s.id]]);
      expect(links(events, 'status.assignees.added')).toEqual([[H().a.owner.id, 'assignees', s.id]]);
      expect(links(events, 'status.hiddenFor.removed')).toEqual([[roles.regular, 'hiddenFor', s.id]]);
      expect(links(events, 'status.hiddenFor.added')).toEqual([]);
      expect(ofType(events, 'status.updated', s.id)).toHaveLength(1);
      const kept = expectOk(await H().patch(`/statuses/${s.id}`, { name: 'Renamed' }));
      expect(kept.assignees).toEqual([H().a.owner.id]);
      expect(kept.hiddenFor).toEqual([roles.client]);
      const cleared = await during(H(), () => H().patch(`/statuses/${s.id}`, { hiddenFor: [] }));
      expect(expectOk(cleared.result).hiddenFor).toEqual([]);
      expect(links(cleared.events, 'status.hiddenFor.removed')).toEqual([[roles.client, 'hiddenFor', s.id]]);
    });

    it('expand=assignees,hiddenFor returns the member and role objects', async () => {
      const s = await column({ assignees: [H().a.regular.id], hiddenFor: [roles.client] });
      const g = expectOk(await H().get(`/statuses/${s.id}?expand=assignees,hiddenFor`));
      expect(g.assignees.map((m: any) => m.id)).toEqual([H().a.regular.id]);
      expect(g.hiddenFor.map((r: any) => r.id)).toEqual([roles.client]);
      const l = expectOk(await H().get(`/statuses?projectId=${pid}&expand=assignees&limit=200`));
      expect(l.data.find((x: any) => x.id === s.id).assignees.map((m: any) => m.id)).toEqual([H().a.regular.id]);
    });

    it('ids of another workspace or unknown → 404 m2m_target_not_found and nothing linked; empty ids → 400 batch_empty; unknown relation → 400 m2m_relation_unknown', async () => {
      const s = await column();
      const r = expectProblem(await H().post(`/statuses/${s.id}/hidden-for`, { ids: [roles.client, H().b.roleIds.client] }), 404, 'm2m_target_not_found');
      expect(r.missing).toEqual([H().b.roleIds.client]);
      expectProblem(await H().post(`/statuses/${s.id}/assignees`, { ids: [H().b.owner.id] }), 404, 'm2m_target_not_found');
      expectProblem(await H().patch(`/statuses/${s.id}`, { assignees: ['nosuchmember000'] }), 404, 'm2m_target_not_found');
      const got = expectOk(await H().get(`/statuses/${s.id}`));
      expect(got.hiddenFor).toEqual([]);
      expect(got.assignees).toEqual([]);
      expectProblem(await H().post(`/statuses/${s.id}/assignees`, { ids: [] }), 400, 'batch_empty');
      expectProblem(await H().post(`/statuses/${s.id}/labels`, { ids: [H().a.owner.id] }), 400, 'm2m_relation_unknown');
    });

    it('a member who cannot open the status\'s project cannot change its sets (403 project_access_denied)', async () => {
      const closed = await H().project({ name: 'Status relations closed' });
      const s = expectOk(await H().post('/statuses', { name: 'Closed column', projectId: closed.id }), 201);
      expectProblem(await H().post(`/statuses/${s.id}/assignees`, { ids: [H().a.regular.id] }, { token: H().a.regular.token }), 403, 'project_access_denied');
      expect(expectOk(await H().get(`/statuses/${s.id}`)).assignees).toEqual([]);
    });
  });
}
