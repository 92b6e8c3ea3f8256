import { describe, it, expect, beforeAll } from 'vitest';
import type { Harness, Reply, StoreFactory } from '../../kit';
import { during, harnessPerDescribe, ofType } from '../shared';
import { expectOk as ok, expectProblem as problem, expectInvalid as invalid, sorted } from './helpers';

/**
 * Time entries (spec "Other resources": fields not shown; "Events": lifecycle
 * resource timeEntry; "Authentication" rule 5: viewTimeReports widens
 * time-entry reads to the whole team, while time-entry search stays limited
 * to the caller's own entries), with the decisions of docs/not-shown.md
 * "Time entries": fields, the 24-hour bound, own-only writes, project access,
 * the search route and who receives the events.
 */

const HOUR = 60 * 60 * 1000;
const T0 = Date.parse('2026-02-20T08:00:00.000Z');
const at = (ms: number) => new Date(ms).toISOString();

const ids = (rows: any[]): string[] => rows.map((r) => r.id);

async function listIds(h: Harness, path: string, token?: string): Promise<string[]> {
  return ids(ok(await h.get(path, { token })).data);
}

/** A time entry on `taskId` from T0 + startH hours lasting `hours`, as `token` (default the owner). */
async function entry(h: Harness, taskId: string, body: Record<string, unknown> = {}, token?: string, startH = 0, hours = 1): Promise<any> {
  return ok(await h.post('/time-entries', { taskId, startAt: at(T0 + startH * HOUR), endAt: at(T0 + (startH + hours) * HOUR), ...body }, { token }), 201);
}

/** A member of workspace A with a new custom role holding `permissions`; returns its id, token and role id. */
async function memberWithRole(h: Harness, name: string, permissions: string[]): Promise<{ id: string; token: string; roleId: string }> {
  const role = ok(await h.post('/roles', { name, permissions }), 201);
  const m = await h.api.admin.addMember(h.a.id, { name: `${name} member`, role: name });
  const tok = await h.api.admin.issueToken(m.id, { scopes: ['read', 'write', 'delete'] });
  return { id: m.id, token: tok.token, roleId: role.id };
}

export function timeEntriesSuite(factory: StoreFactory): void {

  describe(`[${factory.name}] v3 Time entries: fields (taskId, memberId, projectId, startAt, endAt, durationSeconds, description, billable)`, () => {
    const H = harnessPerDescribe(factory);
    let p: any;
    let task: any;
    beforeAll(async () => {
      p = await H().project({ name: 'Time P', members: [H().a.regular.id, H().a.client.id] });
      task = await H().task(p.id, { name: 'Timed task' });
    });

    it('POST /time-entries → 201: memberId is the caller, projectId the task\'s, durationSeconds derived, billable false and description null by default; GET answers the same', async () => {
      const e = ok(await H().post('/time-entries', { taskId: task.id, startAt: '2026-02-20T09:00:00+01:00', endAt: at(T0 + 90 * 60 * 1000) }, { token: H().a.regular.token }), 201);
      expect(e.id).toBeTypeOf('string');
      expect(e.taskId).toBe(task.id);
      expect(e.memberId).toBe(H().a.regular.id);
      expect(e.projectId).toBe(p.id);
      expect(e.startAt).toBe(at(T0));
      expect(e.endAt).toBe(at(T0 + 90 * 60 * 1000));
      expect(e.durationSeconds).toBe(5400);
      expect(e.billable).toBe(false);
      expect(e.description).toBeNull();
      expect(e.createdByActorId).toBeTypeOf('string');
      expect(ok(await H().get(`/time-entries/${e.id}`, { token: H().a.regular.token }))).toEqual(e);
    });

    it('server-assigned fields (memberId, projectId, durationSeconds) sent in a body are ignored', async () => {
      const e = await entry(H(), task.id, { memberId: H().a.regular.id, projectId: 'elsewhere1', durationSeconds: 1 }, H().a.client.token);
      expect(e.memberId).toBe(H().a.client.id);
      expect(e.projectId).toBe(p.id);
      expect(e.durationSeconds).toBe(3600);
      const u = ok(await H().patch(`/time-entries/${e.id}`, { memberId: H().a.owner.id, durationSeconds: 5, billable: true }, { token: H().a.client.token }));
      expect(u.memberId).toBe(H().a.client.id);
      expect(u.durationSeconds).toBe(3600);
      expect(u.billable).toBe(true);
    });

    it('taskId, startAt and endAt are required; startAt/endAt must be ISO 8601 instants', async () => {
      invalid(await H().post('/time-entries', { startAt: at(T0), endAt: at(T0 + HOUR) }), 'taskId');
      invalid(await H().post('/time-entries', { taskId: task.id, endAt: at(T0 + HOUR) }), 'startAt');
      invalid(await H().post('/time-entries', { taskId: task.id, startAt: at(T0) }), 'endAt');
      invalid(await H().post('/time-entries', { taskId: task.id, startAt: 'yesterday', endAt: at(T0 + HOUR) }), 'startAt');
      invalid(await H().post('/time-entries', { taskId: task.id, startAt: at(T0), endAt: null }), 'endAt');
      expect(await listIds(H(), `/time-entries?taskId[eq]=${task.id}&startAt[lt]=${at(T0 - HOUR)}`)).toEqual([]);
    });

    it('a taskId that is not a task of this workspace → 404 resource_not_found naming taskId (another workspace\'s too)', async () => {
      expect(problem(await H().post('/time-entries', { taskId: 'nosuchtask0000', startAt: at(T0), endAt: at(T0 + HOUR) }), 404, 'resource_not_found').field).toBe('taskId');
      const pb = await H().project({ name: 'Beta time' }, H().b.owner.token);
      const tb = await H().task(pb.id, {}, H().b.owner.token);
      expect(problem(await H().post('/time-entries', { taskId: tb.id, startAt: at(T0), endAt: at(T0 + HOUR) }), 404, 'resource_not_found').field).toBe('taskId');
    });

    it('taskId is immutable: another value → 400 validation_failed (immutable); the same value is accepted', async () => {
      const other = await H().task(p.id, { name: 'Other' });
      const e = await entry(H(), task.id);
      invalid(await H().patch(`/time-entries/${e.id}`, { taskId: other.id }), 'taskId', 'immutable');
      expect(ok(await H().get(`/time-entries/${e.id}`)).taskId).toBe(task.id);
      expect(ok(await H().patch(`/time-entries/${e.id}`, { taskId: task.id, description: 'same task' })).taskId).toBe(task.id);
    });

    it('endAt must be after startAt (before_start): equal or earlier is refused on create and update, nothing changes', async () => {
      invalid(await H().post('/time-entries', { taskId: task.id, startAt: at(T0), endAt: at(T0) }), 'endAt', 'before_start');
      invalid(await H().post('/time-entries', { taskId: task.id, startAt: at(T0), endAt: at(T0 - 1) }), 'endAt', 'before_start');
      const e = await entry(H(), task.id, {}, undefined, 2, 1);
      invalid(await H().patch(`/time-entries/${e.id}`, { endAt: at(T0 + HOUR) }), 'endAt', 'before_start');
      invalid(await H().patch(`/time-entries/${e.id}`, { startAt: at(T0 + 3 * HOUR) }), 'endAt', 'before_start');
      const got = ok(await H().get(`/time-entries/${e.id}`));
      expect([got.startAt, got.endAt, got.durationSeconds]).toEqual([e.startAt, e.endAt, 3600]);
    });

    it('an entry spans at most 24 hours (too_long): exactly 24 h is accepted, 24 h + 1 ms is refused; PATCH recomputes durationSeconds', async () => {
      const day = ok(await H().post('/time-entries', { taskId: task.id, startAt: at(T0), endAt: at(T0 + 24 * HOUR) }), 201);
      expect(day.durationSeconds).toBe(86400);
      invalid(await H().post('/time-entries', { taskId: task.id, startAt: at(T0), endAt: at(T0 + 24 * HOUR + 1) }), 'endAt', 'too_long');
      invalid(await H().patch(`/time-entries/${day.id}`, { startAt: at(T0 - 1) }), 'endAt', 'too_long');
      const shorter = ok(await H().patch(`/time-entries/${day.id}`, { startAt: at(T0 + 23 * HOUR + 30 * 60 * 1000) }));
      expect(shorter.durationSeconds).toBe(1800);
      const longer = ok(await H().patch(`/time-entries/${day.id}`, { endAt: at(T0 + 24 * HOUR + 1500) }));
      expect(longer.durationSeconds).toBe(1801.5);
    });

    it('description is trimmed, at most 5,000 characters; billable must be a boolean', async () => {
      const e = await entry(H(), task.id, { description: '  Wrote the spec  ', billable: true });
      expect(e.description).toBe('Wrote the spec');
      expect(e.billable).toBe(true);
      expect((await entry(H(), task.id, { description: 'd'.repeat(5000) })).description).toHaveLength(5000);
      invalid(await H().post('/time-entries', { taskId: task.id, startAt: at(T0), endAt: at(T0 + HOUR), description: 'd'.repeat(5001) }), 'description');
      invalid(await H().post('/time-entries', { taskId: task.id, startAt: at(T0), endAt: at(T0 + HOUR), billable: 'yes' }), 'billable');
      invalid(await H().patch(`/time-entries/${e.id}`, { billable: null }), 'billable');
      expect(ok(await H().patch(`/time-entries/${e.id}`, { description: null })).description).toBeNull();
    });

    it('a task moved to another project takes its time entries along (projectId follows, timeEntry.updated)', async () => {
      const q = await H().project({ name: 'Time Q' });
      const t = await H().task(p.id, { name: 'Mover' });
      const e = await entry(H(), t.id);
      const { events } = await during(H(), () => H().patch(`/tasks/${t.id}`, { projectId: q.id }));
      expect(ok(await H().get(`/time-entries/${e.id}`)).projectId).toBe(q.id);
      const ev = ofType(events, 'timeEntry.updated', e.id);
      expect(ev).toHaveLength(1);
      expect(ev[0].payload.timeEntry.projectId).toBe(q.id);
      expect(await listIds(H(), `/time-entries?projectId=${q.id}`)).toEqual([e.id]);
    });

    it('deleting a task deletes its time entries (everyone\'s), each with timeEntry.removed', async () => {
      const t = await H().task(p.id, { name: 'Doomed' });
      const mine = await entry(H(), t.id);
      const theirs = await entry(H(), t.id, {}, H().a.regular.token);
      const { events } = await during(H(), () => H().del(`/tasks/${t.id}`));
      problem(await H().get(`/time-entries/${mine.id}`), 404, 'resource_not_found');
      problem(await H().get(`/time-entries/${theirs.id}`, { token: H().a.regular.token }), 404, 'resource_not_found');
      expect(sorted(ofType(events, 'timeEntry.removed').map((e) => e.aggregateId))).toEqual(sorted([mine.id, theirs.id]));
    });

    it('deleting a task with many entries reads roles and members once, not once per entry (who receives the events is decided once per write)', async () => {
      const reads = async (n: number) => {
        const t = await H().task(p.id, { name: `Busy ${n}` });
        for (let i = 0; i < n; i++) await entry(H(), t.id, {}, i % 2 ? H().a.regular.token : undefined, i, 1);
        const sqls = await H().countQueries(() => H().del(`/tasks/${t.id}`));
        return {
          roles: sqls.filter((q) => /from "roles"/i.test(q)).length,
          members: sqls.filter((q) => /from "members"/i.test(q)).length,
          total: sqls.length,
        };
      };
      const few = await reads(2);
      const many = await reads(12);
      expect(many.roles).toBe(few.roles);
      expect(many.members).toBe(few.members);
      // The audience read them (once).
      expect(many.roles).toBe(1);
      expect(many.members).toBeGreaterThanOrEqual(1);
      // Ten more entries cost no statement per entry.
      expect(many.total - few.total).toBeLessThan(10);
    });

    it('create, update and delete emit timeEntry.created / .updated / .removed carrying the entry', async () => {
      const c = await during(H(), () => entry(H(), task.id, { description: 'evented' }));
      const created = ofType(c.events, 'timeEntry.created', c.result.id);
      expect(created).toHaveLength(1);
      expect(created[0].payload.timeEntry).toEqual(c.result);
      expect(created[0].projectId).toBe(p.id);
      const u = await during(H(), () => H().patch(`/time-entries/${c.result.id}`, { billable: true }));
      expect(ofType(u.events, 'timeEntry.updated', c.result.id)[0].payload.timeEntry.billable).toBe(true);
      const d = await during(H(), () => H().del(`/time-entries/${c.result.id}`));
      expect(d.result.status).toBe(204);
      expect(ofType(d.events, 'timeEntry.removed', c.result.id)).toHaveLength(1);
      problem(await H().get(`/time-entries/${c.result.id}`), 404, 'resource_not_found');
    });

    it('filters taskId, memberId, projectId, startAt, billable, durationSeconds select their rows; default sort is -startAt', async () => {
      const t = await H().task(p.id, { name: 'Filtered' });
      const e1 = await entry(H(), t.id, { billable: true }, H().a.regular.token, 10, 1);
      const e2 = await entry(H(), t.id, {}, H().a.regular.token, 12, 2);
      const e3 = await entry(H(), t.id, {}, undefined, 11, 0.5);
      expect(await listIds(H(), `/time-entries?taskId[eq]=${t.id}`)).toEqual([e2.id, e3.id, e1.id]);
      expect(await listIds(H(), `/time-entries?taskId[eq]=${t.id}&sort=startAt`)).toEqual([e1.id, e3.id, e2.id]);
      expect(sorted(await listIds(H(), `/time-entries?taskId[in]=${t.id}&memberId[eq]=${H().a.regular.id}`))).toEqual(sorted([e1.id, e2.id]));
      expect(await listIds(H(), `/time-entries?taskId[eq]=${t.id}&billable[eq]=true`)).toEqual([e1.id]);
      expect(await listIds(H(), `/time-entries?taskId[eq]=${t.id}&startAt[gte]=${at(T0 + 11 * HOUR)}&startAt[lt]=${at(T0 + 12 * HOUR)}`)).toEqual([e3.id]);
      expect(await listIds(H(), `/time-entries?taskId[eq]=${t.id}&durationSeconds[gt]=3600`)).toEqual([e2.id]);
      expect(await listIds(H(), `/time-entries?projectId[in]=${p.id}&taskId[eq]=${t.id}&endAt[lte]=${at(T0 + 11 * HOUR)}`)).toEqual([e1.id]);
    });

    it('expand member, task and project answers the records', async () => {
      const e = await entry(H(), task.id, {}, H().a.regular.token);
      const x = ok(await H().get(`/time-entries/${e.id}?expand=member,task,project`, { token: H().a.regular.token }));
      expect(x.member.id).toBe(H().a.regular.id);
      expect(x.task.id).toBe(task.id);
      expect(x.project.id).toBe(p.id);
    });

    it('another workspace\'s time entries are unknown ids: 404 on GET, PATCH and DELETE; never listed', async () => {
      const pb = await H().project({ name: 'Beta timed' }, H().b.owner.token);
      const tb = await H().task(pb.id, {}, H().b.owner.token);
      const eb = await entry(H(), tb.id, { description: 'beta' }, H().b.owner.token);
      problem(await H().get(`/time-entries/${eb.id}`), 404, 'resource_not_found');
      problem(await H().patch(`/time-entries/${eb.id}`, { description: 'hijack' }), 404, 'resource_not_found');
      problem(await H().del(`/time-entries/${eb.id}`), 404, 'resource_not_found');
      expect(await listIds(H(), '/time-entries?limit=200')).not.toContain(eb.id);
      expect(ok(await H().get(`/time-entries/${eb.id}`, { token: H().b.owner.token })).description).toBe('beta');
    });
  });

  describe(`[${factory.name}] v3 Authentication rule 5: viewTimeReports widens time-entry reads; search stays own`, () => {
    const H = harnessPerDescribe(factory);
    let p: any;
    let task: any;
    let ownerEntry: any;
    let regularEntry: any;
    let clientEntry: any;
    beforeAll(async () => {
      p = await H().project({ name: 'Reports P', members: [H().a.regular.id, H().a.client.id] });
      task = await H().task(p.id, { name: 'Reported' });
      ownerEntry = await entry(H(), task.id, { description: 'owner planning work' }, undefined, 0, 1);
      regularEntry = await entry(H(), task.id, { description: 'regular planning work' }, H().a.regular.token, 1, 1);
      clientEntry = await entry(H(), task.id, { description: 'client planning work' }, H().a.client.token, 2, 1);
    });

    it('without viewTimeReports (regular, client) a member lists only their own entries, whatever the filters', async () => {
      const h = H();
      expect(await listIds(h, '/time-entries', h.a.regular.token)).toEqual([regularEntry.id]);
      expect(await listIds(h, '/time-entries', h.a.client.token)).toEqual([clientEntry.id]);
      expect(await listIds(h, `/time-entries?memberId[eq]=${h.a.owner.id}`, h.a.regular.token)).toEqual([]);
      expect(await listIds(h, `/time-entries?taskId[eq]=${task.id}&includeTotal=true`, h.a.regular.token)).toEqual([regularEntry.id]);
      expect(ok(await h.get(`/time-entries?projectId=${p.id}&includeTotal=true`, { token: h.a.regular.token })).total).toBe(1);
    });

    it('without viewTimeReports another member\'s entry is 404 on GET, PATCH and DELETE', async () => {
      const h = H();
      for (const token of [h.a.regular.token, h.a.client.token]) {
        problem(await h.get(`/time-entries/${ownerEntry.id}`, { token }), 404, 'resource_not_found');
        problem(await h.patch(`/time-entries/${ownerEntry.id}`, { description: 'mine now' }, { token }), 404, 'resource_not_found');
        problem(await h.del(`/time-entries/${ownerEntry.id}`, { token }), 404, 'resource_not_found');
      }
      expect(ok(await h.get(`/time-entries/${ownerEntry.id}`)).description).toBe('owner planning work');
    });

    it('with viewTimeReports (the owner and manager roles) the whole team\'s entries are listed and readable', async () => {
      const h = H();
      expect(sorted(await listIds(h, `/time-entries?taskId[eq]=${task.id}`))).toEqual(sorted([ownerEntry.id, regularEntry.id, clientEntry.id]));
      expect(await listIds(h, `/time-entries?memberId[eq]=${h.a.regular.id}`)).toEqual([regularEntry.id]);
      expect(ok(await h.get(`/time-entries/${regularEntry.id}`)).memberId).toBe(h.a.regular.id);
      const manager = await h.api.admin.addMember(h.a.id, { name: 'Alpha Manager', role: 'manager' });
      const mt = (await h.api.admin.issueToken(manager.id, { scopes: ['read'] })).token;
      expect(sorted(await listIds(h, `/time-entries?taskId[eq]=${task.id}`, mt))).toEqual(sorted([ownerEntry.id, regularEntry.id, clientEntry.id]));
    });

    it('breadth follows the role, not the token: a custom role gains team-wide reads when viewTimeReports is added, and loses them when it is removed', async () => {
      const h = H();
      const base = ['time-entries:read', 'time-entries:write', 'tasks:read', 'projects:read'];
      const tk = await memberWithRole(h, 'Timekeeper', base);
      ok(await h.patch(`/projects/${p.id}`, { members: [h.a.regular.id, h.a.client.id, tk.id] }));
      const own = await entry(h, task.id, { description: 'timekeeper' }, tk.token, 3, 1);
      expect(await listIds(h, `/time-entries?taskId[eq]=${task.id}`, tk.token)).toEqual([own.id]);
      problem(await h.get(`/time-entries/${regularEntry.id}`, { token: tk.token }), 404, 'resource_not_found');
      ok(await h.patch(`/roles/${tk.roleId}`, { permissions: [...base, 'viewTimeReports'] }));
      expect(sorted(await listIds(h, `/time-entries?taskId[eq]=${task.id}`, tk.token))).toEqual(sorted([ownerEntry.id, regularEntry.id, clientEntry.id, own.id]));
      expect(ok(await h.get(`/time-entries/${regularEntry.id}`, { token: tk.token })).id).toBe(regularEntry.id);
      // A token narrowed to one scope keeps the role's breadth.
      const narrow = (await h.api.admin.issueToken(tk.id, { scopes: ['time-entries:read'] })).token;
      expect(sorted(await listIds(h, `/time-entries?taskId[eq]=${task.id}`, narrow))).toEqual(sorted([ownerEntry.id, regularEntry.id, clientEntry.id, own.id]));
      ok(await h.patch(`/roles/${tk.roleId}`, { permissions: base }));
      expect(await listIds(h, `/time-entries?taskId[eq]=${task.id}`, tk.token)).toEqual([own.id]);
      problem(await h.get(`/time-entries/${regularEntry.id}`, { token: tk.token }), 404, 'resource_not_found');
    });

    it('viewTimeReports widens reads only: another member\'s entry is 403 permission_denied on PATCH and DELETE, and stays unchanged', async () => {
      const h = H();
      problem(await h.patch(`/time-entries/${regularEntry.id}`, { description: 'corrected' }), 403, 'permission_denied');
      problem(await h.del(`/time-entries/${regularEntry.id}`), 403, 'permission_denied');
      const got = ok(await h.get(`/time-entries/${regularEntry.id}`, { token: h.a.regular.token }));
      expect(got.description).toBe('regular planning work');
      expect(got.updatedAt).toBe(regularEntry.updatedAt);
      // The member changes their own.
      const own = await entry(h, task.id, { description: 'short lived' }, h.a.regular.token, 5, 1);
      expect(ok(await h.patch(`/time-entries/${own.id}`, { description: 'edited' }, { token: h.a.regular.token })).description).toBe('edited');
      ok(await h.del(`/time-entries/${own.id}`, { token: h.a.regular.token }), 204);
      // A client (guest) too, on a task of a project it belongs to.
      const guest = await entry(h, task.id, { description: 'guest time' }, h.a.client.token, 5, 1);
      expect(ok(await h.patch(`/time-entries/${guest.id}`, { billable: true }, { token: h.a.client.token })).billable).toBe(true);
      ok(await h.del(`/time-entries/${guest.id}`, { token: h.a.client.token }), 204);
      problem(await h.get(`/time-entries/${guest.id}`), 404, 'resource_not_found');
    });

    it('GET /time-entries/search returns only the caller\'s own entries, even with viewTimeReports', async () => {
      const h = H();
      expect(ids(ok(await h.get('/time-entries/search?q=planning')).data)).toEqual([ownerEntry.id]);
      expect(ids(ok(await h.get('/time-entries/search?q=planning', { token: h.a.regular.token })).data)).toEqual([regularEntry.id]);
      expect(ids(ok(await h.get('/time-entries/search?q=PLANNING&includeTotal=true', { token: h.a.client.token })).data)).toEqual([clientEntry.id]);
      expect(ok(await h.get(`/time-entries/search?q=planning&memberId[eq]=${h.a.regular.id}&includeTotal=true`)).total).toBe(0);
      expect(ids(ok(await h.get(`/time-entries/search?q=${encodeURIComponent('regular planning')}`)).data)).toEqual([]);
    });

    it('search ranks exact, then prefix, then substring matches; takes the list\'s filters; pages are capped at 200', async () => {
      const h = H();
      const t = await h.task(p.id, { name: 'Searched' });
      const sub = await entry(h, t.id, { description: 'weekly review' }, h.a.regular.token, 6, 1);
      const exact = await entry(h, t.id, { description: 'Review' }, h.a.regular.token, 7, 1);
      const prefix = await entry(h, t.id, { description: 'review notes' }, h.a.regular.token, 8, 1);
      const token = h.a.regular.token;
      expect(ids(ok(await h.get('/time-entries/search?q=review', { token })).data)).toEqual([exact.id, prefix.id, sub.id]);
      expect(ids(ok(await h.get(`/time-entries/search?q=review&startAt[gte]=${at(T0 + 7 * HOUR)}`, { token })).data)).toEqual([exact.id, prefix.id]);
      const page1 = ok(await h.get('/time-entries/search?q=review&limit=2', { token }));
      expect(ids(page1.data)).toEqual([exact.id, prefix.id]);
      expect(page1.hasMore).toBe(true);
      const page2 = ok(await h.get(`/time-entries/search?q=review&limit=2&cursor=${encodeURIComponent(page1.nextCursor)}`, { token }));
      expect(ids(page2.data)).toEqual([sub.id]);
      expect(ok(await h.get('/time-entries/search?q=review&limit=500', { token })).limit).toBe(200);
      problem(await h.get('/time-entries/search?q=review&sort=startAt', { token }), 400, 'invalid_query_param');
    });

    it('search pages past long non-ASCII descriptions: the cursor holds no description (short), page 2 answers 200', async () => {
      const h = H();
      const t = await h.task(p.id, { name: 'Long descriptions' });
      const long = (c: string) => `résumé ${c}${'é'.repeat(4_980)}`;
      const made = [];
      for (const [i, c] of ['a', 'b', 'c'].entries()) made.push(await entry(h, t.id, { description: long(c) }, h.a.regular.token, 20 + i, 1));
      const token = h.a.regular.token;
      const page1 = ok(await h.get('/time-entries/search?q=r%C3%A9sum%C3%A9&limit=1', { token }));
      expect(page1.hasMore).toBe(true);
      expect(page1.nextCursor.length).toBeLessThan(400);
      const seen = ids(page1.data);
      let cursor = page1.nextCursor;
      while (cursor) {
        const next = ok(await h.get(`/time-entries/search?q=r%C3%A9sum%C3%A9&limit=1&cursor=${encodeURIComponent(cursor)}`, { token }));
        seen.push(...ids(next.data));
        cursor = next.nextCursor;
      }
      // Ties within a rank still go by description, then id.
      expect(seen).toEqual(ids(made));
    });

    it('search q rules: missing, under 3 or over 200 characters after trimming, URL, HTML, script or e-mail are refused', async () => {
      const h = H();
      problem(await h.get('/time-entries/search'), 400, 'search_query_missing');
      problem(await h.get('/time-entries/search?q=%20ab%20'), 400, 'search_query_too_short');
      problem(await h.get(`/time-entries/search?q=${'x'.repeat(201)}`), 400, 'search_query_too_long');
      expect(problem(await h.get('/time-entries/search?q=https://example.com'), 400, 'search_query_invalid').reason).toBe('url');
      expect(problem(await h.get(`/time-entries/search?q=${encodeURIComponent('<b>hi</b>')}`), 400, 'search_query_invalid').reason).toBe('html');
      expect(problem(await h.get(`/time-entries/search?q=${encodeURIComponent('<script>x</script>')}`), 400, 'search_query_invalid').reason).toBe('script');
      expect(problem(await h.get('/time-entries/search?q=me@example.com'), 400, 'search_query_invalid').reason).toBe('email');
      expect(ok(await h.get(`/time-entries/search?q=%20${'x'.repeat(200)}%20`)).data).toEqual([]);
    });

    it('events of a member\'s entry are queued for webhooks of that member and of viewTimeReports holders, not of other members', async () => {
      const h = H();
      // A member allowed to register webhooks but without viewTimeReports.
      const integ = await memberWithRole(h, 'Integrator', ['webhooks:read', 'webhooks:write', 'manageWebhooks', 'time-entries:read', 'time-entries:write', 'tasks:read']);
      const ownerHook = ok(await h.post('/webhooks', { name: 'owner hook', url: 'https://hooks.invalid/owner', events: ['timeEntry.*'] }), 201);
      const integHook = ok(await h.post('/webhooks', { name: 'integ hook', url: 'https://hooks.invalid/integ', events: ['timeEntry.*'] }, { token: integ.token }), 201);
      const queued = async (hookId: string, eventId: string) => {
        const jobs = await h.store.db.selectFrom('webhook_jobs').selectAll().where('webhook_id', '=', hookId).execute();
        return jobs.some((j: any) => j.event_id === eventId);
      };
      const theirs = await during(h, () => entry(h, task.id, { description: 'not for integ' }, h.a.regular.token, 9, 1));
      const ev = ofType(theirs.events, 'timeEntry.created', theirs.result.id);
      expect(ev).toHaveLength(1);
      expect(await queued(ownerHook.id, ev[0].eventId)).toBe(true);
      expect(await queued(integHook.id, ev[0].eventId)).toBe(false);
      ok(await h.patch(`/projects/${p.id}`, { members: [h.a.regular.id, h.a.client.id, integ.id] }));
      const mine = await during(h, () => entry(h, task.id, { description: 'integ own' }, integ.token, 9, 1));
      const ev2 = ofType(mine.events, 'timeEntry.created', mine.result.id);
      expect(await queued(integHook.id, ev2[0].eventId)).toBe(true);
      expect(await queued(ownerHook.id, ev2[0].eventId)).toBe(true);
    });
  });

  describe(`[${factory.name}] v3 Time entries: a task deleted while an entry is being created (Postgres: concurrent transactions)`, () => {
    const H = harnessPerDescribe(factory);
    const postgres = factory.name === 'postgres';
    /** Run one raw statement (the suite has no SQL builder of its own). */
    const raw = (db: any, text: string) => db.executeQuery({ sql: text, parameters: [], query: { kind: 'RawNode', sqlFragments: [text], parameters: [] }, queryId: { queryId: 'race' } });
    /** Statements of this database waiting for a lock whose text matches `pattern`. */
    const waiting = async (h: Harness, pattern: string) =>
      (await h.store.db.selectFrom('pg_catalog.pg_stat_activity' as any).select('query' as any).where('wait_event_type' as any, '=', 'Lock').where('query' as any, 'like', pattern).execute()).length > 0;
    /** A second connection holding `table` in SHARE mode (writes to it wait) until `release`. */
    const hold = async (h: Harness, table: string) => {
      let release!: () => void;
      const released = new Promise<void>((r) => (release = r));
      let holding!: () => void;
      const held = new Promise<void>((r) => (holding = r));
      const holder = h.store.db.transaction().execute(async (trx: any) => {
        await raw(trx, `lock table ${table} in share mode`);
        holding();
        await released;
      });
      await held;
      return { release, holder };
    };
    const until = async (cond: () => Promise<boolean>, what: string) => {
      for (let i = 0; i < 500; i++) {
        if (await cond()) return;
        await new Promise((r) => setTimeout(r, 10));
      }
      throw new Error(`timed out waiting for ${what}`);
    };

    // SQLite serialises writers (BEGIN IMMEDIATE): the create and the delete cannot interleave there, so only Postgres runs this.
    it.skipIf(!postgres)('the create reads the task key-share locked: the delete waits for it, then takes the new entry with the task (no entry left pointing at a deleted task)', async () => {
      const h = H();
      const p = await h.project({ name: 'Race P' });
      const t = await h.task(p.id, { name: 'Raced task' });
      // A second connection holds time_entries in SHARE mode: the create runs up to its INSERT (the task already read) and waits there.
      const { release, holder } = await hold(h, 'time_entries');
      let creating: Promise<Reply> | undefined;
      let deleting: Promise<Reply> | undefined;
      try {
        creating = h.post('/time-entries', { taskId: t.id, startAt: at(T0), endAt: at(T0 + HOUR) });
        await until(() => waiting(h, '%insert into "time_entries"%'), 'the create to wait at its insert');
        // Now the delete: it must wait for the create (the task is key-share locked), not finish before it.
        let deleted = false;
        deleting = h.del(`/tasks/${t.id}`).then((r) => {
          deleted = true;
          return r;
        });
        await until(async () => deleted || (await waiting(h, '%from "tasks"%for update%')), 'the delete to wait or finish');
        expect(deleted).toBe(false);
      } finally {
        release();
        await holder;
      }
      const made = ok(await creating!, 201);
      expect((await deleting!).status).toBe(204);
      // The entry went with its task.
      problem(await h.get(`/time-entries/${made.id}`), 404, 'resource_not_found');
      const left = await h.store.db.selectFrom('time_entries').select('id').where('task_id', '=', t.id).execute();
      expect(left).toEqual([]);
    });

    it.skipIf(!postgres)('the same for relation targets: a goal linked to a list while it is deleted leaves no link behind (the delete waits on the key-share lock)', async () => {
      const h = H();
      const p = await h.project({ name: 'Race goals P' });
      const l = ok(await h.post('/lists', { name: 'Raced list', projectId: p.id }), 201);
      const g = ok(await h.post('/goals', { name: 'Raced goal' }), 201);
      const { release, holder } = await hold(h, 'links');
      let linking: Promise<Reply> | undefined;
      let deleting: Promise<Reply> | undefined;
      try {
        linking = h.post(`/lists/${l.id}/goals`, { ids: [g.id] });
        await until(() => waiting(h, '%insert into "links"%'), 'the link to wait at its insert');
        deleting = h.del(`/goals/${g.id}`);
        // The delete waits for the linking write on the goal row itself (not later, at dropping links).
        await until(() => waiting(h, '%from "goals"%for update%'), 'the delete to wait on the goal row');
        expect(await waiting(h, '%delete from "links"%')).toBe(false);
      } finally {
        release();
        await holder;
      }
      expect(ok(await linking!).goals).toEqual([g.id]);
      expect((await deleting!).status).toBe(204);
      expect(ok(await h.get(`/lists/${l.id}`)).goals).toEqual([]);
    });
  });

  describe(`[${factory.name}] v3 Time entries: project access (entries of projects the caller cannot open)`, () => {
    const H = harnessPerDescribe(factory);

    it('a member removed from a limited project no longer lists, reads, searches or changes their entries in it (403 project_access_denied on direct access)', async () => {
      const h = H();
      const p = await h.project({ name: 'Closing', accessType: 'limited', members: [h.a.regular.id] });
      const t = await h.task(p.id);
      const e = await entry(h, t.id, { description: 'closed project work' }, h.a.regular.token);
      expect(await listIds(h, '/time-entries', h.a.regular.token)).toEqual([e.id]);
      ok(await h.patch(`/projects/${p.id}`, { members: [] }));
      expect(await listIds(h, '/time-entries', h.a.regular.token)).toEqual([]);
      expect(ok(await h.get('/time-entries/search?q=closed', { token: h.a.regular.token })).data).toEqual([]);
      problem(await h.get(`/time-entries/${e.id}`, { token: h.a.regular.token }), 403, 'project_access_denied');
      problem(await h.patch(`/time-entries/${e.id}`, { description: 'x' }, { token: h.a.regular.token }), 403, 'project_access_denied');
      problem(await h.get(`/time-entries?projectId=${p.id}`, { token: h.a.regular.token }), 403, 'project_access_denied');
      problem(await h.get(`/time-entries/search?q=closed&projectId=${p.id}`, { token: h.a.regular.token }), 403, 'project_access_denied');
      problem(await h.post('/time-entries', { taskId: t.id, startAt: at(T0), endAt: at(T0 + HOUR) }, { token: h.a.regular.token }), 403, 'project_access_denied');
      // The owner (viewAllProjects, viewTimeReports) still sees it.
      expect(ok(await h.get(`/time-entries/${e.id}`)).id).toBe(e.id);
    });

    it('viewTimeReports without viewAllProjects: team entries only in projects the caller opens', async () => {
      const h = H();
      const role = ok(await h.post('/roles', { name: 'Reporter', permissions: ['time-entries:read', 'tasks:read', 'projects:read', 'viewTimeReports'] }), 201);
      const m = await h.api.admin.addMember(h.a.id, { name: 'Reporter', role: role.name });
      const tok = (await h.api.admin.issueToken(m.id, { scopes: ['read'] })).token;
      const open = await h.project({ name: 'Open to reporter', accessType: 'limited', members: [h.a.regular.id, m.id] });
      const shut = await h.project({ name: 'Shut to reporter', accessType: 'limited', members: [h.a.regular.id] });
      const eo = await entry(h, (await h.task(open.id)).id, {}, h.a.regular.token);
      const es = await entry(h, (await h.task(shut.id)).id, {}, h.a.regular.token);
      expect(await listIds(h, '/time-entries?limit=200', tok)).toEqual([eo.id]);
      expect(ok(await h.get(`/time-entries/${eo.id}`, { token: tok })).id).toBe(eo.id);
      problem(await h.get(`/time-entries/${es.id}`, { token: tok }), 403, 'project_access_denied');
    });

    it('time-entry events reach a viewTimeReports holder\'s webhook only for entries of projects that member opens (docs/not-shown.md "Who receives time-entry events")', async () => {
      const h = H();
      const role = ok(await h.post('/roles', { name: 'Hooked reporter', permissions: ['time-entries:read', 'tasks:read', 'projects:read', 'viewTimeReports', 'webhooks:read', 'webhooks:write', 'manageWebhooks'] }), 201);
      const m = await h.api.admin.addMember(h.a.id, { name: 'Hooked reporter', role: role.name });
      const tok = (await h.api.admin.issueToken(m.id, { scopes: ['read', 'write', 'delete'] })).token;
      const hook = ok(await h.post('/webhooks', { name: 'reporter hook', url: 'https://hooks.invalid/reporter', events: ['timeEntry.*'] }, { token: tok }), 201);
      const ownerHook = ok(await h.post('/webhooks', { name: 'owner hook', url: 'https://hooks.invalid/owner-all', events: ['timeEntry.*'] }), 201);
      const queued = async (hookId: string, eventId: string) =>
        (await h.store.db.selectFrom('webhook_jobs').select(['event_id']).where('webhook_id', '=', hookId).execute()).some((j: any) => j.event_id === eventId);
      const open = await h.project({ name: 'Hooked open', accessType: 'limited', members: [h.a.regular.id, m.id] });
      const shut = await h.project({ name: 'Hooked shut', accessType: 'limited', members: [h.a.regular.id] });
      const wide = await h.project({ name: 'Hooked wide', accessType: 'workspace' });
      const created = async (projectId: string) => {
        const t = await h.task(projectId);
        const r = await during(h, () => entry(h, t.id, {}, h.a.regular.token));
        return { task: t, entry: r.result, event: ofType(r.events, 'timeEntry.created', r.result.id)[0] };
      };
      const o = await created(open.id);
      const s = await created(shut.id);
      const w = await created(wide.id);
      expect(await queued(hook.id, o.event.eventId)).toBe(true);
      expect(await queued(hook.id, s.event.eventId)).toBe(false);
      expect(await queued(hook.id, w.event.eventId)).toBe(true);
      // The owner opens every project (viewAllProjects).
      for (const x of [o, s, w]) expect(await queued(ownerHook.id, x.event.eventId)).toBe(true);
      // Removed from the project: its entries' later events no longer reach the member's webhook.
      ok(await h.patch(`/projects/${open.id}`, { members: [h.a.regular.id] }));
      const upd = await during(h, () => h.patch(`/time-entries/${o.entry.id}`, { description: 'after removal' }, { token: h.a.regular.token }));
      const ev = ofType(upd.events, 'timeEntry.updated', o.entry.id);
      expect(ev).toHaveLength(1);
      expect(await queued(hook.id, ev[0].eventId)).toBe(false);
      expect(await queued(ownerHook.id, ev[0].eventId)).toBe(true);
    });

    it('the client role (a guest) logs time only on tasks of projects it belongs to', async () => {
      const h = H();
      const member = await h.project({ name: 'Guest in', members: [h.a.client.id] });
      const notMember = await h.project({ name: 'Guest out', accessType: 'workspace' });
      ok(await h.post('/time-entries', { taskId: (await h.task(member.id)).id, startAt: at(T0), endAt: at(T0 + HOUR) }, { token: h.a.client.token }), 201);
      problem(await h.post('/time-entries', { taskId: (await h.task(notMember.id)).id, startAt: at(T0), endAt: at(T0 + HOUR) }, { token: h.a.client.token }), 403, 'project_access_denied');
    });
  });
}
