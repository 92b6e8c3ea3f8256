import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { harness, type Harness, type Reply, type StoreFactory } from '../kit';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const HEX6_LOWER = /^#[0-9a-f]{6}$/;
const HEX6 = /^#[0-9A-Fa-f]{6}$/;
const DAY = 24 * 60 * 60 * 1000;

/** Status and code of a reply, compared together so a failure shows both. */
function problem(r: Reply): { status: number; code: unknown } {
  return { status: r.status, code: r.body?.code };
}

/** The `errors[].field` names of a validation problem. */
function fieldsOf(r: Reply): string[] {
  return ((r.body?.errors ?? []) as Array<{ field: string }>).map((e) => e.field);
}

function codesOf(r: Reply): string[] {
  return ((r.body?.errors ?? []) as Array<{ code: string }>).map((e) => e.code);
}

const sorted = (xs: string[]) => [...xs].sort();

/** secondaryColor as docs/not-shown.md defines it: the colour mixed 80 % toward white. */
function tint(color: string): string {
  const n = parseInt(color.slice(1), 16);
  const mix = (c: number) => Math.round(c + (255 - c) * 0.8);
  return `#${[(n >> 16) & 255, (n >> 8) & 255, n & 255].map((c) => mix(c).toString(16).padStart(2, '0')).join('')}`;
}

const iso = (ms: number) => new Date(ms).toISOString();

export function resourcesSuite(factory: StoreFactory): void {
  describe(`[${factory.name}] v3 Actor (GET /actors/{id}; one human actor per member)`, () => {
    let h: Harness;
    beforeAll(async () => {
      h = await harness(factory);
    });
    afterAll(() => h.close());

    it('a write stamps a UUID actor id whose actor describes the member', async () => {
      const p = await h.project({ name: 'Actor probe' }, h.a.regular.token);
      expect(p.createdByActorId).toMatch(UUID);
      expect(p.updatedByActorId).toBe(p.createdByActorId);
      expect(p.createdByActorType).toBe('human');
      const r = await h.get(`/actors/${p.createdByActorId}`);
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({
        id: p.createdByActorId,
        type: 'human',
        displayName: 'Alpha Regular',
        memberId: h.a.regular.id,
        agentId: null,
        tombstonedAt: null,
      });
      expect(r.body.id).not.toBe(h.a.regular.id);
    });

    it('two writes of one member share one actor; another member gets another actor', async () => {
      const p1 = await h.project({ name: 'Actor one', accessType: 'workspace' });
      const p2 = await h.project({ name: 'Actor two' });
      expect(p1.createdByActorId).toMatch(UUID);
      expect(p2.createdByActorId).toBe(p1.createdByActorId);
      const patched = await h.patch(`/projects/${p1.id}`, { description: 'x' }, { token: h.a.regular.token });
      expect(patched.status).toBe(200);
      expect(patched.body.createdByActorId).toBe(p1.createdByActorId);
      expect(patched.body.updatedByActorId).toMatch(UUID);
      expect(patched.body.updatedByActorId).not.toBe(p1.createdByActorId);
      const owner = await h.get(`/actors/${p1.createdByActorId}`);
      const client = await h.get(`/actors/${patched.body.updatedByActorId}`);
      expect(owner.body.memberId).toBe(h.a.owner.id);
      expect(owner.body.displayName).toBe('Alpha Owner');
      expect(client.body.memberId).toBe(h.a.regular.id);
    });

    it('GET /actors (list) is not allowed: 405', async () => {
      const r = await h.get('/actors');
      expect(problem(r)).toEqual({ status: 405, code: 'method_not_allowed' });
      const w = await h.post('/actors', { type: 'human' });
      expect(problem(w)).toEqual({ status: 405, code: 'method_not_allowed' });
      const unknown = await h.get('/actors/00000000-0000-4000-8000-00000000beef');
      expect(problem(unknown)).toEqual({ status: 404, code: 'resource_not_found' });
    });

    it("another workspace's actor is not found", async () => {
      const pb = await h.post('/projects', { name: 'B actor' }, { token: h.b.owner.token });
      expect(pb.status).toBe(201);
      const r = await h.get(`/actors/${pb.body.createdByActorId}`);
      expect(problem(r)).toEqual({ status: 404, code: 'resource_not_found' });
      const own = await h.get(`/actors/${pb.body.createdByActorId}`, { token: h.b.owner.token });
      expect(own.body.memberId).toBe(h.b.owner.id);
    });
  });

  describe(`[${factory.name}] Members (docs/not-shown.md: GET /members, GET /members/{id})`, () => {
    let h: Harness;
    let inactiveId: string;
    beforeAll(async () => {
      h = await harness(factory);
      const m = await h.api.admin.addMember(h.a.id, { name: 'Gone Person', role: 'regular' });
      await h.api.admin.setMemberActive(m.id, false);
      inactiveId = m.id;
    });
    afterAll(() => h.close());

    it("lists the workspace's members only", async () => {
      const r = await h.get('/members?limit=200');
      expect(r.status).toBe(200);
      const ids = r.body.data.map((m: any) => m.id);
      expect(sorted(ids)).toEqual(sorted([h.a.owner.id, h.a.regular.id, h.a.client.id, inactiveId]));
      const b = await h.get('/members', { token: h.b.owner.token });
      expect(sorted(b.body.data.map((m: any) => m.id))).toEqual(sorted([h.b.owner.id, h.b.regular.id, h.b.client.id]));
    });

    it('GET /members/{id} returns the documented fields', async () => {
      const r = await h.get(`/members/${h.a.owner.id}`);
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({
        id: h.a.owner.id,
        name: 'Alpha Owner',
        email: 'owner@alpha.test',
        role: 'owner',
        roleId: h.a.roleIds.owner,
        active: true,
      });
      expect(r.body.userId).toBeTypeOf('string');
      expect(r.body.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      const c = await h.get(`/members/${h.a.client.id}`);
      expect(c.body).toMatchObject({ role: 'client', roleId: h.a.roleIds.client, email: null });
    });

    it("another workspace's member is not found", async () => {
      const r = await h.get(`/members/${h.b.owner.id}`);
      expect(problem(r)).toEqual({ status: 404, code: 'resource_not_found' });
    });

    it('filters role[eq], active[eq], name[contains]', async () => {
      const byRole = await h.get('/members?role[eq]=client');
      expect(byRole.body.data.map((m: any) => m.id)).toEqual([h.a.client.id]);
      const regulars = await h.get('/members?role[eq]=regular');
      expect(sorted(regulars.body.data.map((m: any) => m.id))).toEqual(sorted([h.a.regular.id, inactiveId]));
      const inactive = await h.get('/members?active[eq]=false');
      expect(inactive.body.data.map((m: any) => m.id)).toEqual([inactiveId]);
      expect(inactive.body.data[0].active).toBe(false);
      const active = await h.get('/members?active[eq]=true');
      expect(sorted(active.body.data.map((m: any) => m.id))).toEqual(sorted([h.a.owner.id, h.a.regular.id, h.a.client.id]));
      const named = await h.get('/members?name[contains]=REGULAR');
      expect(named.body.data.map((m: any) => m.id)).toEqual([h.a.regular.id]);
    });

    it('members are read-only: POST /members and PATCH /members/{id} are 405', async () => {
      const r = await h.post('/members', { name: 'New' });
      expect(problem(r)).toEqual({ status: 405, code: 'method_not_allowed' });
      expect(r.headers.allow).toContain('GET');
      const p = await h.patch(`/members/${h.a.regular.id}`, { name: 'Renamed' });
      expect(problem(p)).toEqual({ status: 405, code: 'method_not_allowed' });
      const again = await h.get(`/members/${h.a.regular.id}`);
      expect(again.body.name).toBe('Alpha Regular');
    });
  });

  describe(`[${factory.name}] v3 Portfolio`, () => {
    let h: Harness;
    beforeAll(async () => {
      h = await harness(factory);
    });
    afterAll(() => h.close());

    const create = (body: Record<string, unknown>, token?: string) => h.post('/portfolios', body, { token });

    it('the General portfolio exists exactly once and cannot be deleted (409 conflict)', async () => {
      const r = await h.get('/portfolios?isGeneral[eq]=true');
      expect(r.status).toBe(200);
      expect(r.body.data).toHaveLength(1);
      expect(r.body.data[0]).toMatchObject({ id: h.a.generalPortfolioId, isGeneral: true });
      const d = await h.del(`/portfolios/${h.a.generalPortfolioId}`);
      expect(problem(d)).toEqual({ status: 409, code: 'conflict' });
      const still = await h.get(`/portfolios/${h.a.generalPortfolioId}`);
      expect(still.status).toBe(200);
      expect(still.body.purgeAt).toBeNull();
    });

    it('isGeneral is server-assigned: a create asking for it gets false', async () => {
      const r = await create({ name: 'Not general', isGeneral: true });
      expect(r.status).toBe(201);
      expect(r.body.isGeneral).toBe(false);
      const g = await h.get('/portfolios?isGeneral[eq]=true');
      expect(g.body.data).toHaveLength(1);
    });

    it('initials are derived from the name when omitted, kept when given, at most 3', async () => {
      const mt = await create({ name: 'Marketing Team' });
      expect(mt.body.initials).toBe('MT');
      const de = await create({ name: 'Design' });
      expect(de.body.initials).toBe('DE');
      const three = await create({ name: 'north south east west' });
      expect(three.body.initials).toBe('NSE');
      const given = await create({ name: 'Given Initials', initials: 'XY' });
      expect(given.body.initials).toBe('XY');
      const long = await create({ name: 'Too long', initials: 'ABCD' });
      expect(problem(long)).toEqual({ status: 400, code: 'validation_failed' });
      expect(fieldsOf(long)).toContain('initials');
    });

    it('color comes from the palette when omitted; secondaryColor is derived and client values ignored', async () => {
      const r = await create({ name: 'Colourless', secondaryColor: '#000000' });
      expect(r.status).toBe(201);
      expect(r.body.color).toMatch(HEX6_LOWER);
      expect(r.body.secondaryColor).toBe(tint(r.body.color));
      const c = await create({ name: 'Coloured', color: '#336699', secondaryColor: '#000000' });
      expect(c.body.color).toBe('#336699');
      expect(c.body.secondaryColor).toBe('#d6e0eb');
      const bad = await create({ name: 'Bad colour', color: 'blue' });
      expect(problem(bad)).toEqual({ status: 400, code: 'validation_failed' });
      expect(fieldsOf(bad)).toContain('color');
    });

    it('secondaryColor follows a PATCHed color; PATCHing secondaryColor alone changes nothing', async () => {
      const c = await create({ name: 'Tinted', color: '#ff0000' });
      expect(c.body.secondaryColor).toBe('#ffcccc');
      const p = await h.patch(`/portfolios/${c.body.id}`, { color: '#000000' });
      expect(p.status).toBe(200);
      expect(p.body.color).toBe('#000000');
      expect(p.body.secondaryColor).toBe('#cccccc');
      const only = await h.patch(`/portfolios/${c.body.id}`, { secondaryColor: '#123456' });
      expect(problem(only)).toEqual({ status: 400, code: 'empty_update' });
      const got = await h.get(`/portfolios/${c.body.id}`);
      expect(got.body.secondaryColor).toBe('#cccccc');
    });

    it('order is auto-assigned increasing (MAX+1) and can be sent to reorder', async () => {
      const a = await create({ name: 'Order A' });
      const b = await create({ name: 'Order B' });
      expect(typeof a.body.order).toBe('number');
      expect(b.body.order).toBe(a.body.order + 1);
      const all = await h.get('/portfolios?limit=200');
      const max = Math.max(...all.body.data.map((p: any) => p.order));
      expect(max).toBe(b.body.order);
      const re = await h.patch(`/portfolios/${a.body.id}`, { order: 1000 });
      expect(re.body.order).toBe(1000);
      const c = await create({ name: 'Order C' });
      expect(c.body.order).toBe(1001);
    });

    it('ownerId is the caller on create (body value ignored) and changes only by PATCH', async () => {
      const r = await create({ name: 'Owned', ownerId: h.a.client.id });
      expect(r.status).toBe(201);
      expect(r.body.ownerId).toBe(h.a.owner.id);
      const byRegular = await create({ name: 'Owned by regular' }, h.a.regular.token);
      expect(byRegular.body.ownerId).toBe(h.a.regular.id);
      const p = await h.patch(`/portfolios/${r.body.id}`, { ownerId: h.a.regular.id });
      expect(p.status).toBe(200);
      expect(p.body.ownerId).toBe(h.a.regular.id);
      const unknown = await h.patch(`/portfolios/${r.body.id}`, { ownerId: 'nosuchmember1' });
      expect(problem(unknown)).toEqual({ status: 404, code: 'resource_not_found' });
      expect(unknown.body.field).toBe('ownerId');
      const other = await h.patch(`/portfolios/${r.body.id}`, { ownerId: h.b.owner.id });
      expect(problem(other)).toEqual({ status: 404, code: 'resource_not_found' });
      const got = await h.get(`/portfolios/${r.body.id}`);
      expect(got.body.ownerId).toBe(h.a.regular.id);
    });

    it('name is at most 100 characters', async () => {
      const ok = await create({ name: 'n'.repeat(100) });
      expect(ok.status).toBe(201);
      const r = await create({ name: 'n'.repeat(101) });
      expect(problem(r)).toEqual({ status: 400, code: 'validation_failed' });
      expect(fieldsOf(r)).toContain('name');
    });

    it('members in a body replace the roster', async () => {
      const r = await create({ name: 'Roster', members: [h.a.owner.id, h.a.regular.id] });
      expect(sorted(r.body.members)).toEqual(sorted([h.a.owner.id, h.a.regular.id]));
      const p = await h.patch(`/portfolios/${r.body.id}`, { members: [h.a.regular.id] });
      expect(p.body.members).toEqual([h.a.regular.id]);
      const got = await h.get(`/portfolios/${r.body.id}`);
      expect(got.body.members).toEqual([h.a.regular.id]);
      const untouched = await h.patch(`/portfolios/${r.body.id}`, { name: 'Roster renamed' });
      expect(untouched.body.members).toEqual([h.a.regular.id]);
      const bad = await h.patch(`/portfolios/${r.body.id}`, { members: [h.b.owner.id] });
      expect(problem(bad)).toEqual({ status: 404, code: 'm2m_target_not_found' });
      expect(bad.body.missing).toEqual([h.b.owner.id]);
    });

    it('POST and DELETE /portfolios/{id}/members add and remove individual members', async () => {
      const r = await create({ name: 'Sub-route roster', members: [h.a.owner.id] });
      const add = await h.post(`/portfolios/${r.body.id}/members`, { ids: [h.a.client.id, h.a.regular.id] });
      expect(add.status).toBe(200);
      expect(sorted(add.body.members)).toEqual(sorted([h.a.owner.id, h.a.client.id, h.a.regular.id]));
      const rm = await h.req('DELETE', `/portfolios/${r.body.id}/members`, { body: { ids: [h.a.owner.id] } });
      expect(rm.status).toBe(200);
      expect(sorted(rm.body.members)).toEqual(sorted([h.a.client.id, h.a.regular.id]));
      const got = await h.get(`/portfolios/${r.body.id}`);
      expect(sorted(got.body.members)).toEqual(sorted([h.a.client.id, h.a.regular.id]));
    });

    it('a portfolio holding projects cannot be deleted (409); empty, it can', async () => {
      const pf = await create({ name: 'Holder' });
      const proj = await h.project({ name: 'Held project', portfolioId: pf.body.id });
      const d = await h.del(`/portfolios/${pf.body.id}`);
      expect(problem(d)).toEqual({ status: 409, code: 'conflict' });
      expect((await h.get(`/portfolios/${pf.body.id}`)).status).toBe(200);
      expect((await h.del(`/projects/${proj.id}`)).status).toBe(204);
      const d2 = await h.del(`/portfolios/${pf.body.id}`);
      expect(d2.status).toBe(204);
      const gone = await h.get(`/portfolios/${pf.body.id}`);
      expect(problem(gone)).toEqual({ status: 404, code: 'resource_not_found' });
    });

    it('list filters isGeneral, name and order ranges', async () => {
      const x = await create({ name: 'Filter Zebra' });
      const y = await create({ name: 'Filter Yak' });
      const notGeneral = await h.get('/portfolios?isGeneral[eq]=false&limit=200');
      expect(notGeneral.body.data.some((p: any) => p.id === h.a.generalPortfolioId)).toBe(false);
      expect(notGeneral.body.data.map((p: any) => p.id)).toEqual(expect.arrayContaining([x.body.id, y.body.id]));
      const named = await h.get('/portfolios?name[contains]=zebra');
      expect(named.body.data.map((p: any) => p.id)).toEqual([x.body.id]);
      const eq = await h.get('/portfolios?name[eq]=Filter%20Yak');
      expect(eq.body.data.map((p: any) => p.id)).toEqual([y.body.id]);
      const range = await h.get(`/portfolios?order[gte]=${x.body.order}&order[lte]=${y.body.order}`);
      expect(range.body.data.map((p: any) => p.id)).toEqual([x.body.id, y.body.id]);
      const gt = await h.get(`/portfolios?order[gt]=${x.body.order}&order[lt]=${y.body.order + 1}`);
      expect(gt.body.data.map((p: any) => p.id)).toEqual([y.body.id]);
      const zero = await h.get('/portfolios?order[eq]=0');
      expect(zero.body.data.map((p: any) => p.id)).toEqual([h.a.generalPortfolioId]);
    });

    it('expands owner and members', async () => {
      const r = await create({ name: 'Expanded', members: [h.a.regular.id, h.a.client.id] });
      const got = await h.get(`/portfolios/${r.body.id}?expand=owner,members`);
      expect(got.status).toBe(200);
      expect(got.body.ownerId).toBe(h.a.owner.id);
      expect(got.body.owner).toMatchObject({ id: h.a.owner.id, name: 'Alpha Owner' });
      expect(got.body.members).toHaveLength(2);
      expect(sorted(got.body.members.map((m: any) => m.id))).toEqual(sorted([h.a.regular.id, h.a.client.id]));
      expect(got.body.members.map((m: any) => m.name)).toEqual(expect.arrayContaining(['Alpha Regular', 'Alpha Client']));
    });
  });

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

  describe(`[${factory.name}] Statuses (docs/not-shown.md: board columns)`, () => {
    let h: Harness;
    let pid: string;
    beforeAll(async () => {
      h = await harness(factory);
      pid = (await h.project({ name: 'Board' })).id;
    });
    afterAll(() => h.close());

    it('a new project has exactly one status, "To do"', async () => {
      const p = await h.project({ name: 'Fresh board' });
      const r = await h.get(`/statuses?projectId=${p.id}`);
      expect(r.status).toBe(200);
      expect(r.body.data).toHaveLength(1);
      expect(r.body.data[0]).toMatchObject({ name: 'To do', projectId: p.id, archived: false });
    });

    it('create (order MAX+100, palette colour), update and delete', async () => {
      const c = await h.post('/statuses', { name: '  Review  ', projectId: pid });
      expect(c.status).toBe(201);
      expect(c.body).toMatchObject({ name: 'Review', projectId: pid, archived: false });
      expect(c.body.color).toMatch(HEX6_LOWER);
      const first = (await h.get(`/statuses?projectId=${pid}`)).body.data[0];
      expect(c.body.order).toBe(first.order + 100);
      const u = await h.patch(`/statuses/${c.body.id}`, { name: 'In review', color: '#112233' });
      expect(u.status).toBe(200);
      expect(u.body).toMatchObject({ name: 'In review', color: '#112233' });
      expect((await h.get(`/statuses/${c.body.id}`)).body.name).toBe('In review');
      const d = await h.del(`/statuses/${c.body.id}`);
      expect(d.status).toBe(204);
      expect(problem(await h.get(`/statuses/${c.body.id}`))).toEqual({ status: 404, code: 'resource_not_found' });
    });

    it('GET /statuses?projectId= returns that project\'s statuses in order', async () => {
      const other = await h.project({ name: 'Other board' });
      const s1 = await h.post('/statuses', { name: 'Doing', projectId: pid });
      const s2 = await h.post('/statuses', { name: 'Done', projectId: pid });
      const r = await h.get(`/statuses?projectId=${pid}`);
      const names = r.body.data.map((s: any) => s.name);
      expect(names.slice(-2)).toEqual(['Doing', 'Done']);
      expect(r.body.data.every((s: any) => s.projectId === pid)).toBe(true);
      expect(s2.body.order).toBe(s1.body.order + 100);
      const o = await h.get(`/statuses?projectId=${other.id}`);
      expect(o.body.data.map((s: any) => s.name)).toEqual(['To do']);
    });

    it('create without projectId is 400 project_not_specified', async () => {
      const r = await h.post('/statuses', { name: 'Orphan' });
      expect(problem(r)).toEqual({ status: 400, code: 'project_not_specified' });
    });

    it('projectId is immutable', async () => {
      const other = await h.project({ name: 'Elsewhere board' });
      const s = await h.post('/statuses', { name: 'Fixed', projectId: pid });
      const r = await h.patch(`/statuses/${s.body.id}`, { projectId: other.id });
      expect(problem(r)).toEqual({ status: 400, code: 'validation_failed' });
      expect(r.body.errors[0]).toMatchObject({ field: 'projectId', code: 'immutable' });
    });

    it('deleting a status leaves its tasks with statusId null', async () => {
      const s = await h.post('/statuses', { name: 'Doomed', projectId: pid });
      const t = await h.task(pid, { statusId: s.body.id });
      expect(t.statusId).toBe(s.body.id);
      expect((await h.del(`/statuses/${s.body.id}`)).status).toBe(204);
      const got = await h.get(`/tasks/${t.id}`);
      expect(got.status).toBe(200);
      expect(got.body.statusId).toBeNull();
    });
  });

  describe(`[${factory.name}] v3 List (milestones; States: List isMilestone; Errors: milestone_*)`, () => {
    let h: Harness;
    let pid: string;
    let otherPid: string;
    const start = '2026-04-01T00:00:00.000Z';
    const end = '2026-04-03T00:00:00.000Z';
    beforeAll(async () => {
      h = await harness(factory);
      pid = (await h.project({ name: 'Timeline' })).id;
      otherPid = (await h.project({ name: 'Other timeline' })).id;
    });
    afterAll(() => h.close());

    const create = (body: Record<string, unknown>) => h.post('/lists', body);

    it('create requires projectId (400 project_not_specified)', async () => {
      const r = await create({ name: 'No project' });
      expect(problem(r)).toEqual({ status: 400, code: 'project_not_specified' });
    });

    it('name is trimmed; spam-like names are validation_failed (promotional_content)', async () => {
      const r = await create({ name: '  Sprint 1  ', projectId: pid });
      expect(r.status).toBe(201);
      expect(r.body.name).toBe('Sprint 1');
      for (const name of ['Buy now and save', 'see https://a.example/1 https://b.example/2 https://c.example/3']) {
        const s = await create({ name, projectId: pid });
        expect(problem(s)).toEqual({ status: 400, code: 'validation_failed' });
        expect(s.body.errors[0]).toMatchObject({ field: 'name', code: 'promotional_content' });
      }
      const p = await h.patch(`/lists/${r.body.id}`, { name: 'free money inside' });
      expect(problem(p)).toEqual({ status: 400, code: 'validation_failed' });
      expect(codesOf(p)).toContain('promotional_content');
      const two = await create({ name: 'links https://a.example https://b.example', projectId: pid });
      expect(two.status).toBe(201);
    });

    it('order defaults to MAX(order)+100 within the project', async () => {
      const p = await h.project({ name: 'Ordered lists' });
      const a = await create({ name: 'L1', projectId: p.id });
      const b = await create({ name: 'L2', projectId: p.id });
      expect(a.body.order).toBe(100);
      expect(b.body.order).toBe(200);
      const c = await create({ name: 'L3', projectId: p.id, order: 1000 });
      expect(c.body.order).toBe(1000);
      const d = await create({ name: 'L4', projectId: p.id });
      expect(d.body.order).toBe(1100);
      const o = await create({ name: 'Other', projectId: otherPid });
      expect(o.body.order).toBeLessThan(1000);
    });

    it('color: #RGB or #RRGGBB stored lowercase 6-digit; invalid is validation_failed; omitted is a palette colour', async () => {
      const short = await create({ name: 'Short colour', projectId: pid, color: '#ABC' });
      expect(short.body.color).toBe('#aabbcc');
      const long = await create({ name: 'Long colour', projectId: pid, color: '#AABBCC' });
      expect(long.body.color).toBe('#aabbcc');
      for (const color of ['blue', '#abcd', '#ggg', 'aabbcc']) {
        const bad = await create({ name: 'Bad colour', projectId: pid, color });
        expect(problem(bad)).toEqual({ status: 400, code: 'validation_failed' });
        expect(fieldsOf(bad)).toContain('color');
      }
      const none = await create({ name: 'No colour', projectId: pid });
      expect(none.body.color).toMatch(HEX6_LOWER);
      const p = await h.patch(`/lists/${none.body.id}`, { color: '#F0F' });
      expect(p.body.color).toBe('#ff00ff');
    });

    it('isMilestone defaults to false', async () => {
      const r = await create({ name: 'Plain', projectId: pid });
      expect(r.body).toMatchObject({ isMilestone: false, start: null, end: null, archived: false });
    });

    it('a milestone needs start and end (validation_failed naming them)', async () => {
      const none = await create({ name: 'M', projectId: pid, isMilestone: true });
      expect(problem(none)).toEqual({ status: 400, code: 'validation_failed' });
      expect(sorted(fieldsOf(none))).toEqual(['end', 'start']);
      const noEnd = await create({ name: 'M', projectId: pid, isMilestone: true, start });
      expect(problem(noEnd)).toEqual({ status: 400, code: 'validation_failed' });
      expect(fieldsOf(noEnd)).toEqual(['end']);
      const noStart = await create({ name: 'M', projectId: pid, isMilestone: true, end });
      expect(fieldsOf(noStart)).toEqual(['start']);
    });

    it('end must be at least 2 days after start: exactly 2 days is accepted, 1 ms less is not', async () => {
      const ok = await create({ name: 'Exactly two days', projectId: pid, isMilestone: true, start, end });
      expect(ok.status).toBe(201);
      expect(ok.body).toMatchObject({ isMilestone: true, start, end });
      const short = await create({ name: 'Too short', projectId: pid, isMilestone: true, start, end: iso(Date.parse(start) + 2 * DAY - 1) });
      expect(problem(short)).toEqual({ status: 400, code: 'validation_failed' });
      expect(fieldsOf(short)).toContain('end');
      const reversed = await create({ name: 'Reversed', projectId: pid, isMilestone: true, start: end, end: start });
      expect(problem(reversed)).toEqual({ status: 400, code: 'validation_failed' });
      const shrink = await h.patch(`/lists/${ok.body.id}`, { end: iso(Date.parse(start) + DAY) });
      expect(problem(shrink)).toEqual({ status: 400, code: 'validation_failed' });
      expect((await h.get(`/lists/${ok.body.id}`)).body.end).toBe(end);
    });

    it('isMilestone false forces start and end to null even when sent', async () => {
      const r = await create({ name: 'Flat with dates', projectId: pid, start, end });
      expect(r.status).toBe(201);
      expect(r.body).toMatchObject({ isMilestone: false, start: null, end: null });
      const p = await h.patch(`/lists/${r.body.id}`, { start, end });
      expect(p.status).toBe(200);
      expect(p.body).toMatchObject({ start: null, end: null });
    });

    it('PATCH isMilestone true needs dates; with them the list becomes a milestone', async () => {
      const r = await create({ name: 'To promote', projectId: pid });
      const bare = await h.patch(`/lists/${r.body.id}`, { isMilestone: true });
      expect(problem(bare)).toEqual({ status: 400, code: 'validation_failed' });
      expect(sorted(fieldsOf(bare))).toEqual(['end', 'start']);
      expect((await h.get(`/lists/${r.body.id}`)).body.isMilestone).toBe(false);
      const ok = await h.patch(`/lists/${r.body.id}`, { isMilestone: true, start, end });
      expect(ok.status).toBe(200);
      expect(ok.body).toMatchObject({ isMilestone: true, start, end });
    });

    it('PATCH isMilestone false turns a milestone into a flat list with null dates', async () => {
      const r = await create({ name: 'To demote', projectId: pid, isMilestone: true, start, end });
      const p = await h.patch(`/lists/${r.body.id}`, { isMilestone: false });
      expect(p.status).toBe(200);
      expect(p.body).toMatchObject({ isMilestone: false, start: null, end: null });
      expect((await h.get(`/lists/${r.body.id}`)).body.start).toBeNull();
    });

    it('dependencyId in another project is 400 milestone_dependency_wrong_project; same project works; self is refused', async () => {
      const foreign = await create({ name: 'Foreign', projectId: otherPid });
      const r = await create({ name: 'Dependent', projectId: pid, dependencyId: foreign.body.id });
      expect(problem(r)).toEqual({ status: 400, code: 'milestone_dependency_wrong_project' });
      const base = await create({ name: 'Base', projectId: pid });
      const dep = await create({ name: 'Dependent', projectId: pid, dependencyId: base.body.id });
      expect(dep.status).toBe(201);
      expect(dep.body.dependencyId).toBe(base.body.id);
      const p = await h.patch(`/lists/${dep.body.id}`, { dependencyId: foreign.body.id });
      expect(problem(p)).toEqual({ status: 400, code: 'milestone_dependency_wrong_project' });
      const self = await h.patch(`/lists/${dep.body.id}`, { dependencyId: dep.body.id });
      expect(problem(self)).toEqual({ status: 400, code: 'validation_failed' });
      expect(fieldsOf(self)).toContain('dependencyId');
      expect((await h.get(`/lists/${dep.body.id}`)).body.dependencyId).toBe(base.body.id);
    });

    it('statusId is fixed after creation', async () => {
      const s1 = await h.post('/statuses', { name: 'Column 1', projectId: pid });
      const s2 = await h.post('/statuses', { name: 'Column 2', projectId: pid });
      const r = await create({ name: 'Backed', projectId: pid, statusId: s1.body.id });
      expect(r.body.statusId).toBe(s1.body.id);
      const p = await h.patch(`/lists/${r.body.id}`, { statusId: s2.body.id });
      expect(problem(p)).toEqual({ status: 400, code: 'validation_failed' });
      expect(p.body.errors[0]).toMatchObject({ field: 'statusId', code: 'immutable' });
      expect((await h.get(`/lists/${r.body.id}`)).body.statusId).toBe(s1.body.id);
    });

    it("hiddenFor takes this workspace's role ids; another workspace's are milestone_hiddenfor_roles_not_in_team", async () => {
      const roles = await h.get('/roles');
      const roleIds: Record<string, string> = Object.fromEntries(roles.body.data.map((r: any) => [r.name, r.id]));
      expect(roleIds.client).toBe(h.a.roleIds.client);
      const ok = await create({ name: 'Secret', projectId: pid, hiddenFor: [roleIds.client, roleIds.regular] });
      expect(ok.status).toBe(201);
      expect(sorted(ok.body.hiddenFor)).toEqual(sorted([roleIds.client!, roleIds.regular!]));
      const bad = await create({ name: 'Cross', projectId: pid, hiddenFor: [h.b.roleIds.client] });
      expect(problem(bad)).toEqual({ status: 400, code: 'milestone_hiddenfor_roles_not_in_team' });
      const sub = await h.post(`/lists/${ok.body.id}/hidden-for`, { ids: [h.b.roleIds.manager] });
      expect(problem(sub)).toEqual({ status: 400, code: 'milestone_hiddenfor_roles_not_in_team' });
      const patched = await h.patch(`/lists/${ok.body.id}`, { hiddenFor: [h.a.roleIds.manager, h.b.roleIds.owner] });
      expect(problem(patched)).toEqual({ status: 400, code: 'milestone_hiddenfor_roles_not_in_team' });
      const add = await h.post(`/lists/${ok.body.id}/hidden-for`, { ids: [roleIds.manager] });
      expect(add.status).toBe(200);
      expect(sorted(add.body.hiddenFor)).toEqual(sorted([roleIds.client!, roleIds.regular!, roleIds.manager!]));
      const rm = await h.post(`/lists/${ok.body.id}/hidden-for/remove`, { ids: [roleIds.regular] });
      expect(sorted(rm.body.hiddenFor)).toEqual(sorted([roleIds.client!, roleIds.manager!]));
    });

    it('assignees and hiddenFor in bodies replace the sets', async () => {
      const r = await create({
        name: 'Sets', projectId: pid, assignees: [h.a.owner.id, h.a.regular.id], hiddenFor: [h.a.roleIds.client, h.a.roleIds.regular],
      });
      const p = await h.patch(`/lists/${r.body.id}`, { assignees: [h.a.client.id], hiddenFor: [h.a.roleIds.manager] });
      expect(p.status).toBe(200);
      expect(p.body.assignees).toEqual([h.a.client.id]);
      expect(p.body.hiddenFor).toEqual([h.a.roleIds.manager]);
      const empty = await h.patch(`/lists/${r.body.id}`, { assignees: [] });
      expect(empty.body.assignees).toEqual([]);
      expect(empty.body.hiddenFor).toEqual([h.a.roleIds.manager]);
      const add = await h.post(`/lists/${r.body.id}/assignees`, { ids: [h.a.regular.id] });
      expect(add.body.assignees).toEqual([h.a.regular.id]);
      const rm = await h.req('DELETE', `/lists/${r.body.id}/assignees`, { body: { ids: [h.a.regular.id] } });
      expect(rm.body.assignees).toEqual([]);
    });

    it('filters isMilestone, archived, start and end ranges', async () => {
      const p = await h.project({ name: 'Filtered timeline' });
      const flat = await create({ name: 'Flat', projectId: p.id });
      const m1 = await create({ name: 'April', projectId: p.id, isMilestone: true, start: '2026-04-01T00:00:00.000Z', end: '2026-04-10T00:00:00.000Z' });
      const m2 = await create({ name: 'May', projectId: p.id, isMilestone: true, start: '2026-05-01T00:00:00.000Z', end: '2026-05-10T00:00:00.000Z' });
      const arch = await create({ name: 'Old', projectId: p.id });
      expect((await h.patch(`/lists/${arch.body.id}`, { archived: true })).body.archived).toBe(true);
      const ids = (r: Reply) => r.body.data.map((x: any) => x.id);
      expect(ids(await h.get(`/lists?projectId=${p.id}&isMilestone[eq]=true`))).toEqual([m1.body.id, m2.body.id]);
      expect(sorted(ids(await h.get(`/lists?projectId=${p.id}&isMilestone[eq]=false`)))).toEqual(sorted([flat.body.id, arch.body.id]));
      expect(ids(await h.get(`/lists?projectId=${p.id}&archived[eq]=true`))).toEqual([arch.body.id]);
      expect(ids(await h.get(`/lists?projectId=${p.id}&start[gte]=2026-04-15T00:00:00.000Z`))).toEqual([m2.body.id]);
      expect(ids(await h.get(`/lists?projectId=${p.id}&start[gt]=2026-04-01T00:00:00.000Z`))).toEqual([m2.body.id]);
      expect(ids(await h.get(`/lists?projectId=${p.id}&end[lt]=2026-05-01T00:00:00.000Z`))).toEqual([m1.body.id]);
      expect(ids(await h.get(`/lists?projectId=${p.id}&end[lte]=2026-05-10T00:00:00.000Z&start[gte]=2026-04-01T00:00:00.000Z`)))
        .toEqual([m1.body.id, m2.body.id]);
      expect(ids(await h.get(`/lists?projectId[eq]=${p.id}&isMilestone[eq]=true`))).toEqual(expect.arrayContaining([m1.body.id, m2.body.id]));
    });

    it('expands dependency, dependency.dependency, project and tasks', async () => {
      const l1 = await create({ name: 'Phase 1', projectId: pid });
      const l2 = await create({ name: 'Phase 2', projectId: pid, dependencyId: l1.body.id });
      const l3 = await create({ name: 'Phase 3', projectId: pid, dependencyId: l2.body.id });
      const t = await h.task(pid, { name: 'In phase 3', listId: l3.body.id });
      const one = await h.get(`/lists/${l3.body.id}?expand=dependency`);
      expect(one.body.dependencyId).toBe(l2.body.id);
      expect(one.body.dependency).toMatchObject({ id: l2.body.id, name: 'Phase 2', dependencyId: l1.body.id });
      expect(one.body.dependency.dependency).toBeUndefined();
      const two = await h.get(`/lists/${l3.body.id}?expand=dependency.dependency`);
      expect(two.body.dependency.dependency).toMatchObject({ id: l1.body.id, name: 'Phase 1' });
      const withProject = await h.get(`/lists/${l3.body.id}?expand=project,tasks`);
      expect(withProject.body.project).toMatchObject({ id: pid, name: 'Timeline' });
      expect(withProject.body.tasks.map((x: any) => x.id)).toEqual([t.id]);
      const first = await h.get(`/lists/${l1.body.id}?expand=dependency,tasks`);
      expect(first.body.dependency).toBeNull();
      expect(first.body.tasks).toEqual([]);
    });
  });

  describe(`[${factory.name}] Labels (docs/not-shown.md: default labels locked)`, () => {
    let h: Harness;
    beforeAll(async () => {
      h = await harness(factory);
    });
    afterAll(() => h.close());

    const defaults = async () => (await h.get('/labels?isDefault[eq]=true')).body.data as any[];

    it('each workspace has the default labels Bug, Feature and Urgent', async () => {
      const d = await defaults();
      expect(sorted(d.map((l) => l.name))).toEqual(['Bug', 'Feature', 'Urgent']);
      expect(d.every((l) => l.isDefault === true)).toBe(true);
      const b = await h.get('/labels?isDefault[eq]=true', { token: h.b.owner.token });
      expect(b.body.data).toHaveLength(3);
      expect(b.body.data.map((l: any) => l.id)).not.toEqual(expect.arrayContaining([d[0].id]));
    });

    it('renaming or deleting a default label is 403 default_label_locked; changing its colour works', async () => {
      const bug = (await defaults()).find((l) => l.name === 'Bug');
      const rename = await h.patch(`/labels/${bug.id}`, { name: 'Defect' });
      expect(problem(rename)).toEqual({ status: 403, code: 'default_label_locked' });
      const del = await h.del(`/labels/${bug.id}`);
      expect(problem(del)).toEqual({ status: 403, code: 'default_label_locked' });
      const color = await h.patch(`/labels/${bug.id}`, { color: '#ff0000' });
      expect(color.status).toBe(200);
      expect(color.body).toMatchObject({ name: 'Bug', color: '#ff0000', isDefault: true });
      const got = await h.get(`/labels/${bug.id}`);
      expect(got.body).toMatchObject({ name: 'Bug', color: '#ff0000' });
    });

    it('custom labels can be created (never default), updated and deleted', async () => {
      const c = await h.post('/labels', { name: 'Customer', color: '#00aa00', isDefault: true });
      expect(c.status).toBe(201);
      expect(c.body).toMatchObject({ name: 'Customer', color: '#00aa00', isDefault: false });
      const u = await h.patch(`/labels/${c.body.id}`, { name: 'Client', color: null });
      expect(u.status).toBe(200);
      expect(u.body).toMatchObject({ name: 'Client', color: null });
      const bad = await h.post('/labels', { name: 'Bad', color: 'green' });
      expect(problem(bad)).toEqual({ status: 400, code: 'validation_failed' });
      const noName = await h.post('/labels', { color: '#123456' });
      expect(problem(noName)).toEqual({ status: 400, code: 'validation_failed' });
      expect(fieldsOf(noName)).toContain('name');
      expect((await h.del(`/labels/${c.body.id}`)).status).toBe(204);
      expect(problem(await h.get(`/labels/${c.body.id}`))).toEqual({ status: 404, code: 'resource_not_found' });
    });

    it('deleting a label removes it from every task', async () => {
      const p = await h.project({ name: 'Labelled' });
      const keep = (await defaults()).find((l) => l.name === 'Feature');
      const temp = await h.post('/labels', { name: 'Temporary' });
      const t1 = await h.task(p.id, { labels: [temp.body.id, keep.id] });
      const t2 = await h.task(p.id, { labels: [temp.body.id] });
      expect(sorted(t1.labels)).toEqual(sorted([temp.body.id, keep.id]));
      expect((await h.del(`/labels/${temp.body.id}`)).status).toBe(204);
      expect((await h.get(`/tasks/${t1.id}`)).body.labels).toEqual([keep.id]);
      expect((await h.get(`/tasks/${t2.id}`)).body.labels).toEqual([]);
      const filtered = await h.get(`/tasks?projectId=${p.id}&expand=labels`);
      const byId = Object.fromEntries(filtered.body.data.map((t: any) => [t.id, t.labels.map((l: any) => l.id)]));
      expect(byId[t1.id]).toEqual([keep.id]);
      expect(byId[t2.id]).toEqual([]);
    });
  });
}
