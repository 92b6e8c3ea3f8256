import { describe, it, expect, beforeAll } from 'vitest';
import type { Harness, StoreFactory } from '../../kit';
import { DAY, sorted } from './helpers';
import { during, harnessPerDescribe, ofType } from '../shared';
import { expectOk as ok, expectProblem as problem, expectInvalid as invalid } from './helpers';

/**
 * Report charts (spec "Other resources": fields not shown; "Events":
 * lifecycle resource reportChart and membership relation reportChart.projects),
 * with the decisions recorded in docs/not-shown.md "Report charts".
 */

const ids = (rows: any[]): string[] => rows.map((r) => r.id);

async function chart(h: Harness, body: Record<string, unknown> = {}, token?: string): Promise<any> {
  return ok(await h.post('/report-charts', { name: 'Sprint burndown', type: 'burndown', ...body }, { token }), 201);
}

function membership(events: any[], type: string): string[][] {
  return ofType(events, type).map((e) => [e.payload.relatedId, e.payload.relation, e.payload.parentId]).sort();
}

export function reportChartsSuite(factory: StoreFactory): void {

  describe(`[${factory.name}] v3 Report chart: fields (name, type, projects, startDate, endDate, options, createdById; not shown, docs/not-shown.md)`, () => {
    const H = harnessPerDescribe(factory);
    let p: any;
    beforeAll(async () => {
      p = await H().project({ name: 'Charts P', members: [H().a.regular.id] });
    });

    it('POST /report-charts → 201 with the trimmed name, no dates, no options, the caller as createdById; GET answers the same', async () => {
      const c = ok(await H().post('/report-charts', { name: '  Velocity Q2 ', type: 'velocity', projects: [p.id] }), 201);
      expect(c).toMatchObject({ name: 'Velocity Q2', type: 'velocity', projects: [p.id], startDate: null, endDate: null, options: null, createdById: H().a.owner.id });
      expect(ok(await H().get(`/report-charts/${c.id}`))).toEqual(c);
      // A chart over no project yet is allowed.
      expect((await chart(H())).projects).toEqual([]);
    });

    it('name is required, 1-100 characters; type is required and one of the six kinds', async () => {
      invalid(await H().post('/report-charts', { type: 'burndown' }), 'name');
      invalid(await H().post('/report-charts', { name: '  ', type: 'burndown' }), 'name');
      invalid(await H().post('/report-charts', { name: 'n'.repeat(101), type: 'burndown' }), 'name');
      expect((await chart(H(), { name: 'n'.repeat(100) })).name).toHaveLength(100);
      invalid(await H().post('/report-charts', { name: 'No type' }), 'type');
      invalid(await H().post('/report-charts', { name: 'Pie', type: 'pie' }), 'type');
      for (const type of ['burndown', 'burnup', 'velocity', 'cumulativeFlow', 'workload', 'taskStatus']) expect((await chart(H(), { type })).type).toBe(type);
      const c = await chart(H());
      invalid(await H().patch(`/report-charts/${c.id}`, { type: 'gantt' }), 'type');
      expect(ok(await H().patch(`/report-charts/${c.id}`, { type: 'burnup', name: 'Renamed' }))).toMatchObject({ type: 'burnup', name: 'Renamed' });
    });

    it('startDate and endDate are calendar dates YYYY-MM-DD; endDate before startDate → 400 before_start (create and update)', async () => {
      invalid(await H().post('/report-charts', { name: 'x', type: 'burnup', startDate: '2026-04-01T00:00:00.000Z' }), 'startDate');
      invalid(await H().post('/report-charts', { name: 'x', type: 'burnup', endDate: '2026-02-30' }), 'endDate');
      invalid(await H().post('/report-charts', { name: 'x', type: 'burnup', startDate: '2026-04-10', endDate: '2026-04-09' }), 'endDate', 'before_start');
      const c = await chart(H(), { startDate: '2026-04-01', endDate: '2026-04-01' });
      expect(c).toMatchObject({ startDate: '2026-04-01', endDate: '2026-04-01' });
      invalid(await H().patch(`/report-charts/${c.id}`, { startDate: '2026-04-02' }), 'endDate', 'before_start');
      expect(ok(await H().patch(`/report-charts/${c.id}`, { endDate: null })).endDate).toBeNull();
      expect(ok(await H().patch(`/report-charts/${c.id}`, { startDate: '2026-05-01' })).startDate).toBe('2026-05-01');
      expect(ids(ok(await H().get('/report-charts?startDate[gte]=2026-05-01&limit=200')).data)).toEqual([c.id]);
    });

    it('options: a flat object of at most 50 keys with string, number, boolean or null values, stored verbatim', async () => {
      const c = await chart(H(), { options: { groupBy: 'assignee', cumulative: true, target: 42, color: null } });
      expect(c.options).toEqual({ groupBy: 'assignee', cumulative: true, target: 42, color: null });
      invalid(await H().post('/report-charts', { name: 'x', type: 'burnup', options: { nested: { a: 1 } } }), 'options.nested');
      invalid(await H().post('/report-charts', { name: 'x', type: 'burnup', options: [1, 2] }), 'options');
      const many = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, i]));
      invalid(await H().post('/report-charts', { name: 'x', type: 'burnup', options: many }), 'options');
      const fifty = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, i]));
      expect(Object.keys((await chart(H(), { options: fifty })).options)).toHaveLength(50);
      const longKey = problem(await H().post('/report-charts', { name: 'x', type: 'burnup', options: { ['k'.repeat(65)]: 1 } }), 400, 'validation_failed');
      expect(longKey.errors[0]).toMatchObject({ field: `options.${'k'.repeat(65)}`, code: 'invalid_key' });
      invalid(await H().post('/report-charts', { name: 'x', type: 'burnup', options: { label: 'v'.repeat(1001) } }), 'options.label');
      invalid(await H().post('/report-charts', { name: 'x', type: 'burnup', options: { list: [1] } }), 'options.list');
      expect(ok(await H().patch(`/report-charts/${c.id}`, { options: null })).options).toBeNull();
    });

    it('options keys __proto__, constructor and prototype → 400 invalid_key (never silently dropped); nothing written', async () => {
      for (const key of ['__proto__', 'constructor', 'prototype']) {
        const raw = `{"name":"Proto ${key}","type":"burnup","options":{"${key}":{"a":1},"ok":1}}`;
        const r = problem(await H().post('/report-charts', undefined, { raw, headers: { 'content-type': 'application/json' } }), 400, 'validation_failed');
        expect(r.errors, key).toEqual([expect.objectContaining({ field: `options.${key}`, code: 'invalid_key' })]);
        const flat = `{"name":"Proto ${key}","type":"burnup","options":{"${key}":1}}`;
        invalid(await H().post('/report-charts', undefined, { raw: flat, headers: { 'content-type': 'application/json' } }), `options.${key}`, 'invalid_key');
        expect(ok(await H().get(`/report-charts?name[eq]=${encodeURIComponent(`Proto ${key}`)}`)).data).toEqual([]);
      }
      const c = await chart(H(), { options: { ok: 1 } });
      invalid(await H().patch(`/report-charts/${c.id}`, undefined, { raw: '{"options":{"__proto__":1}}', headers: { 'content-type': 'application/json' } }), 'options.__proto__', 'invalid_key');
      expect(ok(await H().get(`/report-charts/${c.id}`)).options).toEqual({ ok: 1 });
    });

    it('startDate and endDate filters take only calendar dates YYYY-MM-DD (400 invalid_query_param otherwise)', async () => {
      for (const q of ['startDate[gt]=banana', 'endDate[lte]=2026-02-30', 'startDate[lt]=2026-4-1', 'endDate[gt]=2026-13-01', 'startDate[gte]=2026-04-01T00:00:00Z']) {
        const r = problem(await H().get(`/report-charts?${q}`), 400, 'invalid_query_param');
        expect(r.name, q).toBe(q.slice(0, q.indexOf('=')));
      }
      expect((await H().get('/report-charts?startDate[gt]=2024-02-29&endDate[lte]=2026-12-31')).status).toBe(200);
    });

    it('role policy: regular members create, change and delete charts; a guest (client) has no access (403 permission_denied)', async () => {
      const c = await chart(H(), { projects: [p.id] }, H().a.regular.token);
      expect(c.createdById).toBe(H().a.regular.id);
      problem(await H().get('/report-charts', { token: H().a.client.token }), 403, 'permission_denied');
      problem(await H().get(`/report-charts/${c.id}`, { token: H().a.client.token }), 403, 'permission_denied');
      problem(await H().post('/report-charts', { name: 'x', type: 'burnup' }, { token: H().a.client.token }), 403, 'permission_denied');
      expect((await H().del(`/report-charts/${c.id}`, { token: H().a.regular.token })).status).toBe(204);
      problem(await H().get(`/report-charts/${c.id}`), 404, 'resource_not_found');
    });

    it('another workspace\'s charts are unknown ids (404) and never listed; its projects cannot be linked (404 m2m_target_not_found)', async () => {
      const tokB = H().b.owner.token;
      const pb = await H().project({ name: 'Beta chart project' }, tokB);
      const cb = await chart(H(), { projects: [pb.id] }, tokB);
      problem(await H().get(`/report-charts/${cb.id}`), 404, 'resource_not_found');
      problem(await H().patch(`/report-charts/${cb.id}`, { name: 'x' }), 404, 'resource_not_found');
      problem(await H().del(`/report-charts/${cb.id}`), 404, 'resource_not_found');
      expect(ids(ok(await H().get('/report-charts?limit=200')).data)).not.toContain(cb.id);
      const r = problem(await H().post('/report-charts', { name: 'x', type: 'burnup', projects: [pb.id] }), 404, 'm2m_target_not_found');
      expect(r.missing).toEqual([pb.id]);
    });
  });

  describe(`[${factory.name}] v3 Events: membership relation reportChart (projects), with project access`, () => {
    const H = harnessPerDescribe(factory);
    let open1: any;
    let open2: any;
    let closed: any;
    beforeAll(async () => {
      // The regular member opens open1 and open2, not closed (limited, the owner's alone).
      open1 = await H().project({ name: 'Chart open 1', members: [H().a.regular.id] });
      open2 = await H().project({ name: 'Chart open 2', members: [H().a.regular.id] });
      closed = await H().project({ name: 'Chart closed' });
    });

    it('create with projects: reportChart.created (projectId null) and one reportChart.projects.added per project', async () => {
      const { result: c, events } = await during(H(), () => chart(H(), { projects: [open1.id, open2.id] }));
      expect(sorted(c.projects)).toEqual(sorted([open1.id, open2.id]));
      const created = ofType(events, 'reportChart.created', c.id);
      expect(created).toHaveLength(1);
      expect(created[0].projectId).toBeNull();
      expect(membership(events, 'reportChart.projects.added')).toEqual(sorted([open1.id, open2.id]).map((id) => [id, 'projects', c.id]));
    });

    it('POST and DELETE /report-charts/{id}/projects add and remove projects, each with its event; PATCH projects replaces the set', async () => {
      const c = await chart(H(), { projects: [open1.id] });
      const add = await during(H(), () => H().post(`/report-charts/${c.id}/projects`, { ids: [open2.id] }));
      expect(sorted(ok(add.result).projects)).toEqual(sorted([open1.id, open2.id]));
      expect(membership(add.events, 'reportChart.projects.added')).toEqual([[open2.id, 'projects', c.id]]);
      const rm = await during(H(), () => H().del(`/report-charts/${c.id}/projects`, { body: { ids: [open1.id] } }));
      expect(ok(rm.result).projects).toEqual([open2.id]);
      expect(membership(rm.events, 'reportChart.projects.removed')).toEqual([[open1.id, 'projects', c.id]]);
      const rep = await during(H(), () => H().patch(`/report-charts/${c.id}`, { projects: [open1.id] }));
      expect(ok(rep.result).projects).toEqual([open1.id]);
      expect(membership(rep.events, 'reportChart.projects.removed')).toEqual([[open2.id, 'projects', c.id]]);
      expect(membership(rep.events, 'reportChart.projects.added')).toEqual([[open1.id, 'projects', c.id]]);
      expect(ofType(rep.events, 'reportChart.updated', c.id)).toHaveLength(1);
      expect(ids(ok(await H().get(`/report-charts?projectId[eq]=${open1.id}&limit=200`)).data)).toContain(c.id);
      expect(ids(ok(await H().get(`/report-charts?projectId[eq]=${open2.id}&limit=200`)).data)).not.toContain(c.id);
      const g = ok(await H().get(`/report-charts/${c.id}?expand=projects`));
      expect(g.projects.map((x: any) => x.id)).toEqual([open1.id]);
      problem(await H().post(`/report-charts/${c.id}/projects`, { ids: ['nosuchproject00'] }), 404, 'm2m_target_not_found');
      problem(await H().post(`/report-charts/${c.id}/projects`, { ids: [] }), 400, 'batch_empty');
    });

    it('linking a project the caller cannot open → 403 project_access_denied (create, PATCH, sub-route), nothing written, no event', async () => {
      const tok = H().a.regular.token;
      const before = (await H().outbox()).length;
      problem(await H().post('/report-charts', { name: 'Sneaky', type: 'workload', projects: [open1.id, closed.id] }, { token: tok }), 403, 'project_access_denied');
      expect(ok(await H().get('/report-charts?name[eq]=Sneaky')).data).toEqual([]);
      const c = await chart(H(), { projects: [open1.id] }, tok);
      const mid = (await H().outbox()).length;
      problem(await H().patch(`/report-charts/${c.id}`, { projects: [open1.id, closed.id] }, { token: tok }), 403, 'project_access_denied');
      expect(problem(await H().post(`/report-charts/${c.id}/projects`, { ids: [closed.id] }, { token: tok }), 403, 'project_access_denied').projectId).toBe(closed.id);
      expect(ok(await H().get(`/report-charts/${c.id}`)).projects).toEqual([open1.id]);
      expect((await H().outbox()).length).toBe(mid);
      expect(mid).toBeGreaterThan(before);
      // The owner, who opens every project, may link it.
      expect(sorted(ok(await H().post(`/report-charts/${c.id}/projects`, { ids: [closed.id] })).projects)).toEqual(sorted([open1.id, closed.id]));
    });

    it('a member who cannot open one of a chart\'s projects reads the chart and its project ids, but expand=projects shows only the projects they open; they cannot change, relink or delete it (403)', async () => {
      const tok = H().a.regular.token;
      const c = await chart(H(), { name: 'Portfolio flow', type: 'cumulativeFlow', projects: [open1.id, closed.id] });
      const seen = ok(await H().get(`/report-charts/${c.id}`, { token: tok }));
      expect(sorted(seen.projects)).toEqual(sorted([open1.id, closed.id]));
      const expanded = ok(await H().get(`/report-charts/${c.id}?expand=projects`, { token: tok }));
      expect(expanded.projects.map((x: any) => x.id)).toEqual([open1.id]);
      const listed = ok(await H().get(`/report-charts?name[eq]=Portfolio%20flow&expand=projects`, { token: tok }));
      expect(listed.data.map((x: any) => x.projects.map((y: any) => y.id))).toEqual([[open1.id]]);
      // The refusal names the project the caller cannot open.
      expect(problem(await H().patch(`/report-charts/${c.id}`, { name: 'Mine now' }, { token: tok }), 403, 'project_access_denied').projectId).toBe(closed.id);
      problem(await H().patch(`/report-charts/${c.id}`, { projects: [open1.id] }, { token: tok }), 403, 'project_access_denied');
      problem(await H().post(`/report-charts/${c.id}/projects`, { ids: [open2.id] }, { token: tok }), 403, 'project_access_denied');
      problem(await H().del(`/report-charts/${c.id}/projects`, { token: tok, body: { ids: [closed.id] } }), 403, 'project_access_denied');
      problem(await H().del(`/report-charts/${c.id}`, { token: tok }), 403, 'project_access_denied');
      const still = ok(await H().get(`/report-charts/${c.id}`));
      expect(still.name).toBe('Portfolio flow');
      expect(sorted(still.projects)).toEqual(sorted([open1.id, closed.id]));
      // Once the owner unlinks the closed project, the member may change the chart.
      ok(await H().del(`/report-charts/${c.id}/projects`, { body: { ids: [closed.id] } }));
      expect(ok(await H().patch(`/report-charts/${c.id}`, { name: 'Mine now' }, { token: tok })).name).toBe('Mine now');
    });

    it('a trashed project cannot be linked (404 m2m_target_not_found); a purged project leaves the charts that spanned it', async () => {
      const doomed = await H().project({ name: 'Chart doomed' });
      const c = await chart(H(), { projects: [open1.id, doomed.id] });
      expect((await H().del(`/projects/${doomed.id}`)).status).toBe(204);
      const other = await chart(H());
      problem(await H().post(`/report-charts/${other.id}/projects`, { ids: [doomed.id] }), 404, 'm2m_target_not_found');
      // Trashed: the link stays (a restore brings the project back into the chart), but expand shows only live projects.
      expect(sorted(ok(await H().get(`/report-charts/${c.id}`)).projects)).toEqual(sorted([open1.id, doomed.id]));
      expect(ok(await H().get(`/report-charts/${c.id}?expand=projects`)).projects.map((x: any) => x.id)).toEqual([open1.id]);
      H().clock.advance(31 * DAY);
      await H().api.jobs.purge();
      expect(ok(await H().get(`/report-charts/${c.id}`)).projects).toEqual([open1.id]);
    });

    it('a trashed project stays linked and can be unlinked (DELETE sub-route) or kept (PATCH sending projects as GET shows them); the purge drops the link silently (docs/not-shown.md)', async () => {
      const t1 = await H().project({ name: 'Chart trashed 1' });
      const t2 = await H().project({ name: 'Chart trashed 2' });
      const c = await chart(H(), { projects: [open1.id, t1.id, t2.id] });
      const d = await chart(H(), { projects: [open1.id, t2.id] });
      expect((await H().del(`/projects/${t1.id}`)).status).toBe(204);
      expect((await H().del(`/projects/${t2.id}`)).status).toBe(204);
      const shown = ok(await H().get(`/report-charts/${c.id}`));
      expect(sorted(shown.projects)).toEqual(sorted([open1.id, t1.id, t2.id]));
      // PATCH with the set exactly as GET returned it: accepted, nothing changes in the set.
      const kept = await during(H(), () => H().patch(`/report-charts/${c.id}`, { name: 'Kept', projects: shown.projects }));
      expect(sorted(ok(kept.result).projects)).toEqual(sorted([open1.id, t1.id, t2.id]));
      expect(ofType(kept.events, 'reportChart.projects.removed')).toEqual([]);
      // Unlinking a trashed project: 200, with its event.
      const rm = await during(H(), () => H().del(`/report-charts/${c.id}/projects`, { body: { ids: [t1.id] } }));
      expect(sorted(ok(rm.result).projects)).toEqual(sorted([open1.id, t2.id]));
      expect(membership(rm.events, 'reportChart.projects.removed')).toEqual([[t1.id, 'projects', c.id]]);
      // PATCH dropping the other trashed one.
      expect(ok(await H().patch(`/report-charts/${c.id}`, { projects: [open1.id] })).projects).toEqual([open1.id]);
      // Relinking a trashed project (not linked now) is still refused.
      problem(await H().patch(`/report-charts/${c.id}`, { projects: [open1.id, t1.id] }), 404, 'm2m_target_not_found');
      // A purge drops links silently: no reportChart.projects.removed, the chart's updatedAt unchanged.
      const before = ok(await H().get(`/report-charts/${d.id}`));
      H().clock.advance(31 * DAY);
      const purged = await during(H(), () => H().api.jobs.purge());
      expect(ofType(purged.events, 'reportChart.projects.removed')).toEqual([]);
      expect(ofType(purged.events, 'project.force_deleted', t2.id)).toHaveLength(1);
      const after = ok(await H().get(`/report-charts/${d.id}`));
      expect(after.projects).toEqual([open1.id]);
      expect(after.updatedAt).toBe(before.updatedAt);
    });

    it('PATCH emits reportChart.updated with the full resource; DELETE emits reportChart.removed', async () => {
      const c = await chart(H(), { projects: [open1.id] });
      const up = await during(H(), () => H().patch(`/report-charts/${c.id}`, { name: 'Renamed chart' }));
      const ev = ofType(up.events, 'reportChart.updated', c.id);
      expect(ev).toHaveLength(1);
      expect(ev[0].payload.reportChart).toMatchObject({ id: c.id, name: 'Renamed chart', type: 'burndown', projects: [open1.id] });
      const del = await during(H(), () => H().del(`/report-charts/${c.id}`));
      expect(ofType(del.events, 'reportChart.removed', c.id)).toHaveLength(1);
      problem(await H().get(`/report-charts/${c.id}`), 404, 'resource_not_found');
    });
  });
}
