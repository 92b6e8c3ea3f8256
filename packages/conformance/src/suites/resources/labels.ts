import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { harness, type Harness, type StoreFactory } from '../../kit';
import { problem, fieldsOf, sorted } from './helpers';

export function labelsSuite(factory: StoreFactory): void {
  describe(`[${factory.name}] Labels (docs/not-shown.md: default labels locked)`, () => {
    let h: Harness;
    beforeAll(async () => {
      h = await harness(factory);
    });
    afterAll(() => h.close());

    const defaults = async () => (await h.get('/labels?isDefault[eq]=true')).body.data as any[];

    it('each workspace has the default labels Bug, Feature and Urgent', async () => {
      const d = await defaults();
      expect(sorted(d.map((l) => l.name))).toEqual(['Bug', 'Feature', 'Urgent']);
      expect(d.every((l) => l.isDefault === true)).toBe(true);
      const b = await h.get('/labels?isDefault[eq]=true', { token: h.b.owner.token });
      expect(b.body.data).toHaveLength(3);
      expect(b.body.data.map((l: any) => l.id)).not.toEqual(expect.arrayContaining([d[0].id]));
    });

    it('renaming or deleting a default label is 403 default_label_locked; changing its colour works', async () => {
      const bug = (await defaults()).find((l) => l.name === 'Bug');
      const rename = await h.patch(`/labels/${bug.id}`, { name: 'Defect' });
      expect(problem(rename)).toEqual({ status: 403, code: 'default_label_locked' });
      const del = await h.del(`/labels/${bug.id}`);
      expect(problem(del)).toEqual({ status: 403, code: 'default_label_locked' });
      const color = await h.patch(`/labels/${bug.id}`, { color: '#ff0000' });
      expect(color.status).toBe(200);
      expect(color.body).toMatchObject({ name: 'Bug', color: '#ff0000', isDefault: true });
      const got = await h.get(`/labels/${bug.id}`);
      expect(got.body).toMatchObject({ name: 'Bug', color: '#ff0000' });
    });

    it('custom labels can be created (never default), updated and deleted', async () => {
      const c = await h.post('/labels', { name: 'Customer', color: '#00aa00', isDefault: true });
      expect(c.status).toBe(201);
      expect(c.body).toMatchObject({ name: 'Customer', color: '#00aa00', isDefault: false });
      const u = await h.patch(`/labels/${c.body.id}`, { name: 'Client', color: null });
      expect(u.status).toBe(200);
      expect(u.body).toMatchObject({ name: 'Client', color: null });
      const bad = await h.post('/labels', { name: 'Bad', color: 'green' });
      expect(problem(bad)).toEqual({ status: 400, code: 'validation_failed' });
      const noName = await h.post('/labels', { color: '#123456' });
      expect(problem(noName)).toEqual({ status: 400, code: 'validation_failed' });
      expect(fieldsOf(noName)).toContain('name');
      expect((await h.del(`/labels/${c.body.id}`)).status).toBe(204);
      expect(problem(await h.get(`/labels/${c.body.id}`))).toEqual({ status: 404, code: 'resource_not_found' });
    });

    it('deleting a label removes it from every task', async () => {
      const p = await h.project({ name: 'Labelled' });
      const keep = (await defaults()).find((l) => l.name === 'Feature');
      const temp = await h.post('/labels', { name: 'Temporary' });
      const t1 = await h.task(p.id, { labels: [temp.body.id, keep.id] });
      const t2 = await h.task(p.id, { labels: [temp.body.id] });
      expect(sorted(t1.labels)).toEqual(sorted([temp.body.id, keep.id]));
      expect((await h.del(`/labels/${temp.body.id}`)).status).toBe(204);
      expect((await h.get(`/tasks/${t1.id}`)).body.labels).toEqual([keep.id]);
      expect((await h.get(`/tasks/${t2.id}`)).body.labels).toEqual([]);
      const filtered = await h.get(`/tasks?projectId=${p.id}&expand=labels`);
      const byId = Object.fromEntries(filtered.body.data.map((t: any) => [t.id, t.labels.map((l: any) => l.id)]));
      expect(byId[t1.id]).toEqual([keep.id]);
      expect(byId[t2.id]).toEqual([]);
    });
  });
}
