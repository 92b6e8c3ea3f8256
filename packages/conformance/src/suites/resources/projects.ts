import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { harness, type Harness, type StoreFactory } from '../../kit';
import { HEX6, problem, fieldsOf, sorted, tint } from './helpers';
import { during, harnessPerDescribe, ofType } from '../shared';
import { DAY, expectOk, expectInvalid } from './helpers';

export function projectsSuite(factory: StoreFactory): void {
  describe(`[${factory.name}] v3 Project (fields, niceId, uniqueness, archive transition)`, () => {
    let h: Harness;
    let otherPortfolio: string;
    beforeAll(async () => {
      h = await harness(factory);
      otherPortfolio = (await h.post('/portfolios', { name: 'Other' })).body.id;
    });
    afterAll(() => h.close());

    const create = (body: Record<string, unknown>) => h.post('/projects', body);

    it('defaults: General portfolio, limited access, all eight modules, derived colours and initials', async () => {
      const r = await create({ name: 'Defaults Check' });
      expect(r.status).toBe(201);
      expect(r.body).toMatchObject({
        portfolioId: h.a.generalPortfolioId,
        accessType: 'limited',
        archived: false,
        initials: 'DC',
        ownerId: h.a.owner.id,
      });
      expect(sorted(r.body.modules)).toEqual(sorted(['tasks', 'milestones', 'calendar', 'documents', 'files', 'discussion', 'forms', 'home']));
      expect(r.body.color).toMatch(HEX6);
      expect(r.body.secondaryColor).toBe(tint(r.body.color.toLowerCase()));
      expect(r.body.members).toEqual([]);
    });

    it('name is unique within the portfolio (409), free across portfolios, reusable after delete; restore clash is 409', async () => {
      const first = await create({ name: 'Apollo' });
      expect(first.status).toBe(201);
      const clash = await create({ name: 'Apollo' });
      expect(problem(clash)).toEqual({ status: 409, code: 'conflict' });
      const elsewhere = await create({ name: 'Apollo', portfolioId: otherPortfolio });
      expect(elsewhere.status).toBe(201);
      expect(elsewhere.body.portfolioId).toBe(otherPortfolio);
      const rename = await create({ name: 'Gemini' });
      const renameClash = await h.patch(`/projects/${rename.body.id}`, { name: 'Apollo' });
      expect(problem(renameClash)).toEqual({ status: 409, code: 'conflict' });
      expect((await h.del(`/projects/${first.body.id}`)).status).toBe(204);
      const again = await create({ name: 'Apollo' });
      expect(again.status).toBe(201);
      const restore = await h.post(`/projects/${first.body.id}/restore`);
      expect(problem(restore)).toEqual({ status: 409, code: 'conflict' });
    });

    it('portfolioId is immutable: another value is validation_failed (immutable), the same value accepted', async () => {
      const r = await create({ name: 'Stays put' });
      const moved = await h.patch(`/projects/${r.body.id}`, { portfolioId: otherPortfolio });
      expect(problem(moved)).toEqual({ status: 400, code: 'validation_failed' });
      expect(moved.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field: 'portfolioId', code: 'immutable' })]));
      const same = await h.patch(`/projects/${r.body.id}`, { portfolioId: h.a.generalPortfolioId, description: 'ok' });
      expect(same.status).toBe(200);
      expect(same.body.portfolioId).toBe(h.a.generalPortfolioId);
    });

    it('an unknown portfolioId is 404 with field', async () => {
      const r = await create({ name: 'Nowhere', portfolioId: 'nosuchportfolio' });
      expect(problem(r)).toEqual({ status: 404, code: 'resource_not_found' });
      expect(r.body.field).toBe('portfolioId');
    });

    it('accessType public adds every team member to members', async () => {
      const r = await create({ name: 'Open house', accessType: 'public' });
      expect(r.status).toBe(201);
      expect(r.body.accessType).toBe('public');
      expect(sorted(r.body.members)).toEqual(sorted([h.a.owner.id, h.a.regular.id, h.a.client.id]));
      const ws = await create({ name: 'Workspace wide', accessType: 'workspace' });
      expect(ws.body.accessType).toBe('workspace');
      expect(ws.body.members).toEqual([]);
      const bad = await create({ name: 'Bad access', accessType: 'secret' });
      expect(problem(bad)).toEqual({ status: 400, code: 'validation_failed' });
      expect(fieldsOf(bad)).toContain('accessType');
    });

    it('modules are set once: a subset is kept, a PATCH with other modules is validation_failed', async () => {
      const r = await create({ name: 'Lean', modules: ['tasks', 'files'] });
      expect(r.body.modules).toEqual(['tasks', 'files']);
      const p = await h.patch(`/projects/${r.body.id}`, { modules: ['tasks'] });
      expect(problem(p)).toEqual({ status: 400, code: 'validation_failed' });
      expect(p.body.errors[0]).toMatchObject({ field: 'modules', code: 'immutable' });
      expect((await h.get(`/projects/${r.body.id}`)).body.modules).toEqual(['tasks', 'files']);
      const unknown = await create({ name: 'Odd modules', modules: ['tasks', 'wiki'] });
      expect(problem(unknown)).toEqual({ status: 400, code: 'validation_failed' });
    });

    it('color must match ^#[0-9A-Fa-f]{6}$; secondaryColor is derived and follows PATCH', async () => {
      for (const color of ['#abc', 'red', '#12345g', '123456']) {
        const r = await create({ name: `Bad ${color}`, color });
        expect(problem(r)).toEqual({ status: 400, code: 'validation_failed' });
        expect(fieldsOf(r)).toContain('color');
      }
      const ok = await create({ name: 'Blue one', color: '#0000ff', secondaryColor: '#000000' });
      expect(ok.body.secondaryColor).toBe('#ccccff');
      const p = await h.patch(`/projects/${ok.body.id}`, { color: '#00ff00' });
      expect(p.body.secondaryColor).toBe('#ccffcc');
    });

    it('niceId is generated from the initials and unique in the workspace', async () => {
      const a = await create({ name: 'Nova Orbit' });
      const b = await create({ name: 'Night Owl' });
      const c = await create({ name: 'Nice Opera', portfolioId: otherPortfolio });
      expect(a.body.niceId).toBe('NO');
      expect(b.body.niceId).toBe('NO2');
      expect(c.body.niceId).toBe('NO3');
      const sent = await create({ name: 'Sent niceId', niceId: 'MINE' });
      expect(sent.status).toBe(201);
      expect(sent.body.niceId).toBe('SN');
    });

    it('order is auto-assigned MAX+1', async () => {
      const a = await create({ name: 'Order one' });
      const b = await create({ name: 'Order two' });
      expect(b.body.order).toBe(a.body.order + 1);
    });

    it('cannot be created archived; PATCH archived true archives it', async () => {
      const bad = await create({ name: 'Born archived', archived: true });
      expect(problem(bad)).toEqual({ status: 400, code: 'validation_failed' });
      expect(fieldsOf(bad)).toContain('archived');
      const none = await h.get('/projects?name[eq]=Born%20archived&archived[eq]=false');
      expect(none.body.data).toHaveLength(0);
      const r = await create({ name: 'Archive me' });
      const p = await h.patch(`/projects/${r.body.id}`, { archived: true });
      expect(p.status).toBe(200);
      expect(p.body.archived).toBe(true);
    });

    it('archived projects leave GET /projects but appear with archived[eq]=true; their tasks and lists stay readable', async () => {
      const r = await create({ name: 'Shelved' });
      const list = await h.post('/lists', { name: 'Backlog', projectId: r.body.id });
      const task = await h.task(r.body.id, { name: 'Still here', listId: list.body.id });
      expect((await h.patch(`/projects/${r.body.id}`, { archived: true })).status).toBe(200);
      const all = await h.get('/projects?limit=200');
      expect(all.body.data.map((p: any) => p.id)).not.toContain(r.body.id);
      const archived = await h.get('/projects?archived[eq]=true&limit=200');
      expect(archived.body.data.map((p: any) => p.id)).toContain(r.body.id);
      expect(archived.body.data.every((p: any) => p.archived === true)).toBe(true);
      const live = await h.get('/projects?archived[eq]=false&limit=200');
      expect(live.body.data.map((p: any) => p.id)).not.toContain(r.body.id);
      expect((await h.get(`/projects/${r.body.id}`)).body.archived).toBe(true);
      const t = await h.get(`/tasks/${task.id}`);
      expect(t.status).toBe(200);
      expect(t.body.archived).toBe(false);
      const tasks = await h.get(`/tasks?projectId=${r.body.id}`);
      expect(tasks.body.data.map((x: any) => x.id)).toEqual([task.id]);
      const l = await h.get(`/lists/${list.body.id}`);
      expect(l.body.archived).toBe(false);
      const un = await h.patch(`/projects/${r.body.id}`, { archived: false });
      expect(un.body.archived).toBe(false);
      expect((await h.get('/projects?limit=200')).body.data.map((p: any) => p.id)).toContain(r.body.id);
    });

    it('defaultStatusId is returned only by GET /projects/{id} and names the default status', async () => {
      const r = await create({ name: 'Board owner' });
      expect('defaultStatusId' in r.body).toBe(false);
      const got = await h.get(`/projects/${r.body.id}`);
      const statuses = await h.get(`/statuses?projectId=${r.body.id}`);
      expect(statuses.body.data).toHaveLength(1);
      expect(got.body.defaultStatusId).toBe(statuses.body.data[0].id);
      const list = await h.get(`/projects?name[eq]=Board%20owner`);
      expect(list.body.data).toHaveLength(1);
      expect('defaultStatusId' in list.body.data[0]).toBe(false);
      const patched = await h.patch(`/projects/${r.body.id}`, { description: 'd' });
      expect('defaultStatusId' in patched.body).toBe(false);
    });

    it('members in a body replace the roster; omitted leaves it untouched', async () => {
      const r = await create({ name: 'Crew', members: [h.a.owner.id, h.a.regular.id] });
      expect(sorted(r.body.members)).toEqual(sorted([h.a.owner.id, h.a.regular.id]));
      const p = await h.patch(`/projects/${r.body.id}`, { members: [h.a.regular.id] });
      expect(p.body.members).toEqual([h.a.regular.id]);
      const q = await h.patch(`/projects/${r.body.id}`, { description: 'no roster change' });
      expect(q.body.members).toEqual([h.a.regular.id]);
      const bad = await h.patch(`/projects/${r.body.id}`, { members: ['nosuchmember1'] });
      expect(problem(bad)).toEqual({ status: 404, code: 'm2m_target_not_found' });
      expect(bad.body.missing).toEqual(['nosuchmember1']);
    });

    it('estimationUnit is points, hours, none or null', async () => {
      const r = await create({ name: 'Estimates', estimationUnit: 'points' });
      expect(r.body.estimationUnit).toBe('points');
      const p = await h.patch(`/projects/${r.body.id}`, { estimationUnit: null });
      expect(p.body.estimationUnit).toBeNull();
      const bad = await h.patch(`/projects/${r.body.id}`, { estimationUnit: 'days' });
      expect(problem(bad)).toEqual({ status: 400, code: 'validation_failed' });
      expect(fieldsOf(bad)).toContain('estimationUnit');
    });

    it('name is at most 100 characters', async () => {
      expect((await create({ name: 'p'.repeat(100) })).status).toBe(201);
      const r = await create({ name: 'p'.repeat(101) });
      expect(problem(r)).toEqual({ status: 400, code: 'validation_failed' });
      expect(fieldsOf(r)).toContain('name');
    });
  });

  describe(`[${factory.name}] v3 Project: autoMilestones ("monthly lists created automatically; applied at create"; docs/not-shown.md "Project autoMilestones")`, () => {
    const H = harnessPerDescribe(factory);
    const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
    const lists = async (projectId: string, token?: string) => expectOk(await H().get(`/lists?projectId=${projectId}&limit=200`, { token })).data as any[];

    it('true at create: 12 milestone lists, the current month and the next 11 (UTC workspace), each with its list.created event in the create', async () => {
      H().clock.set('2026-03-15T12:00:00.000Z');
      const { result, events } = await during(H(), () => H().post('/projects', { name: 'Auto milestones', autoMilestones: true }));
      const p = expectOk(result, 201);
      expect(p.autoMilestones).toBe(true);
      const got = await lists(p.id);
      expect(got.map((l) => l.name)).toEqual([
        'March 2026', 'April 2026', 'May 2026', 'June 2026', 'July 2026', 'August 2026',
        'September 2026', 'October 2026', 'November 2026', 'December 2026', 'January 2027', 'February 2027',
      ]);
      got.forEach((l, i) => {
        const start = Date.UTC(2026, 2 + i, 1);
        const next = Date.UTC(2026, 3 + i, 1);
        expect(l).toMatchObject({ projectId: p.id, isMilestone: true, archived: false, dependencyId: null, statusId: null, assignees: [], customFields: [], start: new Date(start).toISOString(), end: new Date(next - 1).toISOString(), order: (i + 1) * 100 });
        // The List rule: end at least 2 days after start.
        expect(Date.parse(l.end) - Date.parse(l.start)).toBeGreaterThanOrEqual(2 * DAY);
        expect(l.createdByActorId).toBe(p.createdByActorId);
      });
      const created = ofType(events, 'list.created');
      expect(created.map((e) => e.aggregateId).sort()).toEqual(got.map((l) => l.id).sort());
      expect(created.every((e) => e.projectId === p.id && e.payload.list.isMilestone === true)).toBe(true);
      expect(ofType(events, 'project.created', p.id)).toHaveLength(1);
      expect(expectOk(await H().get(`/lists?projectId=${p.id}&isMilestone[eq]=true&limit=200`)).data).toHaveLength(12);
    });

    it('false or omitted: no list is created', async () => {
      for (const body of [{ autoMilestones: false }, {}]) {
        const { result, events } = await during(H(), () => H().post('/projects', { name: `No milestones ${JSON.stringify(body)}`, ...body }));
        const p = expectOk(result, 201);
        expect(p.autoMilestones).toBe(false);
        expect(await lists(p.id)).toEqual([]);
        expect(ofType(events, 'list.created')).toEqual([]);
      }
    });

    it('applied at create only: PATCH to another value → 400 validation_failed (immutable) and no lists; the same value is accepted', async () => {
      const p = expectOk(await H().post('/projects', { name: 'Set once' }), 201);
      expectInvalid(await H().patch(`/projects/${p.id}`, { autoMilestones: true }), 'autoMilestones', 'immutable');
      expect(await lists(p.id)).toEqual([]);
      expect(expectOk(await H().get(`/projects/${p.id}`)).autoMilestones).toBe(false);
      expect(expectOk(await H().patch(`/projects/${p.id}`, { autoMilestones: false, description: 'same value' })).autoMilestones).toBe(false);
      const q = expectOk(await H().post('/projects', { name: 'Set once true', autoMilestones: true }), 201);
      expectInvalid(await H().patch(`/projects/${q.id}`, { autoMilestones: false }), 'autoMilestones', 'immutable');
      expect(await lists(q.id)).toHaveLength(12);
      expectInvalid(await H().post('/projects', { name: 'Bad flag', autoMilestones: 'yes' }), 'autoMilestones');
    });

    it('the months run across a year end (December 2026 … November 2027)', async () => {
      H().clock.set('2026-12-31T23:30:00.000Z');
      const p = expectOk(await H().post('/projects', { name: 'Year end', autoMilestones: true }), 201);
      const got = await lists(p.id);
      expect(got.map((l) => l.name)).toEqual(['December 2026', ...MONTHS.slice(0, 11).map((m) => `${m} 2027`)]);
      expect(got[0].start).toBe('2026-12-01T00:00:00.000Z');
      expect(got[0].end).toBe('2026-12-31T23:59:59.999Z');
      expect(got[1].start).toBe('2027-01-01T00:00:00.000Z');
    });

    it('calendar months of the workspace timezone: Asia/Tokyo starts a month 9 hours before UTC; America/New_York follows daylight saving', async () => {
      const h = H();
      const tokyo = await h.api.admin.createWorkspace({ name: 'Tokyo', timezone: 'Asia/Tokyo', owner: { name: 'Tokyo Owner' } });
      const tokyoTok = (await h.api.admin.issueToken(tokyo.ownerMemberId, { scopes: ['read', 'write', 'delete'] })).token;
      // 20:00 UTC on 31 March is already 1 April in Tokyo.
      h.clock.set('2026-03-31T20:00:00.000Z');
      const p = expectOk(await h.post('/projects', { name: 'Tokyo plan', autoMilestones: true }, { token: tokyoTok }), 201);
      const tl = await lists(p.id, tokyoTok);
      expect(tl[0]).toMatchObject({ name: 'April 2026', start: '2026-03-31T15:00:00.000Z', end: '2026-04-30T14:59:59.999Z' });
      expect(tl[11]).toMatchObject({ name: 'March 2027', start: '2027-02-28T15:00:00.000Z', end: '2027-03-31T14:59:59.999Z' });
      const ny = await h.api.admin.createWorkspace({ name: 'New York', timezone: 'America/New_York', owner: { name: 'NY Owner' } });
      const nyTok = (await h.api.admin.issueToken(ny.ownerMemberId, { scopes: ['read', 'write', 'delete'] })).token;
      h.clock.set('2027-02-15T12:00:00.000Z');
      const q = expectOk(await h.post('/projects', { name: 'NY plan', autoMilestones: true }, { token: nyTok }), 201);
      const nl = await lists(q.id, nyTok);
      expect(nl[0]).toMatchObject({ name: 'February 2027', start: '2027-02-01T05:00:00.000Z', end: '2027-03-01T04:59:59.999Z' });
      // Daylight saving starts on 14 March 2027: April begins at 04:00 UTC.
      expect(nl[1]).toMatchObject({ name: 'March 2027', start: '2027-03-01T05:00:00.000Z', end: '2027-04-01T03:59:59.999Z' });
      expect(nl[9]).toMatchObject({ name: 'November 2027', start: '2027-11-01T04:00:00.000Z', end: '2027-12-01T04:59:59.999Z' });
    });
  });
}
