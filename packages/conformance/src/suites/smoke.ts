import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { harness, type Harness, type StoreFactory } from '../kit';

export function smokeSuite(factory: StoreFactory): void {
  describe(`[${factory.name}] smoke`, () => {
    let h: Harness;
    beforeAll(async () => {
      h = await harness(factory);
    });
    afterAll(() => h.close());

    it('creates a project and a task and lists it', async () => {
      const p = await h.project({ name: 'Website' });
      expect(p.niceId).toBe('WE');
      const got = await h.get(`/projects/${p.id}`);
      expect(got.status).toBe(200);
      expect(got.body.defaultStatusId).toBeTypeOf('string');
      const t = await h.task(p.id, { name: '  Write copy  ' });
      expect(t.name).toBe('Write copy');
      expect(t.niceId).toBe('1');
      expect(t.statusId).toBe(got.body.defaultStatusId);
      const list = await h.get(`/tasks?projectId=${p.id}&expand=project,status,createdByActor`);
      expect(list.status).toBe(200);
      expect(list.body.data).toHaveLength(1);
      expect(list.body.data[0].project.id).toBe(p.id);
      expect(list.body.data[0].createdByActor.type).toBe('human');
      expect(list.body.hasMore).toBe(false);
      expect(list.body.nextCursor).toBeNull();
    });
  });
}
