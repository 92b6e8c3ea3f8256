import { describe, it, expect, beforeAll } from 'vitest';
import type { Harness, StoreFactory } from '../../kit';
import { randomUUID } from 'node:crypto';
import { createPmapi } from '@pmapi/core';
import { harness } from '../../kit';
import { during, harnessPerDescribe, ofType } from '../shared';
import { expectOk as ok, expectProblem as problem, expectInvalid as invalid, iso, sorted, UUID } from './helpers';

/**
 * Reminders (spec "Reminder", "Limits": reminder date, "Events"), with the
 * decisions taken where the spec is silent (docs/not-shown.md "Reminders"):
 * the exact 5-minute boundary, personal visibility through every role, the
 * overdue reminders the job makes from due dates (read-only through the
 * API: 403 permission_denied), firing once (`firedAt` and one
 * `reminder.updated`), re-arming when `date` moves, the cron actor, events
 * only to the creator's webhooks, and the cascade with a deleted task; the
 * job keeping only reminders that still hold (access, deactivation, trash,
 * archive, purge), its races (a task delete, two runners, the lock's
 * `skipped`), its bounded work per run, and the per-member caps.
 */

const MIN = 60 * 1000;
const HOUR = 60 * MIN;
const FIVE_MIN = 5 * MIN;

const ids = (rows: any[]): string[] => rows.map((r) => r.id);

async function listIds(h: Harness, path: string, token?: string): Promise<string[]> {
  return ids(ok(await h.get(path, { token })).data);
}

/** A custom reminder `ahead` ms after the clock (default one hour). */
async function reminder(h: Harness, taskId: string, o: { ahead?: number; token?: string; body?: Record<string, unknown> } = {}): Promise<any> {
  return ok(await h.post('/reminders', { taskId, date: iso(h.clock.now() + (o.ahead ?? HOUR)), ...o.body }, { token: o.token }), 201);
}

/** The reminder as the caller reads it now. */
async function read(h: Harness, id: string, token?: string): Promise<any> {
  return ok(await h.get(`/reminders/${id}`, { token }));
}

/** Another member of workspace A with the given built-in role, and a full token. */
async function memberWith(h: Harness, role: string, name: string): Promise<{ id: string; token: string }> {
  const m = await h.api.admin.addMember(h.a.id, { name, role });
  const t = await h.api.admin.issueToken(m.id, { scopes: ['read', 'write', 'delete'] });
  return { id: m.id, token: t.token };
}

export function remindersSuite(factory: StoreFactory): void {

  describe(`[${factory.name}] v3 Reminder: fields (date, taskId, type, createdById) and Limits "reminder date at least 5 minutes ahead"`, () => {
    const H = harnessPerDescribe(factory);
    let p: any;
    let task: any;
    beforeAll(async () => {
      p = await H().project({ name: 'Reminders P', members: [H().a.regular.id, H().a.client.id] });
      task = await H().task(p.id, { name: 'Remind me' });
    });

    it('POST /reminders → 201: date, taskId, type custom (the default), createdById the caller, projectId the task\'s, firedAt null; GET answers the same', async () => {
      const date = iso(H().clock.now() + 2 * HOUR);
      const r = ok(await H().post('/reminders', { taskId: task.id, date }), 201);
      expect(r.id).toBeTypeOf('string');
      expect(r.date).toBe(date);
      expect(r.taskId).toBe(task.id);
      expect(r.type).toBe('custom');
      expect(r.createdById).toBe(H().a.owner.id);
      expect(r.projectId).toBe(p.id);
      expect(r.firedAt).toBeNull();
      expect(r.createdByActorId).toMatch(UUID);
      expect(r.createdByActorType).toBe('human');
      expect(r).not.toHaveProperty('personal');
      expect(await read(H(), r.id)).toEqual(r);
      // An explicit type custom is the same thing.
      expect(ok(await H().post('/reminders', { taskId: task.id, date, type: 'custom' }), 201).type).toBe('custom');
    });

    it('date on create: 4:59.999 after the request\'s instant → 400 validation_failed (too_soon); exactly 5:00 → 201; the past → 400', async () => {
      const now = H().clock.now();
      invalid(await H().post('/reminders', { taskId: task.id, date: iso(now + FIVE_MIN - 1) }), 'date', 'too_soon');
      invalid(await H().post('/reminders', { taskId: task.id, date: iso(now - HOUR) }), 'date', 'too_soon');
      invalid(await H().post('/reminders', { taskId: task.id, date: iso(now) }), 'date', 'too_soon');
      const r = ok(await H().post('/reminders', { taskId: task.id, date: iso(now + FIVE_MIN) }), 201);
      expect(r.date).toBe(iso(now + FIVE_MIN));
      // The rule follows the clock: the same instant is too soon a millisecond later.
      H().clock.advance(1);
      invalid(await H().post('/reminders', { taskId: task.id, date: iso(now + FIVE_MIN) }), 'date', 'too_soon');
      // An offset is accepted and the instant is what counts.
      const at = H().clock.now() + HOUR;
      const withOffset = new Date(at + 2 * HOUR).toISOString().replace('Z', '+02:00');
      expect(ok(await H().post('/reminders', { taskId: task.id, date: withOffset }), 201).date).toBe(iso(at));
    });

    it('date on update: the same rule (4:59.999 refused, 5:00 accepted); a refused update changes nothing', async () => {
      const r = await reminder(H(), task.id);
      const now = H().clock.now();
      invalid(await H().patch(`/reminders/${r.id}`, { date: iso(now + FIVE_MIN - 1) }), 'date', 'too_soon');
      expect((await read(H(), r.id)).date).toBe(r.date);
      const u = ok(await H().patch(`/reminders/${r.id}`, { date: iso(now + FIVE_MIN) }));
      expect(u.date).toBe(iso(now + FIVE_MIN));
      expect((await read(H(), r.id)).date).toBe(iso(now + FIVE_MIN));
    });

    it('date is required on create and must be an ISO 8601 instant (create and update)', async () => {
      invalid(await H().post('/reminders', { taskId: task.id }), 'date', 'required');
      invalid(await H().post('/reminders', { taskId: task.id, date: null }), 'date');
      invalid(await H().post('/reminders', { taskId: task.id, date: 'tomorrow' }), 'date');
      invalid(await H().post('/reminders', { taskId: task.id, date: H().clock.now() + HOUR }), 'date');
      const r = await reminder(H(), task.id);
      invalid(await H().patch(`/reminders/${r.id}`, { date: null }), 'date');
      invalid(await H().patch(`/reminders/${r.id}`, { date: '2026-13-45' }), 'date');
      expect((await read(H(), r.id)).date).toBe(r.date);
    });

    it('taskId is required; a missing task or another workspace\'s → 404 resource_not_found naming taskId; a task in a project the caller cannot open → 403 project_access_denied', async () => {
      const date = iso(H().clock.now() + HOUR);
      invalid(await H().post('/reminders', { date }), 'taskId', 'required');
      invalid(await H().post('/reminders', { date, taskId: null }), 'taskId');
      expect(problem(await H().post('/reminders', { date, taskId: 'nosuchtask0000000000' }), 404, 'resource_not_found').field).toBe('taskId');
      const pb = await H().project({ name: 'Beta reminders' }, H().b.owner.token);
      const tb = await H().task(pb.id, {}, H().b.owner.token);
      expect(problem(await H().post('/reminders', { date, taskId: tb.id }), 404, 'resource_not_found').field).toBe('taskId');
      const closed = await H().project({ name: 'Closed to regular', accessType: 'limited' });
      const tc = await H().task(closed.id);
      problem(await H().post('/reminders', { date, taskId: tc.id }, { token: H().a.regular.token }), 403, 'project_access_denied');
      expect(await listIds(H(), '/reminders?limit=200', H().a.regular.token)).toEqual([]);
    });

    it('type: "overdue" on create → 400 validation_failed on type (only custom is creatable); an unknown value → 400 on type; nothing is created', async () => {
      const before = await listIds(H(), `/reminders?taskId[eq]=${task.id}&limit=200`);
      invalid(await H().post('/reminders', { taskId: task.id, date: iso(H().clock.now() + HOUR), type: 'overdue' }), 'type', 'not_allowed');
      invalid(await H().post('/reminders', { taskId: task.id, date: iso(H().clock.now() + HOUR), type: 'someday' }), 'type');
      expect(await listIds(H(), `/reminders?taskId[eq]=${task.id}&limit=200`)).toEqual(before);
    });

    it('date is the only updatable field: taskId or type with another value → 400 validation_failed (immutable) naming the field, nothing changes; the same value is accepted', async () => {
      const other = await H().task(p.id, { name: 'Other task' });
      const r = await reminder(H(), task.id);
      invalid(await H().patch(`/reminders/${r.id}`, { taskId: other.id }), 'taskId', 'immutable');
      invalid(await H().patch(`/reminders/${r.id}`, { taskId: other.id, date: iso(H().clock.now() + 3 * HOUR) }), 'taskId', 'immutable');
      invalid(await H().patch(`/reminders/${r.id}`, { type: 'overdue' }), 'type', 'immutable');
      invalid(await H().patch(`/reminders/${r.id}`, { unknownField: 1 }), 'unknownField', 'unrecognized_key');
      expect(await read(H(), r.id)).toEqual(r);
      const same = ok(await H().patch(`/reminders/${r.id}`, { taskId: task.id, type: 'custom', date: iso(H().clock.now() + 3 * HOUR) }));
      expect(same.taskId).toBe(task.id);
      expect(same.type).toBe('custom');
      expect(same.date).toBe(iso(H().clock.now() + 3 * HOUR));
    });

    it('createdById, projectId and firedAt are server-set: ignored in create and update bodies (an update holding only them is empty_update)', async () => {
      const q = await H().project({ name: 'Elsewhere' });
      const r = ok(await H().post('/reminders', {
        taskId: task.id, date: iso(H().clock.now() + HOUR), createdById: H().a.regular.id, projectId: q.id, firedAt: iso(H().clock.now()),
      }), 201);
      expect(r.createdById).toBe(H().a.owner.id);
      expect(r.projectId).toBe(p.id);
      expect(r.firedAt).toBeNull();
      problem(await H().patch(`/reminders/${r.id}`, { createdById: H().a.regular.id, projectId: q.id }), 400, 'empty_update');
      expect(await read(H(), r.id)).toEqual(r);
      expect(await listIds(H(), `/reminders?projectId=${q.id}`)).toEqual([]);
      problem(await H().patch(`/reminders/${r.id}`, {}), 400, 'empty_update');
    });

    it('expand: task, createdByActor and updatedByActor', async () => {
      const r = await reminder(H(), task.id);
      const x = ok(await H().get(`/reminders/${r.id}?expand=task,createdByActor,updatedByActor`));
      expect(x.task.id).toBe(task.id);
      expect(x.task.name).toBe('Remind me');
      expect(x.createdByActor.id).toBe(r.createdByActorId);
      expect(x.createdByActor.type).toBe('human');
      expect(x.updatedByActor.id).toBe(r.updatedByActorId);
      problem(await H().get(`/reminders/${r.id}?expand=createdBy`), 400, 'expand_unknown_relation');
    });
  });

  describe(`[${factory.name}] v3 Reminder: personal (only the creator sees or changes it, whatever the other member's role)`, () => {
    const H = harnessPerDescribe(factory);
    let p: any;
    let task: any;
    let manager: { id: string; token: string };
    beforeAll(async () => {
      p = await H().project({ name: 'Shared project', accessType: 'workspace', members: [H().a.regular.id, H().a.client.id] });
      task = await H().task(p.id, { name: 'Shared task' });
      manager = await memberWith(H(), 'manager', 'Alpha Manager');
    });

    it('the owner\'s reminder: the regular member, a manager, the client and another workspace\'s owner get 404 on GET, PATCH and DELETE and never list it; it stays unchanged', async () => {
      const h = H();
      const r = await reminder(h, task.id);
      for (const token of [h.a.regular.token, manager.token, h.a.client.token, h.b.owner.token]) {
        problem(await h.get(`/reminders/${r.id}`, { token }), 404, 'resource_not_found');
        problem(await h.patch(`/reminders/${r.id}`, { date: iso(h.clock.now() + 2 * HOUR) }, { token }), 404, 'resource_not_found');
        problem(await h.del(`/reminders/${r.id}`, { token }), 404, 'resource_not_found');
        expect(await listIds(h, '/reminders?limit=200', token)).not.toContain(r.id);
        expect(await listIds(h, `/reminders?taskId[eq]=${task.id}&limit=200`, token)).not.toContain(r.id);
      }
      for (const token of [h.a.regular.token, manager.token, h.a.client.token]) {
        expect(await listIds(h, `/reminders?projectId=${p.id}&limit=200`, token)).not.toContain(r.id);
      }
      expect(await read(h, r.id)).toEqual(r);
      expect(await listIds(h, `/reminders?projectId=${p.id}`)).toContain(r.id);
    });

    it('a regular member\'s reminder: the workspace owner, a manager and the client get 404 and never list it; its creator reads, changes and deletes it', async () => {
      const h = H();
      const mine = await reminder(h, task.id, { token: h.a.regular.token });
      expect(mine.createdById).toBe(h.a.regular.id);
      for (const token of [h.a.owner.token, manager.token, h.a.client.token]) {
        problem(await h.get(`/reminders/${mine.id}`, { token }), 404, 'resource_not_found');
        problem(await h.patch(`/reminders/${mine.id}`, { date: iso(h.clock.now() + 2 * HOUR) }, { token }), 404, 'resource_not_found');
        problem(await h.del(`/reminders/${mine.id}`, { token }), 404, 'resource_not_found');
        expect(await listIds(h, `/reminders?taskId[eq]=${task.id}&limit=200`, token)).not.toContain(mine.id);
      }
      expect(await listIds(h, `/reminders?taskId[eq]=${task.id}&limit=200`, h.a.regular.token)).toEqual([mine.id]);
      const moved = ok(await h.patch(`/reminders/${mine.id}`, { date: iso(h.clock.now() + 3 * HOUR) }, { token: h.a.regular.token }));
      expect(moved.date).toBe(iso(h.clock.now() + 3 * HOUR));
      ok(await h.del(`/reminders/${mine.id}`, { token: h.a.regular.token }), 204);
      problem(await h.get(`/reminders/${mine.id}`, { token: h.a.regular.token }), 404, 'resource_not_found');
    });

    it('a client (guest) sets reminders on tasks of projects it belongs to; each member\'s list holds exactly their own', async () => {
      const h = H();
      const c = await reminder(h, task.id, { token: h.a.client.token });
      const m = await reminder(h, task.id, { token: manager.token });
      expect(c.createdById).toBe(h.a.client.id);
      expect(await listIds(h, `/reminders?taskId[eq]=${task.id}&limit=200`, h.a.client.token)).toEqual([c.id]);
      expect(await listIds(h, `/reminders?taskId[eq]=${task.id}&limit=200`, manager.token)).toEqual([m.id]);
      const own = ok(await h.get(`/reminders?taskId[eq]=${task.id}&limit=200`)).data as any[];
      for (const r of own) expect(r.createdById).toBe(h.a.owner.id);
    });
  });

  describe(`[${factory.name}] v3 Reminder: list query projectId, filters taskId|type|date|createdAt and default sorts`, () => {
    const H = harnessPerDescribe(factory);
    let p: any;
    let q: any;
    let t1: any;
    let t2: any;
    let tq: any;
    /** Created in this order; dates 3 h, 1 h and 2 h ahead of the first one's instant. */
    let a: any;
    let b: any;
    let c: any;
    let d: any;
    let start: number;
    beforeAll(async () => {
      const h = H();
      p = await h.project({ name: 'Filters P' });
      q = await h.project({ name: 'Filters Q' });
      t1 = await h.task(p.id, { name: 'T1' });
      t2 = await h.task(p.id, { name: 'T2' });
      tq = await h.task(q.id, { name: 'TQ' });
      start = h.clock.now();
      a = ok(await h.post('/reminders', { taskId: t1.id, date: iso(start + 3 * HOUR) }), 201);
      h.clock.advance(1000);
      b = ok(await h.post('/reminders', { taskId: t2.id, date: iso(start + 1 * HOUR) }), 201);
      h.clock.advance(1000);
      c = ok(await h.post('/reminders', { taskId: t1.id, date: iso(start + 2 * HOUR) }), 201);
      h.clock.advance(1000);
      d = ok(await h.post('/reminders', { taskId: tq.id, date: iso(start + 4 * HOUR) }), 201);
      h.clock.advance(1000);
    });

    it('default sort with projectId is date ascending; sort=-date reverses it; projectId restricts to the project\'s reminders', async () => {
      expect(await listIds(H(), `/reminders?projectId=${p.id}`)).toEqual([b.id, c.id, a.id]);
      expect(await listIds(H(), `/reminders?projectId=${p.id}&sort=-date`)).toEqual([a.id, c.id, b.id]);
      expect(await listIds(H(), `/reminders?projectId=${q.id}`)).toEqual([d.id]);
    });

    it('default sort without projectId is -updatedAt: the most recently changed first', async () => {
      expect(await listIds(H(), '/reminders')).toEqual([d.id, c.id, b.id, a.id]);
      ok(await H().patch(`/reminders/${b.id}`, { date: iso(start + 5 * HOUR) }));
      H().clock.advance(1000);
      expect(await listIds(H(), '/reminders')).toEqual([b.id, d.id, c.id, a.id]);
      ok(await H().patch(`/reminders/${b.id}`, { date: iso(start + 1 * HOUR) }));
      H().clock.advance(1000);
    });

    it('taskId[eq|in] and type[eq|in]', async () => {
      expect(sorted(await listIds(H(), `/reminders?taskId[eq]=${t1.id}`))).toEqual(sorted([a.id, c.id]));
      expect(sorted(await listIds(H(), `/reminders?taskId[in]=${t1.id},${tq.id}`))).toEqual(sorted([a.id, c.id, d.id]));
      expect(sorted(await listIds(H(), '/reminders?type[eq]=custom'))).toEqual(sorted([a.id, b.id, c.id, d.id]));
      expect(await listIds(H(), '/reminders?type[eq]=overdue')).toEqual([]);
      expect(sorted(await listIds(H(), '/reminders?type[in]=overdue,custom'))).toEqual(sorted([a.id, b.id, c.id, d.id]));
    });

    it('date[eq|gt|gte|lt|lte]', async () => {
      const two = encodeURIComponent(iso(start + 2 * HOUR));
      expect(await listIds(H(), `/reminders?date[eq]=${two}`)).toEqual([c.id]);
      expect(await listIds(H(), `/reminders?projectId=${p.id}&date[gt]=${two}`)).toEqual([a.id]);
      expect(await listIds(H(), `/reminders?projectId=${p.id}&date[gte]=${two}`)).toEqual([c.id, a.id]);
      expect(await listIds(H(), `/reminders?projectId=${p.id}&date[lt]=${two}`)).toEqual([b.id]);
      expect(await listIds(H(), `/reminders?projectId=${p.id}&date[lte]=${two}`)).toEqual([b.id, c.id]);
    });

    it('createdAt[gt|gte|lt|lte]', async () => {
      const cAt = encodeURIComponent(c.createdAt);
      expect(sorted(await listIds(H(), `/reminders?createdAt[gt]=${cAt}`))).toEqual([d.id]);
      expect(sorted(await listIds(H(), `/reminders?createdAt[gte]=${cAt}`))).toEqual(sorted([c.id, d.id]));
      expect(sorted(await listIds(H(), `/reminders?createdAt[lt]=${cAt}`))).toEqual(sorted([a.id, b.id]));
      expect(sorted(await listIds(H(), `/reminders?createdAt[lte]=${cAt}`))).toEqual(sorted([a.id, b.id, c.id]));
    });

    it('filters and operators the spec does not list → 400 invalid_query_param', async () => {
      for (const bad of ['createdById[eq]=x', 'firedAt[lt]=2026-01-01T00:00:00.000Z', 'date[in]=2026-01-01T00:00:00.000Z', 'createdAt[eq]=2026-01-01T00:00:00.000Z', 'taskId[contains]=x', 'type[startsWith]=c', 'projectId[eq]=x', 'updatedAt[gt]=2026-01-01T00:00:00.000Z']) {
        problem(await H().get(`/reminders?${bad}`), 400, 'invalid_query_param');
      }
    });
  });

  describe(`[${factory.name}] v3 Reminder: a reminder that comes due produces its notification event, once (firedAt, reminder.updated)`, () => {
    const H = harnessPerDescribe(factory);
    let p: any;
    let task: any;
    let hook: any;
    beforeAll(async () => {
      p = await H().project({ name: 'Firing', members: [H().a.regular.id] });
      task = await H().task(p.id, { name: 'Fire me' });
      hook = ok(await H().post('/webhooks', { url: 'https://hooks.invalid/r', events: ['reminder.*'] }), 201);
    });
    /** The event ids queued for the owner's webhook. */
    const queued = async (): Promise<Set<string>> => {
      const jobs = await H().store.db.selectFrom('webhook_jobs').selectAll().where('webhook_id', '=', hook.id).execute();
      return new Set(jobs.map((j: any) => j.event_id as string));
    };

    it('before its date nothing fires; at its date the job stamps firedAt and emits one reminder.updated (triggered by the system, written by the cron actor); a second run emits nothing', async () => {
      const h = H();
      const date = h.clock.now() + 10 * MIN;
      const r = ok(await h.post('/reminders', { taskId: task.id, date: iso(date) }), 201);
      h.clock.set(date - 1);
      const early = await during(h, () => h.api.jobs.reminders());
      expect(early.result.fired).toBe(0);
      expect(ofType(early.events, 'reminder.updated', r.id)).toHaveLength(0);
      expect((await read(h, r.id)).firedAt).toBeNull();
      h.clock.set(date);
      const due = await during(h, () => h.api.jobs.reminders());
      expect(due.result.fired).toBe(1);
      const [ev] = ofType(due.events, 'reminder.updated', r.id);
      expect(ofType(due.events, 'reminder.updated', r.id)).toHaveLength(1);
      expect(ev.payload.reminder.firedAt).toBe(iso(date));
      expect(ev.payload.reminder.createdById).toBe(h.a.owner.id);
      expect(ev.payload.reminder.updatedByActorType).toBe('cron');
      expect(ev.triggeredBy).toEqual({ source: 'system' });
      expect(ev.projectId).toBe(p.id);
      const got = await read(h, r.id);
      expect(got.firedAt).toBe(iso(date));
      expect(got.updatedByActorType).toBe('cron');
      const actor = ok(await h.get(`/actors/${got.updatedByActorId}`));
      expect(actor.type).toBe('cron');
      expect(actor.memberId).toBeNull();
      expect(got.createdByActorType).toBe('human');
      h.clock.advance(HOUR);
      const again = await during(h, () => h.api.jobs.reminders());
      expect(again.result.fired).toBe(0);
      expect(again.events).toEqual([]);
      expect((await read(h, r.id)).firedAt).toBe(iso(date));
    });

    it('moving date later re-arms it: firedAt back to null, and it fires once more when the new date comes', async () => {
      const h = H();
      const first = h.clock.now() + 6 * MIN;
      const r = ok(await h.post('/reminders', { taskId: task.id, date: iso(first) }), 201);
      h.clock.set(first + MIN);
      expect((await h.api.jobs.reminders()).fired).toBe(1);
      const fired = await read(h, r.id);
      expect(fired.firedAt).toBe(iso(first + MIN));
      const second = h.clock.now() + HOUR;
      const moved = ok(await h.patch(`/reminders/${r.id}`, { date: iso(second) }));
      expect(moved.firedAt).toBeNull();
      h.clock.set(second - MIN);
      expect((await during(h, () => h.api.jobs.reminders())).events).toEqual([]);
      h.clock.set(second);
      const run = await during(h, () => h.api.jobs.reminders());
      expect(ofType(run.events, 'reminder.updated', r.id)).toHaveLength(1);
      expect((await read(h, r.id)).firedAt).toBe(iso(second));
      h.clock.advance(MIN);
      expect((await during(h, () => h.api.jobs.reminders())).events).toEqual([]);
    });

    it('every reminder that came due fires in one run, each once, whoever created it', async () => {
      const h = H();
      const base = h.clock.now();
      const mine = ok(await h.post('/reminders', { taskId: task.id, date: iso(base + 6 * MIN) }), 201);
      const theirs = ok(await h.post('/reminders', { taskId: task.id, date: iso(base + 7 * MIN) }, { token: h.a.regular.token }), 201);
      const later = ok(await h.post('/reminders', { taskId: task.id, date: iso(base + 2 * HOUR) }), 201);
      h.clock.set(base + 30 * MIN);
      const run = await during(h, () => h.api.jobs.reminders());
      expect(run.result.fired).toBe(2);
      expect(sorted(ofType(run.events, 'reminder.updated').map((e) => e.aggregateId))).toEqual(sorted([mine.id, theirs.id]));
      expect((await read(h, theirs.id, h.a.regular.token)).firedAt).toBe(iso(base + 30 * MIN));
      expect((await read(h, later.id)).firedAt).toBeNull();
    });

    it('reminder events reach only webhooks the reminder\'s creator registered: the owner\'s webhook gets its own reminders\' events, never the regular member\'s', async () => {
      const h = H();
      const base = h.clock.now();
      const own = await during(h, async () => {
        const r = ok(await h.post('/reminders', { taskId: task.id, date: iso(base + 6 * MIN) }), 201);
        ok(await h.patch(`/reminders/${r.id}`, { date: iso(base + 8 * MIN) }));
        return r;
      });
      const other = await during(h, async () => {
        const r = ok(await h.post('/reminders', { taskId: task.id, date: iso(base + 6 * MIN) }, { token: h.a.regular.token }), 201);
        ok(await h.patch(`/reminders/${r.id}`, { date: iso(base + 8 * MIN) }, { token: h.a.regular.token }));
        return r;
      });
      h.clock.set(base + 9 * MIN);
      const fired = await during(h, () => h.api.jobs.reminders());
      const gone = await during(h, async () => {
        ok(await h.del(`/reminders/${own.result.id}`), 204);
        ok(await h.del(`/reminders/${other.result.id}`, { token: h.a.regular.token }), 204);
      });
      const all = [...own.events, ...other.events, ...fired.events, ...gone.events];
      const q = await queued();
      // (Events of one instant are not ordered: compare them as sorted lists.)
      const lifecycle = ['reminder.created', 'reminder.removed', 'reminder.updated', 'reminder.updated'];
      const typesFor = (id: string) => sorted(all.filter((e) => e.aggregateId === id && q.has(e.eventId)).map((e) => e.type));
      expect(typesFor(own.result.id)).toEqual(lifecycle);
      expect(typesFor(other.result.id)).toEqual([]);
      // The regular member's events were recorded, only not queued for the owner's webhook.
      expect(sorted(all.filter((e) => e.aggregateId === other.result.id).map((e) => e.type))).toEqual(lifecycle);
    });
  });

  describe(`[${factory.name}] v3 Reminder: overdue reminders (created by the service from due dates; read-only through the API)`, () => {
    const H = harnessPerDescribe(factory);
    let p: any;
    let outsider: { id: string; token: string };
    beforeAll(async () => {
      p = await H().project({ name: 'Due dates', accessType: 'limited', members: [H().a.regular.id, H().a.client.id] });
      outsider = await memberWith(H(), 'regular', 'Not in the project');
    });
    const overdueOf = async (taskId: string, token?: string) => (ok(await H().get(`/reminders?taskId[eq]=${taskId}&type[eq]=overdue&limit=200`, { token })).data as any[]);

    it('a task past its dueAt and not completed: one overdue reminder per assignee who can open its project (date = dueAt, createdById the assignee, by the cron actor), each fired at once; a second run creates nothing', async () => {
      const h = H();
      const due = h.clock.now() + HOUR;
      const t = await h.task(p.id, { name: 'Ship it', dueAt: iso(due), assignees: [h.a.regular.id, h.a.client.id, outsider.id] });
      h.clock.set(due - 1);
      const early = await during(h, () => h.api.jobs.reminders());
      expect(ofType(early.events, 'reminder.created')).toHaveLength(0);
      h.clock.set(due);
      const run = await during(h, () => h.api.jobs.reminders());
      expect(run.result.created).toBe(2);
      const created = ofType(run.events, 'reminder.created');
      expect(created).toHaveLength(2);
      expect(sorted(created.map((e) => e.payload.reminder.createdById))).toEqual(sorted([h.a.regular.id, h.a.client.id]));
      for (const e of created) {
        expect(e.payload.reminder.type).toBe('overdue');
        expect(e.payload.reminder.taskId).toBe(t.id);
        expect(e.payload.reminder.date).toBe(iso(due));
        expect(e.payload.reminder.createdByActorType).toBe('cron');
        expect(e.triggeredBy).toEqual({ source: 'system' });
        expect(e.projectId).toBe(p.id);
      }
      // Each came due at once: its notification follows in the same run.
      expect(sorted(ofType(run.events, 'reminder.updated').map((e) => e.aggregateId))).toEqual(sorted(created.map((e) => e.aggregateId)));
      const [forRegular] = await overdueOf(t.id, h.a.regular.token);
      expect(forRegular.createdById).toBe(h.a.regular.id);
      expect(forRegular.firedAt).toBe(iso(due));
      expect(forRegular.projectId).toBe(p.id);
      expect(ok(await h.get(`/actors/${forRegular.createdByActorId}`)).type).toBe('cron');
      expect(await overdueOf(t.id, h.a.client.token)).toHaveLength(1);
      // Personal like any reminder: the owner (who made the task) sees none of them; the outsider got none.
      expect(await overdueOf(t.id)).toEqual([]);
      problem(await h.get(`/reminders/${forRegular.id}`), 404, 'resource_not_found');
      expect(await listIds(h, '/reminders?limit=200', outsider.token)).toEqual([]);
      h.clock.advance(HOUR);
      const again = await during(h, () => h.api.jobs.reminders());
      expect(again.result).toEqual({ created: 0, removed: 0, fired: 0, skipped: false, more: false });
      expect(again.events).toEqual([]);
      expect(await overdueOf(t.id, h.a.regular.token)).toHaveLength(1);
    });

    it('a task without assignees: its creator gets the overdue reminder; a task without a dueAt, or not yet due, gets none', async () => {
      const h = H();
      const due = h.clock.now() + 10 * MIN;
      const t = await h.task(p.id, { name: 'Mine alone', dueAt: iso(due) }, h.a.regular.token);
      const none = await h.task(p.id, { name: 'No due date', assignees: [h.a.regular.id] });
      const future = await h.task(p.id, { name: 'Far away', dueAt: iso(due + 30 * 24 * HOUR), assignees: [h.a.regular.id] });
      h.clock.set(due + MIN);
      await h.api.jobs.reminders();
      const [r] = await overdueOf(t.id, h.a.regular.token);
      expect(r.createdById).toBe(h.a.regular.id);
      expect(r.date).toBe(iso(due));
      expect(await overdueOf(none.id, h.a.regular.token)).toEqual([]);
      expect(await overdueOf(future.id, h.a.regular.token)).toEqual([]);
    });

    it('a completed task gets none; completing an overdue task removes its overdue reminders (reminder.removed) at the next run', async () => {
      const h = H();
      const due = h.clock.now() + 10 * MIN;
      const done = await h.task(p.id, { name: 'Done early', dueAt: iso(due), assignees: [h.a.regular.id], completed: true });
      const t = await h.task(p.id, { name: 'Late', dueAt: iso(due), assignees: [h.a.regular.id] });
      h.clock.set(due + MIN);
      await h.api.jobs.reminders();
      expect(await overdueOf(done.id, h.a.regular.token)).toEqual([]);
      const [r] = await overdueOf(t.id, h.a.regular.token);
      ok(await h.patch(`/tasks/${t.id}`, { completed: true }));
      const run = await during(h, () => h.api.jobs.reminders());
      expect(run.result.removed).toBe(1);
      const [gone] = ofType(run.events, 'reminder.removed', r.id);
      expect(gone.payload.reminder.type).toBe('overdue');
      expect(gone.triggeredBy).toEqual({ source: 'system' });
      problem(await h.get(`/reminders/${r.id}`, { token: h.a.regular.token }), 404, 'resource_not_found');
      // Reopened while still past due: overdue again.
      ok(await h.patch(`/tasks/${t.id}`, { completed: false }));
      await h.api.jobs.reminders();
      expect(await overdueOf(t.id, h.a.regular.token)).toHaveLength(1);
    });

    it('a changed dueAt: the old overdue reminder goes; a new one comes when the new dueAt passes', async () => {
      const h = H();
      const due = h.clock.now() + 10 * MIN;
      const t = await h.task(p.id, { name: 'Slipping', dueAt: iso(due), assignees: [h.a.regular.id] });
      h.clock.set(due + MIN);
      await h.api.jobs.reminders();
      const [old] = await overdueOf(t.id, h.a.regular.token);
      const later = h.clock.now() + HOUR;
      ok(await h.patch(`/tasks/${t.id}`, { dueAt: iso(later) }));
      const moved = await during(h, () => h.api.jobs.reminders());
      expect(ofType(moved.events, 'reminder.removed', old.id)).toHaveLength(1);
      expect(ofType(moved.events, 'reminder.created')).toHaveLength(0);
      expect(await overdueOf(t.id, h.a.regular.token)).toEqual([]);
      h.clock.set(later);
      await h.api.jobs.reminders();
      const [fresh] = await overdueOf(t.id, h.a.regular.token);
      expect(fresh.id).not.toBe(old.id);
      expect(fresh.date).toBe(iso(later));
    });

    it('an assignee no longer active gets none; a cleared dueAt removes the overdue reminders at the next run', async () => {
      const h = H();
      const leaver = await memberWith(h, 'regular', 'Leaving soon');
      ok(await h.patch(`/projects/${p.id}`, { members: [h.a.regular.id, h.a.client.id, leaver.id] }));
      const due = h.clock.now() + 10 * MIN;
      const t = await h.task(p.id, { name: 'Handover', dueAt: iso(due), assignees: [h.a.regular.id, leaver.id] });
      await h.api.admin.setMemberActive(leaver.id, false);
      h.clock.set(due + MIN);
      const run = await during(h, () => h.api.jobs.reminders());
      expect(ofType(run.events, 'reminder.created').map((e) => e.payload.reminder.createdById)).toEqual([h.a.regular.id]);
      const [r] = await overdueOf(t.id, h.a.regular.token);
      ok(await h.patch(`/tasks/${t.id}`, { dueAt: null }));
      const cleared = await during(h, () => h.api.jobs.reminders());
      expect(ofType(cleared.events, 'reminder.removed').map((e) => e.aggregateId)).toEqual([r.id]);
      expect(await overdueOf(t.id, h.a.regular.token)).toEqual([]);
    });

    it('read-only: PATCH and DELETE of an overdue reminder by its own recipient → 403 permission_denied and nothing changes; custom reminders beside it stay writable', async () => {
      const h = H();
      const due = h.clock.now() + 10 * MIN;
      const t = await h.task(p.id, { name: 'Locked', dueAt: iso(due), assignees: [h.a.regular.id] });
      h.clock.set(due + MIN);
      await h.api.jobs.reminders();
      const [r] = await overdueOf(t.id, h.a.regular.token);
      const tok = { token: h.a.regular.token };
      const denied = await during(h, async () => {
        problem(await h.patch(`/reminders/${r.id}`, { date: iso(h.clock.now() + HOUR) }, tok), 403, 'permission_denied');
        problem(await h.patch(`/reminders/${r.id}`, { type: 'overdue', date: iso(h.clock.now() + HOUR) }, tok), 403, 'permission_denied');
        problem(await h.del(`/reminders/${r.id}`, tok), 403, 'permission_denied');
      });
      expect(denied.events).toEqual([]);
      invalid(await h.patch(`/reminders/${r.id}`, { type: 'custom' }, tok), 'type', 'immutable');
      expect(await read(h, r.id, h.a.regular.token)).toEqual(r);
      const custom = await reminder(h, t.id, { token: h.a.regular.token });
      ok(await h.patch(`/reminders/${custom.id}`, { date: iso(h.clock.now() + 2 * HOUR) }, tok));
      ok(await h.del(`/reminders/${custom.id}`, tok), 204);
    });
  });

  describe(`[${factory.name}] v3 Reminder: lifecycle events (Events) and hard delete; a deleted task takes its reminders with it`, () => {
    const H = harnessPerDescribe(factory);
    let p: any;
    beforeAll(async () => {
      p = await H().project({ name: 'Reminder events', members: [H().a.regular.id] });
    });

    it('create, update and delete emit reminder.created, reminder.updated and reminder.removed carrying the reminder; DELETE is permanent (204, then 404)', async () => {
      const h = H();
      const t = await h.task(p.id);
      const made = await during(h, () => reminder(h, t.id));
      const r = made.result;
      const [created] = ofType(made.events, 'reminder.created', r.id);
      expect(ofType(made.events, 'reminder.created')).toHaveLength(1);
      expect(created.payload.reminder).toEqual(r);
      expect(created.aggregateType).toBe('reminder');
      expect(created.projectId).toBe(p.id);
      expect(created.triggeredBy).toEqual({ source: 'human', userId: expect.any(String), teamMemberId: h.a.owner.id });
      const upd = await during(h, () => h.patch(`/reminders/${r.id}`, { date: iso(h.clock.now() + 2 * HOUR) }));
      const u = ok(upd.result);
      const [updated] = ofType(upd.events, 'reminder.updated', r.id);
      expect(updated.payload.reminder).toEqual(u);
      const del = await during(h, () => h.del(`/reminders/${r.id}`));
      ok(del.result, 204);
      expect(ofType(del.events, 'reminder.removed', r.id)).toHaveLength(1);
      expect(ofType(del.events, 'reminder.removed', r.id)[0].payload.reminder.id).toBe(r.id);
      problem(await h.get(`/reminders/${r.id}`), 404, 'resource_not_found');
      problem(await h.del(`/reminders/${r.id}`), 404, 'resource_not_found');
      expect((await h.post(`/reminders/${r.id}/restore`)).status).toBeGreaterThanOrEqual(400);
    });

    it('deleting a task removes every member\'s reminders on it (and on its subtasks), each with reminder.removed; other tasks\' reminders stay', async () => {
      const h = H();
      const t = await h.task(p.id, { name: 'Doomed' });
      const sub = await h.task(p.id, { name: 'Doomed child', parentTaskId: t.id });
      const keep = await h.task(p.id, { name: 'Kept' });
      const mine = await reminder(h, t.id);
      const theirs = await reminder(h, t.id, { token: h.a.regular.token });
      const onSub = await reminder(h, sub.id);
      const kept = await reminder(h, keep.id);
      const { result, events } = await during(h, () => h.del(`/tasks/${t.id}`));
      ok(result, 204);
      expect(sorted(ofType(events, 'reminder.removed').map((e) => e.aggregateId))).toEqual(sorted([mine.id, theirs.id, onSub.id]));
      problem(await h.get(`/reminders/${mine.id}`), 404, 'resource_not_found');
      problem(await h.get(`/reminders/${theirs.id}`, { token: h.a.regular.token }), 404, 'resource_not_found');
      problem(await h.get(`/reminders/${onSub.id}`), 404, 'resource_not_found');
      expect((await read(h, kept.id)).taskId).toBe(keep.id);
    });

    it('a task moved to another project takes its reminders\' projectId along (reminder.updated), so the projectId list follows', async () => {
      const h = H();
      const to = await h.project({ name: 'Moved to' });
      const t = await h.task(p.id, { name: 'Mover' });
      const r = await reminder(h, t.id);
      const { result, events } = await during(h, () => h.patch(`/tasks/${t.id}`, { projectId: to.id }));
      ok(result);
      const [ev] = ofType(events, 'reminder.updated', r.id);
      expect(ev.payload.reminder.projectId).toBe(to.id);
      expect((await read(h, r.id)).projectId).toBe(to.id);
      expect(await listIds(h, `/reminders?projectId=${to.id}`)).toEqual([r.id]);
      expect(await listIds(h, `/reminders?projectId=${p.id}`)).not.toContain(r.id);
    });
  });
  describe(`[${factory.name}] v3 Reminder: the job keeps only reminders their creator can still be told about (access, deactivation, trash, archive, purge)`, () => {
    const H = harnessPerDescribe(factory);
    const overdueOf = async (taskId: string, token?: string) => (ok(await H().get(`/reminders?taskId[eq]=${taskId}&type[eq]=overdue&limit=200`, { token })).data as any[]);
    /** Reminder rows as stored (whoever they belong to). */
    const stored = async (taskId: string) => (await H().store.db.selectFrom('reminders').select(['id', 'type', 'created_by_id']).where('task_id', '=', taskId).execute()) as any[];

    it('unassigned: the overdue reminder goes; removed from a limited project: the overdue reminder and the custom one go too (reminder.removed), and nobody else gets one', async () => {
      const h = H();
      const p = await h.project({ name: 'Limited', accessType: 'limited', members: [h.a.regular.id, h.a.client.id] });
      const due = h.clock.now() + 10 * MIN;
      const t = await h.task(p.id, { name: 'Shared work', dueAt: iso(due), assignees: [h.a.regular.id, h.a.client.id] });
      const custom = await reminder(h, t.id, { token: h.a.regular.token, ahead: HOUR });
      // A manager opens every project (viewAllProjects) without being a member: their reminder stays and fires.
      const manager = await memberWith(h, 'manager', 'Sees all');
      const managers = await reminder(h, t.id, { token: manager.token, ahead: 30 * MIN });
      h.clock.set(due + MIN);
      expect((await h.api.jobs.reminders()).created).toBe(2);
      const [forRegular] = await overdueOf(t.id, h.a.regular.token);
      const [forClient] = await overdueOf(t.id, h.a.client.token);
      ok(await h.patch(`/tasks/${t.id}`, { assignees: [h.a.regular.id] }));
      const unassigned = await during(h, () => h.api.jobs.reminders());
      expect(ofType(unassigned.events, 'reminder.removed').map((e) => e.aggregateId)).toEqual([forClient.id]);
      expect(ofType(unassigned.events, 'reminder.created')).toEqual([]);
      ok(await h.patch(`/projects/${p.id}`, { members: [h.a.client.id] }));
      const left = await during(h, () => h.api.jobs.reminders());
      expect(sorted(ofType(left.events, 'reminder.removed').map((e) => e.aggregateId))).toEqual(sorted([forRegular.id, custom.id]));
      expect(ofType(left.events, 'reminder.created')).toEqual([]);
      expect((await stored(t.id)).map((r) => r.id)).toEqual([managers.id]);
      // Nothing fires later for the member who left; the manager's fires.
      h.clock.set(h.clock.now() + 2 * HOUR);
      const later = await during(h, () => h.api.jobs.reminders());
      expect(later.result).toMatchObject({ created: 0, removed: 0, fired: 1 });
      expect(ofType(later.events, 'reminder.updated').map((e) => e.aggregateId)).toEqual([managers.id]);
      expect(await stored(t.id)).toEqual([{ id: managers.id, type: 'custom', created_by_id: manager.id }]);
    });

    it('a deactivated member: their overdue reminders go at the next run; a custom one is removed when it comes due, never fired', async () => {
      const h = H();
      const leaver = await memberWith(h, 'regular', 'Deactivated later');
      const p = await h.project({ name: 'Deactivation', members: [leaver.id] });
      const due = h.clock.now() + 10 * MIN;
      const t = await h.task(p.id, { name: 'Theirs', dueAt: iso(due), assignees: [leaver.id] });
      const custom = await reminder(h, t.id, { token: leaver.token, ahead: HOUR });
      h.clock.set(due + MIN);
      await h.api.jobs.reminders();
      const [overdue] = await overdueOf(t.id, leaver.token);
      await h.api.admin.setMemberActive(leaver.id, false);
      const run = await during(h, () => h.api.jobs.reminders());
      expect(ofType(run.events, 'reminder.removed').map((e) => e.aggregateId)).toEqual([overdue.id]);
      h.clock.set(Date.parse(custom.date));
      const dueRun = await during(h, () => h.api.jobs.reminders());
      expect(dueRun.result).toMatchObject({ fired: 0, removed: 1 });
      expect(ofType(dueRun.events, 'reminder.updated')).toEqual([]);
      expect(ofType(dueRun.events, 'reminder.removed').map((e) => e.aggregateId)).toEqual([custom.id]);
      expect(await stored(t.id)).toEqual([]);
    });

    it('trashed or archived project, archived task: no overdue reminder is made, those made go at the next run; an unarchived task gets one again', async () => {
      const h = H();
      const due = h.clock.now() + 10 * MIN;
      const trashed = await h.project({ name: 'To trash', members: [h.a.regular.id] });
      const archived = await h.project({ name: 'To archive', members: [h.a.regular.id] });
      const live = await h.project({ name: 'Live', members: [h.a.regular.id] });
      const inTrash = await h.task(trashed.id, { name: 'In trash', dueAt: iso(due), assignees: [h.a.regular.id] });
      const inTrashLater = await h.task(trashed.id, { name: 'In trash, due later', dueAt: iso(due + HOUR), assignees: [h.a.regular.id] });
      const inArchive = await h.task(archived.id, { name: 'In archive', dueAt: iso(due), assignees: [h.a.regular.id] });
      const archivedTask = await h.task(live.id, { name: 'Archived task', dueAt: iso(due), assignees: [h.a.regular.id] });
      h.clock.set(due + MIN);
      expect((await h.api.jobs.reminders()).created).toBe(3);
      const made = new Map<string, string>();
      for (const t of [inTrash, inArchive, archivedTask]) made.set(t.id, (await overdueOf(t.id, h.a.regular.token))[0].id);
      ok(await h.del(`/projects/${trashed.id}`), 204);
      ok(await h.patch(`/projects/${archived.id}`, { archived: true }));
      ok(await h.patch(`/tasks/${archivedTask.id}`, { archived: true }));
      h.clock.set(due + 2 * HOUR);
      const run = await during(h, () => h.api.jobs.reminders());
      expect(sorted(ofType(run.events, 'reminder.removed').map((e) => e.aggregateId))).toEqual(sorted([...made.values()]));
      expect(ofType(run.events, 'reminder.created')).toEqual([]);
      for (const t of [inTrash, inTrashLater, inArchive, archivedTask]) expect(await stored(t.id)).toEqual([]);
      ok(await h.patch(`/tasks/${archivedTask.id}`, { archived: false }));
      const back = await during(h, () => h.api.jobs.reminders());
      expect(ofType(back.events, 'reminder.created').map((e) => e.payload.reminder.taskId)).toEqual([archivedTask.id]);
    });

    it('purging a trashed project removes every reminder on its tasks (custom and overdue), each with reminder.removed', async () => {
      const h = H();
      const p = await h.project({ name: 'To purge', members: [h.a.regular.id] });
      const due = h.clock.now() + 10 * MIN;
      const t = await h.task(p.id, { name: 'Purged', dueAt: iso(due), assignees: [h.a.regular.id] });
      const custom = await reminder(h, t.id, { ahead: 30 * 24 * HOUR });
      h.clock.set(due + MIN);
      await h.api.jobs.reminders();
      const [overdue] = await overdueOf(t.id, h.a.regular.token);
      ok(await h.del(`/projects/${p.id}`), 204);
      h.clock.advance(30 * 24 * HOUR);
      const { events } = await during(h, async () => {
        await h.api.jobs.purge();
        await h.api.jobs.reminders();
      });
      expect(sorted(ofType(events, 'reminder.removed').map((e) => e.aggregateId))).toEqual(sorted([custom.id, overdue.id]));
      expect(await stored(t.id)).toEqual([]);
    });
  });

  describe(`[${factory.name}] v3 Reminder: the job against concurrent writes and other runners (orphans, task deletes, one runner at a time)`, () => {
    const H = harnessPerDescribe(factory);
    let p: any;
    beforeAll(async () => {
      p = await H().project({ name: 'Concurrency', members: [H().a.regular.id] });
    });
    const count = async (taskId: string) => (await H().store.db.selectFrom('reminders').select('id').where('task_id', '=', taskId).execute()).length;

    it('a reminder whose task is gone without its cascade (what a delete racing the job leaves) is removed at the next run (reminder.removed)', async () => {
      const h = H();
      const due = h.clock.now() + 10 * MIN;
      const t = await h.task(p.id, { name: 'Orphaned', dueAt: iso(due), assignees: [h.a.regular.id] });
      h.clock.set(due + MIN);
      expect((await h.api.jobs.reminders()).created).toBe(1);
      const [row] = await h.store.db.selectFrom('reminders').select('id').where('task_id', '=', t.id).execute();
      await h.store.db.deleteFrom('tasks').where('id', '=', t.id).execute();
      const run = await during(h, () => h.api.jobs.reminders());
      expect(ofType(run.events, 'reminder.removed').map((e) => e.aggregateId)).toEqual([row!.id]);
      expect(await count(t.id)).toBe(0);
    });

    it.runIf(factory.name === 'postgres')('a task delete committing while the job waits on the task: the job re-reads it under its row lock and makes no reminder for it', async () => {
      const h = H();
      const due = h.clock.now() + 10 * MIN;
      const t = await h.task(p.id, { name: 'Deleted mid-run', dueAt: iso(due), assignees: [h.a.regular.id] });
      h.clock.set(due + MIN);
      let job: Promise<any> | undefined;
      await h.store.db.transaction().execute(async (trx) => {
        await trx.deleteFrom('tasks').where('id', '=', t.id).execute();
        job = h.api.jobs.reminders();
        // Let the job scan (it still sees the task) and block on the task's row lock.
        await new Promise((r) => setTimeout(r, 400));
      });
      const result = await job!;
      expect(result.created).toBe(0);
      expect(await count(t.id)).toBe(0);
    });

    it('two runners at once over the same data: each overdue reminder is made once and fires once', async () => {
      const h = H();
      const twin = await createPmapi({ store: h.store, clock: h.clock, rateLimiter: false });
      const due = h.clock.now() + 10 * MIN;
      const tasks: any[] = [];
      for (let i = 0; i < 12; i++) tasks.push(await h.task(p.id, { name: `Raced ${i}`, dueAt: iso(due), assignees: [h.a.regular.id] }));
      h.clock.set(due + MIN);
      const { result, events } = await during(h, () => Promise.all([h.api.jobs.reminders({ batch: 3 }), twin.jobs.reminders({ batch: 3 })]));
      const created = ofType(events, 'reminder.created');
      expect(created).toHaveLength(12);
      expect(sorted(created.map((e) => e.payload.reminder.taskId))).toEqual(sorted(tasks.map((t) => t.id)));
      expect(ofType(events, 'reminder.updated')).toHaveLength(12);
      // Whichever runner stopped early says so; a runner that did not stop did its share.
      for (const r of result) if (!r.skipped) expect(r.more).toBe(false);
      // Together they made each one once, and a later run has nothing left.
      expect(result[0].created + result[1].created).toBe(12);
      expect(await h.api.jobs.reminders()).toEqual({ created: 0, removed: 0, fired: 0, skipped: false, more: false });
      for (const t of tasks) expect(await count(t.id)).toBe(1);
    });

    it.runIf(factory.name === 'postgres')('a runner finding another at work answers skipped: true and does nothing; the lock is the schema\'s: another schema\'s runner is not held up', async () => {
      const h = H();
      const other = await harness(factory);
      try {
        const due = h.clock.now() + 10 * MIN;
        const t = await h.task(p.id, { name: 'Held', dueAt: iso(due), assignees: [h.a.regular.id] });
        const po = await other.project({ name: 'Other schema' });
        const to = await other.task(po.id, { name: 'Other', dueAt: iso(other.clock.now() + 10 * MIN) });
        h.clock.set(due + MIN);
        other.clock.set(other.clock.now() + 11 * MIN);
        await h.store.db.transaction().execute(async (trx) => {
          expect(await h.store.dialect.tryLock!(trx, 'reminders-job')).toBe(true);
          expect(await h.api.jobs.reminders()).toEqual({ created: 0, removed: 0, fired: 0, skipped: true, more: false });
          const elsewhere = await other.api.jobs.reminders();
          expect(elsewhere).toMatchObject({ created: 1, skipped: false });
        });
        expect(await count(t.id)).toBe(0);
        expect((await other.store.db.selectFrom('reminders').select('id').where('task_id', '=', to.id).execute()).length).toBe(1);
        expect(await h.api.jobs.reminders()).toMatchObject({ created: 1, skipped: false });
      } finally {
        await other.close();
      }
    });
  });

  describe(`[${factory.name}] v3 Reminder: bounded work per run (capped batches; tasks with nobody to remind are not scanned again)`, () => {
    const H = harnessPerDescribe(factory);

    it('a run handles at most maxBatches batches per step and says more: true; the next runs carry on', async () => {
      const h = H();
      const p = await h.project({ name: 'Capped', members: [h.a.regular.id] });
      const due = h.clock.now() + 10 * MIN;
      for (let i = 0; i < 5; i++) await h.task(p.id, { name: `Capped ${i}`, dueAt: iso(due), assignees: [h.a.regular.id] });
      h.clock.set(due + MIN);
      const first = await h.api.jobs.reminders({ batch: 2, maxBatches: 1 });
      expect(first).toMatchObject({ created: 2, more: true });
      const second = await h.api.jobs.reminders({ batch: 2, maxBatches: 1 });
      expect(second).toMatchObject({ created: 2, more: true });
      const third = await h.api.jobs.reminders({ batch: 2, maxBatches: 1 });
      expect(third.created).toBe(1);
      const all = ok(await h.get(`/reminders?projectId=${p.id}&type[eq]=overdue&limit=200`, { token: h.a.regular.token })).data;
      expect(all).toHaveLength(5);
      while ((await h.api.jobs.reminders({ batch: 2, maxBatches: 1 })).more);
      expect(await h.api.jobs.reminders()).toEqual({ created: 0, removed: 0, fired: 0, skipped: false, more: false });
    });

    it('past-due tasks whose assignees cannot be reminded: checked once, then a run costs the same few statements however many there are', async () => {
      const h = H();
      const p = await h.project({ name: 'Nobody to tell', accessType: 'limited' });
      const outsider = await memberWith(h, 'regular', 'Outside the project');
      const due = h.clock.now() + 10 * MIN;
      const t = await h.task(p.id, { name: 'Unseen', dueAt: iso(due), assignees: [outsider.id] });
      h.clock.set(due + MIN);
      await h.api.jobs.reminders();
      const idle = (await h.countQueries(() => h.api.jobs.reminders())).length;
      for (let i = 0; i < 30; i++) await h.task(p.id, { name: `Unseen ${i}`, dueAt: iso(due), assignees: [outsider.id] });
      const firstRun = await h.countQueries(async () => expect((await h.api.jobs.reminders()).created).toBe(0));
      // One scan, one locked re-read, one recipients statement and one marker write for the batch, not statements per task.
      expect(firstRun.length).toBeLessThan(idle + 10);
      const again = await h.countQueries(async () => expect((await h.api.jobs.reminders()).created).toBe(0));
      expect(again.length).toBe(idle);
      // A new dueAt is checked again: the member, now in the project, gets their reminder.
      ok(await h.patch(`/projects/${p.id}`, { members: [outsider.id] }));
      ok(await h.patch(`/tasks/${t.id}`, { dueAt: iso(due + 30 * 1000) }));
      const run = await during(h, () => h.api.jobs.reminders());
      expect(ofType(run.events, 'reminder.created').map((e) => [e.payload.reminder.taskId, e.payload.reminder.createdById])).toEqual([[t.id, outsider.id]]);
    });
  });

  describe(`[${factory.name}] v3 Reminder: at most 20 custom reminders per member and task, 1000 per member (400 validation_failed)`, () => {
    const H = harnessPerDescribe(factory);
    let p: any;
    beforeAll(async () => {
      p = await H().project({ name: 'Capped reminders', members: [H().a.regular.id] });
    });

    it('the 21st reminder of a member on one task → 400 too_many_on_task on taskId, nothing made; other members and other tasks are not affected; deleting one makes room', async () => {
      const h = H();
      const t = await h.task(p.id, { name: 'Busy' });
      const other = await h.task(p.id, { name: 'Quiet' });
      const mine: any[] = [];
      for (let i = 0; i < 20; i++) mine.push(await reminder(h, t.id, { token: h.a.regular.token, ahead: HOUR + i * MIN }));
      const refused = await during(h, () => h.post('/reminders', { taskId: t.id, date: iso(h.clock.now() + 2 * HOUR) }, { token: h.a.regular.token }));
      invalid(refused.result, 'taskId', 'too_many_on_task');
      expect(refused.events).toEqual([]);
      await reminder(h, t.id);
      await reminder(h, other.id, { token: h.a.regular.token });
      ok(await h.del(`/reminders/${mine[0].id}`, { token: h.a.regular.token }), 204);
      await reminder(h, t.id, { token: h.a.regular.token });
    });

    it('a member holding 1000 custom reminders → 400 too_many_reminders on taskId for the next one, on any task; other members are not affected; deleting one makes room', async () => {
      const h = H();
      const t = await h.task(p.id, { name: 'Many' });
      const fresh = await h.task(p.id, { name: 'Fresh' });
      const first = await reminder(h, t.id, { token: h.a.regular.token });
      const have = Number((await h.store.db.selectFrom('reminders').select((eb) => eb.fn.countAll().as('n'))
        .where('created_by_id', '=', h.a.regular.id).where('type', '=', 'custom').executeTakeFirstOrThrow()).n);
      // Fill up to the limit directly (as many requests would): copies of the first, on the same task.
      const [row] = await h.store.db.selectFrom('reminders').selectAll().where('id', '=', first.id).execute();
      const copies = Array.from({ length: 1000 - have }, () => ({ ...row, id: randomUUID() }));
      for (let i = 0; i < copies.length; i += 200) await h.store.db.insertInto('reminders').values(copies.slice(i, i + 200)).execute();
      invalid(await h.post('/reminders', { taskId: fresh.id, date: iso(h.clock.now() + HOUR) }, { token: h.a.regular.token }), 'taskId', 'too_many_reminders');
      await reminder(h, fresh.id);
      ok(await h.del(`/reminders/${first.id}`, { token: h.a.regular.token }), 204);
      await reminder(h, fresh.id, { token: h.a.regular.token });
    });
  });
}
