import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { harness, type Harness, type StoreFactory } from '../../kit';
import { HEX6_LOWER, problem } from './helpers';

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
}
