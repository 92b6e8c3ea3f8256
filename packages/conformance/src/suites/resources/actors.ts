import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { harness, type Harness, type StoreFactory } from '../../kit';
import { UUID, problem } from './helpers';

export function actorsSuite(factory: StoreFactory): void {
  describe(`[${factory.name}] v3 Actor (GET /actors/{id}; one human actor per member)`, () => {
    let h: Harness;
    beforeAll(async () => {
      h = await harness(factory);
    });
    afterAll(() => h.close());

    it('a write stamps a UUID actor id whose actor describes the member', async () => {
      const p = await h.project({ name: 'Actor probe' }, h.a.regular.token);
      expect(p.createdByActorId).toMatch(UUID);
      expect(p.updatedByActorId).toBe(p.createdByActorId);
      expect(p.createdByActorType).toBe('human');
      const r = await h.get(`/actors/${p.createdByActorId}`);
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({
        id: p.createdByActorId,
        type: 'human',
        displayName: 'Alpha Regular',
        memberId: h.a.regular.id,
        agentId: null,
        tombstonedAt: null,
      });
      expect(r.body.id).not.toBe(h.a.regular.id);
    });

    it('two writes of one member share one actor; another member gets another actor', async () => {
      const p1 = await h.project({ name: 'Actor one', accessType: 'workspace' });
      const p2 = await h.project({ name: 'Actor two' });
      expect(p1.createdByActorId).toMatch(UUID);
      expect(p2.createdByActorId).toBe(p1.createdByActorId);
      const patched = await h.patch(`/projects/${p1.id}`, { description: 'x' }, { token: h.a.regular.token });
      expect(patched.status).toBe(200);
      expect(patched.body.createdByActorId).toBe(p1.createdByActorId);
      expect(patched.body.updatedByActorId).toMatch(UUID);
      expect(patched.body.updatedByActorId).not.toBe(p1.createdByActorId);
      const owner = await h.get(`/actors/${p1.createdByActorId}`);
      const client = await h.get(`/actors/${patched.body.updatedByActorId}`);
      expect(owner.body.memberId).toBe(h.a.owner.id);
      expect(owner.body.displayName).toBe('Alpha Owner');
      expect(client.body.memberId).toBe(h.a.regular.id);
    });

    it('GET /actors (list) is not allowed: 405', async () => {
      const r = await h.get('/actors');
      expect(problem(r)).toEqual({ status: 405, code: 'method_not_allowed' });
      const w = await h.post('/actors', { type: 'human' });
      expect(problem(w)).toEqual({ status: 405, code: 'method_not_allowed' });
      const unknown = await h.get('/actors/00000000-0000-4000-8000-00000000beef');
      expect(problem(unknown)).toEqual({ status: 404, code: 'resource_not_found' });
    });

    it("another workspace's actor is not found", async () => {
      const pb = await h.post('/projects', { name: 'B actor' }, { token: h.b.owner.token });
      expect(pb.status).toBe(201);
      const r = await h.get(`/actors/${pb.body.createdByActorId}`);
      expect(problem(r)).toEqual({ status: 404, code: 'resource_not_found' });
      const own = await h.get(`/actors/${pb.body.createdByActorId}`, { token: h.b.owner.token });
      expect(own.body.memberId).toBe(h.b.owner.id);
    });
  });
}
