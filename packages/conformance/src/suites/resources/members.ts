import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { harness, type Harness, type StoreFactory } from '../../kit';
import { problem, sorted } from './helpers';

export function membersSuite(factory: StoreFactory): void {
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
}
