import { describe, it, expect, beforeAll } from 'vitest';
import type { Harness, Reply, StoreFactory } from '../../kit';
import { DAY, sorted, expectOk as ok, expectProblem as problem, expectInvalid as invalid } from './helpers';
import { during, harnessPerDescribe, ofType } from '../shared';

/**
 * Project dashboards (spec "Project Dashboard", the States table row
 * "Project dashboard", Limits "dashboard name 100 characters"), with the
 * widget fields the spec leaves "not shown" (docs/not-shown.md "Project
 * dashboards"): widgets carry id, type, title, config and position.
 */

const ids = (rows: any[]): string[] => rows.map((r) => r.id);

async function listIds(h: Harness, path: string, token?: string): Promise<string[]> {
  return ids(ok(await h.get(path, { token })).data);
}

async function dashboard(h: Harness, projectId: string, body: Record<string, unknown> = {}, token?: string): Promise<any> {
  return ok(await h.post('/project-dashboards', { name: 'Board', projectId, ...body }, { token }), 201);
}

export function dashboardsSuite(factory: StoreFactory): void {

  describe(`[${factory.name}] v3 Project Dashboard: fields (name, projectId, isShared, isDefault, createdById)`, () => {
    const H = harnessPerDescribe(factory);
    let p: any;
    beforeAll(async () => {
      p = await H().project({ name: 'Dashboards P', members: [H().a.regular.id, H().a.client.id] });
    });

    it('POST /project-dashboards → 201: shared, not the default, no widgets, createdById the caller; GET answers the same', async () => {
      const h = H();
      const d = ok(await h.post('/project-dashboards', { name: '  Overview  ', projectId: p.id }, { token: h.a.regular.token }), 201);
      expect(d).toMatchObject({ name: 'Overview', projectId: p.id, isShared: true, isDefault: false, widgets: [], createdById: h.a.regular.id });
      expect(d.createdAt).toBeTypeOf('string');
      expect(ok(await h.get(`/project-dashboards/${d.id}`))).toEqual(d);
    });

    it('Limits: a dashboard name holds at most 100 characters (101 refused on create and update); blank or missing is refused', async () => {
      const h = H();
      const d = await dashboard(h, p.id, { name: 'd'.repeat(100) });
      expect(d.name).toHaveLength(100);
      invalid(await h.post('/project-dashboards', { name: 'd'.repeat(101), projectId: p.id }), 'name');
      invalid(await h.patch(`/project-dashboards/${d.id}`, { name: 'e'.repeat(101) }), 'name');
      invalid(await h.post('/project-dashboards', { projectId: p.id }), 'name');
      invalid(await h.post('/project-dashboards', { name: '   ', projectId: p.id }), 'name');
      expect(ok(await h.get(`/project-dashboards/${d.id}`)).name).toBe('d'.repeat(100));
    });

    it('projectId is required (400 project_not_specified), must be a project of this workspace (404), and is set once (immutable)', async () => {
      const h = H();
      problem(await h.post('/project-dashboards', { name: 'Nowhere' }), 400, 'project_not_specified');
      const pb = await h.project({ name: 'Beta dashboards' }, h.b.owner.token);
      expect(problem(await h.post('/project-dashboards', { name: 'Cross', projectId: pb.id }), 404, 'resource_not_found').field).toBe('projectId');
      const q = await h.project({ name: 'Dashboards Q' });
      const d = await dashboard(h, p.id);
      invalid(await h.patch(`/project-dashboards/${d.id}`, { projectId: q.id }), 'projectId', 'immutable');
      expect(ok(await h.get(`/project-dashboards/${d.id}`)).projectId).toBe(p.id);
    });

    it('createdById is server-set: a value sent is ignored on create (Standard operations rule 1)', async () => {
      const h = H();
      const d = ok(await h.post('/project-dashboards', { name: 'Mine', projectId: p.id, createdById: h.a.regular.id }), 201);
      expect(d.createdById).toBe(h.a.owner.id);
    });

    it('isShared and isDefault must be booleans', async () => {
      const h = H();
      invalid(await h.post('/project-dashboards', { name: 'Bad', projectId: p.id, isShared: 'yes' }), 'isShared');
      invalid(await h.post('/project-dashboards', { name: 'Bad', projectId: p.id, isDefault: 1 }), 'isDefault');
    });

    it('Role policy: a client reads dashboards of its projects but cannot create, change or delete them (403 permission_denied)', async () => {
      const h = H();
      const d = await dashboard(h, p.id, { name: 'Client reads' });
      const token = h.a.client.token;
      expect(ok(await h.get(`/project-dashboards/${d.id}`, { token })).id).toBe(d.id);
      problem(await h.post('/project-dashboards', { name: 'No', projectId: p.id }, { token }), 403, 'permission_denied');
      problem(await h.patch(`/project-dashboards/${d.id}`, { name: 'No' }, { token }), 403, 'permission_denied');
      problem(await h.del(`/project-dashboards/${d.id}`, { token }), 403, 'permission_denied');
    });

    it('a member who cannot open the project: 403 project_access_denied on create and GET, never listed', async () => {
      const h = H();
      const secret = await h.project({ name: 'Secret dashboards' });
      const d = await dashboard(h, secret.id);
      const token = h.a.regular.token;
      expect(problem(await h.post('/project-dashboards', { name: 'Sneak', projectId: secret.id }, { token }), 403, 'project_access_denied').projectId).toBe(secret.id);
      expect(problem(await h.get(`/project-dashboards/${d.id}`, { token }), 403, 'project_access_denied').projectId).toBe(secret.id);
      expect(await listIds(h, '/project-dashboards?limit=200', token)).not.toContain(d.id);
    });

    it('another workspace\'s dashboards are unknown ids (404) and never listed', async () => {
      const h = H();
      const d = await dashboard(h, p.id);
      const token = h.b.owner.token;
      problem(await h.get(`/project-dashboards/${d.id}`, { token }), 404, 'resource_not_found');
      problem(await h.patch(`/project-dashboards/${d.id}`, { name: 'X' }, { token }), 404, 'resource_not_found');
      problem(await h.del(`/project-dashboards/${d.id}`, { token }), 404, 'resource_not_found');
      expect(await listIds(h, '/project-dashboards?limit=200', token)).toEqual([]);
    });
  });

  describe(`[${factory.name}] v3 States and transitions "Project dashboard": at most one default per project; isDefault true forces isShared true and clears the previous default`, () => {
    const H = harnessPerDescribe(factory);
    let p: any;
    let q: any;
    beforeAll(async () => {
      p = await H().project({ name: 'Defaults P', members: [H().a.regular.id] });
      q = await H().project({ name: 'Defaults Q' });
    });

    const defaults = async (h: Harness, projectId: string) => listIds(h, `/project-dashboards?projectId=${projectId}&isDefault[eq]=true`);

    it('creating a default clears the previous one (projectDashboard.updated for it); other projects keep theirs', async () => {
      const h = H();
      const first = await dashboard(h, p.id, { name: 'First', isDefault: true });
      const other = await dashboard(h, q.id, { name: 'Q default', isDefault: true });
      expect(first.isDefault).toBe(true);
      const { result, events } = await during(h, () => dashboard(h, p.id, { name: 'Second', isDefault: true }));
      expect(result.isDefault).toBe(true);
      expect(ok(await h.get(`/project-dashboards/${first.id}`)).isDefault).toBe(false);
      const cleared = ofType(events, 'projectDashboard.updated', first.id);
      expect(cleared).toHaveLength(1);
      expect(cleared[0].payload.projectDashboard.isDefault).toBe(false);
      expect(ofType(events, 'projectDashboard.created', result.id)).toHaveLength(1);
      expect(await defaults(h, p.id)).toEqual([result.id]);
      expect(await defaults(h, q.id)).toEqual([other.id]);
    });

    it('create with isDefault true and isShared false: isShared is forced true', async () => {
      const h = H();
      const d = await dashboard(h, p.id, { name: 'Forced', isDefault: true, isShared: false });
      expect(d).toMatchObject({ isDefault: true, isShared: true });
      expect(await listIds(h, `/project-dashboards?projectId=${p.id}`, h.a.regular.token)).toContain(d.id);
    });

    it('PATCH isDefault true on a private dashboard makes it shared and the only default', async () => {
      const h = H();
      const old = await dashboard(h, p.id, { name: 'Old default', isDefault: true });
      const priv = await dashboard(h, p.id, { name: 'Private', isShared: false });
      problem(await h.get(`/project-dashboards/${priv.id}`, { token: h.a.regular.token }), 404, 'resource_not_found');
      const u = ok(await h.patch(`/project-dashboards/${priv.id}`, { isDefault: true }));
      expect(u).toMatchObject({ isDefault: true, isShared: true });
      expect(ok(await h.get(`/project-dashboards/${old.id}`)).isDefault).toBe(false);
      expect(await defaults(h, p.id)).toEqual([priv.id]);
      expect(ok(await h.get(`/project-dashboards/${priv.id}`, { token: h.a.regular.token })).id).toBe(priv.id);
      // isDefault true with isShared false in the same PATCH: still forced shared.
      const again = await dashboard(h, p.id, { name: 'Again', isShared: false });
      expect(ok(await h.patch(`/project-dashboards/${again.id}`, { isDefault: true, isShared: false }))).toMatchObject({ isDefault: true, isShared: true });
      expect(await defaults(h, p.id)).toEqual([again.id]);
    });

    it('the default cannot turn private (400 default_must_be_shared on isShared); with isDefault false in the same PATCH it can', async () => {
      const h = H();
      const d = await dashboard(h, p.id, { name: 'Stays shared', isDefault: true });
      invalid(await h.patch(`/project-dashboards/${d.id}`, { isShared: false }), 'isShared', 'default_must_be_shared');
      expect(ok(await h.get(`/project-dashboards/${d.id}`))).toMatchObject({ isDefault: true, isShared: true });
      const u = ok(await h.patch(`/project-dashboards/${d.id}`, { isDefault: false, isShared: false }));
      expect(u).toMatchObject({ isDefault: false, isShared: false });
      expect(await defaults(h, p.id)).toEqual([]);
    });

    it('PATCH isDefault true on the current default changes nothing else (no other dashboard is touched)', async () => {
      const h = H();
      const d = await dashboard(h, q.id, { name: 'Steady', isDefault: true });
      const { events } = await during(h, () => h.patch(`/project-dashboards/${d.id}`, { isDefault: true, name: 'Steady 2' }));
      expect(ofType(events, 'projectDashboard.updated').map((e) => e.aggregateId)).toEqual([d.id]);
      expect(await defaults(h, q.id)).toEqual([d.id]);
    });

    it('many defaults set one after another leave exactly one', async () => {
      const h = H();
      const r = await h.project({ name: 'Many defaults' });
      const made: any[] = [];
      for (let i = 0; i < 5; i++) made.push(await dashboard(h, r.id, { name: `D${i}`, isDefault: i % 2 === 0 }));
      for (const d of made) ok(await h.patch(`/project-dashboards/${d.id}`, { isDefault: true }));
      expect(await defaults(h, r.id)).toEqual([made[4].id]);
      const concurrent = await Promise.all(made.map((d) => h.patch(`/project-dashboards/${d.id}`, { isDefault: true })));
      for (const c of concurrent) ok(c);
      expect(await defaults(h, r.id)).toHaveLength(1);
    });
  });

  describe(`[${factory.name}] v3 Project Dashboard: isShared false is private to its creator`, () => {
    const H = harnessPerDescribe(factory);
    let p: any;
    let priv: any;
    beforeAll(async () => {
      p = await H().project({ name: 'Private boards', members: [H().a.regular.id, H().a.client.id] });
      priv = await dashboard(H(), p.id, { name: 'Regular\'s own', isShared: false }, H().a.regular.token);
    });

    it('the creator reads, lists and changes it', async () => {
      const h = H();
      const token = h.a.regular.token;
      expect(ok(await h.get(`/project-dashboards/${priv.id}`, { token })).isShared).toBe(false);
      expect(await listIds(h, `/project-dashboards?projectId=${p.id}`, token)).toContain(priv.id);
      expect(ok(await h.patch(`/project-dashboards/${priv.id}`, { name: 'Renamed own' }, { token })).name).toBe('Renamed own');
    });

    for (const who of ['owner', 'client'] as const) {
      it(`the ${who} (not its creator) gets 404 on GET, PATCH and DELETE and never lists it, not even with isShared[eq]=false`, async () => {
        const h = H();
        const token = h.a[who].token;
        problem(await h.get(`/project-dashboards/${priv.id}`, { token }), 404, 'resource_not_found');
        const patched = await h.patch(`/project-dashboards/${priv.id}`, { name: 'Seen' }, { token });
        if (who === 'owner') problem(patched, 404, 'resource_not_found');
        else expect(patched.status).toBe(403);
        if (who === 'owner') problem(await h.del(`/project-dashboards/${priv.id}`, { token }), 404, 'resource_not_found');
        expect(await listIds(h, `/project-dashboards?projectId=${p.id}`, token)).not.toContain(priv.id);
        expect(await listIds(h, '/project-dashboards?isShared[eq]=false&limit=200', token)).not.toContain(priv.id);
        expect(await listIds(h, `/project-dashboards?createdById[eq]=${h.a.regular.id}&limit=200`, token)).not.toContain(priv.id);
      });
    }

    it('sharing it (isShared true) shows it to the project; making it private again hides it', async () => {
      const h = H();
      const d = await dashboard(h, p.id, { name: 'Toggle', isShared: false }, h.a.regular.token);
      ok(await h.patch(`/project-dashboards/${d.id}`, { isShared: true }, { token: h.a.regular.token }));
      expect(ok(await h.get(`/project-dashboards/${d.id}`)).id).toBe(d.id);
      ok(await h.patch(`/project-dashboards/${d.id}`, { isShared: false }, { token: h.a.regular.token }));
      problem(await h.get(`/project-dashboards/${d.id}`), 404, 'resource_not_found');
    });

    it('only its creator makes a shared dashboard private: another member (a regular member, even the workspace owner) → 403 permission_denied and it stays shared for everyone; other changes by them still pass', async () => {
      const h = H();
      const owners = await dashboard(h, p.id, { name: 'Owner\'s shared' });
      const regulars = await dashboard(h, p.id, { name: 'Regular\'s shared' }, h.a.regular.token);
      problem(await h.patch(`/project-dashboards/${owners.id}`, { isShared: false }, { token: h.a.regular.token }), 403, 'permission_denied');
      problem(await h.patch(`/project-dashboards/${regulars.id}`, { isShared: false, name: 'Hidden' }), 403, 'permission_denied');
      for (const d of [owners, regulars]) {
        for (const token of [h.a.owner.token, h.a.regular.token, h.a.client.token]) {
          expect(ok(await h.get(`/project-dashboards/${d.id}`, { token }))).toMatchObject({ isShared: true, name: d.name });
        }
      }
      expect(ok(await h.patch(`/project-dashboards/${owners.id}`, { name: 'Renamed by regular', isShared: true }, { token: h.a.regular.token })).isShared).toBe(true);
      expect(ok(await h.patch(`/project-dashboards/${regulars.id}`, { isShared: false }, { token: h.a.regular.token })).isShared).toBe(false);
      expect(ok(await h.patch(`/project-dashboards/${owners.id}`, { isShared: false })).isShared).toBe(false);
    });

    it('events of a private dashboard are queued only for webhooks its creator registered; a shared one\'s for every webhook', async () => {
      const h = H();
      // The owner's webhook (the owner holds manageWebhooks): the regular member's private dashboard is not the owner's to see.
      const hook = ok(await h.post('/webhooks', { name: 'owner hook', url: 'https://hooks.invalid/owner', events: ['projectDashboard.*'] }), 201);
      const queued = async (eventIds: string[]) => {
        const jobs = await h.store.db.selectFrom('webhook_jobs').selectAll().where('webhook_id', '=', hook.id).execute();
        const got = new Set(jobs.map((j: any) => j.event_id));
        return eventIds.filter((id) => got.has(id));
      };
      const quiet = await during(h, () => dashboard(h, p.id, { name: 'Quiet', isShared: false }, h.a.regular.token));
      const loud = await during(h, () => dashboard(h, p.id, { name: 'Loud' }, h.a.regular.token));
      const quietEvents = ofType(quiet.events, 'projectDashboard.created', quiet.result.id);
      const loudEvents = ofType(loud.events, 'projectDashboard.created', loud.result.id);
      expect(quietEvents).toHaveLength(1);
      expect(loudEvents).toHaveLength(1);
      expect(await queued([quietEvents[0].eventId])).toEqual([]);
      expect(await queued([loudEvents[0].eventId])).toEqual([loudEvents[0].eventId]);
      ok(await h.del(`/webhooks/${hook.id}`), 204);
    });
  });

  describe(`[${factory.name}] v3 Project Dashboard: widgets (REPLACE semantics; position is the array index)`, () => {
    const H = harnessPerDescribe(factory);
    let p: any;
    beforeAll(async () => {
      p = await H().project({ name: 'Widgets P' });
    });

    it('widgets sent on create get ids and their array index as position', async () => {
      const h = H();
      const d = await dashboard(h, p.id, { widgets: [{ type: 'tasks', title: 'Open tasks', config: { filter: 'open' } }, { type: 'text' }] });
      expect(d.widgets).toHaveLength(2);
      expect(d.widgets[0]).toMatchObject({ type: 'tasks', title: 'Open tasks', config: { filter: 'open' }, position: 0 });
      expect(d.widgets[1]).toMatchObject({ type: 'text', title: null, config: {}, position: 1 });
      expect(d.widgets[0].id).toBeTypeOf('string');
      expect(d.widgets[0].id).not.toBe(d.widgets[1].id);
    });

    it('omitting the key leaves widgets untouched; [] removes all; the array becomes the full set (kept by id, new ones added, left-out ones deleted)', async () => {
      const h = H();
      const d = await dashboard(h, p.id, { widgets: [{ type: 'tasks' }, { type: 'chart' }, { type: 'text' }] });
      const [a, b, c] = d.widgets;
      expect(ok(await h.patch(`/project-dashboards/${d.id}`, { name: 'Renamed' })).widgets).toEqual(d.widgets);
      const u = ok(await h.patch(`/project-dashboards/${d.id}`, { widgets: [{ id: c.id, type: 'text', title: 'Now first' }, { type: 'members' }, { id: a.id, type: 'tasks' }] }));
      expect(u.widgets.map((w: any) => [w.type, w.position])).toEqual([['text', 0], ['members', 1], ['tasks', 2]]);
      expect(u.widgets[0].id).toBe(c.id);
      expect(u.widgets[0].title).toBe('Now first');
      expect(u.widgets[2].id).toBe(a.id);
      expect(u.widgets.map((w: any) => w.id)).not.toContain(b.id);
      expect(ok(await h.get(`/project-dashboards/${d.id}`)).widgets).toEqual(u.widgets);
      // A widget left out is gone: its id can no longer be kept.
      invalid(await h.patch(`/project-dashboards/${d.id}`, { widgets: [{ id: b.id, type: 'chart' }] }), 'widgets.0.id', 'unknown_widget');
      expect(ok(await h.patch(`/project-dashboards/${d.id}`, { widgets: [] })).widgets).toEqual([]);
      expect(ok(await h.get(`/project-dashboards/${d.id}`)).widgets).toEqual([]);
    });

    it('a widget id of another dashboard, an id twice, or a changed type is refused and nothing changes', async () => {
      const h = H();
      const d = await dashboard(h, p.id, { widgets: [{ type: 'tasks' }] });
      const other = await dashboard(h, p.id, { widgets: [{ type: 'chart' }] });
      const w = d.widgets[0];
      invalid(await h.patch(`/project-dashboards/${d.id}`, { widgets: [{ id: other.widgets[0].id, type: 'chart' }] }), 'widgets.0.id', 'unknown_widget');
      invalid(await h.patch(`/project-dashboards/${d.id}`, { widgets: [{ id: w.id, type: 'tasks' }, { id: w.id, type: 'tasks' }] }), 'widgets.1.id', 'duplicate_widget');
      invalid(await h.patch(`/project-dashboards/${d.id}`, { widgets: [{ id: w.id, type: 'chart' }] }), 'widgets.0.type', 'immutable');
      invalid(await h.post('/project-dashboards', { name: 'Id on create', projectId: p.id, widgets: [{ id: w.id, type: 'tasks' }] }), 'widgets.0.id', 'unknown_widget');
      expect(ok(await h.get(`/project-dashboards/${d.id}`)).widgets).toEqual(d.widgets);
    });

    it('widget shape is validated exactly: known types only, no unknown keys, bounded title, config an object of at most 8 KiB, at most 50 widgets', async () => {
      const h = H();
      const base = { name: 'Shapes', projectId: p.id };
      invalid(await h.post('/project-dashboards', { ...base, widgets: [{ type: 'spinner' }] }), 'widgets.0.type');
      invalid(await h.post('/project-dashboards', { ...base, widgets: [{ type: 'tasks', colour: 'red' }] }), 'widgets.0');
      invalid(await h.post('/project-dashboards', { ...base, widgets: [{ type: 'tasks', title: 't'.repeat(101) }] }), 'widgets.0.title');
      invalid(await h.post('/project-dashboards', { ...base, widgets: [{ type: 'tasks', config: [1, 2] }] }), 'widgets.0.config');
      invalid(await h.post('/project-dashboards', { ...base, widgets: [{ type: 'text', config: { text: 'x'.repeat(9000) } }] }), 'widgets.0.config');
      invalid(await h.post('/project-dashboards', { ...base, widgets: {} }), 'widgets');
      invalid(await h.post('/project-dashboards', { ...base, widgets: null }), 'widgets');
      const fifty = Array.from({ length: 50 }, () => ({ type: 'text' }));
      expect(ok(await h.post('/project-dashboards', { ...base, widgets: fifty }), 201).widgets).toHaveLength(50);
      invalid(await h.post('/project-dashboards', { ...base, widgets: [...fifty, { type: 'text' }] }), 'widgets');
    });
  });

  describe(`[${factory.name}] v3 Project Dashboard: hard delete (widgets go with it), filters, default sort, expand`, () => {
    const H = harnessPerDescribe(factory);
    let p: any;
    beforeAll(async () => {
      p = await H().project({ name: 'Delete boards', members: [H().a.regular.id] });
    });

    it('DELETE → 204 and projectDashboard.removed; the dashboard and its widgets are gone (GET 404, no restore)', async () => {
      const h = H();
      const d = await dashboard(h, p.id, { widgets: [{ type: 'tasks' }] });
      const { result, events } = await during(h, () => h.del(`/project-dashboards/${d.id}`));
      expect(result.status).toBe(204);
      expect(ofType(events, 'projectDashboard.removed', d.id)).toHaveLength(1);
      problem(await h.get(`/project-dashboards/${d.id}`), 404, 'resource_not_found');
      expect((await h.post(`/project-dashboards/${d.id}/restore`)).status).toBeGreaterThanOrEqual(400);
      const rows = await h.store.db.selectFrom('project_dashboards').select('id').where('id', '=', d.id).execute();
      expect(rows).toEqual([]);
    });

    it('purging a trashed project destroys its dashboards', async () => {
      const h = H();
      const doomed = await h.project({ name: 'Doomed boards' });
      const d = await dashboard(h, doomed.id, { isDefault: true });
      expect((await h.del(`/projects/${doomed.id}`)).status).toBe(204);
      h.clock.advance(30 * DAY);
      const { events } = await during(h, () => h.api.jobs.purge());
      expect(ofType(events, 'projectDashboard.removed', d.id)).toHaveLength(1);
      const rows = await h.store.db.selectFrom('project_dashboards').select('id').where('id', '=', d.id).execute();
      expect(rows).toEqual([]);
    });

    it('filters name, isShared, isDefault, projectId, createdById; default sort createdAt with projectId, -updatedAt without', async () => {
      const h = H();
      const r = await h.project({ name: 'Filter boards', members: [h.a.regular.id] });
      const d1 = await dashboard(h, r.id, { name: 'Sales board' });
      h.clock.advance(1000);
      const d2 = await dashboard(h, r.id, { name: 'Support board', isDefault: true }, h.a.regular.token);
      h.clock.advance(1000);
      const d3 = await dashboard(h, r.id, { name: 'Sales private', isShared: false });
      h.clock.advance(1000);
      ok(await h.patch(`/project-dashboards/${d1.id}`, { name: 'Sales board 2' }));
      expect(await listIds(h, `/project-dashboards?projectId=${r.id}`)).toEqual([d1.id, d2.id, d3.id]);
      const without = await listIds(h, `/project-dashboards?projectId[eq]=${r.id}`);
      expect(without).toEqual([d1.id, d3.id, d2.id]);
      expect(await listIds(h, `/project-dashboards?projectId=${r.id}&name[startsWith]=Sales`)).toEqual([d1.id, d3.id]);
      expect(await listIds(h, `/project-dashboards?projectId=${r.id}&isShared[eq]=false`)).toEqual([d3.id]);
      expect(await listIds(h, `/project-dashboards?projectId=${r.id}&isDefault[eq]=true`)).toEqual([d2.id]);
      expect(await listIds(h, `/project-dashboards?projectId=${r.id}&createdById[eq]=${h.a.regular.id}`)).toEqual([d2.id]);
      expect(sorted(await listIds(h, `/project-dashboards?projectId[in]=${r.id},${p.id}&name[contains]=board`))).toEqual(sorted([d1.id, d2.id]));
      problem(await h.get('/project-dashboards?widgets[eq]=x'), 400, 'invalid_query_param');
    });

    it('expand project returns the project; an unknown relation is 400 expand_unknown_relation', async () => {
      const h = H();
      const d = await dashboard(h, p.id);
      const got = ok(await h.get(`/project-dashboards/${d.id}?expand=project,createdByActor`));
      expect(got.project.id).toBe(p.id);
      expect(got.createdByActor.id).toBe(d.createdByActorId);
      problem(await h.get(`/project-dashboards/${d.id}?expand=widgets`), 400, 'expand_unknown_relation');
    });
  });
}

export type { Reply };
