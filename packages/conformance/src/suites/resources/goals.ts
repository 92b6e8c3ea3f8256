import { describe, it, expect, beforeAll } from 'vitest';
import type { Harness, StoreFactory } from '../../kit';
import { during, harnessPerDescribe, ofType } from '../shared';
import { expectOk as ok, expectProblem as problem, expectInvalid as invalid, HEX6_LOWER, sorted } from './helpers';

/**
 * Goals and goal groups (spec "Other resources": fields not shown; "Events":
 * lifecycle resources goal and goalGroup, membership relation list.goals;
 * "List": `goals` replaces the set, POST and DELETE /lists/{id}/goals, the
 * `goals` expand), with the decisions of docs/not-shown.md "Goals and goal
 * groups": fields, defaults, date and value rules, deleting a group keeps
 * its goals, deleting a goal leaves every list.
 */

const ids = (rows: any[]): string[] => rows.map((r) => r.id);

async function listIds(h: Harness, path: string, token?: string): Promise<string[]> {
  return ids(ok(await h.get(path, { token })).data);
}

async function group(h: Harness, body: Record<string, unknown> = {}, token?: string): Promise<any> {
  return ok(await h.post('/goal-groups', { name: 'Group', ...body }, { token }), 201);
}

async function goal(h: Harness, body: Record<string, unknown> = {}, token?: string): Promise<any> {
  return ok(await h.post('/goals', { name: 'Goal', ...body }, { token }), 201);
}

export function goalsSuite(factory: StoreFactory): void {

  describe(`[${factory.name}] v3 Goals and goal groups: goal group fields (name, description, color, order)`, () => {
    const H = harnessPerDescribe(factory);

    it('POST /goal-groups → 201 with the trimmed name, null description, a palette colour and order appended (1, 2, …); GET answers the same', async () => {
      const g1 = ok(await H().post('/goal-groups', { name: '  Company OKRs  ' }), 201);
      expect(g1.name).toBe('Company OKRs');
      expect(g1.description).toBeNull();
      expect(g1.color).toMatch(HEX6_LOWER);
      expect(g1.order).toBe(1);
      expect(ok(await H().get(`/goal-groups/${g1.id}`))).toEqual(g1);
      expect((await group(H())).order).toBe(2);
      expect((await group(H(), { order: 10.5 })).order).toBe(10.5);
      expect((await group(H())).order).toBe(11.5);
      const c = await group(H(), { color: '#AABBCC', description: 'Why' });
      expect(c.color).toBe('#aabbcc');
      expect(c.description).toBe('Why');
      expect(ok(await H().patch(`/goal-groups/${c.id}`, { color: '#0A0B0C' })).color).toBe('#0a0b0c');
    });

    it('name is required, trimmed, 1-255 characters; color is #rrggbb; order a number', async () => {
      invalid(await H().post('/goal-groups', {}), 'name');
      invalid(await H().post('/goal-groups', { name: '   ' }), 'name');
      invalid(await H().post('/goal-groups', { name: 'n'.repeat(256) }), 'name');
      expect((await group(H(), { name: 'n'.repeat(255) })).name).toHaveLength(255);
      invalid(await H().post('/goal-groups', { name: 'Bad', color: 'red' }), 'color');
      invalid(await H().post('/goal-groups', { name: 'Bad', order: 'first' }), 'order');
      const g = await group(H(), { name: 'Keep' });
      invalid(await H().patch(`/goal-groups/${g.id}`, { name: null }), 'name');
      expect(ok(await H().get(`/goal-groups/${g.id}`)).name).toBe('Keep');
    });

    it('expand=goals lists the group\'s goals; groupId[eq] filters goals by group', async () => {
      const g = await group(H(), { name: 'With goals' });
      const a = await goal(H(), { name: 'A', groupId: g.id });
      const b = await goal(H(), { name: 'B', groupId: g.id });
      await goal(H(), { name: 'Loose' });
      expect(sorted(ids(ok(await H().get(`/goal-groups/${g.id}?expand=goals`)).goals))).toEqual(sorted([a.id, b.id]));
      expect(sorted(await listIds(H(), `/goals?groupId[eq]=${g.id}`))).toEqual(sorted([a.id, b.id]));
    });

    it('deleting a group (hard) keeps its goals, ungrouped: groupId null, each with goal.updated; goalGroup.removed', async () => {
      const g = await group(H(), { name: 'Doomed group' });
      const a = await goal(H(), { name: 'Kept A', groupId: g.id });
      const b = await goal(H(), { name: 'Kept B', groupId: g.id });
      const { result, events } = await during(H(), () => H().del(`/goal-groups/${g.id}`));
      expect(result.status).toBe(204);
      problem(await H().get(`/goal-groups/${g.id}`), 404, 'resource_not_found');
      for (const x of [a, b]) {
        expect(ok(await H().get(`/goals/${x.id}`)).groupId).toBeNull();
        const ev = ofType(events, 'goal.updated', x.id);
        expect(ev).toHaveLength(1);
        expect(ev[0].payload.goal.groupId).toBeNull();
      }
      expect(ofType(events, 'goalGroup.removed', g.id)).toHaveLength(1);
      // Hard-deleted: there is nothing to restore.
      const restore = await H().post(`/goal-groups/${g.id}/restore`);
      expect(restore.status >= 400 && restore.status < 500, JSON.stringify(restore.body)).toBe(true);
    });

    it('regular members read, write and delete groups; clients only read them (403 permission_denied)', async () => {
      const h = H();
      const g = await group(h, { name: 'By regular' }, h.a.regular.token);
      ok(await h.patch(`/goal-groups/${g.id}`, { name: 'Renamed' }, { token: h.a.regular.token }));
      expect(ok(await h.get(`/goal-groups/${g.id}`, { token: h.a.client.token })).name).toBe('Renamed');
      problem(await h.post('/goal-groups', { name: 'By client' }, { token: h.a.client.token }), 403, 'permission_denied');
      problem(await h.patch(`/goal-groups/${g.id}`, { name: 'x' }, { token: h.a.client.token }), 403, 'permission_denied');
      problem(await h.del(`/goal-groups/${g.id}`, { token: h.a.client.token }), 403, 'permission_denied');
      ok(await h.del(`/goal-groups/${g.id}`, { token: h.a.regular.token }), 204);
    });
  });

  describe(`[${factory.name}] v3 Goals and goal groups: goal fields (name, description, groupId, ownerId, status, values, unit, startDate, dueDate)`, () => {
    const H = harnessPerDescribe(factory);

    it('POST /goals → 201 with the defaults: ownerId the caller, status onTrack, startValue 0, currentValue = startValue, targetValue 100, nulls; GET answers the same', async () => {
      const g = ok(await H().post('/goals', { name: '  Ship v3  ' }, { token: H().a.regular.token }), 201);
      expect(g).toMatchObject({
        name: 'Ship v3', description: null, groupId: null, ownerId: H().a.regular.id, status: 'onTrack',
        startValue: 0, currentValue: 0, targetValue: 100, unit: null, startDate: null, dueDate: null,
      });
      expect(ok(await H().get(`/goals/${g.id}`))).toEqual(g);
      const full = await goal(H(), {
        name: 'Revenue', description: 'ARR', ownerId: null, status: 'atRisk', startValue: 10, targetValue: 50, unit: ' USD ', startDate: '2026-01-01', dueDate: '2026-12-31',
      });
      expect(full).toMatchObject({ ownerId: null, status: 'atRisk', startValue: 10, currentValue: 10, targetValue: 50, unit: 'USD', startDate: '2026-01-01', dueDate: '2026-12-31' });
    });

    it('name is required, trimmed, 1-255 characters; status is one of onTrack, atRisk, offTrack, achieved', async () => {
      invalid(await H().post('/goals', {}), 'name');
      invalid(await H().post('/goals', { name: ' ' }), 'name');
      invalid(await H().post('/goals', { name: 'x'.repeat(256) }), 'name');
      invalid(await H().post('/goals', { name: 'S', status: 'done' }), 'status');
      const g = await goal(H());
      for (const s of ['atRisk', 'offTrack', 'achieved', 'onTrack']) expect(ok(await H().patch(`/goals/${g.id}`, { status: s })).status).toBe(s);
      invalid(await H().patch(`/goals/${g.id}`, { status: null }), 'status');
    });

    it('startDate and dueDate are calendar dates YYYY-MM-DD or null; dueDate before startDate → before_start (create and update)', async () => {
      invalid(await H().post('/goals', { name: 'D', dueDate: '2026-02-30' }), 'dueDate');
      invalid(await H().post('/goals', { name: 'D', dueDate: '2026-03-01T00:00:00Z' }), 'dueDate');
      invalid(await H().post('/goals', { name: 'D', startDate: '1/2/2026' }), 'startDate');
      invalid(await H().post('/goals', { name: 'D', startDate: '2026-05-02', dueDate: '2026-05-01' }), 'dueDate', 'before_start');
      const same = await goal(H(), { startDate: '2026-05-01', dueDate: '2026-05-01' });
      invalid(await H().patch(`/goals/${same.id}`, { startDate: '2026-05-02' }), 'dueDate', 'before_start');
      expect(ok(await H().get(`/goals/${same.id}`)).startDate).toBe('2026-05-01');
      expect(ok(await H().patch(`/goals/${same.id}`, { dueDate: null, startDate: '2026-06-01' })).dueDate).toBeNull();
    });

    it('values are numbers; targetValue must differ from startValue (equals_start); unit at most 20 characters', async () => {
      invalid(await H().post('/goals', { name: 'V', targetValue: 'lots' }), 'targetValue');
      invalid(await H().post('/goals', { name: 'V', startValue: 5, targetValue: 5 }), 'targetValue', 'equals_start');
      invalid(await H().post('/goals', { name: 'V', targetValue: 0 }), 'targetValue', 'equals_start');
      invalid(await H().post('/goals', { name: 'V', unit: 'u'.repeat(21) }), 'unit');
      const g = await goal(H(), { startValue: 100, targetValue: 20 });
      expect(ok(await H().patch(`/goals/${g.id}`, { currentValue: 60 })).currentValue).toBe(60);
      invalid(await H().patch(`/goals/${g.id}`, { targetValue: 100 }), 'targetValue', 'equals_start');
      expect(ok(await H().get(`/goals/${g.id}`)).targetValue).toBe(20);
    });

    it('groupId and ownerId must name a group / member of this workspace (404 resource_not_found with field); expand group and owner', async () => {
      expect(problem(await H().post('/goals', { name: 'G', groupId: 'nosuchgroup1' }), 404, 'resource_not_found').field).toBe('groupId');
      expect(problem(await H().post('/goals', { name: 'G', ownerId: 'nosuchmember1' }), 404, 'resource_not_found').field).toBe('ownerId');
      const gb = await group(H(), { name: 'Beta group' }, H().b.owner.token);
      expect(problem(await H().post('/goals', { name: 'G', groupId: gb.id }), 404, 'resource_not_found').field).toBe('groupId');
      expect(problem(await H().post('/goals', { name: 'G', ownerId: H().b.owner.id }), 404, 'resource_not_found').field).toBe('ownerId');
      const g = await group(H(), { name: 'Mine' });
      const x = await goal(H(), { groupId: g.id, ownerId: H().a.regular.id });
      const e = ok(await H().get(`/goals/${x.id}?expand=group,owner`));
      expect(e.group.id).toBe(g.id);
      expect(e.owner.id).toBe(H().a.regular.id);
    });

    it('filters name, ownerId, status, groupId[null], dueDate ranges select their rows', async () => {
      const g = await group(H(), { name: 'Filter group' });
      const a = await goal(H(), { name: 'Filter alpha', status: 'achieved', dueDate: '2026-04-01', groupId: g.id });
      const b = await goal(H(), { name: 'Filter beta', ownerId: H().a.client.id, dueDate: '2026-05-01' });
      const c = await goal(H(), { name: 'Filter gamma', status: 'offTrack' });
      const base = '/goals?name[startsWith]=filter';
      expect(sorted(await listIds(H(), base))).toEqual(sorted([a.id, b.id, c.id]));
      expect(await listIds(H(), `${base}&status[eq]=achieved`)).toEqual([a.id]);
      expect(sorted(await listIds(H(), `${base}&status[in]=achieved,offTrack`))).toEqual(sorted([a.id, c.id]));
      expect(await listIds(H(), `${base}&ownerId[eq]=${H().a.client.id}`)).toEqual([b.id]);
      expect(sorted(await listIds(H(), `${base}&groupId[null]=true`))).toEqual(sorted([b.id, c.id]));
      expect(await listIds(H(), `${base}&dueDate[gte]=2026-04-15`)).toEqual([b.id]);
      expect(await listIds(H(), `${base}&dueDate[null]=true`)).toEqual([c.id]);
      expect(await listIds(H(), `${base}&sort=-dueDate`)).toEqual([c.id, b.id, a.id]);
    });

    it('startDate and dueDate filters take only calendar dates YYYY-MM-DD: anything else is 400 invalid_query_param', async () => {
      for (const q of ['startDate[gt]=banana', 'dueDate[lt]=2026-02-30', 'dueDate[gte]=2026-4-15', 'startDate[lte]=2026-04-01T00:00:00Z', 'dueDate[gt]=']) {
        const r = problem(await H().get(`/goals?${q}`), 400, 'invalid_query_param');
        expect(r.name, q).toBe(q.slice(0, q.indexOf('=')));
      }
      expect((await H().get('/goals?startDate[gt]=2028-02-29&dueDate[lte]=2026-12-31')).status).toBe(200);
    });

    it('create, update and delete emit goal.created / .updated / .removed carrying the goal', async () => {
      const c = await during(H(), () => goal(H(), { name: 'Evented' }));
      expect(ofType(c.events, 'goal.created', c.result.id)[0].payload.goal).toEqual(c.result);
      const u = await during(H(), () => H().patch(`/goals/${c.result.id}`, { currentValue: 42 }));
      expect(ofType(u.events, 'goal.updated', c.result.id)[0].payload.goal.currentValue).toBe(42);
      const d = await during(H(), () => H().del(`/goals/${c.result.id}`));
      expect(d.result.status).toBe(204);
      expect(ofType(d.events, 'goal.removed', c.result.id)).toHaveLength(1);
      problem(await H().get(`/goals/${c.result.id}`), 404, 'resource_not_found');
    });

    it('goals are workspace-wide: every member reads them; clients cannot write them; another workspace\'s goal is 404', async () => {
      const h = H();
      const g = await goal(h, { name: 'Seen by all' }, h.a.regular.token);
      expect(ok(await h.get(`/goals/${g.id}`, { token: h.a.client.token })).id).toBe(g.id);
      expect(await listIds(h, '/goals?limit=200', h.a.client.token)).toContain(g.id);
      problem(await h.post('/goals', { name: 'By client' }, { token: h.a.client.token }), 403, 'permission_denied');
      problem(await h.patch(`/goals/${g.id}`, { name: 'x' }, { token: h.a.client.token }), 403, 'permission_denied');
      problem(await h.get(`/goals/${g.id}`, { token: h.b.owner.token }), 404, 'resource_not_found');
      problem(await h.patch(`/goals/${g.id}`, { name: 'x' }, { token: h.b.owner.token }), 404, 'resource_not_found');
      expect(await listIds(h, '/goals?limit=200', h.b.owner.token)).not.toContain(g.id);
      ok(await h.del(`/goals/${g.id}`, { token: h.a.regular.token }), 204);
    });
  });

  describe(`[${factory.name}] v3 List: goals (update replaces the set; POST and DELETE /lists/{id}/goals; list.goals events; goals expand)`, () => {
    const H = harnessPerDescribe(factory);
    let p: any;
    let g1: any;
    let g2: any;
    let g3: any;
    beforeAll(async () => {
      p = await H().project({ name: 'Goal lists', members: [H().a.regular.id] });
      g1 = await goal(H(), { name: 'G1' });
      g2 = await goal(H(), { name: 'G2' });
      g3 = await goal(H(), { name: 'G3' });
    });

    it('a list created with goals carries them, with list.goals.added per id', async () => {
      const { result, events } = await during(H(), () => H().post('/lists', { name: 'With goals', projectId: p.id, goals: [g1.id, g2.id] }));
      const l = ok(result, 201);
      expect(sorted(l.goals)).toEqual(sorted([g1.id, g2.id]));
      const added = ofType(events, 'list.goals.added', l.id);
      expect(sorted(added.map((e) => e.payload.relatedId))).toEqual(sorted([g1.id, g2.id]));
      expect(added[0].payload).toMatchObject({ parentId: l.id, relation: 'goals' });
      expect(sorted(ok(await H().get(`/lists/${l.id}`)).goals)).toEqual(sorted([g1.id, g2.id]));
    });

    it('PATCH goals replaces the whole set (removed and added events for the difference); [] clears it', async () => {
      const l = ok(await H().post('/lists', { name: 'Replace', projectId: p.id, goals: [g1.id, g2.id] }), 201);
      const { result, events } = await during(H(), () => H().patch(`/lists/${l.id}`, { goals: [g2.id, g3.id] }));
      expect(sorted(ok(result).goals)).toEqual(sorted([g2.id, g3.id]));
      expect(ofType(events, 'list.goals.removed', l.id).map((e) => e.payload.relatedId)).toEqual([g1.id]);
      expect(ofType(events, 'list.goals.added', l.id).map((e) => e.payload.relatedId)).toEqual([g3.id]);
      expect(ok(await H().patch(`/lists/${l.id}`, { goals: [] })).goals).toEqual([]);
      expect(ok(await H().get(`/lists/${l.id}`)).goals).toEqual([]);
    });

    it('POST /lists/{id}/goals adds ids and DELETE removes them (200 with the list, one event per changed id; no-ops emit nothing)', async () => {
      const l = ok(await H().post('/lists', { name: 'Sub-routes', projectId: p.id }), 201);
      const add = await during(H(), () => H().post(`/lists/${l.id}/goals`, { ids: [g1.id, g3.id] }));
      expect(sorted(ok(add.result).goals)).toEqual(sorted([g1.id, g3.id]));
      expect(sorted(ofType(add.events, 'list.goals.added', l.id).map((e) => e.payload.relatedId))).toEqual(sorted([g1.id, g3.id]));
      const again = await during(H(), () => H().post(`/lists/${l.id}/goals`, { ids: [g1.id] }));
      ok(again.result);
      expect(ofType(again.events, 'list.goals.added')).toEqual([]);
      const rm = await during(H(), () => H().del(`/lists/${l.id}/goals`, { body: { ids: [g1.id] } }));
      expect(ok(rm.result).goals).toEqual([g3.id]);
      expect(ofType(rm.events, 'list.goals.removed', l.id).map((e) => e.payload.relatedId)).toEqual([g1.id]);
    });

    it('an id that is missing or another workspace\'s goal rejects the whole request: 404 m2m_target_not_found with missing; nothing changes', async () => {
      const l = ok(await H().post('/lists', { name: 'Strict', projectId: p.id, goals: [g1.id] }), 201);
      const gb = await goal(H(), { name: 'Beta goal' }, H().b.owner.token);
      const r = problem(await H().post(`/lists/${l.id}/goals`, { ids: [g2.id, 'nosuchgoal1'] }), 404, 'm2m_target_not_found');
      expect(r.missing).toEqual(['nosuchgoal1']);
      expect(problem(await H().post(`/lists/${l.id}/goals`, { ids: [gb.id] }), 404, 'm2m_target_not_found').missing).toEqual([gb.id]);
      expect(problem(await H().patch(`/lists/${l.id}`, { goals: [gb.id] }), 404, 'm2m_target_not_found').missing).toEqual([gb.id]);
      expect(problem(await H().post('/lists', { name: 'Bad', projectId: p.id, goals: ['nosuchgoal2'] }), 404, 'm2m_target_not_found').missing).toEqual(['nosuchgoal2']);
      problem(await H().post(`/lists/${l.id}/goals`, { ids: [] }), 400, 'batch_empty');
      expect(ok(await H().get(`/lists/${l.id}`)).goals).toEqual([g1.id]);
    });

    it('expand=goals answers the goal records; goalId[eq|in] lists the lists linked to a goal', async () => {
      const l = ok(await H().post('/lists', { name: 'Expanded', projectId: p.id, goals: [g2.id, g3.id] }), 201);
      const x = ok(await H().get(`/lists/${l.id}?expand=goals`));
      expect(sorted(ids(x.goals))).toEqual(sorted([g2.id, g3.id]));
      expect(x.goals.find((g: any) => g.id === g2.id).name).toBe('G2');
      const other = ok(await H().post('/lists', { name: 'Other', projectId: p.id, goals: [g3.id] }), 201);
      expect(await listIds(H(), `/lists?projectId=${p.id}&goalId[eq]=${g2.id}`)).not.toContain(other.id);
      expect(await listIds(H(), `/lists?projectId=${p.id}&goalId[eq]=${g2.id}`)).toContain(l.id);
      expect(sorted(await listIds(H(), `/lists?projectId=${p.id}&goalId[in]=${g3.id}&name[startsWith]=Expanded`))).toEqual([l.id]);
      expect(await listIds(H(), `/lists?projectId=${p.id}&goalId[in]=${g3.id}&name[eq]=Other`)).toEqual([other.id]);
    });

    it('deleting a goal removes it from every list\'s goals, silently: no list.goals.removed, the lists\' updatedAt unchanged (docs/not-shown.md)', async () => {
      const doomed = await goal(H(), { name: 'Doomed goal' });
      const l1 = ok(await H().post('/lists', { name: 'Linked 1', projectId: p.id, goals: [doomed.id, g1.id] }), 201);
      const l2 = ok(await H().post('/lists', { name: 'Linked 2', projectId: p.id, goals: [doomed.id] }), 201);
      H().clock.advance(60_000);
      const del = await during(H(), () => H().del(`/goals/${doomed.id}`));
      ok(del.result, 204);
      expect(ofType(del.events, 'goal.removed', doomed.id)).toHaveLength(1);
      expect(ofType(del.events, 'list.goals.removed')).toEqual([]);
      expect(ofType(del.events, 'list.updated')).toEqual([]);
      expect(ok(await H().get(`/lists/${l1.id}`)).updatedAt).toBe(l1.updatedAt);
      expect(ok(await H().get(`/lists/${l2.id}`)).updatedAt).toBe(l2.updatedAt);
      expect(ok(await H().get(`/lists/${l1.id}`)).goals).toEqual([g1.id]);
      expect(ok(await H().get(`/lists/${l2.id}?expand=goals`)).goals).toEqual([]);
      expect(await listIds(H(), `/lists?projectId=${p.id}&goalId[eq]=${doomed.id}`)).toEqual([]);
    });

    it('a regular member links goals to lists of projects they open; a client (no lists:write) cannot', async () => {
      const h = H();
      const l = ok(await h.post('/lists', { name: 'Regular links', projectId: p.id }), 201);
      expect(ok(await h.post(`/lists/${l.id}/goals`, { ids: [g1.id] }, { token: h.a.regular.token })).goals).toEqual([g1.id]);
      problem(await h.post(`/lists/${l.id}/goals`, { ids: [g2.id] }, { token: h.a.client.token }), 403, 'permission_denied');
    });
  });
}
