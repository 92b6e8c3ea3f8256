import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { harness, type Harness, type Reply, type StoreFactory } from '../../kit';
import { HEX6_LOWER, DAY, problem, fieldsOf, codesOf, sorted, iso } from './helpers';

export function listsSuite(factory: StoreFactory): void {
  describe(`[${factory.name}] v3 List (milestones; States: List isMilestone; Errors: milestone_*)`, () => {
    let h: Harness;
    let pid: string;
    let otherPid: string;
    const start = '2026-04-01T00:00:00.000Z';
    const end = '2026-04-03T00:00:00.000Z';
    beforeAll(async () => {
      h = await harness(factory);
      pid = (await h.project({ name: 'Timeline' })).id;
      otherPid = (await h.project({ name: 'Other timeline' })).id;
    });
    afterAll(() => h.close());

    const create = (body: Record<string, unknown>) => h.post('/lists', body);

    it('create requires projectId (400 project_not_specified)', async () => {
      const r = await create({ name: 'No project' });
      expect(problem(r)).toEqual({ status: 400, code: 'project_not_specified' });
    });

    it('name is trimmed; spam-like names are validation_failed (promotional_content)', async () => {
      const r = await create({ name: '  Sprint 1  ', projectId: pid });
      expect(r.status).toBe(201);
      expect(r.body.name).toBe('Sprint 1');
      for (const name of ['Buy now and save', 'see https://a.example/1 https://b.example/2 https://c.example/3']) {
        const s = await create({ name, projectId: pid });
        expect(problem(s)).toEqual({ status: 400, code: 'validation_failed' });
        expect(s.body.errors[0]).toMatchObject({ field: 'name', code: 'promotional_content' });
      }
      const p = await h.patch(`/lists/${r.body.id}`, { name: 'free money inside' });
      expect(problem(p)).toEqual({ status: 400, code: 'validation_failed' });
      expect(codesOf(p)).toContain('promotional_content');
      const two = await create({ name: 'links https://a.example https://b.example', projectId: pid });
      expect(two.status).toBe(201);
    });

    it('order defaults to MAX(order)+100 within the project', async () => {
      const p = await h.project({ name: 'Ordered lists' });
      const a = await create({ name: 'L1', projectId: p.id });
      const b = await create({ name: 'L2', projectId: p.id });
      expect(a.body.order).toBe(100);
      expect(b.body.order).toBe(200);
      const c = await create({ name: 'L3', projectId: p.id, order: 1000 });
      expect(c.body.order).toBe(1000);
      const d = await create({ name: 'L4', projectId: p.id });
      expect(d.body.order).toBe(1100);
      const o = await create({ name: 'Other', projectId: otherPid });
      expect(o.body.order).toBeLessThan(1000);
    });

    it('color: #RGB or #RRGGBB stored lowercase 6-digit; invalid is validation_failed; omitted is a palette colour', async () => {
      const short = await create({ name: 'Short colour', projectId: pid, color: '#ABC' });
      expect(short.body.color).toBe('#aabbcc');
      const long = await create({ name: 'Long colour', projectId: pid, color: '#AABBCC' });
      expect(long.body.color).toBe('#aabbcc');
      for (const color of ['blue', '#abcd', '#ggg', 'aabbcc']) {
        const bad = await create({ name: 'Bad colour', projectId: pid, color });
        expect(problem(bad)).toEqual({ status: 400, code: 'validation_failed' });
        expect(fieldsOf(bad)).toContain('color');
      }
      const none = await create({ name: 'No colour', projectId: pid });
      expect(none.body.color).toMatch(HEX6_LOWER);
      const p = await h.patch(`/lists/${none.body.id}`, { color: '#F0F' });
      expect(p.body.color).toBe('#ff00ff');
    });

    it('isMilestone defaults to false', async () => {
      const r = await create({ name: 'Plain', projectId: pid });
      expect(r.body).toMatchObject({ isMilestone: false, start: null, end: null, archived: false });
    });

    it('a milestone needs start and end (validation_failed naming them)', async () => {
      const none = await create({ name: 'M', projectId: pid, isMilestone: true });
      expect(problem(none)).toEqual({ status: 400, code: 'validation_failed' });
      expect(sorted(fieldsOf(none))).toEqual(['end', 'start']);
      const noEnd = await create({ name: 'M', projectId: pid, isMilestone: true, start });
      expect(problem(noEnd)).toEqual({ status: 400, code: 'validation_failed' });
      expect(fieldsOf(noEnd)).toEqual(['end']);
      const noStart = await create({ name: 'M', projectId: pid, isMilestone: true, end });
      expect(fieldsOf(noStart)).toEqual(['start']);
    });

    it('end must be at least 2 days after start: exactly 2 days is accepted, 1 ms less is not', async () => {
      const ok = await create({ name: 'Exactly two days', projectId: pid, isMilestone: true, start, end });
      expect(ok.status).toBe(201);
      expect(ok.body).toMatchObject({ isMilestone: true, start, end });
      const short = await create({ name: 'Too short', projectId: pid, isMilestone: true, start, end: iso(Date.parse(start) + 2 * DAY - 1) });
      expect(problem(short)).toEqual({ status: 400, code: 'validation_failed' });
      expect(fieldsOf(short)).toContain('end');
      const reversed = await create({ name: 'Reversed', projectId: pid, isMilestone: true, start: end, end: start });
      expect(problem(reversed)).toEqual({ status: 400, code: 'validation_failed' });
      const shrink = await h.patch(`/lists/${ok.body.id}`, { end: iso(Date.parse(start) + DAY) });
      expect(problem(shrink)).toEqual({ status: 400, code: 'validation_failed' });
      expect((await h.get(`/lists/${ok.body.id}`)).body.end).toBe(end);
    });

    it('isMilestone false forces start and end to null even when sent', async () => {
      const r = await create({ name: 'Flat with dates', projectId: pid, start, end });
      expect(r.status).toBe(201);
      expect(r.body).toMatchObject({ isMilestone: false, start: null, end: null });
      const p = await h.patch(`/lists/${r.body.id}`, { start, end });
      expect(p.status).toBe(200);
      expect(p.body).toMatchObject({ start: null, end: null });
    });

    it('PATCH isMilestone true needs dates; with them the list becomes a milestone', async () => {
      const r = await create({ name: 'To promote', projectId: pid });
      const bare = await h.patch(`/lists/${r.body.id}`, { isMilestone: true });
      expect(problem(bare)).toEqual({ status: 400, code: 'validation_failed' });
      expect(sorted(fieldsOf(bare))).toEqual(['end', 'start']);
      expect((await h.get(`/lists/${r.body.id}`)).body.isMilestone).toBe(false);
      const ok = await h.patch(`/lists/${r.body.id}`, { isMilestone: true, start, end });
      expect(ok.status).toBe(200);
      expect(ok.body).toMatchObject({ isMilestone: true, start, end });
    });

    it('PATCH isMilestone false turns a milestone into a flat list with null dates', async () => {
      const r = await create({ name: 'To demote', projectId: pid, isMilestone: true, start, end });
      const p = await h.patch(`/lists/${r.body.id}`, { isMilestone: false });
      expect(p.status).toBe(200);
      expect(p.body).toMatchObject({ isMilestone: false, start: null, end: null });
      expect((await h.get(`/lists/${r.body.id}`)).body.start).toBeNull();
    });

    it('dependencyId in another project is 400 milestone_dependency_wrong_project; same project works; self is refused', async () => {
      const foreign = await create({ name: 'Foreign', projectId: otherPid });
      const r = await create({ name: 'Dependent', projectId: pid, dependencyId: foreign.body.id });
      expect(problem(r)).toEqual({ status: 400, code: 'milestone_dependency_wrong_project' });
      const base = await create({ name: 'Base', projectId: pid });
      const dep = await create({ name: 'Dependent', projectId: pid, dependencyId: base.body.id });
      expect(dep.status).toBe(201);
      expect(dep.body.dependencyId).toBe(base.body.id);
      const p = await h.patch(`/lists/${dep.body.id}`, { dependencyId: foreign.body.id });
      expect(problem(p)).toEqual({ status: 400, code: 'milestone_dependency_wrong_project' });
      const self = await h.patch(`/lists/${dep.body.id}`, { dependencyId: dep.body.id });
      expect(problem(self)).toEqual({ status: 400, code: 'validation_failed' });
      expect(fieldsOf(self)).toContain('dependencyId');
      expect((await h.get(`/lists/${dep.body.id}`)).body.dependencyId).toBe(base.body.id);
    });

    it('statusId is fixed after creation', async () => {
      const s1 = await h.post('/statuses', { name: 'Column 1', projectId: pid });
      const s2 = await h.post('/statuses', { name: 'Column 2', projectId: pid });
      const r = await create({ name: 'Backed', projectId: pid, statusId: s1.body.id });
      expect(r.body.statusId).toBe(s1.body.id);
      const p = await h.patch(`/lists/${r.body.id}`, { statusId: s2.body.id });
      expect(problem(p)).toEqual({ status: 400, code: 'validation_failed' });
      expect(p.body.errors[0]).toMatchObject({ field: 'statusId', code: 'immutable' });
      expect((await h.get(`/lists/${r.body.id}`)).body.statusId).toBe(s1.body.id);
    });

    it("hiddenFor takes this workspace's role ids; another workspace's are milestone_hiddenfor_roles_not_in_team", async () => {
      const roles = await h.get('/roles');
      const roleIds: Record<string, string> = Object.fromEntries(roles.body.data.map((r: any) => [r.name, r.id]));
      expect(roleIds.client).toBe(h.a.roleIds.client);
      const ok = await create({ name: 'Secret', projectId: pid, hiddenFor: [roleIds.client, roleIds.regular] });
      expect(ok.status).toBe(201);
      expect(sorted(ok.body.hiddenFor)).toEqual(sorted([roleIds.client!, roleIds.regular!]));
      const bad = await create({ name: 'Cross', projectId: pid, hiddenFor: [h.b.roleIds.client] });
      expect(problem(bad)).toEqual({ status: 400, code: 'milestone_hiddenfor_roles_not_in_team' });
      const sub = await h.post(`/lists/${ok.body.id}/hidden-for`, { ids: [h.b.roleIds.manager] });
      expect(problem(sub)).toEqual({ status: 400, code: 'milestone_hiddenfor_roles_not_in_team' });
      const patched = await h.patch(`/lists/${ok.body.id}`, { hiddenFor: [h.a.roleIds.manager, h.b.roleIds.owner] });
      expect(problem(patched)).toEqual({ status: 400, code: 'milestone_hiddenfor_roles_not_in_team' });
      const add = await h.post(`/lists/${ok.body.id}/hidden-for`, { ids: [roleIds.manager] });
      expect(add.status).toBe(200);
      expect(sorted(add.body.hiddenFor)).toEqual(sorted([roleIds.client!, roleIds.regular!, roleIds.manager!]));
      const rm = await h.post(`/lists/${ok.body.id}/hidden-for/remove`, { ids: [roleIds.regular] });
      expect(sorted(rm.body.hiddenFor)).toEqual(sorted([roleIds.client!, roleIds.manager!]));
    });

    it('assignees and hiddenFor in bodies replace the sets', async () => {
      const r = await create({
        name: 'Sets', projectId: pid, assignees: [h.a.owner.id, h.a.regular.id], hiddenFor: [h.a.roleIds.client, h.a.roleIds.regular],
      });
      const p = await h.patch(`/lists/${r.body.id}`, { assignees: [h.a.client.id], hiddenFor: [h.a.roleIds.manager] });
      expect(p.status).toBe(200);
      expect(p.body.assignees).toEqual([h.a.client.id]);
      expect(p.body.hiddenFor).toEqual([h.a.roleIds.manager]);
      const empty = await h.patch(`/lists/${r.body.id}`, { assignees: [] });
      expect(empty.body.assignees).toEqual([]);
      expect(empty.body.hiddenFor).toEqual([h.a.roleIds.manager]);
      const add = await h.post(`/lists/${r.body.id}/assignees`, { ids: [h.a.regular.id] });
      expect(add.body.assignees).toEqual([h.a.regular.id]);
      const rm = await h.req('DELETE', `/lists/${r.body.id}/assignees`, { body: { ids: [h.a.regular.id] } });
      expect(rm.body.assignees).toEqual([]);
    });

    it('filters isMilestone, archived, start and end ranges', async () => {
      const p = await h.project({ name: 'Filtered timeline' });
      const flat = await create({ name: 'Flat', projectId: p.id });
      const m1 = await create({ name: 'April', projectId: p.id, isMilestone: true, start: '2026-04-01T00:00:00.000Z', end: '2026-04-10T00:00:00.000Z' });
      const m2 = await create({ name: 'May', projectId: p.id, isMilestone: true, start: '2026-05-01T00:00:00.000Z', end: '2026-05-10T00:00:00.000Z' });
      const arch = await create({ name: 'Old', projectId: p.id });
      expect((await h.patch(`/lists/${arch.body.id}`, { archived: true })).body.archived).toBe(true);
      const ids = (r: Reply) => r.body.data.map((x: any) => x.id);
      expect(ids(await h.get(`/lists?projectId=${p.id}&isMilestone[eq]=true`))).toEqual([m1.body.id, m2.body.id]);
      expect(sorted(ids(await h.get(`/lists?projectId=${p.id}&isMilestone[eq]=false`)))).toEqual(sorted([flat.body.id, arch.body.id]));
      expect(ids(await h.get(`/lists?projectId=${p.id}&archived[eq]=true`))).toEqual([arch.body.id]);
      expect(ids(await h.get(`/lists?projectId=${p.id}&start[gte]=2026-04-15T00:00:00.000Z`))).toEqual([m2.body.id]);
      expect(ids(await h.get(`/lists?projectId=${p.id}&start[gt]=2026-04-01T00:00:00.000Z`))).toEqual([m2.body.id]);
      expect(ids(await h.get(`/lists?projectId=${p.id}&end[lt]=2026-05-01T00:00:00.000Z`))).toEqual([m1.body.id]);
      expect(ids(await h.get(`/lists?projectId=${p.id}&end[lte]=2026-05-10T00:00:00.000Z&start[gte]=2026-04-01T00:00:00.000Z`)))
        .toEqual([m1.body.id, m2.body.id]);
      expect(ids(await h.get(`/lists?projectId[eq]=${p.id}&isMilestone[eq]=true`))).toEqual(expect.arrayContaining([m1.body.id, m2.body.id]));
    });

    it('expands dependency, dependency.dependency, project and tasks', async () => {
      const l1 = await create({ name: 'Phase 1', projectId: pid });
      const l2 = await create({ name: 'Phase 2', projectId: pid, dependencyId: l1.body.id });
      const l3 = await create({ name: 'Phase 3', projectId: pid, dependencyId: l2.body.id });
      const t = await h.task(pid, { name: 'In phase 3', listId: l3.body.id });
      const one = await h.get(`/lists/${l3.body.id}?expand=dependency`);
      expect(one.body.dependencyId).toBe(l2.body.id);
      expect(one.body.dependency).toMatchObject({ id: l2.body.id, name: 'Phase 2', dependencyId: l1.body.id });
      expect(one.body.dependency.dependency).toBeUndefined();
      const two = await h.get(`/lists/${l3.body.id}?expand=dependency.dependency`);
      expect(two.body.dependency.dependency).toMatchObject({ id: l1.body.id, name: 'Phase 1' });
      const withProject = await h.get(`/lists/${l3.body.id}?expand=project,tasks`);
      expect(withProject.body.project).toMatchObject({ id: pid, name: 'Timeline' });
      expect(withProject.body.tasks.map((x: any) => x.id)).toEqual([t.id]);
      const first = await h.get(`/lists/${l1.body.id}?expand=dependency,tasks`);
      expect(first.body.dependency).toBeNull();
      expect(first.body.tasks).toEqual([]);
    });
  });
}
