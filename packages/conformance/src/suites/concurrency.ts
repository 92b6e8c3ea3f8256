import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { harness, type Harness, type StoreFactory } from '../kit';

/**
 * Races that must come out right on every store (on Postgres they are real:
 * the pool runs them on separate connections).
 */
export function concurrencySuite(factory: StoreFactory): void {
  describe(`[${factory.name}] concurrency: creates, counters, deletes and jobs racing each other`, () => {
    let h: Harness;
    beforeAll(async () => {
      h = await harness(factory);
    });
    afterAll(() => h.close());

    it('projects created at once with the same initials all succeed, with distinct niceIds', async () => {
      const other = (await h.post('/portfolios', { name: 'Second' })).body;
      const rs = await Promise.all(Array.from({ length: 12 }, (_, i) =>
        h.post('/projects', { name: `Same Initials ${i}`, initials: 'SI', ...(i % 2 ? { portfolioId: other.id } : {}) })));
      expect(rs.map((r) => r.status)).toEqual(Array(12).fill(201));
      expect(new Set(rs.map((r) => r.body.niceId)).size).toBe(12);
    });

    it('subtasks created at once under one parent with the default order all succeed, with distinct ranks', async () => {
      const p = await h.project();
      const parent = await h.task(p.id);
      const rs = await Promise.all(Array.from({ length: 12 }, (_, i) => h.post('/tasks', { name: `child ${i}`, parentTaskId: parent.id })));
      expect(rs.map((r) => r.status)).toEqual(Array(12).fill(201));
      expect(new Set(rs.map((r) => r.body.order)).size).toBe(12);
      expect(new Set(rs.map((r) => r.body.niceId)).size).toBe(12);
    });

    it('a portfolio delete racing a project create into it: never both', async () => {
      for (let round = 0; round < 5; round++) {
        const pf = (await h.post('/portfolios', { name: `Race ${round}` })).body;
        const [create, del] = await Promise.all([h.post('/projects', { name: `In race ${round}`, portfolioId: pf.id }), h.del(`/portfolios/${pf.id}`)]);
        if (create.status === 201) {
          expect(del.status).toBe(409);
          expect((await h.get(`/portfolios/${pf.id}`)).status).toBe(200);
        } else {
          expect(create.status).toBe(404);
          expect(create.body.code).toBe('resource_not_found');
          expect(del.status).toBe(204);
        }
      }
    });

    it('two purge runs at once destroy each expired row once, with one force_deleted event each', async () => {
      const ids: string[] = [];
      for (let i = 0; i < 6; i++) {
        const pf = (await h.post('/portfolios', { name: `Purge ${i}` })).body;
        expect((await h.del(`/portfolios/${pf.id}`)).status).toBe(204);
        ids.push(pf.id);
      }
      h.clock.advance(31 * 24 * 3600 * 1000);
      const [a, b] = await Promise.all([h.api.jobs.purge(), h.api.jobs.purge()]);
      expect(a.purged + b.purged).toBeGreaterThanOrEqual(6);
      const forced = (await h.outbox()).filter((e) => e.type === 'portfolio.force_deleted' && ids.includes(e.aggregateId));
      expect(forced.map((e) => e.aggregateId).sort()).toEqual([...ids].sort());
      for (const id of ids) expect((await h.get(`/portfolios?purgeAt[notNull]=true&name[startsWith]=Purge`)).body.data.map((p: { id: string }) => p.id)).not.toContain(id);
    });

    it('NUL characters in bodies and query strings are a 400, never a database error', async () => {
      const p = await h.project();
      const body = await h.post('/tasks', { name: 'bad\u0000name', projectId: p.id });
      expect(body.status).toBe(400);
      expect(body.body.errors[0].code).toBe('nul_character');
      const q = await h.get('/tasks?name[eq]=a%00b');
      expect(q.status).toBe(400);
      expect(q.body.code).toBe('invalid_query_param');
    });
  });
}
