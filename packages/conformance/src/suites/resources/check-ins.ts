import { describe, it, expect, beforeAll } from 'vitest';
import type { Harness, StoreFactory } from '../../kit';
import { DAY, iso, sorted } from './helpers';
import { during, harnessPerDescribe, ofType } from '../shared';
import { expectOk as ok, expectProblem as problem, expectInvalid as invalid } from './helpers';

/**
 * Check-ins and check-in requests (spec "Other resources": fields not shown;
 * "Events": lifecycle resources checkIn and checkInRequest, membership
 * relations checkIn (assignees, subscribers) and checkInRequest (assignees)),
 * with the decisions recorded in docs/not-shown.md "Check-ins and check-in requests".
 */

const ids = (rows: any[]): string[] => rows.map((r) => r.id);

async function checkIn(h: Harness, projectId: string, body: Record<string, unknown> = {}, token?: string): Promise<any> {
  return ok(await h.post('/check-ins', { text: 'All good', projectId, ...body }, { token }), 201);
}

async function request(h: Harness, projectId: string, body: Record<string, unknown> = {}, token?: string): Promise<any> {
  return ok(await h.post('/check-in-requests', { question: 'How is it going?', projectId, startAt: iso(h.clock.now() + DAY), ...body }, { token }), 201);
}

/** The membership events of one type: [relatedId, relation, parentId] each, sorted. */
function membership(events: any[], type: string): string[][] {
  return ofType(events, type).map((e) => [e.payload.relatedId, e.payload.relation, e.payload.parentId]).sort();
}

export function checkInsSuite(factory: StoreFactory): void {

  describe(`[${factory.name}] v3 Check-in: fields (text, health, projectId, checkInRequestId, createdById; not shown, docs/not-shown.md)`, () => {
    const H = harnessPerDescribe(factory);
    let p: any;
    let q: any;
    beforeAll(async () => {
      p = await H().project({ name: 'Check-ins P', members: [H().a.regular.id, H().a.client.id] });
      q = await H().project({ name: 'Check-ins Q' });
    });

    it('POST /check-ins → 201 with the trimmed text, health null, the caller as createdById and empty sets; GET answers the same', async () => {
      const c = ok(await H().post('/check-ins', { text: '  Shipped the beta \n', projectId: p.id }), 201);
      expect(c).toMatchObject({ text: 'Shipped the beta', health: null, projectId: p.id, checkInRequestId: null, createdById: H().a.owner.id, assignees: [], subscribers: [] });
      expect(c.createdAt).toBeTypeOf('string');
      expect(ok(await H().get(`/check-ins/${c.id}`))).toEqual(c);
      const byRegular = await checkIn(H(), p.id, { health: 'atRisk' }, H().a.regular.token);
      expect(byRegular.createdById).toBe(H().a.regular.id);
      expect(byRegular.health).toBe('atRisk');
      // createdById is server-set: a sent value is ignored.
      const forged = await checkIn(H(), p.id, { createdById: H().a.regular.id });
      expect(forged.createdById).toBe(H().a.owner.id);
    });

    it('text is required, 1-65535 characters after trimming (create and update)', async () => {
      invalid(await H().post('/check-ins', { projectId: p.id }), 'text');
      invalid(await H().post('/check-ins', { projectId: p.id, text: '   ' }), 'text');
      invalid(await H().post('/check-ins', { projectId: p.id, text: 'x'.repeat(65_536) }), 'text');
      const c = await checkIn(H(), p.id, { text: 'y'.repeat(65_535) });
      expect(c.text).toHaveLength(65_535);
      invalid(await H().patch(`/check-ins/${c.id}`, { text: '' }), 'text');
      invalid(await H().patch(`/check-ins/${c.id}`, { text: null }), 'text');
      expect(ok(await H().get(`/check-ins/${c.id}`)).text).toHaveLength(65_535);
    });

    it('health is one of onTrack, atRisk, offTrack or null; PATCH changes it', async () => {
      invalid(await H().post('/check-ins', { text: 'x', projectId: p.id, health: 'great' }), 'health');
      const c = await checkIn(H(), p.id, { health: 'onTrack' });
      expect(ok(await H().patch(`/check-ins/${c.id}`, { health: 'offTrack' })).health).toBe('offTrack');
      invalid(await H().patch(`/check-ins/${c.id}`, { health: 'ON_TRACK' }), 'health');
      expect(ok(await H().patch(`/check-ins/${c.id}`, { health: null })).health).toBeNull();
    });

    it('create without projectId → 400 project_not_specified; projectId is immutable', async () => {
      problem(await H().post('/check-ins', { text: 'Orphan' }), 400, 'project_not_specified');
      const c = await checkIn(H(), p.id);
      invalid(await H().patch(`/check-ins/${c.id}`, { projectId: q.id }), 'projectId', 'immutable');
      expect(ok(await H().get(`/check-ins/${c.id}`)).projectId).toBe(p.id);
    });

    it('checkInRequestId: a request of the same project, set once; another project\'s → 400 wrong_project; unknown → 404 naming it', async () => {
      const rp = await request(H(), p.id);
      const rq = await request(H(), q.id);
      const c = await checkIn(H(), p.id, { checkInRequestId: rp.id });
      expect(c.checkInRequestId).toBe(rp.id);
      invalid(await H().post('/check-ins', { text: 'x', projectId: p.id, checkInRequestId: rq.id }), 'checkInRequestId', 'wrong_project');
      expect(problem(await H().post('/check-ins', { text: 'x', projectId: p.id, checkInRequestId: 'nosuchrequest00' }), 404, 'resource_not_found').field).toBe('checkInRequestId');
      const other = await request(H(), p.id);
      invalid(await H().patch(`/check-ins/${c.id}`, { checkInRequestId: other.id }), 'checkInRequestId', 'immutable');
      expect(ok(await H().get(`/check-ins/${c.id}`)).checkInRequestId).toBe(rp.id);
      expect(ids(ok(await H().get(`/check-ins?checkInRequestId[eq]=${rp.id}`)).data)).toEqual([c.id]);
    });

    it('project access: a member who cannot open the project gets 403 project_access_denied on create, get, update and delete, and never lists its check-ins', async () => {
      const c = await checkIn(H(), q.id, { text: 'Private progress' });
      const tok = H().a.regular.token;
      problem(await H().post('/check-ins', { text: 'x', projectId: q.id }, { token: tok }), 403, 'project_access_denied');
      problem(await H().get(`/check-ins/${c.id}`, { token: tok }), 403, 'project_access_denied');
      problem(await H().patch(`/check-ins/${c.id}`, { text: 'Hijack' }, { token: tok }), 403, 'project_access_denied');
      problem(await H().del(`/check-ins/${c.id}`, { token: tok }), 403, 'project_access_denied');
      problem(await H().get(`/check-ins?projectId=${q.id}`, { token: tok }), 403, 'project_access_denied');
      expect(ids(ok(await H().get('/check-ins?limit=200', { token: tok })).data)).not.toContain(c.id);
      expect(ok(await H().get(`/check-ins/${c.id}`)).text).toBe('Private progress');
    });

    it('role policy: a guest (client) reads a project\'s check-ins but cannot post, change or delete them (403 permission_denied)', async () => {
      const c = await checkIn(H(), p.id);
      const tok = H().a.client.token;
      expect(ok(await H().get(`/check-ins/${c.id}`, { token: tok })).id).toBe(c.id);
      problem(await H().post('/check-ins', { text: 'x', projectId: p.id }, { token: tok }), 403, 'permission_denied');
      problem(await H().patch(`/check-ins/${c.id}`, { text: 'x' }, { token: tok }), 403, 'permission_denied');
      problem(await H().del(`/check-ins/${c.id}`, { token: tok }), 403, 'permission_denied');
      // A regular member may delete a check-in of a project they open.
      expect((await H().del(`/check-ins/${c.id}`, { token: H().a.regular.token })).status).toBe(204);
    });

    it('another workspace\'s check-ins and requests are unknown ids (404); its members cannot be linked (404 m2m_target_not_found)', async () => {
      const tokB = H().b.owner.token;
      const pb = await H().project({ name: 'Beta check-ins' }, tokB);
      const cb = await checkIn(H(), pb.id, {}, tokB);
      const rb = await request(H(), pb.id, {}, tokB);
      problem(await H().get(`/check-ins/${cb.id}`), 404, 'resource_not_found');
      problem(await H().patch(`/check-in-requests/${rb.id}`, { question: 'x?' }), 404, 'resource_not_found');
      problem(await H().del(`/check-ins/${cb.id}`), 404, 'resource_not_found');
      expect(ids(ok(await H().get('/check-ins?limit=200')).data)).not.toContain(cb.id);
      const c = await checkIn(H(), p.id);
      const r = problem(await H().post(`/check-ins/${c.id}/assignees`, { ids: [H().b.owner.id] }), 404, 'm2m_target_not_found');
      expect(r.missing).toEqual([H().b.owner.id]);
      problem(await H().post('/check-ins', { text: 'x', projectId: p.id, subscribers: [H().b.regular.id] }), 404, 'm2m_target_not_found');
    });

    it('default sort is -createdAt (newest first); DELETE removes for good (204, then 404)', async () => {
      const fresh = await H().project({ name: 'Check-ins order' });
      const a = await checkIn(H(), fresh.id, { text: 'first' });
      H().clock.advance(1000);
      const b = await checkIn(H(), fresh.id, { text: 'second' });
      expect(ids(ok(await H().get(`/check-ins?projectId=${fresh.id}`)).data)).toEqual([b.id, a.id]);
      expect((await H().del(`/check-ins/${a.id}`)).status).toBe(204);
      problem(await H().get(`/check-ins/${a.id}`), 404, 'resource_not_found');
      // Hard-deleted: there is no restore (a 4xx), and it stays gone.
      const restore = await H().post(`/check-ins/${a.id}/restore`);
      expect(restore.status).toBeGreaterThanOrEqual(400);
      expect(restore.status).toBeLessThan(500);
      problem(await H().get(`/check-ins/${a.id}`), 404, 'resource_not_found');
    });

    it('a purged project takes its check-ins and check-in requests with it (checkIn.removed, checkInRequest.removed; no checkIn.updated first)', async () => {
      const doomed = await H().project({ name: 'Check-ins doomed' });
      const r = await request(H(), doomed.id);
      const c = await checkIn(H(), doomed.id, { checkInRequestId: r.id });
      expect((await H().del(`/projects/${doomed.id}`)).status).toBe(204);
      // Trashed, not purged: still there for the owner.
      expect(ok(await H().get(`/check-ins/${c.id}`)).id).toBe(c.id);
      H().clock.advance(31 * DAY);
      const { events } = await during(H(), () => H().api.jobs.purge());
      problem(await H().get(`/check-ins/${c.id}`), 404, 'resource_not_found');
      problem(await H().get(`/check-in-requests/${r.id}`), 404, 'resource_not_found');
      expect(ofType(events, 'checkIn.removed', c.id)).toHaveLength(1);
      expect(ofType(events, 'checkInRequest.removed', r.id)).toHaveLength(1);
      // The answering check-in goes with the project: it is not first updated to answer no request.
      expect(ofType(events, 'checkIn.updated')).toEqual([]);
    });
  });

  describe(`[${factory.name}] v3 Events: membership relations checkIn (assignees, subscribers) and lifecycle events of checkIn`, () => {
    const H = harnessPerDescribe(factory);
    let p: any;
    beforeAll(async () => {
      p = await H().project({ name: 'Check-in events', members: [H().a.regular.id, H().a.client.id] });
    });

    it('create emits checkIn.created, then one checkIn.assignees.added / checkIn.subscribers.added per linked id (payload parentId, relatedId, relation)', async () => {
      const { result: c, events } = await during(H(), () => checkIn(H(), p.id, { assignees: [H().a.regular.id, H().a.client.id], subscribers: [H().a.owner.id] }));
      expect(sorted(c.assignees)).toEqual(sorted([H().a.regular.id, H().a.client.id]));
      expect(c.subscribers).toEqual([H().a.owner.id]);
      const created = ofType(events, 'checkIn.created', c.id);
      expect(created).toHaveLength(1);
      expect(created[0].projectId).toBe(p.id);
      expect(created[0].payload.checkIn.text).toBe('All good');
      expect(membership(events, 'checkIn.assignees.added')).toEqual(sorted([H().a.regular.id, H().a.client.id]).map((m) => [m, 'assignees', c.id]));
      expect(membership(events, 'checkIn.subscribers.added')).toEqual([[H().a.owner.id, 'subscribers', c.id]]);
    });

    it('POST and DELETE /check-ins/{id}/assignees add and remove ids, each with its event; the answer is the check-in', async () => {
      const c = await checkIn(H(), p.id);
      const add = await during(H(), () => H().post(`/check-ins/${c.id}/assignees`, { ids: [H().a.regular.id, H().a.owner.id] }));
      expect(sorted(ok(add.result).assignees)).toEqual(sorted([H().a.regular.id, H().a.owner.id]));
      expect(membership(add.events, 'checkIn.assignees.added')).toEqual(sorted([H().a.regular.id, H().a.owner.id]).map((m) => [m, 'assignees', c.id]));
      // Adding an id already linked changes nothing and emits nothing.
      const again = await during(H(), () => H().post(`/check-ins/${c.id}/assignees`, { ids: [H().a.regular.id] }));
      ok(again.result);
      expect(again.events).toEqual([]);
      const rm = await during(H(), () => H().del(`/check-ins/${c.id}/assignees`, { body: { ids: [H().a.regular.id] } }));
      expect(ok(rm.result).assignees).toEqual([H().a.owner.id]);
      expect(membership(rm.events, 'checkIn.assignees.removed')).toEqual([[H().a.regular.id, 'assignees', c.id]]);
      expect(ok(await H().get(`/check-ins/${c.id}`)).assignees).toEqual([H().a.owner.id]);
    });

    it('POST and DELETE /check-ins/{id}/subscribers add and remove ids, each with its event', async () => {
      const c = await checkIn(H(), p.id);
      const add = await during(H(), () => H().post(`/check-ins/${c.id}/subscribers`, { ids: [H().a.client.id] }));
      expect(ok(add.result).subscribers).toEqual([H().a.client.id]);
      expect(membership(add.events, 'checkIn.subscribers.added')).toEqual([[H().a.client.id, 'subscribers', c.id]]);
      const rm = await during(H(), () => H().del(`/check-ins/${c.id}/subscribers`, { body: { ids: [H().a.client.id] } }));
      expect(ok(rm.result).subscribers).toEqual([]);
      expect(membership(rm.events, 'checkIn.subscribers.removed')).toEqual([[H().a.client.id, 'subscribers', c.id]]);
    });

    it('PATCH with assignees / subscribers REPLACES the set: removed and added events for the difference, and checkIn.updated', async () => {
      const c = await checkIn(H(), p.id, { assignees: [H().a.regular.id, H().a.client.id], subscribers: [H().a.owner.id] });
      const { result, events } = await during(H(), () => H().patch(`/check-ins/${c.id}`, { assignees: [H().a.client.id, H().a.owner.id], subscribers: [] }));
      const u = ok(result);
      expect(sorted(u.assignees)).toEqual(sorted([H().a.client.id, H().a.owner.id]));
      expect(u.subscribers).toEqual([]);
      expect(membership(events, 'checkIn.assignees.removed')).toEqual([[H().a.regular.id, 'assignees', c.id]]);
      expect(membership(events, 'checkIn.assignees.added')).toEqual([[H().a.owner.id, 'assignees', c.id]]);
      expect(membership(events, 'checkIn.subscribers.removed')).toEqual([[H().a.owner.id, 'subscribers', c.id]]);
      expect(ofType(events, 'checkIn.updated', c.id)).toHaveLength(1);
      // Omitting the key leaves the set untouched.
      expect(sorted(ok(await H().patch(`/check-ins/${c.id}`, { text: 'Only text' })).assignees)).toEqual(sorted([H().a.client.id, H().a.owner.id]));
    });

    it('sub-route errors: unknown member → 404 m2m_target_not_found (nothing linked), empty ids → 400 batch_empty, unknown relation → 400 m2m_relation_unknown', async () => {
      const c = await checkIn(H(), p.id);
      const r = problem(await H().post(`/check-ins/${c.id}/assignees`, { ids: [H().a.regular.id, 'nosuchmember000'] }), 404, 'm2m_target_not_found');
      expect(r.missing).toEqual(['nosuchmember000']);
      expect(ok(await H().get(`/check-ins/${c.id}`)).assignees).toEqual([]);
      problem(await H().post(`/check-ins/${c.id}/subscribers`, { ids: [] }), 400, 'batch_empty');
      problem(await H().post(`/check-ins/${c.id}/watchers`, { ids: [H().a.regular.id] }), 400, 'm2m_relation_unknown');
      problem(await H().post('/check-ins', { text: 'x', projectId: p.id, assignees: ['nosuchmember000'] }), 404, 'm2m_target_not_found');
    });

    it('expand=assignees,subscribers,createdBy,project returns the member and project objects', async () => {
      const c = await checkIn(H(), p.id, { assignees: [H().a.regular.id], subscribers: [H().a.client.id] });
      const g = ok(await H().get(`/check-ins/${c.id}?expand=assignees,subscribers,createdBy,project`));
      expect(g.assignees.map((m: any) => m.id)).toEqual([H().a.regular.id]);
      expect(g.subscribers.map((m: any) => m.id)).toEqual([H().a.client.id]);
      expect(g.createdBy.id).toBe(H().a.owner.id);
      expect(g.project.id).toBe(p.id);
      const l = ok(await H().get(`/check-ins?assigneeId[eq]=${H().a.regular.id}&subscriberId[eq]=${H().a.client.id}`));
      expect(ids(l.data)).toEqual([c.id]);
    });

    it('PATCH emits checkIn.updated with the full resource; DELETE emits checkIn.removed', async () => {
      const c = await checkIn(H(), p.id);
      const up = await during(H(), () => H().patch(`/check-ins/${c.id}`, { health: 'offTrack' }));
      const ev = ofType(up.events, 'checkIn.updated', c.id);
      expect(ev).toHaveLength(1);
      expect(ev[0].payload.checkIn).toMatchObject({ id: c.id, text: 'All good', health: 'offTrack', projectId: p.id });
      const del = await during(H(), () => H().del(`/check-ins/${c.id}`));
      expect(ofType(del.events, 'checkIn.removed', c.id)).toHaveLength(1);
    });
  });

  describe(`[${factory.name}] v3 Check-in request: fields and schedule (question, frequency, startAt, endAt, paused; not shown, docs/not-shown.md)`, () => {
    const H = harnessPerDescribe(factory);
    let p: any;
    beforeAll(async () => {
      p = await H().project({ name: 'Requests P', members: [H().a.regular.id] });
    });

    it('POST /check-in-requests → 201 with frequency weekly, paused false, endAt null, the caller as createdById', async () => {
      const start = H().clock.now() + 2 * DAY;
      const r = ok(await H().post('/check-in-requests', { question: '  What did you ship?  ', projectId: p.id, startAt: iso(start) }), 201);
      expect(r).toMatchObject({ question: 'What did you ship?', projectId: p.id, frequency: 'weekly', startAt: iso(start), endAt: null, paused: false, createdById: H().a.owner.id, assignees: [] });
      expect(ok(await H().get(`/check-in-requests/${r.id}`))).toEqual(r);
    });

    it('question is required, 1-500 characters; startAt is required and an ISO 8601 timestamp; frequency is a closed set', async () => {
      invalid(await H().post('/check-in-requests', { projectId: p.id, startAt: iso(H().clock.now()) }), 'question');
      invalid(await H().post('/check-in-requests', { question: 'q'.repeat(501), projectId: p.id, startAt: iso(H().clock.now()) }), 'question');
      expect((await request(H(), p.id, { question: 'q'.repeat(500) })).question).toHaveLength(500);
      invalid(await H().post('/check-in-requests', { question: 'Q?', projectId: p.id }), 'startAt');
      invalid(await H().post('/check-in-requests', { question: 'Q?', projectId: p.id, startAt: 'tomorrow' }), 'startAt');
      invalid(await H().post('/check-in-requests', { question: 'Q?', projectId: p.id, startAt: iso(H().clock.now()), frequency: 'hourly' }), 'frequency');
      for (const frequency of ['once', 'daily', 'weekdays', 'weekly', 'biweekly', 'monthly']) expect((await request(H(), p.id, { frequency })).frequency).toBe(frequency);
      problem(await H().post('/check-in-requests', { question: 'Q?', startAt: iso(H().clock.now()) }), 400, 'project_not_specified');
      const other = await H().project({ name: 'Requests other' });
      const r = await request(H(), p.id);
      invalid(await H().patch(`/check-in-requests/${r.id}`, { projectId: other.id }), 'projectId', 'immutable');
      expect(ok(await H().get(`/check-in-requests/${r.id}`)).projectId).toBe(p.id);
      const forged = await request(H(), p.id, { createdById: H().a.regular.id });
      expect(forged.createdById).toBe(H().a.owner.id);
    });

    it('endAt must be after startAt (400 before_start, create and update); a one-off (frequency once) has no end (forced null)', async () => {
      const start = H().clock.now() + DAY;
      invalid(await H().post('/check-in-requests', { question: 'Q?', projectId: p.id, startAt: iso(start), endAt: iso(start) }), 'endAt', 'before_start');
      const r = await request(H(), p.id, { startAt: iso(start), endAt: iso(start + 7 * DAY) });
      expect(r.endAt).toBe(iso(start + 7 * DAY));
      invalid(await H().patch(`/check-in-requests/${r.id}`, { startAt: iso(start + 8 * DAY) }), 'endAt', 'before_start');
      invalid(await H().patch(`/check-in-requests/${r.id}`, { endAt: iso(start - 1) }), 'endAt', 'before_start');
      expect(ok(await H().get(`/check-in-requests/${r.id}`)).startAt).toBe(iso(start));
      const once = await request(H(), p.id, { frequency: 'once', startAt: iso(start), endAt: iso(start + DAY) });
      expect(once.endAt).toBeNull();
      const flipped = ok(await H().patch(`/check-in-requests/${r.id}`, { frequency: 'once' }));
      expect(flipped.endAt).toBeNull();
      expect(ok(await H().patch(`/check-in-requests/${r.id}`, { frequency: 'daily', endAt: iso(start + 2 * DAY), paused: true }))).toMatchObject({ frequency: 'daily', endAt: iso(start + 2 * DAY), paused: true });
    });

    it('deleting a request keeps the check-ins that answered it, with checkInRequestId null (checkIn.updated each); expand checkIns lists them', async () => {
      const r = await request(H(), p.id);
      const c1 = await checkIn(H(), p.id, { checkInRequestId: r.id });
      const c2 = await checkIn(H(), p.id, { checkInRequestId: r.id }, H().a.regular.token);
      const g = ok(await H().get(`/check-in-requests/${r.id}?expand=checkIns`));
      expect(sorted(ids(g.checkIns))).toEqual(sorted([c1.id, c2.id]));
      const { result, events } = await during(H(), () => H().del(`/check-in-requests/${r.id}`));
      expect(result.status).toBe(204);
      problem(await H().get(`/check-in-requests/${r.id}`), 404, 'resource_not_found');
      for (const c of [c1, c2]) {
        expect(ok(await H().get(`/check-ins/${c.id}`)).checkInRequestId).toBeNull();
        expect(ofType(events, 'checkIn.updated', c.id)).toHaveLength(1);
      }
      expect(ofType(events, 'checkInRequest.removed', r.id)).toHaveLength(1);
    });

    it('project access and roles: no access → 403 project_access_denied; a guest cannot create (403 permission_denied)', async () => {
      const closed = await H().project({ name: 'Requests closed' });
      problem(await H().post('/check-in-requests', { question: 'Q?', projectId: closed.id, startAt: iso(H().clock.now()) }, { token: H().a.regular.token }), 403, 'project_access_denied');
      const r = await request(H(), closed.id);
      problem(await H().get(`/check-in-requests/${r.id}`, { token: H().a.regular.token }), 403, 'project_access_denied');
      problem(await H().post('/check-in-requests', { question: 'Q?', projectId: p.id, startAt: iso(H().clock.now()) }, { token: H().a.client.token }), 403, 'permission_denied');
    });
  });

  describe(`[${factory.name}] v3 Events: membership relation checkInRequest (assignees) and lifecycle events of checkInRequest`, () => {
    const H = harnessPerDescribe(factory);
    let p: any;
    beforeAll(async () => {
      p = await H().project({ name: 'Request events', members: [H().a.regular.id, H().a.client.id] });
    });

    it('create with assignees: checkInRequest.created and one checkInRequest.assignees.added per id', async () => {
      const { result: r, events } = await during(H(), () => request(H(), p.id, { assignees: [H().a.regular.id, H().a.client.id] }));
      expect(ofType(events, 'checkInRequest.created', r.id)).toHaveLength(1);
      expect(ofType(events, 'checkInRequest.created', r.id)[0].projectId).toBe(p.id);
      expect(membership(events, 'checkInRequest.assignees.added')).toEqual(sorted([H().a.regular.id, H().a.client.id]).map((m) => [m, 'assignees', r.id]));
    });

    it('POST and DELETE /check-in-requests/{id}/assignees, and PATCH replacing the set, each with their events', async () => {
      const r = await request(H(), p.id, { assignees: [H().a.regular.id] });
      const add = await during(H(), () => H().post(`/check-in-requests/${r.id}/assignees`, { ids: [H().a.client.id] }));
      expect(sorted(ok(add.result).assignees)).toEqual(sorted([H().a.regular.id, H().a.client.id]));
      expect(membership(add.events, 'checkInRequest.assignees.added')).toEqual([[H().a.client.id, 'assignees', r.id]]);
      const rm = await during(H(), () => H().del(`/check-in-requests/${r.id}/assignees`, { body: { ids: [H().a.regular.id] } }));
      expect(ok(rm.result).assignees).toEqual([H().a.client.id]);
      expect(membership(rm.events, 'checkInRequest.assignees.removed')).toEqual([[H().a.regular.id, 'assignees', r.id]]);
      const rep = await during(H(), () => H().patch(`/check-in-requests/${r.id}`, { assignees: [H().a.owner.id] }));
      expect(ok(rep.result).assignees).toEqual([H().a.owner.id]);
      expect(membership(rep.events, 'checkInRequest.assignees.removed')).toEqual([[H().a.client.id, 'assignees', r.id]]);
      expect(membership(rep.events, 'checkInRequest.assignees.added')).toEqual([[H().a.owner.id, 'assignees', r.id]]);
      expect(ofType(rep.events, 'checkInRequest.updated', r.id)).toHaveLength(1);
      const g = ok(await H().get(`/check-in-requests/${r.id}?expand=assignees`));
      expect(g.assignees.map((m: any) => m.id)).toEqual([H().a.owner.id]);
      expect(ids(ok(await H().get(`/check-in-requests?assigneeId[eq]=${H().a.owner.id}`)).data)).toEqual([r.id]);
      problem(await H().post(`/check-in-requests/${r.id}/assignees`, { ids: ['nosuchmember000'] }), 404, 'm2m_target_not_found');
      problem(await H().post(`/check-in-requests/${r.id}/subscribers`, { ids: [H().a.owner.id] }), 400, 'm2m_relation_unknown');
    });
  });
}
