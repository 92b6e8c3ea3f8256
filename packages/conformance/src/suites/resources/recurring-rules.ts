import { describe, it, expect, beforeAll } from 'vitest';
import { createPmapi } from '@pmapi/core';
import type { Harness, StoreFactory } from '../../kit';
import { during, harnessPerDescribe, ofType } from '../shared';
import { UUID, expectOk as ok, expectProblem as problem, expectInvalid as invalid } from './helpers';

/**
 * Recurring rules (spec "Other resources": recurring rules, fields not shown;
 * "Conventions": actor type recurringTask; "Task"/"List": recurringRuleId,
 * the recurringRuleId and ruleId filters, the recurringRule expand), with
 * the decisions of docs/not-shown.md "Recurring rules", and the job
 * `api.jobs.recurring()` that creates the recurring tasks on the injected clock.
 */

const ids = (rows: any[]): string[] => rows.map((r) => r.id);
const ms = (iso: string) => Date.parse(iso);

async function rule(h: Harness, body: Record<string, unknown>, token?: string): Promise<any> {
  return ok(await h.post('/recurring-rules', { name: 'Water the plants', frequency: 'daily', ...body }, { token }), 201);
}

/** The tasks a rule created (oldest first). */
async function tasksOf(h: Harness, ruleId: string, token?: string): Promise<any[]> {
  return ok(await h.get(`/tasks?recurringRuleId[eq]=${ruleId}&sort=createdAt&limit=200`, { token })).data;
}

async function read(h: Harness, ruleId: string, token?: string): Promise<any> {
  return ok(await h.get(`/recurring-rules/${ruleId}`, { token }));
}

/** Move the clock to `iso` (never backwards) and run the job once. */
async function runAt(h: Harness, iso: string) {
  const t = ms(iso);
  if (t > h.clock.now()) h.clock.set(t);
  return h.api.jobs.recurring();
}

/** Fire a rule `n` times, each time at its nextRunAt; returns the instants it fired at. */
async function fireTimes(h: Harness, ruleId: string, n: number): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const r = await read(h, ruleId);
    expect(r.nextRunAt, `occurrence ${i + 1}`).toBeTypeOf('string');
    await runAt(h, r.nextRunAt);
    const after = await read(h, ruleId);
    expect(after.lastRunAt).toBe(r.nextRunAt);
    out.push(after.lastRunAt);
  }
  return out;
}

export function recurringRulesSuite(factory: StoreFactory): void {

  describe(`[${factory.name}] v3 Recurring rules: fields, defaults and validation (Other resources, Conventions; docs/not-shown.md)`, () => {
    const H = harnessPerDescribe(factory);
    let p: any;
    let q: any;
    beforeAll(async () => {
      p = await H().project({ name: 'Recurring P' });
      q = await H().project({ name: 'Recurring Q' });
    });

    it('POST /recurring-rules → 201 with the defaults: interval 1, 09:00, startDate today (workspace timezone), active, nextRunAt computed; GET answers the same', async () => {
      // The harness clock: 2026-03-01T09:00:00Z, a Sunday; the workspace timezone is UTC.
      H().clock.set(ms('2026-03-01T10:00:00.000Z'));
      const r = await rule(H(), { name: '  Daily stand-up notes ', projectId: p.id });
      expect(r).toMatchObject({
        name: 'Daily stand-up notes', description: null, projectId: p.id, listId: null, statusId: null,
        frequency: 'daily', interval: 1, daysOfWeek: null, dayOfMonth: null, timeOfDay: '09:00', startDate: '2026-03-01',
        endDate: null, count: null, active: true, occurrences: 0, lastRunAt: null,
        // Today's 09:00 has passed: the first occurrence is tomorrow's.
        nextRunAt: '2026-03-02T09:00:00.000Z',
        createdByActorType: 'human',
      });
      expect(r.actorId).toMatch(UUID);
      expect(ok(await H().get(`/recurring-rules/${r.id}`))).toEqual(r);
      // Its actor: type recurringTask (spec "Actor").
      const actor = ok(await H().get(`/actors/${r.actorId}`));
      expect(actor).toMatchObject({ id: r.actorId, type: 'recurringTask', memberId: null, agentId: null, tombstonedAt: null });
      expect(actor.displayName).toContain('Daily stand-up notes');
      // An occurrence later today is today's.
      const later = await rule(H(), { projectId: p.id, timeOfDay: '17:45' });
      expect(later.nextRunAt).toBe('2026-03-01T17:45:00.000Z');
    });

    it('weekly rules default daysOfWeek to startDate\'s weekday; given days are deduplicated and kept Monday-first', async () => {
      const w = await rule(H(), { projectId: p.id, frequency: 'weekly', startDate: '2026-03-04' });
      expect(w.daysOfWeek).toEqual(['wed']);
      expect(w.dayOfMonth).toBe(null);
      expect(w.nextRunAt).toBe('2026-03-04T09:00:00.000Z');
      const d = await rule(H(), { projectId: p.id, frequency: 'weekly', daysOfWeek: ['sun', 'fri', 'mon', 'fri'], startDate: '2026-03-03' });
      expect(d.daysOfWeek).toEqual(['mon', 'fri', 'sun']);
      expect(d.nextRunAt).toBe('2026-03-06T09:00:00.000Z');
    });

    it('monthly rules default dayOfMonth to startDate\'s day; yearly and daily rules carry neither daysOfWeek nor dayOfMonth', async () => {
      const m = await rule(H(), { projectId: p.id, frequency: 'monthly', startDate: '2026-03-20' });
      expect(m.dayOfMonth).toBe(20);
      expect(m.daysOfWeek).toBe(null);
      expect(m.nextRunAt).toBe('2026-03-20T09:00:00.000Z');
      const y = await rule(H(), { projectId: p.id, frequency: 'yearly', startDate: '2026-02-10' });
      expect(y).toMatchObject({ dayOfMonth: null, daysOfWeek: null, nextRunAt: '2027-02-10T09:00:00.000Z' });
    });

    it('read-only fields sent in a body are ignored (nextRunAt, lastRunAt, occurrences, actorId); projectId is immutable', async () => {
      const r = ok(await H().post('/recurring-rules', {
        name: 'RO', projectId: p.id, frequency: 'daily', nextRunAt: '2030-01-01T00:00:00.000Z', lastRunAt: '2020-01-01T00:00:00.000Z',
        occurrences: 7, actorId: '00000000-0000-4000-8000-000000000000',
      }), 201);
      expect(r.nextRunAt).toBe('2026-03-02T09:00:00.000Z');
      expect(r.lastRunAt).toBe(null);
      expect(r.occurrences).toBe(0);
      expect(r.actorId).not.toBe('00000000-0000-4000-8000-000000000000');
      invalid(await H().patch(`/recurring-rules/${r.id}`, { projectId: q.id }), 'projectId', 'immutable');
      expect((await read(H(), r.id)).projectId).toBe(p.id);
      const same = ok(await H().patch(`/recurring-rules/${r.id}`, { projectId: p.id, occurrences: 9, name: 'RO 2' }));
      expect(same).toMatchObject({ projectId: p.id, occurrences: 0, name: 'RO 2' });
    });

    it('name: required, trimmed, 1-1024 characters (the task name limit); promotional content refused', async () => {
      invalid(await H().post('/recurring-rules', { projectId: p.id, frequency: 'daily' }), 'name', 'required');
      invalid(await H().post('/recurring-rules', { name: '   ', projectId: p.id, frequency: 'daily' }), 'name');
      invalid(await H().post('/recurring-rules', { name: 'x'.repeat(1025), projectId: p.id, frequency: 'daily' }), 'name');
      expect((await rule(H(), { name: 'y'.repeat(1024), projectId: p.id })).name).toHaveLength(1024);
      invalid(await H().post('/recurring-rules', { name: 'Buy now cheap casino', projectId: p.id, frequency: 'daily' }), 'name', 'promotional_content');
    });

    it('projectId: required (400 project_not_specified); another workspace\'s project is 404 resource_not_found', async () => {
      problem(await H().post('/recurring-rules', { name: 'No project', frequency: 'daily' }), 400, 'project_not_specified');
      const pb = await H().project({ name: 'Beta recurring' }, H().b.owner.token);
      expect(problem(await H().post('/recurring-rules', { name: 'Cross', frequency: 'daily', projectId: pb.id }), 404, 'resource_not_found').field).toBe('projectId');
    });

    it('frequency is required and one of daily, weekly, monthly, yearly; interval is an integer 1-99', async () => {
      invalid(await H().post('/recurring-rules', { name: 'F', projectId: p.id }), 'frequency', 'required');
      invalid(await H().post('/recurring-rules', { name: 'F', projectId: p.id, frequency: 'hourly' }), 'frequency');
      invalid(await H().post('/recurring-rules', { name: 'F', projectId: p.id, frequency: null }), 'frequency');
      for (const interval of [0, 100, 1.5, '2', null]) invalid(await H().post('/recurring-rules', { name: 'F', projectId: p.id, frequency: 'daily', interval }), 'interval');
      expect((await rule(H(), { projectId: p.id, interval: 99 })).interval).toBe(99);
    });

    it('daysOfWeek: weekly only (not_applicable otherwise), 1-7 of mon…sun; dayOfMonth: monthly only, 1-31', async () => {
      invalid(await H().post('/recurring-rules', { name: 'D', projectId: p.id, frequency: 'daily', daysOfWeek: ['mon'] }), 'daysOfWeek', 'not_applicable');
      invalid(await H().post('/recurring-rules', { name: 'D', projectId: p.id, frequency: 'weekly', daysOfWeek: [] }), 'daysOfWeek');
      invalid(await H().post('/recurring-rules', { name: 'D', projectId: p.id, frequency: 'weekly', daysOfWeek: ['monday'] }), 'daysOfWeek.0');
      invalid(await H().post('/recurring-rules', { name: 'D', projectId: p.id, frequency: 'weekly', daysOfWeek: 'mon' }), 'daysOfWeek');
      invalid(await H().post('/recurring-rules', { name: 'D', projectId: p.id, frequency: 'weekly', dayOfMonth: 3 }), 'dayOfMonth', 'not_applicable');
      invalid(await H().post('/recurring-rules', { name: 'D', projectId: p.id, frequency: 'yearly', dayOfMonth: 3 }), 'dayOfMonth', 'not_applicable');
      for (const dayOfMonth of [0, 32, 2.5]) invalid(await H().post('/recurring-rules', { name: 'D', projectId: p.id, frequency: 'monthly', dayOfMonth }), 'dayOfMonth');
      // null is "not set" for any frequency.
      expect((await rule(H(), { projectId: p.id, frequency: 'daily', daysOfWeek: null, dayOfMonth: null })).frequency).toBe('daily');
    });

    it('timeOfDay is HH:MM (24-hour); startDate and endDate are calendar dates YYYY-MM-DD; endDate not before startDate', async () => {
      for (const timeOfDay of ['24:00', '9:00', '09:60', '09:00:00', 900]) invalid(await H().post('/recurring-rules', { name: 'T', projectId: p.id, frequency: 'daily', timeOfDay }), 'timeOfDay');
      for (const startDate of ['2026-02-30', '2026-3-01', '01/03/2026', '1969-12-31', '2026-03-01T00:00:00Z', null]) {
        invalid(await H().post('/recurring-rules', { name: 'T', projectId: p.id, frequency: 'daily', startDate }), 'startDate');
      }
      expect(codeOf(await H().post('/recurring-rules', { name: 'T', projectId: p.id, frequency: 'daily', startDate: '2026-02-29' }))).toBe('invalid_date');
      invalid(await H().post('/recurring-rules', { name: 'T', projectId: p.id, frequency: 'daily', startDate: '2026-03-10', endDate: '2026-03-09' }), 'endDate', 'before_start');
      const r = await rule(H(), { projectId: p.id, startDate: '2026-03-10', endDate: '2026-03-10', timeOfDay: '23:59' });
      expect(r).toMatchObject({ startDate: '2026-03-10', endDate: '2026-03-10', timeOfDay: '23:59', nextRunAt: '2026-03-10T23:59:00.000Z' });
      invalid(await H().patch(`/recurring-rules/${r.id}`, { startDate: '2026-03-11' }), 'endDate', 'before_start');
      expect((await read(H(), r.id)).startDate).toBe('2026-03-10');
    });

    it('description: at most 100,000 characters (every task and event made from it stays under the 1 MiB webhook payload cap)', async () => {
      expect((await rule(H(), { projectId: p.id, description: 'd'.repeat(100_000) })).description).toHaveLength(100_000);
      invalid(await H().post('/recurring-rules', { name: 'D', projectId: p.id, frequency: 'daily', description: 'd'.repeat(100_001) }), 'description');
      const r = await rule(H(), { projectId: p.id });
      invalid(await H().patch(`/recurring-rules/${r.id}`, { description: 'd'.repeat(100_001) }), 'description');
    });

    it('startDate and endDate are at most 9998-12-31 (invalid_date): every nextRunAt stays an ISO 8601 timestamp', async () => {
      invalid(await H().post('/recurring-rules', { name: 'Y', projectId: p.id, frequency: 'daily', startDate: '9999-01-01' }), 'startDate', 'invalid_date');
      invalid(await H().post('/recurring-rules', { name: 'Y', projectId: p.id, frequency: 'daily', endDate: '9999-01-01' }), 'endDate', 'invalid_date');
      expect((await rule(H(), { projectId: p.id, startDate: '9998-12-31' })).nextRunAt).toBe('9998-12-31T09:00:00.000Z');
    });

    it('count is 1-1000; a rule ends on endDate or after count occurrences, not both (exclusive)', async () => {
      for (const count of [0, 1001, 1.5]) invalid(await H().post('/recurring-rules', { name: 'C', projectId: p.id, frequency: 'daily', count }), 'count');
      invalid(await H().post('/recurring-rules', { name: 'C', projectId: p.id, frequency: 'daily', count: 3, endDate: '2026-12-31' }), 'count', 'exclusive');
      const r = await rule(H(), { projectId: p.id, count: 1000 });
      invalid(await H().patch(`/recurring-rules/${r.id}`, { endDate: '2026-12-31' }), 'endDate', 'exclusive');
      const swapped = ok(await H().patch(`/recurring-rules/${r.id}`, { endDate: '2026-12-31', count: null }));
      expect(swapped).toMatchObject({ endDate: '2026-12-31', count: null });
    });

    it('listId and statusId must belong to the rule\'s project (wrong_project); unknown ids are 404 naming the field', async () => {
      const listQ = ok(await H().post('/lists', { name: 'Q list', projectId: q.id }), 201);
      const statusQ = ok(await H().get(`/projects/${q.id}`)).defaultStatusId;
      invalid(await H().post('/recurring-rules', { name: 'L', projectId: p.id, frequency: 'daily', listId: listQ.id }), 'listId', 'wrong_project');
      invalid(await H().post('/recurring-rules', { name: 'L', projectId: p.id, frequency: 'daily', statusId: statusQ }), 'statusId', 'wrong_project');
      expect(problem(await H().post('/recurring-rules', { name: 'L', projectId: p.id, frequency: 'daily', listId: 'nosuchlist000000' }), 404, 'resource_not_found').field).toBe('listId');
      const r = await rule(H(), { projectId: q.id, listId: listQ.id, statusId: statusQ });
      expect(r).toMatchObject({ listId: listQ.id, statusId: statusQ });
      const listP = ok(await H().post('/lists', { name: 'P list', projectId: p.id }), 201);
      invalid(await H().patch(`/recurring-rules/${r.id}`, { listId: listP.id }), 'listId', 'wrong_project');
      expect(ok(await H().patch(`/recurring-rules/${r.id}`, { listId: null })).listId).toBe(null);
    });

    it('a frequency change clears what no longer applies and fills the new defaults; nextRunAt follows', async () => {
      const r = await rule(H(), { projectId: p.id, frequency: 'weekly', daysOfWeek: ['tue', 'thu'], startDate: '2026-03-02' });
      expect(r.nextRunAt).toBe('2026-03-03T09:00:00.000Z');
      const m = ok(await H().patch(`/recurring-rules/${r.id}`, { frequency: 'monthly' }));
      expect(m).toMatchObject({ daysOfWeek: null, dayOfMonth: 2, nextRunAt: '2026-03-02T09:00:00.000Z' });
      const d = ok(await H().patch(`/recurring-rules/${r.id}`, { frequency: 'daily', timeOfDay: '08:00' }));
      expect(d).toMatchObject({ daysOfWeek: null, dayOfMonth: null, nextRunAt: '2026-03-02T08:00:00.000Z' });
      // A name-only change leaves the schedule alone.
      expect(ok(await H().patch(`/recurring-rules/${r.id}`, { name: 'Renamed' })).nextRunAt).toBe('2026-03-02T08:00:00.000Z');
      problem(await H().patch(`/recurring-rules/${r.id}`, {}), 400, 'empty_update');
    });

    it('another workspace\'s rules are unknown ids: 404 on GET, PATCH, DELETE; never listed', async () => {
      const pb = await H().project({ name: 'Beta rules' }, H().b.owner.token);
      const rb = await rule(H(), { projectId: pb.id }, H().b.owner.token);
      problem(await H().get(`/recurring-rules/${rb.id}`), 404, 'resource_not_found');
      problem(await H().patch(`/recurring-rules/${rb.id}`, { name: 'Hijack' }), 404, 'resource_not_found');
      problem(await H().del(`/recurring-rules/${rb.id}`), 404, 'resource_not_found');
      expect(ids(ok(await H().get('/recurring-rules?limit=200')).data)).not.toContain(rb.id);
      expect((await read(H(), rb.id, H().b.owner.token)).name).toBe('Water the plants');
    });
  });

  describe(`[${factory.name}] v3 Recurring rules: project access and roles (Authentication rules 4-5; project_access_denied)`, () => {
    const H = harnessPerDescribe(factory);
    it('a rule of a project the caller cannot open is never listed and reading it is 403 project_access_denied; a client reads but does not write', async () => {
      const closed = await H().project({ name: 'Owner only', accessType: 'limited' });
      const open = await H().project({ name: 'Everyone', accessType: 'limited', members: [H().a.owner.id, H().a.regular.id, H().a.client.id] });
      const hidden = await rule(H(), { projectId: closed.id });
      const shared = await rule(H(), { projectId: open.id });
      const reg = H().a.regular.token;
      const listed = ids(ok(await H().get('/recurring-rules?limit=200', { token: reg })).data);
      expect(listed).toContain(shared.id);
      expect(listed).not.toContain(hidden.id);
      problem(await H().get(`/recurring-rules/${hidden.id}`, { token: reg }), 403, 'project_access_denied');
      problem(await H().patch(`/recurring-rules/${hidden.id}`, { name: 'x' }, { token: reg }), 403, 'project_access_denied');
      problem(await H().post('/recurring-rules', { name: 'x', frequency: 'daily', projectId: closed.id }, { token: reg }), 403, 'project_access_denied');
      // A task may not point at a rule the caller cannot open.
      const t = await H().task(open.id, {}, reg);
      problem(await H().patch(`/tasks/${t.id}`, { recurringRuleId: hidden.id }, { token: reg }), 403, 'project_access_denied');
      // Regular members manage rules of projects they open.
      ok(await H().patch(`/recurring-rules/${shared.id}`, { name: 'by regular' }, { token: reg }));
      const mine = await rule(H(), { projectId: open.id }, reg);
      ok(await H().del(`/recurring-rules/${mine.id}`, { token: reg }), 204);
      // Clients (guests) read them only.
      const cli = H().a.client.token;
      expect((await read(H(), shared.id, cli)).name).toBe('by regular');
      problem(await H().post('/recurring-rules', { name: 'x', frequency: 'daily', projectId: open.id }, { token: cli }), 403, 'permission_denied');
      problem(await H().patch(`/recurring-rules/${shared.id}`, { name: 'x' }, { token: cli }), 403, 'permission_denied');
      problem(await H().del(`/recurring-rules/${shared.id}`, { token: cli }), 403, 'permission_denied');
    });
  });

  describe(`[${factory.name}] v3 Recurring rules: the recurring-task job creates each occurrence at its instant (daily, weekly, monthly, yearly)`, () => {
    const H = harnessPerDescribe(factory);
    let p: any;
    beforeAll(async () => {
      p = await H().project({ name: 'Job P' });
    });

    it('a due daily rule creates its task at nextRunAt, attributed to the rule\'s recurringTask actor, with the template and recurringRuleId; not before', async () => {
      const list = ok(await H().post('/lists', { name: 'Chores', projectId: p.id }), 201);
      const status = ok(await H().post('/statuses', { name: 'Later', projectId: p.id }), 201);
      const r = await rule(H(), { name: 'Feed the cat', description: 'Twice the **food**', projectId: p.id, listId: list.id, statusId: status.id, interval: 2, timeOfDay: '10:30', startDate: '2026-03-02' });
      expect(r.nextRunAt).toBe('2026-03-02T10:30:00.000Z');
      await runAt(H(), '2026-03-02T10:29:59.999Z');
      expect(await tasksOf(H(), r.id)).toEqual([]);
      const { result, events } = await during(H(), () => runAt(H(), '2026-03-02T10:30:00.000Z'));
      expect(result.created).toBeGreaterThanOrEqual(1);
      const [t, ...more] = await tasksOf(H(), r.id);
      expect(more).toEqual([]);
      expect(t).toMatchObject({
        name: 'Feed the cat', description: 'Twice the **food**', projectId: p.id, listId: list.id, statusId: status.id, recurringRuleId: r.id,
        completed: false, archived: false, createdById: null,
        createdByActorId: r.actorId, createdByActorType: 'recurringTask', updatedByActorId: r.actorId, updatedByActorType: 'recurringTask',
        createdAt: '2026-03-02T10:30:00.000Z',
      });
      expect(t.niceId).toBeTypeOf('string');
      const actor = ok(await H().get(`/actors/${t.createdByActorId}`));
      expect(actor.type).toBe('recurringTask');
      const after = await read(H(), r.id);
      expect(after).toMatchObject({ occurrences: 1, lastRunAt: '2026-03-02T10:30:00.000Z', nextRunAt: '2026-03-04T10:30:00.000Z', updatedByActorType: 'recurringTask' });
      // Events: task.created and recurringRule.updated, triggered by the system.
      const created = ofType(events, 'task.created', t.id);
      expect(created).toHaveLength(1);
      expect(created[0].triggeredBy).toEqual({ source: 'system' });
      expect(created[0].payload.task.recurringRuleId).toBe(r.id);
      const updated = ofType(events, 'recurringRule.updated', r.id);
      expect(updated).toHaveLength(1);
      expect(updated[0].payload.recurringRule).toMatchObject({ occurrences: 1, nextRunAt: '2026-03-04T10:30:00.000Z' });
      // Every second day from startDate.
      expect(await fireTimes(H(), r.id, 2)).toEqual(['2026-03-04T10:30:00.000Z', '2026-03-06T10:30:00.000Z']);
      expect(await tasksOf(H(), r.id)).toHaveLength(3);
    });

    it('weekly on mon, wed, fri; and every second week on tuesday', async () => {
      const w = await rule(H(), { projectId: p.id, frequency: 'weekly', daysOfWeek: ['fri', 'mon', 'wed'], timeOfDay: '08:00', startDate: '2026-03-09' });
      expect(await fireTimes(H(), w.id, 5)).toEqual([
        '2026-03-09T08:00:00.000Z', '2026-03-11T08:00:00.000Z', '2026-03-13T08:00:00.000Z', '2026-03-16T08:00:00.000Z', '2026-03-18T08:00:00.000Z',
      ]);
      const two = await rule(H(), { projectId: p.id, frequency: 'weekly', interval: 2, daysOfWeek: ['tue'], timeOfDay: '07:15', startDate: '2026-03-24' });
      expect(await fireTimes(H(), two.id, 3)).toEqual(['2026-03-24T07:15:00.000Z', '2026-04-07T07:15:00.000Z', '2026-04-21T07:15:00.000Z']);
      expect(await tasksOf(H(), two.id)).toHaveLength(3);
    });

    it('monthly on day 31 falls on the last day of shorter months; every third month keeps its anchor month', async () => {
      const m = await rule(H(), { projectId: p.id, frequency: 'monthly', dayOfMonth: 31, timeOfDay: '12:00', startDate: '2026-04-01' });
      expect(await fireTimes(H(), m.id, 4)).toEqual(['2026-04-30T12:00:00.000Z', '2026-05-31T12:00:00.000Z', '2026-06-30T12:00:00.000Z', '2026-07-31T12:00:00.000Z']);
      const q3 = await rule(H(), { projectId: p.id, frequency: 'monthly', interval: 3, startDate: '2026-01-15' });
      // January's (before now) is not replayed: April's had passed too, so the next one is October's.
      expect(q3.nextRunAt).toBe('2026-10-15T09:00:00.000Z');
    });

    it('yearly on 29 February falls on the 28th in other years', async () => {
      const y = await rule(H(), { projectId: p.id, frequency: 'yearly', startDate: '2028-02-29', timeOfDay: '06:00' });
      expect(y.nextRunAt).toBe('2028-02-29T06:00:00.000Z');
      expect(await fireTimes(H(), y.id, 3)).toEqual(['2028-02-29T06:00:00.000Z', '2029-02-28T06:00:00.000Z', '2030-02-28T06:00:00.000Z']);
      expect(await tasksOf(H(), y.id)).toHaveLength(3);
    });
  });

  describe(`[${factory.name}] v3 Recurring rules: times are read in the workspace timezone (Conventions: "Date" fields in the workspace timezone)`, () => {
    const H = harnessPerDescribe(factory);
    it('09:00 in America/New_York is 14:00Z before the March DST change and 13:00Z after it', async () => {
      const h = H();
      const ws = await h.api.admin.createWorkspace({ name: 'Gotham', timezone: 'America/New_York', owner: { name: 'Gotham Owner' } });
      const { token } = await h.api.admin.issueToken(ws.ownerMemberId, { scopes: ['read', 'write', 'delete'] });
      h.clock.set(ms('2026-03-06T12:00:00.000Z'));
      const p = await h.project({ name: 'NY' }, token);
      const r = await rule(h, { projectId: p.id, startDate: '2026-03-07' }, token);
      expect(r.nextRunAt).toBe('2026-03-07T14:00:00.000Z');
      const fired: string[] = [];
      for (let i = 0; i < 2; i++) {
        const cur = await read(h, r.id, token);
        await runAt(h, cur.nextRunAt);
        fired.push((await read(h, r.id, token)).lastRunAt);
      }
      expect(fired).toEqual(['2026-03-07T14:00:00.000Z', '2026-03-08T13:00:00.000Z']);
      expect(await tasksOf(h, r.id, token)).toHaveLength(2);
      // startDate defaults to today in the workspace timezone: at 02:00Z on 10 March it is still 9 March in New York.
      h.clock.set(ms('2026-03-10T02:00:00.000Z'));
      const d = await rule(h, { projectId: p.id, timeOfDay: '23:00' }, token);
      expect(d.startDate).toBe('2026-03-09');
      expect(d.nextRunAt).toBe('2026-03-10T03:00:00.000Z');
    });
  });

  describe(`[${factory.name}] v3 Recurring rules: the job is idempotent and crash-safe (one task per occurrence; bounded catch-up)`, () => {
    const H = harnessPerDescribe(factory);
    let p: any;
    beforeAll(async () => {
      p = await H().project({ name: 'Once' });
    });

    it('running the job twice at the same instant creates the occurrence once', async () => {
      const r = await rule(H(), { projectId: p.id, startDate: '2026-03-02' });
      const first = await runAt(H(), '2026-03-02T09:00:00.000Z');
      expect(first).toMatchObject({ due: 1, created: 1, failed: 0 });
      const second = await runAt(H(), '2026-03-02T09:00:00.000Z');
      expect(second).toMatchObject({ due: 0, created: 0 });
      expect(await tasksOf(H(), r.id)).toHaveLength(1);
    });

    it('two runners at once (two APIs over one store, as two processes) create each occurrence once', async () => {
      const h = H();
      const r = await rule(h, { projectId: p.id, startDate: '2026-03-04', timeOfDay: '11:00' });
      // The store belongs to the harness: closing the second API must not close it.
      const other = await createPmapi({ store: { ...h.store, close: async () => undefined }, clock: h.clock, rateLimiter: false });
      h.clock.set(ms('2026-03-04T11:00:00.000Z'));
      const { result: results, events } = await during(h, () => Promise.all([h.api.jobs.recurring(), other.jobs.recurring(), h.api.jobs.recurring()])).finally(() => other.close());
      // Each due rule (this one and the first test's) fired exactly once across the three runners.
      expect(results.reduce((n, x) => n + x.created, 0)).toBe(ofType(events, 'task.created').length);
      expect(ofType(events, 'recurringRule.updated', r.id)).toHaveLength(1);
      expect(await tasksOf(h, r.id)).toHaveLength(1);
      expect((await read(h, r.id)).occurrences).toBe(1);
    });

    it('occurrences missed while no job ran: one catch-up task (the earliest missed), then nextRunAt moves past now', async () => {
      const r = await rule(H(), { projectId: p.id, startDate: '2026-03-10', timeOfDay: '06:00' });
      await runAt(H(), '2026-03-20T12:00:00.000Z');
      expect(await tasksOf(H(), r.id)).toHaveLength(1);
      expect(await read(H(), r.id)).toMatchObject({ occurrences: 1, lastRunAt: '2026-03-10T06:00:00.000Z', nextRunAt: '2026-03-21T06:00:00.000Z' });
      expect((await runAt(H(), '2026-03-20T12:00:00.000Z')).created).toBe(0);
    });

    it('an occurrence whose task the engine refuses (a 4xx: the project has no active status) is claimed without a task and not retried; a list that went is left out', async () => {
      const bare = await H().project({ name: 'No active status' });
      const r = await rule(H(), { projectId: bare.id, startDate: '2026-03-22' });
      for (const st of ok(await H().get(`/statuses?projectId=${bare.id}&limit=200`)).data) ok(await H().patch(`/statuses/${st.id}`, { archived: true }));
      const res = await runAt(H(), '2026-03-22T09:00:00.000Z');
      expect(res).toMatchObject({ failed: 1, errors: 0 });
      const after = ok(await H().get(`/recurring-rules/${r.id}`));
      expect(after).toMatchObject({ occurrences: 1, lastRunAt: '2026-03-22T09:00:00.000Z', nextRunAt: '2026-03-23T09:00:00.000Z' });
      expect((await runAt(H(), '2026-03-22T09:00:00.000Z')).failed).toBe(0);
      const rows = await H().store.db.selectFrom('tasks').select('id').where('recurring_rule_id', '=', r.id).execute();
      expect(rows).toEqual([]);
      // A list deleted since the rule named it: the task is made without it.
      const list = ok(await H().post('/lists', { name: 'Gone soon', projectId: p.id }), 201);
      const r2 = await rule(H(), { projectId: p.id, listId: list.id, startDate: '2026-03-24' });
      ok(await H().del(`/lists/${list.id}`), 204);
      expect((await runAt(H(), '2026-03-24T09:00:00.000Z')).created).toBeGreaterThanOrEqual(1);
      const [t] = await tasksOf(H(), r2.id);
      expect(t.listId).toBe(null);
    });

    it('purging a project (30 days after its delete) destroys its rules, each with recurringRule.removed', async () => {
      const gone = await H().project({ name: 'Purged' });
      const r = await rule(H(), { projectId: gone.id });
      ok(await H().del(`/projects/${gone.id}`), 204);
      H().clock.advance(31 * 24 * 3600 * 1000);
      const { events } = await during(H(), () => H().api.jobs.purge());
      expect(ofType(events, 'recurringRule.removed', r.id)).toHaveLength(1);
      problem(await H().get(`/recurring-rules/${r.id}`), 404, 'resource_not_found');
    });
  });

  describe(`[${factory.name}] v3 Recurring rules: end conditions and pause (States and transitions)`, () => {
    const H = harnessPerDescribe(factory);
    let p: any;
    beforeAll(async () => {
      p = await H().project({ name: 'Ends' });
    });

    it('count: after count occurrences nextRunAt is null and no further task is created', async () => {
      const r = await rule(H(), { projectId: p.id, startDate: '2026-03-02', count: 2 });
      expect(await fireTimes(H(), r.id, 2)).toEqual(['2026-03-02T09:00:00.000Z', '2026-03-03T09:00:00.000Z']);
      expect(await read(H(), r.id)).toMatchObject({ occurrences: 2, nextRunAt: null, active: true });
      await runAt(H(), '2026-03-04T09:00:00.000Z');
      expect(await tasksOf(H(), r.id)).toHaveLength(2);
      // Raising count lets it continue from now on (an occurrence at this very instant included).
      expect(ok(await H().patch(`/recurring-rules/${r.id}`, { count: 3 })).nextRunAt).toBe('2026-03-04T09:00:00.000Z');
    });

    it('endDate: the last occurrence is on endDate (inclusive); then nextRunAt is null', async () => {
      const r = await rule(H(), { projectId: p.id, startDate: '2026-03-06', endDate: '2026-03-07', timeOfDay: '18:00' });
      expect(await fireTimes(H(), r.id, 2)).toEqual(['2026-03-06T18:00:00.000Z', '2026-03-07T18:00:00.000Z']);
      expect((await read(H(), r.id)).nextRunAt).toBe(null);
      await runAt(H(), '2026-03-08T18:00:00.000Z');
      expect(await tasksOf(H(), r.id)).toHaveLength(2);
      // An endDate already passed at creation: the rule never runs.
      expect((await rule(H(), { projectId: p.id, startDate: '2026-03-01', endDate: '2026-03-02' })).nextRunAt).toBe(null);
    });

    it('pause: active false clears nextRunAt and nothing fires; resuming schedules the next occurrence from now, without replaying the paused ones', async () => {
      const r = await rule(H(), { projectId: p.id, startDate: '2026-03-10', timeOfDay: '07:00' });
      expect(r.nextRunAt).toBe('2026-03-10T07:00:00.000Z');
      const paused = ok(await H().patch(`/recurring-rules/${r.id}`, { active: false }));
      expect(paused).toMatchObject({ active: false, nextRunAt: null });
      await runAt(H(), '2026-03-12T12:00:00.000Z');
      expect(await tasksOf(H(), r.id)).toEqual([]);
      expect(ids(ok(await H().get(`/recurring-rules?active[eq]=false&nextRunAt[null]=true&projectId=${p.id}`)).data)).toContain(r.id);
      const resumed = ok(await H().patch(`/recurring-rules/${r.id}`, { active: true }));
      expect(resumed).toMatchObject({ active: true, nextRunAt: '2026-03-13T07:00:00.000Z', occurrences: 0 });
      await runAt(H(), '2026-03-13T07:00:00.000Z');
      expect(await tasksOf(H(), r.id)).toHaveLength(1);
    });

    it('a change while an occurrence is due but not yet fired keeps that occurrence; values sent unchanged move nothing', async () => {
      const r = await rule(H(), { projectId: p.id, startDate: '2026-03-20' });
      H().clock.set(ms('2026-03-20T09:00:30.000Z'));
      expect(ok(await H().patch(`/recurring-rules/${r.id}`, { active: true })).nextRunAt).toBe('2026-03-20T09:00:00.000Z');
      expect(ok(await H().patch(`/recurring-rules/${r.id}`, { count: 5 })).nextRunAt).toBe('2026-03-20T09:00:00.000Z');
      expect(ok(await H().patch(`/recurring-rules/${r.id}`, { count: null, endDate: '2026-12-31' })).nextRunAt).toBe('2026-03-20T09:00:00.000Z');
      // A later time today: the due occurrence moves to it.
      expect(ok(await H().patch(`/recurring-rules/${r.id}`, { timeOfDay: '10:00' })).nextRunAt).toBe('2026-03-20T10:00:00.000Z');
      expect(ok(await H().patch(`/recurring-rules/${r.id}`, { timeOfDay: '09:00' })).nextRunAt).toBe('2026-03-21T09:00:00.000Z');
      const r2 = await rule(H(), { projectId: p.id, startDate: '2026-03-21', timeOfDay: '08:00' });
      H().clock.set(ms('2026-03-21T08:00:30.000Z'));
      expect(ok(await H().patch(`/recurring-rules/${r2.id}`, { interval: 1, endDate: '2026-06-30' })).nextRunAt).toBe('2026-03-21T08:00:00.000Z');
      await H().api.jobs.recurring();
      expect(await read(H(), r2.id)).toMatchObject({ occurrences: 1, lastRunAt: '2026-03-21T08:00:00.000Z', nextRunAt: '2026-03-22T08:00:00.000Z' });
      expect(await tasksOf(H(), r2.id)).toHaveLength(1);
    });
  });

  describe(`[${factory.name}] v3 Task and List: recurringRuleId (settable, filters recurringRuleId / ruleId, expand recurringRule) and rule deletion`, () => {
    const H = harnessPerDescribe(factory);
    let p: any;
    let r1: any;
    let r2: any;
    beforeAll(async () => {
      p = await H().project({ name: 'Links' });
      r1 = await rule(H(), { name: 'Rule one', projectId: p.id });
      r2 = await rule(H(), { name: 'Rule two', projectId: p.id });
    });

    it('tasks and lists take recurringRuleId on create and update (a rule of this workspace, or null)', async () => {
      const t = await H().task(p.id, { recurringRuleId: r1.id });
      expect(t.recurringRuleId).toBe(r1.id);
      expect(ok(await H().patch(`/tasks/${t.id}`, { recurringRuleId: r2.id })).recurringRuleId).toBe(r2.id);
      expect(ok(await H().patch(`/tasks/${t.id}`, { recurringRuleId: null })).recurringRuleId).toBe(null);
      const l = ok(await H().post('/lists', { name: 'Sprint', projectId: p.id, recurringRuleId: r1.id }), 201);
      expect(l.recurringRuleId).toBe(r1.id);
      expect(ok(await H().patch(`/lists/${l.id}`, { recurringRuleId: null })).recurringRuleId).toBe(null);
      expect(problem(await H().patch(`/tasks/${t.id}`, { recurringRuleId: 'nosuchrule000000' }), 404, 'resource_not_found').field).toBe('recurringRuleId');
      expect(problem(await H().post('/lists', { name: 'X', projectId: p.id, recurringRuleId: 'nosuchrule000000' }), 404, 'resource_not_found').field).toBe('recurringRuleId');
      invalid(await H().patch(`/tasks/${t.id}`, { recurringRuleId: 42 }), 'recurringRuleId');
      const pb = await H().project({ name: 'Beta links' }, H().b.owner.token);
      const rb = await rule(H(), { projectId: pb.id }, H().b.owner.token);
      expect(problem(await H().patch(`/tasks/${t.id}`, { recurringRuleId: rb.id }), 404, 'resource_not_found').field).toBe('recurringRuleId');
      expect(ok(await H().get(`/tasks/${t.id}`)).recurringRuleId).toBe(null);
    });

    it('filters: tasks recurringRuleId[eq|in], lists ruleId[eq|in]', async () => {
      const a = await H().task(p.id, { name: 'a', recurringRuleId: r1.id });
      const b = await H().task(p.id, { name: 'b', recurringRuleId: r2.id });
      const c = await H().task(p.id, { name: 'c' });
      const eq = ids(ok(await H().get(`/tasks?projectId=${p.id}&recurringRuleId[eq]=${r1.id}&limit=200`)).data);
      expect(eq).toContain(a.id);
      expect(eq).not.toContain(b.id);
      expect(eq).not.toContain(c.id);
      const inn = ids(ok(await H().get(`/tasks?projectId=${p.id}&recurringRuleId[in]=${r1.id},${r2.id}&limit=200`)).data);
      expect(inn).toEqual(expect.arrayContaining([a.id, b.id]));
      expect(inn).not.toContain(c.id);
      const la = ok(await H().post('/lists', { name: 'la', projectId: p.id, recurringRuleId: r1.id }), 201);
      const lb = ok(await H().post('/lists', { name: 'lb', projectId: p.id, recurringRuleId: r2.id }), 201);
      const lc = ok(await H().post('/lists', { name: 'lc', projectId: p.id }), 201);
      expect(ids(ok(await H().get(`/lists?projectId=${p.id}&ruleId[eq]=${r2.id}`)).data)).toEqual([lb.id]);
      const lin = ids(ok(await H().get(`/lists?projectId=${p.id}&ruleId[in]=${r1.id},${r2.id}`)).data);
      expect(lin.sort()).toEqual([la.id, lb.id].sort());
      expect(lin).not.toContain(lc.id);
    });

    it('expand=recurringRule on tasks and lists returns the rule; the rule expands its tasks and its actor', async () => {
      const t = await H().task(p.id, { name: 'expanded', recurringRuleId: r1.id });
      const got = ok(await H().get(`/tasks/${t.id}?expand=recurringRule`));
      expect(got.recurringRuleId).toBe(r1.id);
      expect(got.recurringRule).toMatchObject({ id: r1.id, name: 'Rule one', frequency: 'daily' });
      const plain = await H().task(p.id, { name: 'plain' });
      expect(ok(await H().get(`/tasks/${plain.id}?expand=recurringRule`)).recurringRule).toBe(null);
      const l = ok(await H().post('/lists', { name: 'expanded list', projectId: p.id, recurringRuleId: r2.id }), 201);
      const listed = ok(await H().get(`/lists?projectId=${p.id}&ruleId[eq]=${r2.id}&expand=recurringRule`)).data;
      expect(listed.find((x: any) => x.id === l.id).recurringRule).toMatchObject({ id: r2.id, name: 'Rule two' });
      const withTasks = ok(await H().get(`/recurring-rules/${r1.id}?expand=tasks,actor`));
      expect(ids(withTasks.tasks)).toContain(t.id);
      expect(withTasks.actor).toMatchObject({ id: r1.actorId, type: 'recurringTask' });
    });

    it('deleting a rule (hard delete): its tasks and lists stay, with recurringRuleId null and an updated event each; recurringRule.removed is emitted', async () => {
      const r = await rule(H(), { name: 'Short-lived', projectId: p.id });
      const t = await H().task(p.id, { recurringRuleId: r.id });
      const l = ok(await H().post('/lists', { name: 'kept', projectId: p.id, recurringRuleId: r.id }), 201);
      const { events } = await during(H(), async () => ok(await H().del(`/recurring-rules/${r.id}`), 204));
      problem(await H().get(`/recurring-rules/${r.id}`), 404, 'resource_not_found');
      expect(ok(await H().get(`/tasks/${t.id}`)).recurringRuleId).toBe(null);
      expect(ok(await H().get(`/lists/${l.id}`)).recurringRuleId).toBe(null);
      expect(ofType(events, 'recurringRule.removed', r.id)).toHaveLength(1);
      expect(ofType(events, 'task.updated', t.id)).toHaveLength(1);
      expect(ofType(events, 'list.updated', l.id)).toHaveLength(1);
      // Its actor stays readable: the tasks it wrote still name it.
      expect(ok(await H().get(`/actors/${r.actorId}`)).type).toBe('recurringTask');
    });

    it('deleting the list or status a rule names clears listId / statusId on the rule, with recurringRule.updated', async () => {
      const list = ok(await H().post('/lists', { name: 'Rule list', projectId: p.id }), 201);
      const status = ok(await H().post('/statuses', { name: 'Rule status', projectId: p.id }), 201);
      const r = await rule(H(), { name: 'Targets', projectId: p.id, listId: list.id, statusId: status.id });
      const { events: e1 } = await during(H(), async () => ok(await H().del(`/lists/${list.id}`), 204));
      expect(ofType(e1, 'recurringRule.updated', r.id).map((e: any) => e.payload.recurringRule)).toEqual([expect.objectContaining({ listId: null, statusId: status.id })]);
      const { events: e2 } = await during(H(), async () => ok(await H().del(`/statuses/${status.id}`), 204));
      expect(ofType(e2, 'recurringRule.updated', r.id).map((e: any) => e.payload.recurringRule)).toEqual([expect.objectContaining({ listId: null, statusId: null })]);
      expect(await read(H(), r.id)).toMatchObject({ listId: null, statusId: null });
      expect(ok(await H().get(`/recurring-rules?projectId=${p.id}&limit=200`)).data.find((x: any) => x.id === r.id)).toMatchObject({ listId: null, statusId: null });
    });

    it('lifecycle events: recurringRule.created and recurringRule.updated carry the rule', async () => {
      const { result: r, events } = await during(H(), () => rule(H(), { name: 'Evented', projectId: p.id }));
      const created = ofType(events, 'recurringRule.created', r.id);
      expect(created).toHaveLength(1);
      expect(created[0]).toMatchObject({ aggregateType: 'recurringRule', projectId: p.id, payload: { recurringRule: { id: r.id, name: 'Evented' } } });
      const { events: upd } = await during(H(), async () => ok(await H().patch(`/recurring-rules/${r.id}`, { active: false })));
      expect(ofType(upd, 'recurringRule.updated', r.id)[0].payload.recurringRule).toMatchObject({ active: false, nextRunAt: null });
    });
  });

  describe(`[${factory.name}] v3 Recurring rules: the job leaves out rules of trashed projects (docs/not-shown.md "Recurring rules": occurrences)`, () => {
    const H = harnessPerDescribe(factory);
    it('a rule whose project is in the trash is not due: nothing is claimed or emitted; after the restore the one catch-up occurrence fires', async () => {
      const trashed = await H().project({ name: 'Trashed for a while' });
      const r = await rule(H(), { projectId: trashed.id, startDate: '2026-03-26', timeOfDay: '10:00' });
      ok(await H().del(`/projects/${trashed.id}`), 204);
      H().clock.set(ms('2026-03-26T10:00:00.000Z'));
      const { result, events } = await during(H(), () => H().api.jobs.recurring());
      expect(result).toMatchObject({ due: 0, created: 0, failed: 0, errors: 0 });
      expect(ofType(events, 'recurringRule.updated', r.id)).toEqual([]);
      expect(ofType(events, 'task.created')).toEqual([]);
      await runAt(H(), '2026-03-28T12:00:00.000Z');
      const raw = await H().store.db.selectFrom('recurring_rules').select('occurrences').where('id', '=', r.id).executeTakeFirstOrThrow();
      expect(Number(raw.occurrences)).toBe(0);
      ok(await H().post(`/projects/${trashed.id}/restore`, {}));
      expect((await read(H(), r.id)).nextRunAt).toBe('2026-03-26T10:00:00.000Z');
      await runAt(H(), '2026-03-28T12:00:00.000Z');
      expect(await tasksOf(H(), r.id)).toHaveLength(1);
      expect(await read(H(), r.id)).toMatchObject({ occurrences: 1, lastRunAt: '2026-03-26T10:00:00.000Z', nextRunAt: '2026-03-29T10:00:00.000Z' });
    });

  });

  describe(`[${factory.name}] v3 Recurring rules: the job never loses an occurrence to an unexpected error (docs/not-shown.md "Recurring rules": the job)`, () => {
    const H = harnessPerDescribe(factory);
    it('an unexpected (non-4xx) failure of a rule claims nothing, is reported to onError and counted in errors; the other due rules still fire, and the next run retries it', async () => {
      const h = H();
      const p = await h.project({ name: 'Failures' });
      const clash = await h.project({ name: 'Clashing numbers' });
      const broken = await rule(h, { name: 'Broken', projectId: p.id, startDate: '2026-03-30', timeOfDay: '08:00' });
      const clashing = await rule(h, { name: 'Clashing', projectId: clash.id, startDate: '2026-03-30', timeOfDay: '08:15' });
      const fine = await rule(h, { name: 'Fine', projectId: p.id, startDate: '2026-03-30', timeOfDay: '08:30', count: 1 });
      // A stored value the schedule cannot read (as a bug or a bad migration would leave): computing the next run throws a RangeError.
      await h.store.db.updateTable('recurring_rules').set({ start_date: 'garbage' }).where('id', '=', broken.id).execute();
      // A database failure while the task is written (its niceId collides: the project's counter was set back), the claim alone would succeed.
      await h.task(clash.id, { name: 'Numbered' });
      const counter = Number((await h.store.db.selectFrom('projects').select('task_counter').where('id', '=', clash.id).executeTakeFirstOrThrow()).task_counter);
      await h.store.db.updateTable('projects').set({ task_counter: counter - 1 }).where('id', '=', clash.id).execute();
      const reported: unknown[] = [];
      const api = await createPmapi({ store: { ...h.store, close: async () => undefined }, clock: h.clock, rateLimiter: false, onError: (err, req) => reported.push([err, req.url]) });
      try {
        h.clock.set(ms('2026-03-30T09:00:00.000Z'));
        const res = await api.jobs.recurring();
        expect(res).toMatchObject({ due: 3, created: 1, errors: 2, failed: 0, skipped: 0 });
        expect(reported).toHaveLength(2);
        for (const [err, url] of reported as any[][]) {
          expect(err).toBeInstanceOf(Error);
          expect(url).toBe('jobs.recurring');
        }
        expect(await tasksOf(h, fine.id)).toHaveLength(1);
        expect(await tasksOf(h, clashing.id)).toEqual([]);
        for (const id of [broken.id, clashing.id]) {
          const raw = await h.store.db.selectFrom('recurring_rules').select(['occurrences', 'last_run_at']).where('id', '=', id).executeTakeFirstOrThrow();
          expect(Number(raw.occurrences)).toBe(0);
          expect(raw.last_run_at).toBe(null);
        }
        // Repaired, both fire at the next run (their occurrences were not lost).
        await h.store.db.updateTable('recurring_rules').set({ start_date: '2026-03-30' }).where('id', '=', broken.id).execute();
        await h.store.db.updateTable('projects').set({ task_counter: counter }).where('id', '=', clash.id).execute();
        expect(await api.jobs.recurring()).toMatchObject({ due: 2, created: 2, errors: 0 });
        expect(await read(h, broken.id)).toMatchObject({ occurrences: 1, lastRunAt: '2026-03-30T08:00:00.000Z' });
        expect(await read(h, clashing.id)).toMatchObject({ occurrences: 1, lastRunAt: '2026-03-30T08:15:00.000Z' });
        expect(await tasksOf(h, clashing.id)).toHaveLength(1);
      } finally {
        await api.close();
      }
    });
  });

  describe(`[${factory.name}] v3 Recurring rules: one job run is bounded but drains every due rule (api.jobs.recurring(limit), limit 1-1000)`, () => {
    const H = harnessPerDescribe(factory);

    it('limit is clamped to 1-1000; without it a run reads batch after batch, past 200 due rules', async () => {
      const h = H();
      const p = await h.project({ name: 'Many rules' });
      const made: any[] = [];
      for (let i = 0; i < 205; i += 15) {
        made.push(...await Promise.all(Array.from({ length: Math.min(15, 205 - i) }, (_, k) => rule(h, { name: `Rule ${i + k}`, projectId: p.id, startDate: '2026-03-02' }))));
      }
      h.clock.set(ms('2026-03-02T09:00:00.000Z'));
      expect(await h.api.jobs.recurring(0)).toMatchObject({ due: 1, created: 1 });
      expect(await h.api.jobs.recurring(-3)).toMatchObject({ due: 1, created: 1 });
      expect(await h.api.jobs.recurring(2.7)).toMatchObject({ due: 2, created: 2 });
      expect(await h.api.jobs.recurring()).toMatchObject({ due: 201, created: 201, errors: 0 });
      expect(await h.api.jobs.recurring()).toMatchObject({ due: 0, created: 0 });
      const raw = await h.store.db.selectFrom('tasks').select('id').where('project_id', '=', p.id).execute();
      expect(raw).toHaveLength(205);
      expect(made).toHaveLength(205);
    });
  });

  describe(`[${factory.name}] v3 Recurring rules: a rule ends before year 9999 (timestamps stay ISO 8601)`, () => {
    const H = harnessPerDescribe(factory);

    it('an occurrence after 9998-12-31 is never scheduled: the rule ends (nextRunAt null) instead', async () => {
      const h = H();
      const p = await h.project({ name: 'Far future' });
      const y = await rule(h, { projectId: p.id, frequency: 'yearly', interval: 2, startDate: '9998-01-01' });
      expect(y.nextRunAt).toBe('9998-01-01T09:00:00.000Z');
      const d = await rule(h, { projectId: p.id, frequency: 'daily', startDate: '9998-12-31' });
      h.clock.set(ms('9998-01-01T09:00:00.000Z'));
      await h.api.jobs.recurring();
      expect(await read(h, y.id)).toMatchObject({ occurrences: 1, lastRunAt: '9998-01-01T09:00:00.000Z', nextRunAt: null });
      h.clock.set(ms('9998-12-31T09:00:00.000Z'));
      await h.api.jobs.recurring();
      expect(await read(h, d.id)).toMatchObject({ occurrences: 1, lastRunAt: '9998-12-31T09:00:00.000Z', nextRunAt: null });
    });
  });

}

function codeOf(r: { body: any }): string | undefined {
  return r.body?.errors?.[0]?.code;
}
