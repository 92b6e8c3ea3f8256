import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { harness, type Harness, type StoreFactory } from '../../kit';
import { HEX6_LOWER, problem, fieldsOf, sorted, tint } from './helpers';

export function portfoliosSuite(factory: StoreFactory): void {
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
}
