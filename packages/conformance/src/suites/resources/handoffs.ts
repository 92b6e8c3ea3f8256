import { describe, it, expect, beforeAll } from 'vitest';
import type { Harness, StoreFactory } from '../../kit';
import { during, harnessPerDescribe, ofType } from '../shared';
import { expectOk as ok, expectProblem as problem, expectInvalid as invalid } from './helpers';

/**
 * Task handoffs ("Other resources": fields not shown; decisions in
 * docs/not-shown.md "Task handoffs"): a task handed from the caller
 * (fromMemberId, server-set) to another member (toMemberId), pending until
 * the recipient accepts or declines; accepting makes the recipient an
 * assignee in the sender's place; project access follows the task.
 */

/** A regular member added by the admin, with a token of every scope. */
async function regular(h: Harness, name: string): Promise<{ id: string; token: string }> {
  const m = await h.api.admin.addMember(h.a.id, { name, role: 'regular' });
  return { id: m.id, token: (await h.api.admin.issueToken(m.id, { scopes: ['read', 'write', 'delete'] })).token };
}

const sorted = (ids: string[]) => [...ids].sort();

export function taskHandoffsSuite(factory: StoreFactory): void {
  describe(`[${factory.name}] v3 Task handoffs: fields (taskId, fromMemberId, toMemberId, note, status, respondedAt, projectId)`, () => {
    const H = harnessPerDescribe(factory);
    let p: any;
    let task: any;
    beforeAll(async () => {
      p = await H().project({ name: 'Handoffs P', members: [H().a.owner.id, H().a.regular.id, H().a.client.id] });
      task = await H().task(p.id, { name: 'Hand me over' });
    });

    it('POST /task-handoffs → 201 pending, fromMemberId the caller, projectId the task\'s, respondedAt null; server-set fields sent are ignored', async () => {
      const hnd = ok(await H().post('/task-handoffs', {
        taskId: task.id, toMemberId: H().a.regular.id, note: '  Please take this  ', fromMemberId: H().a.client.id, projectId: 'elsewhere', respondedAt: '2020-01-01T00:00:00.000Z',
      }), 201);
      expect(hnd).toMatchObject({ taskId: task.id, toMemberId: H().a.regular.id, fromMemberId: H().a.owner.id, note: 'Please take this', status: 'pending', respondedAt: null, projectId: p.id });
      expect(ok(await H().get(`/task-handoffs/${hnd.id}`))).toEqual(hnd);
      const bare = ok(await H().post('/task-handoffs', { taskId: task.id, toMemberId: H().a.client.id }), 201);
      expect(bare.note).toBeNull();
    });

    it('taskId and toMemberId are required and set once; note is at most 2000 characters', async () => {
      invalid(await H().post('/task-handoffs', { toMemberId: H().a.regular.id }), 'taskId');
      invalid(await H().post('/task-handoffs', { taskId: task.id }), 'toMemberId');
      invalid(await H().post('/task-handoffs', { taskId: task.id, toMemberId: H().a.regular.id, note: 'x'.repeat(2001) }), 'note');
      const hnd = ok(await H().post('/task-handoffs', { taskId: task.id, toMemberId: H().a.regular.id, note: 'x'.repeat(2000) }), 201);
      const other = await H().task(p.id);
      invalid(await H().patch(`/task-handoffs/${hnd.id}`, { taskId: other.id }), 'taskId', 'immutable');
      invalid(await H().patch(`/task-handoffs/${hnd.id}`, { toMemberId: H().a.client.id }), 'toMemberId', 'immutable');
    });

    it('a handoff starts pending: status accepted on create is 400 transition_not_allowed', async () => {
      invalid(await H().post('/task-handoffs', { taskId: task.id, toMemberId: H().a.regular.id, status: 'accepted' }), 'status', 'transition_not_allowed');
      invalid(await H().post('/task-handoffs', { taskId: task.id, toMemberId: H().a.regular.id, status: 'lost' }), 'status');
    });

    it('recipient rules: not oneself (self_handoff), a member of this workspace (404), able to open the task\'s project (recipient_no_access)', async () => {
      invalid(await H().post('/task-handoffs', { taskId: task.id, toMemberId: H().a.owner.id }), 'toMemberId', 'self_handoff');
      problem(await H().post('/task-handoffs', { taskId: task.id, toMemberId: H().b.owner.id }), 404, 'resource_not_found');
      const closed = await H().project({ name: 'Owner only' });
      const t = await H().task(closed.id);
      // The guest is no member of it and guests open only projects they belong to.
      invalid(await H().post('/task-handoffs', { taskId: t.id, toMemberId: H().a.client.id }), 'toMemberId', 'recipient_no_access');
      expect(ok(await H().get(`/task-handoffs?taskId[eq]=${t.id}`)).data).toEqual([]);
      // The workspace owner opens every project (viewAllProjects), roster or not.
      const regulars = await H().project({ name: 'Regular only', members: [H().a.regular.id] }, H().a.regular.token);
      const rt = await H().task(regulars.id, {}, H().a.regular.token);
      await H().patch(`/projects/${regulars.id}`, { members: [H().a.regular.id] }, { token: H().a.regular.token });
      ok(await H().post('/task-handoffs', { taskId: rt.id, toMemberId: H().a.owner.id }, { token: H().a.regular.token }), 201);
    });

    it('an unknown task, or a task of another workspace, is 404', async () => {
      problem(await H().post('/task-handoffs', { taskId: 'nosuchtask', toMemberId: H().a.regular.id }), 404, 'resource_not_found');
      const bp = await H().project({ name: 'B project' }, H().b.owner.token);
      const bt = await H().task(bp.id, {}, H().b.owner.token);
      problem(await H().post('/task-handoffs', { taskId: bt.id, toMemberId: H().a.regular.id }), 404, 'resource_not_found');
    });
  });

  describe(`[${factory.name}] v3 Task handoffs: transitions (pending → accepted | declined, by the recipient only, once)`, () => {
    const H = harnessPerDescribe(factory);
    let p: any;
    beforeAll(async () => {
      p = await H().project({ name: 'Transitions P', members: [H().a.owner.id, H().a.regular.id, H().a.client.id] });
    });

    it('the recipient accepts: status accepted, respondedAt stamped; the recipient becomes an assignee and the sender stops being one (membership events)', async () => {
      const t = await H().task(p.id, { assignees: [H().a.owner.id] });
      const hnd = ok(await H().post('/task-handoffs', { taskId: t.id, toMemberId: H().a.regular.id }), 201);
      H().clock.advance(60_000);
      const { result: acc, events } = await during(H(), async () => ok(await H().patch(`/task-handoffs/${hnd.id}`, { status: 'accepted' }, { token: H().a.regular.token })));
      expect(acc.status).toBe('accepted');
      expect(acc.respondedAt).toBe(new Date(H().clock.now()).toISOString());
      expect(ok(await H().get(`/tasks/${t.id}`)).assignees).toEqual([H().a.regular.id]);
      expect(ofType(events, 'task.assignees.added', t.id).map((e) => e.payload.relatedId)).toEqual([H().a.regular.id]);
      expect(ofType(events, 'task.assignees.removed', t.id).map((e) => e.payload.relatedId)).toEqual([H().a.owner.id]);
      expect(ofType(events, 'taskHandoff.updated', hnd.id)[0].payload.taskHandoff.status).toBe('accepted');
    });

    it('accepting changes the task\'s assignees, so it needs tasks:write: a token with task-handoffs:write alone gets 403 permission_denied and nothing changes', async () => {
      const t = await H().task(p.id, { assignees: [H().a.owner.id] });
      const hnd = ok(await H().post('/task-handoffs', { taskId: t.id, toMemberId: H().a.regular.id }), 201);
      const narrow = (await H().api.admin.issueToken(H().a.regular.id, { scopes: ['task-handoffs:write'] })).token;
      const r = problem(await H().patch(`/task-handoffs/${hnd.id}`, { status: 'accepted' }, { token: narrow }), 403, 'permission_denied');
      expect(r.missingPermissions).toEqual(['tasks:write']);
      expect(ok(await H().get(`/task-handoffs/${hnd.id}`)).status).toBe('pending');
      expect(ok(await H().get(`/tasks/${t.id}`)).assignees).toEqual([H().a.owner.id]);
      // Declining changes no task: the narrow token may.
      expect(ok(await H().patch(`/task-handoffs/${hnd.id}`, { status: 'declined' }, { token: narrow })).status).toBe('declined');
    });

    it('the recipient declines: status declined, the task\'s assignees are untouched', async () => {
      const t = await H().task(p.id, { assignees: [H().a.owner.id] });
      const hnd = ok(await H().post('/task-handoffs', { taskId: t.id, toMemberId: H().a.client.id }), 201);
      const dec = ok(await H().patch(`/task-handoffs/${hnd.id}`, { status: 'declined' }, { token: H().a.client.token }));
      expect(dec.status).toBe('declined');
      expect(dec.respondedAt).toBeTypeOf('string');
      expect(ok(await H().get(`/tasks/${t.id}`)).assignees).toEqual([H().a.owner.id]);
    });

    it('only the recipient answers: the sender (or anyone else) setting status is 403 permission_denied and nothing changes', async () => {
      const t = await H().task(p.id);
      const hnd = ok(await H().post('/task-handoffs', { taskId: t.id, toMemberId: H().a.regular.id }), 201);
      problem(await H().patch(`/task-handoffs/${hnd.id}`, { status: 'accepted' }), 403, 'permission_denied');
      problem(await H().patch(`/task-handoffs/${hnd.id}`, { status: 'declined' }, { token: H().a.client.token }), 403, 'permission_denied');
      expect(ok(await H().get(`/task-handoffs/${hnd.id}`)).status).toBe('pending');
      expect(ok(await H().get(`/tasks/${t.id}`)).assignees).toEqual([]);
    });

    it('accepted and declined are final: any further status change is 400 transition_not_allowed', async () => {
      const t = await H().task(p.id);
      const a = ok(await H().post('/task-handoffs', { taskId: t.id, toMemberId: H().a.regular.id }), 201);
      ok(await H().patch(`/task-handoffs/${a.id}`, { status: 'accepted' }, { token: H().a.regular.token }));
      invalid(await H().patch(`/task-handoffs/${a.id}`, { status: 'declined' }, { token: H().a.regular.token }), 'status', 'transition_not_allowed');
      invalid(await H().patch(`/task-handoffs/${a.id}`, { status: 'pending' }, { token: H().a.regular.token }), 'status', 'transition_not_allowed');
      const d = ok(await H().post('/task-handoffs', { taskId: t.id, toMemberId: H().a.client.id }), 201);
      ok(await H().patch(`/task-handoffs/${d.id}`, { status: 'declined' }, { token: H().a.client.token }));
      invalid(await H().patch(`/task-handoffs/${d.id}`, { status: 'accepted' }, { token: H().a.client.token }), 'status', 'transition_not_allowed');
      expect(ok(await H().get(`/task-handoffs/${d.id}`)).status).toBe('declined');
    });

    it('the note: only the sender edits it, only while pending', async () => {
      const t = await H().task(p.id);
      const hnd = ok(await H().post('/task-handoffs', { taskId: t.id, toMemberId: H().a.regular.id, note: 'first' }), 201);
      expect(ok(await H().patch(`/task-handoffs/${hnd.id}`, { note: 'second' })).note).toBe('second');
      problem(await H().patch(`/task-handoffs/${hnd.id}`, { note: 'hijack' }, { token: H().a.regular.token }), 403, 'permission_denied');
      ok(await H().patch(`/task-handoffs/${hnd.id}`, { status: 'declined' }, { token: H().a.regular.token }));
      invalid(await H().patch(`/task-handoffs/${hnd.id}`, { note: 'too late' }), 'note', 'handoff_closed');
    });

    it('only the sender deletes (withdraws) a handoff: others get 403; the sender gets 204 and it is gone', async () => {
      const t = await H().task(p.id);
      const hnd = ok(await H().post('/task-handoffs', { taskId: t.id, toMemberId: H().a.regular.id }), 201);
      problem(await H().del(`/task-handoffs/${hnd.id}`, { token: H().a.regular.token }), 403, 'permission_denied');
      expect((await H().del(`/task-handoffs/${hnd.id}`)).status).toBe(204);
      problem(await H().get(`/task-handoffs/${hnd.id}`), 404, 'resource_not_found');
    });
  });

  describe(`[${factory.name}] v3 Task handoffs: project access follows the task`, () => {
    const H = harnessPerDescribe(factory);

    it('a member who cannot open the task\'s project neither lists nor reads its handoffs; another workspace never does', async () => {
      const open = await H().project({ name: 'Open to regular', members: [H().a.owner.id, H().a.regular.id] });
      const t = await H().task(open.id);
      const hnd = ok(await H().post('/task-handoffs', { taskId: t.id, toMemberId: H().a.regular.id }), 201);
      // The guest is no member of the project.
      expect(ok(await H().get('/task-handoffs', { token: H().a.client.token })).data).toEqual([]);
      problem(await H().get(`/task-handoffs/${hnd.id}`, { token: H().a.client.token }), 403, 'project_access_denied');
      problem(await H().get(`/task-handoffs/${hnd.id}`, { token: H().b.owner.token }), 404, 'resource_not_found');
      expect(ok(await H().get('/task-handoffs', { token: H().a.regular.token })).data.map((x: any) => x.id)).toEqual([hnd.id]);
    });

    it('deleting the task removes its handoffs (taskHandoff.removed)', async () => {
      const pr = await H().project({ name: 'Cascade', members: [H().a.owner.id, H().a.regular.id] });
      const t = await H().task(pr.id);
      const hnd = ok(await H().post('/task-handoffs', { taskId: t.id, toMemberId: H().a.regular.id }), 201);
      const { events } = await during(H(), async () => expect((await H().del(`/tasks/${t.id}`)).status).toBe(204));
      expect(ofType(events, 'taskHandoff.removed', hnd.id)).toHaveLength(1);
      problem(await H().get(`/task-handoffs/${hnd.id}`), 404, 'resource_not_found');
    });

    it('filters: status, toMemberId, fromMemberId, taskId', async () => {
      const pr = await H().project({ name: 'Filters', members: [H().a.owner.id, H().a.regular.id, H().a.client.id] });
      const t = await H().task(pr.id);
      const a = ok(await H().post('/task-handoffs', { taskId: t.id, toMemberId: H().a.regular.id }), 201);
      const b = ok(await H().post('/task-handoffs', { taskId: t.id, toMemberId: H().a.owner.id }, { token: H().a.client.token }), 201);
      ok(await H().patch(`/task-handoffs/${b.id}`, { status: 'accepted' }));
      const ids = async (q: string) => ok(await H().get(`/task-handoffs?taskId[eq]=${t.id}&${q}`)).data.map((x: any) => x.id);
      expect(await ids('status[eq]=accepted')).toEqual([b.id]);
      expect(await ids(`toMemberId[eq]=${H().a.regular.id}`)).toEqual([a.id]);
      expect(await ids(`fromMemberId[eq]=${H().a.client.id}`)).toEqual([b.id]);
    });
  });

  describe(`[${factory.name}] v3 Task handoffs: a task of a trashed project is neither handed off nor taken over (409 conflict)`, () => {
    const H = harnessPerDescribe(factory);

    it('accepting a handoff of a task whose project is in the trash → 409 conflict (reason project_trashed), nothing written, no event; declining is allowed; after a restore accepting works', async () => {
      const h = H();
      const p = await h.project({ name: 'Trashed handoffs', members: [h.a.owner.id, h.a.regular.id, h.a.client.id] });
      const t = await h.task(p.id, { assignees: [h.a.owner.id] });
      const hnd = ok(await h.post('/task-handoffs', { taskId: t.id, toMemberId: h.a.regular.id }), 201);
      const other = ok(await h.post('/task-handoffs', { taskId: t.id, toMemberId: h.a.client.id }), 201);
      expect((await h.del(`/projects/${p.id}`)).status).toBe(204);
      const taskBefore = ok(await h.get(`/tasks/${t.id}`));
      h.clock.advance(60_000);
      const { result, events } = await during(h, () => h.patch(`/task-handoffs/${hnd.id}`, { status: 'accepted' }, { token: h.a.regular.token }));
      expect(problem(result, 409, 'conflict')).toMatchObject({ field: 'taskId', reason: 'project_trashed', projectId: p.id });
      expect(events).toEqual([]);
      expect(ok(await h.get(`/task-handoffs/${hnd.id}`))).toEqual(hnd);
      expect(ok(await h.get(`/tasks/${t.id}`))).toEqual(taskBefore);
      // Declining changes no task: allowed while the project is in the trash.
      expect(ok(await h.patch(`/task-handoffs/${other.id}`, { status: 'declined' }, { token: h.a.client.token })).status).toBe('declined');
      ok(await h.post(`/projects/${p.id}/restore`));
      expect(ok(await h.patch(`/task-handoffs/${hnd.id}`, { status: 'accepted' }, { token: h.a.regular.token })).status).toBe('accepted');
      expect(ok(await h.get(`/tasks/${t.id}`)).assignees).toEqual([h.a.regular.id]);
    });

    it('creating a handoff of a task whose project is in the trash → 409 conflict (reason project_trashed); nothing is created', async () => {
      const h = H();
      const p = await h.project({ name: 'Trashed create', members: [h.a.owner.id, h.a.regular.id] });
      const t = await h.task(p.id);
      expect((await h.del(`/projects/${p.id}`)).status).toBe(204);
      const { result, events } = await during(h, () => h.post('/task-handoffs', { taskId: t.id, toMemberId: h.a.regular.id }));
      expect(problem(result, 409, 'conflict')).toMatchObject({ field: 'taskId', reason: 'project_trashed', projectId: p.id });
      expect(events).toEqual([]);
      expect(ok(await h.get(`/task-handoffs?taskId[eq]=${t.id}`)).data).toEqual([]);
    });
  });

  // docs/not-shown.md "Task handoffs": a recipient who can no longer open the task's project could not answer (403);
  // their pending handoffs there are declined for them, by the write that took the project away.
  describe(`[${factory.name}] v3 Task handoffs: a recipient who can no longer open the task's project has the pending handoffs declined`, () => {
    const H = harnessPerDescribe(factory);

    /** A project (of `body`), a task, and pending handoffs of it from the owner to `recipients`. */
    async function offered(h: Harness, body: Record<string, unknown>, recipients: string[]): Promise<{ p: any; t: any; hs: any[] }> {
      const p = await h.project({ name: `Stranded ${Math.random().toString(36).slice(2, 7)}`, ...body });
      const t = await h.task(p.id);
      const hs = [];
      for (const to of recipients) hs.push(ok(await h.post('/task-handoffs', { taskId: t.id, toMemberId: to }), 201));
      return { p, t, hs };
    }

    /** The handoff declined by `write`: status, respondedAt, one taskHandoff.updated triggered by the caller (the owner). */
    async function expectDeclinedBy(h: Harness, hnd: any, write: () => Promise<unknown>, kept: any[] = []): Promise<void> {
      const { events } = await during(h, write);
      const now = ok(await h.get(`/task-handoffs/${hnd.id}`));
      expect(now).toMatchObject({ status: 'declined', respondedAt: expect.any(String) });
      // Its first taskHandoff.updated declines it (a moved task's handoff then follows it to the new project: one more).
      const updated = ofType(events, 'taskHandoff.updated', hnd.id);
      expect(updated.length).toBeGreaterThanOrEqual(1);
      expect(updated[0].payload.taskHandoff).toMatchObject({ status: 'declined', respondedAt: now.respondedAt });
      expect(updated[0].triggeredBy).toMatchObject({ teamMemberId: h.a.owner.id });
      for (const k of kept) expect(ok(await h.get(`/task-handoffs/${k.id}`)).status).toBe('pending');
    }

    it('POST /projects/{id}/remove-member: the removed recipient\'s handoff is declined; one to a member still on the roster stays pending', async () => {
      const h = H();
      const [x, y] = [await regular(h, 'Leaver X'), await regular(h, 'Stayer Y')];
      const { p, hs: [hx, hy] } = await offered(h, { members: [h.a.owner.id, x.id, y.id] }, [x.id, y.id]);
      await expectDeclinedBy(h, hx, async () => ok(await h.post(`/projects/${p.id}/remove-member`, { memberId: x.id })), [hy]);
      // Already answered: the recipient, back on the roster, cannot answer it again.
      ok(await h.post(`/projects/${p.id}/add-member`, { memberId: x.id }));
      invalid(await h.patch(`/task-handoffs/${hx.id}`, { status: 'accepted' }, { token: x.token }), 'status', 'transition_not_allowed');
    });

    it('DELETE /projects/{id}/members and a members replace (PATCH /projects/{id}) decline them too', async () => {
      const h = H();
      const [x, y] = [await regular(h, 'Deleted X'), await regular(h, 'Replaced Y')];
      const { p, hs: [hx, hy] } = await offered(h, { members: [h.a.owner.id, x.id, y.id] }, [x.id, y.id]);
      await expectDeclinedBy(h, hx, async () => ok(await h.del(`/projects/${p.id}/members`, { body: { ids: [x.id] } })), [hy]);
      await expectDeclinedBy(h, hy, async () => ok(await h.patch(`/projects/${p.id}`, { members: [h.a.owner.id] })));
    });

    it('off the roster of a project every regular member opens (accessType workspace): the handoff stays pending and can be answered', async () => {
      const h = H();
      const x = await regular(h, 'Still opens X');
      const { p, hs: [hx] } = await offered(h, { accessType: 'workspace', members: [h.a.owner.id, x.id] }, [x.id]);
      ok(await h.post(`/projects/${p.id}/remove-member`, { memberId: x.id }));
      expect(ok(await h.get(`/task-handoffs/${hx.id}`)).status).toBe('pending');
      expect(ok(await h.patch(`/task-handoffs/${hx.id}`, { status: 'declined' }, { token: x.token })).status).toBe('declined');
    });

    it('the recipient\'s role changed to client (guests open only their rosters\' projects): declined; a handoff in a project of their roster stays', async () => {
      const h = H();
      const x = await regular(h, 'Demoted X');
      const open = await offered(h, { accessType: 'workspace' }, [x.id]);
      const rostered = await offered(h, { members: [h.a.owner.id, x.id] }, [x.id]);
      await expectDeclinedBy(h, open.hs[0], async () => ok(await h.patch(`/members/${x.id}`, { role: 'client' })), [rostered.hs[0]]);
    });

    it('the project\'s accessType changed from workspace to limited: handoffs to members off the roster are declined, to those on it stay', async () => {
      const h = H();
      const [x, y] = [await regular(h, 'Off roster X'), await regular(h, 'On roster Y')];
      const { p, hs: [hx, hy] } = await offered(h, { accessType: 'workspace', members: [h.a.owner.id, y.id] }, [x.id, y.id]);
      await expectDeclinedBy(h, hx, async () => ok(await h.patch(`/projects/${p.id}`, { accessType: 'limited' })), [hy]);
    });

    it('the task moved to a project the recipient cannot open: declined (and the handoff follows the task); a recipient who opens it keeps theirs', async () => {
      const h = H();
      const [x, y] = [await regular(h, 'Left behind X'), await regular(h, 'Follows Y')];
      const { t, hs: [hx, hy] } = await offered(h, { members: [h.a.owner.id, x.id, y.id] }, [x.id, y.id]);
      const q = await h.project({ name: 'Moved to', members: [h.a.owner.id, y.id] });
      await expectDeclinedBy(h, hx, async () => ok(await h.patch(`/tasks/${t.id}`, { projectId: q.id })), [hy]);
      expect(ok(await h.get(`/task-handoffs/${hx.id}`)).projectId).toBe(q.id);
      expect(ok(await h.patch(`/task-handoffs/${hy.id}`, { status: 'accepted' }, { token: y.token })).status).toBe('accepted');
    });
  });

  describe(`[${factory.name}] v3 Task handoffs: two handoffs of one task accepted by both recipients (both become assignees; the sender leaves once)`, () => {
    const H = harnessPerDescribe(factory);

    it('one after the other: both recipients are assignees, the sender is removed once (one task.assignees.removed), both handoffs accepted', async () => {
      const h = H();
      const [x, y] = [await regular(h, 'Recipient X'), await regular(h, 'Recipient Y')];
      const p = await h.project({ name: 'Two recipients', members: [h.a.owner.id, x.id, y.id] });
      const t = await h.task(p.id, { assignees: [h.a.owner.id, h.a.regular.id] });
      const hx = ok(await h.post('/task-handoffs', { taskId: t.id, toMemberId: x.id }), 201);
      const hy = ok(await h.post('/task-handoffs', { taskId: t.id, toMemberId: y.id }), 201);
      const { events } = await during(h, async () => {
        ok(await h.patch(`/task-handoffs/${hx.id}`, { status: 'accepted' }, { token: x.token }));
        ok(await h.patch(`/task-handoffs/${hy.id}`, { status: 'accepted' }, { token: y.token }));
      });
      expect(sorted(ok(await h.get(`/tasks/${t.id}`)).assignees)).toEqual(sorted([h.a.regular.id, x.id, y.id]));
      expect(ofType(events, 'task.assignees.removed', t.id).map((e) => e.payload.relatedId)).toEqual([h.a.owner.id]);
      expect(sorted(ofType(events, 'task.assignees.added', t.id).map((e) => e.payload.relatedId))).toEqual(sorted([x.id, y.id]));
      for (const hnd of [hx, hy]) expect(ok(await h.get(`/task-handoffs/${hnd.id}`)).status).toBe('accepted');
    });

    it('at the same time (Promise.all, concurrent transactions on Postgres): both answer 200 (never 500), and the end state — the task\'s updatedAt included — is that of one after the other', async () => {
      // The take-over locks the task: the second acceptance reads the task as the first left it, so its write
      // advances updatedAt past the first's (without the lock both would stamp from the same stale updatedAt: a lost
      // update that optimistic concurrency checks would miss). SQLite runs one write transaction at a time, so there
      // the rounds are serial and this holds anyway; on Postgres it fails without the lock.
      const h = H();
      const [x, y] = [await regular(h, 'Racer X'), await regular(h, 'Racer Y')];
      const p = await h.project({ name: 'Racing recipients', members: [h.a.owner.id, x.id, y.id] });
      const advance = async (accept: (hx: any, hy: any) => Promise<any[]>) => {
        const t = await h.task(p.id, { assignees: [h.a.owner.id] });
        const hx = ok(await h.post('/task-handoffs', { taskId: t.id, toMemberId: x.id }), 201);
        const hy = ok(await h.post('/task-handoffs', { taskId: t.id, toMemberId: y.id }), 201);
        const { result, events } = await during(h, () => accept(hx, hy));
        const after = ok(await h.get(`/tasks/${t.id}`));
        return { t, result, events, after, advanced: Date.parse(after.updatedAt) - Date.parse(t.updatedAt) };
      };
      // The clock stands still: each write stamps one millisecond past the row's last updatedAt.
      const serial = await advance(async (hx, hy) => [
        await h.patch(`/task-handoffs/${hx.id}`, { status: 'accepted' }, { token: x.token }),
        await h.patch(`/task-handoffs/${hy.id}`, { status: 'accepted' }, { token: y.token }),
      ]);
      expect(serial.advanced).toBeGreaterThan(0);
      for (let round = 0; round < 8; round++) {
        const { t, result, events, after, advanced } = await advance((hx, hy) => Promise.all([
          h.patch(`/task-handoffs/${hx.id}`, { status: 'accepted' }, { token: x.token }),
          h.patch(`/task-handoffs/${hy.id}`, { status: 'accepted' }, { token: y.token }),
        ]));
        expect(result.map((r) => r.status)).toEqual([200, 200]);
        expect(result.map((r) => r.body.status)).toEqual(['accepted', 'accepted']);
        expect(sorted(after.assignees)).toEqual(sorted([x.id, y.id]));
        expect(advanced).toBe(serial.advanced);
        expect(ofType(events, 'task.assignees.removed', t.id).map((e) => e.payload.relatedId)).toEqual([h.a.owner.id]);
        expect(sorted(ofType(events, 'task.assignees.added', t.id).map((e) => e.payload.relatedId))).toEqual(sorted([x.id, y.id]));
      }
    });
  });
}
