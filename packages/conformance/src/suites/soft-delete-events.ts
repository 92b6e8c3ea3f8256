import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { harness, type Harness, type Reply, type StoreFactory } from '../kit';
import { during, ofType } from './shared';

const HOUR = 60 * 60 * 1000;
const DAY = 24 * HOUR;
const RETENTION = 30 * DAY;
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const iso = (ms: number) => new Date(ms).toISOString();

function idsOf(r: Reply): string[] {
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.data.map((x: { id: string }) => x.id);
}

interface Kind {
  path: 'projects' | 'portfolios';
  name: 'project' | 'portfolio';
  create(h: Harness, name: string, token?: string): Promise<any>;
}

const KINDS: Kind[] = [
  { path: 'projects', name: 'project', create: (h, name, token) => h.project({ name }, token) },
  {
    path: 'portfolios',
    name: 'portfolio',
    async create(h, name, token) {
      const r = await h.post('/portfolios', { name }, { token });
      if (r.status !== 201) throw new Error(`portfolio create failed: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body;
    },
  },
];

export function softDeleteEventsSuite(factory: StoreFactory): void {
  for (const kind of KINDS) {
    describe(`[${factory.name}] v3 States and transitions: soft delete of ${kind.path} (purgeAt, deletedById, restore, purge)`, () => {
      let h: Harness;
      let n = 0;
      const make = (token?: string) => kind.create(h, `${kind.name} ${++n}`, token);
      const list = (q = '') => h.get(`/${kind.path}?limit=200${q}`);
      beforeAll(async () => {
        h = await harness(factory);
      });
      afterAll(() => h.close());

      it('a live row has purgeAt and deletedById null', async () => {
        const x = await make();
        expect(x.purgeAt).toBeNull();
        expect(x.deletedById).toBeNull();
        const got = await h.get(`/${kind.path}/${x.id}`);
        expect(got.body.purgeAt).toBeNull();
        expect(got.body.deletedById).toBeNull();
      });

      it('DELETE → 204 without body; GET → 404; gone from the list at once', async () => {
        const x = await make();
        const other = await make();
        expect(idsOf(await list())).toContain(x.id);
        const del = await h.del(`/${kind.path}/${x.id}`);
        expect(del.status).toBe(204);
        expect(del.body).toBeUndefined();
        const get = await h.get(`/${kind.path}/${x.id}`);
        expect(get.status).toBe(404);
        expect(get.body.code).toBe('resource_not_found');
        const ids = idsOf(await list());
        expect(ids).not.toContain(x.id);
        expect(ids).toContain(other.id);
        expect(idsOf(await list('&purgeAt[null]=true'))).not.toContain(x.id);
        // A trashed row cannot be updated or deleted again.
        const patch = await h.patch(`/${kind.path}/${x.id}`, { name: 'Zombie' });
        expect(patch.status).toBe(404);
        expect(patch.body.code).toBe('resource_not_found');
        const again = await h.del(`/${kind.path}/${x.id}`);
        expect(again.status).toBe(404);
        expect(again.body.code).toBe('resource_not_found');
      });

      it('the trash lists with purgeAt filters: purgeAt = deletion time + 30 days exactly, deletedById = the deleter', async () => {
        const x = await make(h.a.regular.token);
        h.clock.advance(HOUR + 7);
        const deletedAt = h.clock.now();
        expect((await h.del(`/${kind.path}/${x.id}`)).status).toBe(204);
        const purgeAt = deletedAt + RETENTION;
        const trash = await list('&purgeAt[notNull]=true');
        const row = trash.body.data.find((r: { id: string }) => r.id === x.id);
        expect(row, 'listed with purgeAt[notNull]=true').toBeDefined();
        expect(row.purgeAt).toBe(iso(purgeAt));
        expect(row.deletedById).toBe(h.a.owner.id);
        expect(row.deletedById).not.toBe(h.a.regular.id);
        // Only trashed rows.
        for (const r of trash.body.data) expect(r.purgeAt).not.toBeNull();
        expect(idsOf(await list('&purgeAt[gt]=' + iso(purgeAt - 1)))).toContain(x.id);
        expect(idsOf(await list('&purgeAt[gt]=' + iso(purgeAt)))).not.toContain(x.id);
        expect(idsOf(await list('&purgeAt[gte]=' + iso(purgeAt)))).toContain(x.id);
        expect(idsOf(await list('&purgeAt[lt]=' + iso(purgeAt + 1)))).toContain(x.id);
        expect(idsOf(await list('&purgeAt[lt]=' + iso(purgeAt)))).not.toContain(x.id);
        expect(idsOf(await list('&purgeAt[lte]=' + iso(purgeAt)))).toContain(x.id);
        if (kind.name === 'project') {
          const exp = await h.get(`/projects?purgeAt[notNull]=true&expand=deletedBy`);
          const withDeleter = exp.body.data.find((r: { id: string }) => r.id === x.id);
          expect(withDeleter.deletedBy.id).toBe(h.a.owner.id);
        }
      });

      it('restore → 200 with purgeAt null; the row is back in lists and out of the trash', async () => {
        const x = await make();
        expect((await h.del(`/${kind.path}/${x.id}`)).status).toBe(204);
        h.clock.advance(DAY);
        const r = await h.post(`/${kind.path}/${x.id}/restore`);
        expect(r.status, JSON.stringify(r.body)).toBe(200);
        expect(r.body.id).toBe(x.id);
        expect(r.body.name).toBe(x.name);
        expect(r.body.purgeAt).toBeNull();
        expect(r.body.deletedById).toBeNull();
        const get = await h.get(`/${kind.path}/${x.id}`);
        expect(get.status).toBe(200);
        expect(get.body.purgeAt).toBeNull();
        expect(idsOf(await list())).toContain(x.id);
        expect(idsOf(await list('&purgeAt[notNull]=true'))).not.toContain(x.id);
      });

      it('restore of a live row → 200, no change: updatedAt unchanged, no event', async () => {
        const x = await make();
        const before = (await h.get(`/${kind.path}/${x.id}`)).body;
        h.clock.advance(5 * 60 * 1000);
        const { result: r, events } = await during(h, () => h.post(`/${kind.path}/${x.id}/restore`));
        expect(r.status, JSON.stringify(r.body)).toBe(200);
        expect(r.body.id).toBe(x.id);
        expect(r.body.updatedAt).toBe(before.updatedAt);
        expect(r.body.purgeAt).toBeNull();
        expect(events).toEqual([]);
        expect((await h.get(`/${kind.path}/${x.id}`)).body).toEqual(before);
      });

      it('restore is refused with 404 once 30 days have passed', async () => {
        const x = await make();
        expect((await h.del(`/${kind.path}/${x.id}`)).status).toBe(204);
        h.clock.advance(RETENTION);
        const r = await h.post(`/${kind.path}/${x.id}/restore`);
        expect(r.status).toBe(404);
        expect(r.body.code).toBe('resource_not_found');
        expect((await h.get(`/${kind.path}/${x.id}`)).status).toBe(404);
      });

      it('restore just inside retention works', async () => {
        const x = await make();
        expect((await h.del(`/${kind.path}/${x.id}`)).status).toBe(204);
        h.clock.advance(RETENTION - 1);
        const r = await h.post(`/${kind.path}/${x.id}/restore`);
        expect(r.status, JSON.stringify(r.body)).toBe(200);
        expect(r.body.purgeAt).toBeNull();
      });

      it('the purge job before 30 days keeps the row; after 30 days destroys it for good', async () => {
        const x = await make();
        expect((await h.del(`/${kind.path}/${x.id}`)).status).toBe(204);
        h.clock.advance(RETENTION - HOUR);
        await h.api.jobs.purge();
        expect(idsOf(await list('&purgeAt[notNull]=true'))).toContain(x.id);
        h.clock.advance(HOUR);
        const { result, events } = await during(h, () => h.api.jobs.purge());
        expect(result.purged).toBeGreaterThanOrEqual(1);
        expect(ofType(events, `${kind.name}.force_deleted`, x.id)).toHaveLength(1);
        expect(idsOf(await list('&purgeAt[notNull]=true'))).not.toContain(x.id);
        expect(idsOf(await list(`&purgeAt[lte]=${iso(h.clock.now() + RETENTION)}`))).not.toContain(x.id);
        expect((await h.get(`/${kind.path}/${x.id}`)).status).toBe(404);
        const restore = await h.post(`/${kind.path}/${x.id}/restore`);
        expect(restore.status).toBe(404);
        expect(restore.body.code).toBe('resource_not_found');
        // A live row is never purged.
        const live = await make();
        h.clock.advance(RETENTION * 2);
        await h.api.jobs.purge();
        expect((await h.get(`/${kind.path}/${live.id}`)).status).toBe(200);
      });
    });
  }

  describe(`[${factory.name}] v3 States and transitions: purge cascade, hard-deleted tasks, General portfolio`, () => {
    let h: Harness;
    beforeAll(async () => {
      h = await harness(factory);
    });
    afterAll(() => h.close());

    it("a trashed project's tasks stay addressable; purging the project destroys its tasks and statuses", async () => {
      const p = await h.project({ name: 'Doomed' });
      const statusId = (await h.get(`/projects/${p.id}`)).body.defaultStatusId;
      const t = await h.task(p.id, { name: 'Doomed task' });
      const s = await h.task(p.id, { name: 'Doomed subtask', parentTaskId: t.id });
      const keep = await h.project({ name: 'Survivor' });
      const kt = await h.task(keep.id, { name: 'Survivor task' });
      expect((await h.del(`/projects/${p.id}`)).status).toBe(204);
      expect((await h.get(`/tasks/${t.id}`)).status).toBe(200);
      h.clock.advance(RETENTION);
      await h.api.jobs.purge();
      for (const id of [t.id, s.id]) {
        const r = await h.get(`/tasks/${id}`);
        expect(r.status).toBe(404);
        expect(r.body.code).toBe('resource_not_found');
      }
      expect((await h.get(`/statuses/${statusId}`)).status).toBe(404);
      expect(idsOf(await h.get(`/tasks?projectId[eq]=${p.id}`))).toEqual([]);
      expect((await h.get(`/tasks/${kt.id}`)).status).toBe(200);
      expect((await h.get(`/projects/${keep.id}`)).status).toBe(200);
    });

    it('a task DELETE is permanent: 204, GET 404, gone from lists, no purgeAt, not restorable', async () => {
      const p = await h.project({ name: 'Hard' });
      const t = await h.task(p.id, { name: 'Gone' });
      expect('purgeAt' in t).toBe(false);
      const del = await h.del(`/tasks/${t.id}`);
      expect(del.status).toBe(204);
      expect(del.body).toBeUndefined();
      const get = await h.get(`/tasks/${t.id}`);
      expect(get.status).toBe(404);
      expect(get.body.code).toBe('resource_not_found');
      expect(idsOf(await h.get(`/tasks?projectId=${p.id}`))).not.toContain(t.id);
      const restore = await h.post(`/tasks/${t.id}/restore`);
      expect(restore.status).toBeGreaterThanOrEqual(400);
      expect(restore.status).toBeLessThan(500);
      expect(['route_not_found', 'method_not_allowed', 'm2m_relation_unknown']).toContain(restore.body.code);
      expect((await h.get(`/tasks/${t.id}`)).status).toBe(404);
      const trash = await h.get('/tasks?purgeAt[notNull]=true');
      expect(trash.status).toBe(400);
      expect(trash.body.code).toBe('invalid_query_param');
      const again = await h.del(`/tasks/${t.id}`);
      expect(again.status).toBe(404);
      expect(again.body.code).toBe('resource_not_found');
    });

    it('deleting a task deletes its whole subtree, not its siblings', async () => {
      const p = await h.project({ name: 'Tree' });
      const root = await h.task(p.id, { name: 'Root' });
      const child = await h.task(p.id, { name: 'Child', parentTaskId: root.id });
      const grandchild = await h.task(p.id, { name: 'Grandchild', parentTaskId: child.id });
      const sibling = await h.task(p.id, { name: 'Sibling' });
      const { events } = await during(h, () => h.del(`/tasks/${root.id}`));
      for (const id of [root.id, child.id, grandchild.id]) expect((await h.get(`/tasks/${id}`)).status).toBe(404);
      expect((await h.get(`/tasks/${sibling.id}`)).status).toBe(200);
      expect(idsOf(await h.get(`/tasks?projectId=${p.id}`))).toEqual([sibling.id]);
      const removed = ofType(events, 'task.removed').map((e) => e.aggregateId).sort();
      expect(removed).toEqual([root.id, child.id, grandchild.id].sort());
    });

    it('deleting the General portfolio → 409 conflict, and it stays', async () => {
      const r = await h.del(`/portfolios/${h.a.generalPortfolioId}`);
      expect(r.status).toBe(409);
      expect(r.body.code).toBe('conflict');
      const got = await h.get(`/portfolios/${h.a.generalPortfolioId}`);
      expect(got.status).toBe(200);
      expect(got.body.purgeAt).toBeNull();
    });

    it('deleting a portfolio that holds live projects → 409 conflict', async () => {
      const pf = (await h.post('/portfolios', { name: 'Holder' })).body;
      const p = await h.project({ name: 'Held', portfolioId: pf.id });
      const r = await h.del(`/portfolios/${pf.id}`);
      expect(r.status).toBe(409);
      expect(r.body.code).toBe('conflict');
      expect((await h.get(`/portfolios/${pf.id}`)).status).toBe(200);
      expect((await h.del(`/projects/${p.id}`)).status).toBe(204);
      expect((await h.del(`/portfolios/${pf.id}`)).status).toBe(204);
    });
  });

  describe(`[${factory.name}] v3 Events: outbox envelope (Delivery request) and lifecycle events`, () => {
    let h: Harness;
    let ownerUserId: string;
    let regularUserId: string;
    beforeAll(async () => {
      h = await harness(factory);
      ownerUserId = (await h.get(`/members/${h.a.owner.id}`)).body.userId;
      regularUserId = (await h.get(`/members/${h.a.regular.id}`)).body.userId;
    });
    afterAll(() => h.close());

    function envelope(e: any, o: { type: string; aggregateType: string; aggregateId: string; projectId: string | null; userId?: string; memberId?: string }) {
      expect(e).toEqual({
        eventId: expect.any(String),
        type: o.type,
        aggregateType: o.aggregateType,
        aggregateId: o.aggregateId,
        teamId: h.a.id,
        projectId: o.projectId,
        triggeredBy: { source: 'human', userId: o.userId ?? ownerUserId, teamMemberId: o.memberId ?? h.a.owner.id },
        timestamp: iso(h.clock.now()),
        payload: expect.any(Object),
      });
      expect(e.timestamp).toMatch(ISO_MS);
      expect(e.eventId.length).toBeGreaterThan(0);
    }

    it('a project create records project.created with the full envelope; payload.project equals the response', async () => {
      h.clock.advance(1234);
      const { result: r, events } = await during(h, () => h.post('/projects', { name: 'Evented' }));
      expect(r.status).toBe(201);
      const created = ofType(events, 'project.created');
      expect(created).toHaveLength(1);
      envelope(created[0], { type: 'project.created', aggregateType: 'project', aggregateId: r.body.id, projectId: r.body.id });
      expect(created[0].payload).toEqual({ project: r.body });
      // The triggering identity is the member, not the actor.
      expect(created[0].triggeredBy.teamMemberId).not.toBe(r.body.createdByActorId);
      expect(new Set(events.map((e) => e.eventId)).size).toBe(events.length);
    });

    it('a task create records task.created with projectId = the task project; payload.task equals the response', async () => {
      const p = await h.project({ name: 'Task events', accessType: 'workspace' });
      const { result: r, events } = await during(h, () =>
        h.post('/tasks', { name: 'T', projectId: p.id }, { token: h.a.regular.token }));
      expect(r.status).toBe(201);
      const created = ofType(events, 'task.created');
      expect(created).toHaveLength(1);
      envelope(created[0], {
        type: 'task.created', aggregateType: 'task', aggregateId: r.body.id, projectId: p.id, userId: regularUserId, memberId: h.a.regular.id,
      });
      expect(created[0].payload).toEqual({ task: r.body });
    });

    it('a portfolio create has projectId null', async () => {
      const { result: r, events } = await during(h, () => h.post('/portfolios', { name: 'Evented portfolio' }));
      expect(r.status).toBe(201);
      const created = ofType(events, 'portfolio.created');
      expect(created).toHaveLength(1);
      envelope(created[0], { type: 'portfolio.created', aggregateType: 'portfolio', aggregateId: r.body.id, projectId: null });
      expect(created[0].payload).toEqual({ portfolio: r.body });
    });

    it('an update records .updated carrying the full current resource, not a diff', async () => {
      const p = await h.project({ name: 'Upd' });
      const t = await h.task(p.id, { name: 'Before', description: 'kept' });
      h.clock.advance(1000);
      const { result: r, events } = await during(h, () => h.patch(`/tasks/${t.id}`, { name: 'After' }));
      expect(r.status).toBe(200);
      const upd = ofType(events, 'task.updated', t.id);
      expect(upd).toHaveLength(1);
      envelope(upd[0], { type: 'task.updated', aggregateType: 'task', aggregateId: t.id, projectId: p.id });
      expect(upd[0].payload).toEqual({ task: r.body });
      expect(upd[0].payload.task.description).toBe('kept');
      expect(upd[0].payload.task.name).toBe('After');
      expect(upd[0].payload.task.updatedAt).toBe(iso(h.clock.now()));
      expect(upd[0].payload.task).toEqual((await h.get(`/tasks/${t.id}`)).body);
      const pu = await during(h, () => h.patch(`/projects/${p.id}`, { description: 'new' }));
      const pe = ofType(pu.events, 'project.updated', p.id);
      expect(pe).toHaveLength(1);
      expect(pe[0].projectId).toBe(p.id);
      expect(pe[0].payload.project.name).toBe('Upd');
      expect(pe[0].payload.project.description).toBe('new');
    });

    it('a moved task carries its new projectId', async () => {
      const p1 = await h.project({ name: 'From' });
      const p2 = await h.project({ name: 'To' });
      const t = await h.task(p1.id, { name: 'Mover' });
      const { result: r, events } = await during(h, () => h.patch(`/tasks/${t.id}`, { projectId: p2.id }));
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      const upd = ofType(events, 'task.updated', t.id);
      expect(upd).toHaveLength(1);
      expect(upd[0].projectId).toBe(p2.id);
    });

    it('delete → .removed; restore → .restored; purge → .force_deleted with triggeredBy system', async () => {
      const p = await h.project({ name: 'Lifecycle' });
      h.clock.advance(10);
      const del = await during(h, () => h.del(`/projects/${p.id}`));
      const removed = ofType(del.events, 'project.removed', p.id);
      expect(removed).toHaveLength(1);
      envelope(removed[0], { type: 'project.removed', aggregateType: 'project', aggregateId: p.id, projectId: p.id });
      expect(removed[0].payload.project.id).toBe(p.id);
      expect(removed[0].payload.project.name).toBe('Lifecycle');

      h.clock.advance(10);
      const res = await during(h, () => h.post(`/projects/${p.id}/restore`));
      expect(res.result.status).toBe(200);
      const restored = ofType(res.events, 'project.restored', p.id);
      expect(restored).toHaveLength(1);
      envelope(restored[0], { type: 'project.restored', aggregateType: 'project', aggregateId: p.id, projectId: p.id });
      expect(restored[0].payload).toEqual({ project: res.result.body });
      expect(restored[0].payload.project.purgeAt).toBeNull();

      const pf = (await h.post('/portfolios', { name: 'To purge' })).body;
      expect((await h.del(`/projects/${p.id}`)).status).toBe(204);
      expect((await h.del(`/portfolios/${pf.id}`)).status).toBe(204);
      h.clock.advance(RETENTION);
      const purge = await during(h, () => h.api.jobs.purge());
      for (const [type, id, projectId] of [['project.force_deleted', p.id, p.id], ['portfolio.force_deleted', pf.id, null]] as const) {
        const fd = ofType(purge.events, type, id);
        expect(fd, type).toHaveLength(1);
        expect(fd[0]).toEqual({
          eventId: expect.any(String),
          type,
          aggregateType: type.split('.')[0],
          aggregateId: id,
          teamId: h.a.id,
          projectId,
          triggeredBy: { source: 'system' },
          timestamp: iso(h.clock.now()),
          payload: { [type.split('.')[0]!]: expect.objectContaining({ id }) },
        });
      }
    });

    it('a hard task delete records task.removed with the task under payload.task', async () => {
      const p = await h.project({ name: 'Task removal' });
      const t = await h.task(p.id, { name: 'Bye' });
      const { events } = await during(h, () => h.del(`/tasks/${t.id}`));
      const removed = ofType(events, 'task.removed', t.id);
      expect(removed).toHaveLength(1);
      envelope(removed[0], { type: 'task.removed', aggregateType: 'task', aggregateId: t.id, projectId: p.id });
      expect(removed[0].payload.task).toMatchObject({ id: t.id, name: 'Bye', projectId: p.id });
    });

    it('events of workspace B carry B as teamId', async () => {
      const { events } = await during(h, () => h.project({ name: 'In B' }, h.b.owner.token));
      const created = ofType(events, 'project.created');
      expect(created).toHaveLength(1);
      expect(created[0].teamId).toBe(h.b.id);
      expect(created[0].triggeredBy.teamMemberId).toBe(h.b.owner.id);
    });
  });

  describe(`[${factory.name}] v3 Events: membership events and what records no event`, () => {
    let h: Harness;
    let projectId: string;
    let a: string;
    let b: string;
    let c: string;
    beforeAll(async () => {
      h = await harness(factory);
      projectId = (await h.project({ name: 'Members' })).id;
      a = h.a.owner.id;
      b = h.a.regular.id;
      c = h.a.client.id;
    });
    afterAll(() => h.close());

    function membership(events: any[], change: 'added' | 'removed', taskId: string): string[] {
      const es = ofType(events, `task.assignees.${change}`, taskId);
      for (const e of es) {
        expect(e.payload).toEqual({ parentId: taskId, relatedId: expect.any(String), relation: 'assignees' });
        expect(e.aggregateType).toBe('task');
        expect(e.projectId).toBe(projectId);
        expect(e.teamId).toBe(h.a.id);
        expect(e.triggeredBy).toEqual({ source: 'human', userId: expect.any(String), teamMemberId: h.a.owner.id });
        expect(e.timestamp).toMatch(ISO_MS);
      }
      return es.map((e) => e.payload.relatedId).sort();
    }

    it('POST /tasks/{id}/assignees records one task.assignees.added per new id; re-adding records nothing', async () => {
      const t = await h.task(projectId);
      const first = await during(h, () => h.post(`/tasks/${t.id}/assignees`, { ids: [a, b] }));
      expect(first.result.status).toBe(200);
      expect(membership(first.events, 'added', t.id)).toEqual([a, b].sort());
      const again = await during(h, () => h.post(`/tasks/${t.id}/assignees`, { ids: [a, b, c, c] }));
      expect(again.result.status).toBe(200);
      expect(membership(again.events, 'added', t.id)).toEqual([c]);
      const noop = await during(h, () => h.post(`/tasks/${t.id}/assignees`, { ids: [a] }));
      expect(noop.result.status).toBe(200);
      expect(membership(noop.events, 'added', t.id)).toEqual([]);
    });

    it('DELETE /tasks/{id}/assignees records one task.assignees.removed per removed id', async () => {
      const t = await h.task(projectId, { assignees: [a, b, c] });
      const r = await during(h, () => h.del(`/tasks/${t.id}/assignees`, { body: { ids: [a, c] } }));
      expect(r.result.status).toBe(200);
      expect(r.result.body.assignees).toEqual([b]);
      expect(membership(r.events, 'removed', t.id)).toEqual([a, c].sort());
      expect(membership(r.events, 'added', t.id)).toEqual([]);
      const noop = await during(h, () => h.del(`/tasks/${t.id}/assignees`, { body: { ids: [a] } }));
      expect(membership(noop.events, 'removed', t.id)).toEqual([]);
    });

    it('a create with assignees records task.created and one added per id', async () => {
      const r = await during(h, () => h.post('/tasks', { name: 'Seeded', projectId, assignees: [a, b] }));
      expect(r.result.status).toBe(201);
      expect(ofType(r.events, 'task.created', r.result.body.id)).toHaveLength(1);
      expect(membership(r.events, 'added', r.result.body.id)).toEqual([a, b].sort());
    });

    it('PATCH replace semantics: assignees [a,b] → [b,c] records one removed (a) and one added (c)', async () => {
      const t = await h.task(projectId, { assignees: [a, b] });
      const r = await during(h, () => h.patch(`/tasks/${t.id}`, { assignees: [b, c] }));
      expect(r.result.status).toBe(200);
      expect([...r.result.body.assignees].sort()).toEqual([b, c].sort());
      expect(membership(r.events, 'removed', t.id)).toEqual([a]);
      expect(membership(r.events, 'added', t.id)).toEqual([c]);
      const upd = ofType(r.events, 'task.updated', t.id);
      expect(upd).toHaveLength(1);
      expect([...upd[0].payload.task.assignees].sort()).toEqual([b, c].sort());
      const same = await during(h, () => h.patch(`/tasks/${t.id}`, { assignees: [c, b] }));
      expect(membership(same.events, 'removed', t.id)).toEqual([]);
      expect(membership(same.events, 'added', t.id)).toEqual([]);
    });

    it('a failed request records no event (validation error, stale write, missing target, conflict)', async () => {
      const t = await h.task(projectId, { name: 'Stable', assignees: [a] });
      const before = (await h.get(`/tasks/${t.id}`)).body;
      h.clock.advance(1000);
      const bad = await during(h, () => h.post('/tasks', { name: '', projectId, assignees: [b] }));
      expect(bad.result.status).toBe(400);
      expect(bad.result.body.code).toBe('validation_failed');
      expect(bad.events).toEqual([]);
      const badPatch = await during(h, () => h.patch(`/tasks/${t.id}`, { name: 'x'.repeat(2000), assignees: [b] }));
      expect(badPatch.result.status).toBe(400);
      expect(badPatch.events).toEqual([]);
      // Move the row on, then send a write based on the old updatedAt.
      expect((await h.patch(`/tasks/${t.id}`, { description: 'bump' })).status).toBe(200);
      const afterBump = (await h.get(`/tasks/${t.id}`)).body;
      const stale = await during(h, () => h.patch(`/tasks/${t.id}`, { name: 'Stale', assignees: [b, c], expectedUpdatedAt: before.updatedAt }));
      expect(stale.result.status).toBe(409);
      expect(stale.result.body.code).toBe('stale_write');
      expect(stale.events).toEqual([]);
      const missing = await during(h, () => h.post(`/tasks/${t.id}/assignees`, { ids: [b, 'NoSuchMember1'] }));
      expect(missing.result.status).toBe(404);
      expect(missing.result.body.code).toBe('m2m_target_not_found');
      expect(missing.events).toEqual([]);
      const dupName = await h.project({ name: 'Unique name' });
      const clash = await during(h, () => h.post('/projects', { name: 'Unique name' }));
      expect(clash.result.status).toBe(409);
      expect(clash.events).toEqual([]);
      const denied = await during(h, async () =>
        h.post('/tasks', { name: 'Denied', projectId }, { token: (await h.api.admin.issueToken(h.a.owner.id, { scopes: ['read'] })).token }));
      expect(denied.result.status).toBe(403);
      expect(denied.events).toEqual([]);
      expect((await h.get(`/tasks/${t.id}`)).body).toEqual(afterBump);
      expect(afterBump.assignees).toEqual([a]);
      expect(dupName.id).toBeTypeOf('string');
    });

    it('an idempotent replay records no second event', async () => {
      const headers = { 'idempotency-key': 'events-once-1' };
      const first = await during(h, () => h.post('/tasks', { name: 'Once', projectId, assignees: [b] }, { headers }));
      expect(first.result.status).toBe(201);
      expect(ofType(first.events, 'task.created', first.result.body.id)).toHaveLength(1);
      expect(membership(first.events, 'added', first.result.body.id)).toEqual([b]);
      const replay = await during(h, () => h.post('/tasks', { name: 'Once', projectId, assignees: [b] }, { headers }));
      expect(replay.result.status).toBe(201);
      expect(replay.result.body.id).toBe(first.result.body.id);
      expect(replay.result.headers['idempotency-replayed']).toBe('true');
      expect(replay.events).toEqual([]);
      const del1 = await during(h, () => h.del(`/tasks/${first.result.body.id}`, { headers: { 'idempotency-key': 'events-once-2' } }));
      expect(ofType(del1.events, 'task.removed', first.result.body.id)).toHaveLength(1);
      const del2 = await during(h, () => h.del(`/tasks/${first.result.body.id}`, { headers: { 'idempotency-key': 'events-once-2' } }));
      expect(del2.result.status).toBe(204);
      expect(del2.events).toEqual([]);
    });
  });
}
