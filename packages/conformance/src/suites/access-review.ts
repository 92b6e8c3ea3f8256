import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { harness, type Harness, type StoreFactory } from '../kit';

/** Review findings on access control, kept fixed: role breadth and project access hold through expand, references and tokens. */
export function accessReviewSuite(factory: StoreFactory): void {
  describe(`[${factory.name}] v3 Authentication rule 5: breadth follows the role through expand, references and token minting`, () => {
    let h: Harness;
    let open: any;
    let closed: any;
    let openTask: any;
    let closedTask: any;
    beforeAll(async () => {
      h = await harness(factory);
      open = await h.project({ name: 'Open', accessType: 'workspace' });
      closed = await h.project({ name: 'Closed' });
      closedTask = await h.task(closed.id, { name: 'secret' });
      openTask = await h.task(open.id, { name: 'visible', dependencyId: closedTask.id });
    });
    afterAll(() => h.close());

    it("expand needs the role's read permission of the target, not only the token's scope", async () => {
      const role = await h.post('/roles', { name: 'Task reader', permissions: ['tasks:read'] });
      expect(role.status).toBe(201);
      const m = await h.api.admin.addMember(h.a.id, { name: 'Reader', role: 'Task reader' });
      const { token } = await h.api.admin.issueToken(m.id, { scopes: ['read'] });
      const r = await h.get(`/tasks/${openTask.id}?expand=project`, { token });
      expect(r.status).toBe(403);
      expect(r.body.code).toBe('permission_denied');
      expect(r.body.missingPermissions).toEqual(['projects:read']);
    });

    it('expanded rows of a project the caller cannot open come back as null (or are left out)', async () => {
      const r = await h.get(`/tasks/${openTask.id}?expand=dependency`, { token: h.a.regular.token });
      expect(r.status).toBe(200);
      expect(r.body.dependencyId).toBe(closedTask.id);
      expect(r.body.dependency).toBeNull();
      const owner = await h.get(`/tasks/${openTask.id}?expand=dependency`);
      expect(owner.body.dependency.name).toBe('secret');
    });

    it('a reference or a link into a closed project is refused with project_access_denied', async () => {
      const dep = await h.patch(`/tasks/${openTask.id}`, { dependencyId: closedTask.id, name: 'x' }, { token: h.a.regular.token });
      expect(dep.status).toBe(403);
      expect(dep.body.code).toBe('project_access_denied');
      const link = await h.post(`/tasks/${openTask.id}/connected-tasks`, { ids: [closedTask.id] }, { token: h.a.regular.token });
      expect(link.status).toBe(403);
      expect(link.body.code).toBe('project_access_denied');
    });

    it("access is judged before the project's contents can shape the answer", async () => {
      const statuses = await h.get(`/statuses?projectId=${closed.id}`);
      const r = await h.post('/tasks', { name: 'probe', projectId: closed.id, statusId: statuses.body.data[0].id }, { token: h.a.regular.token });
      expect(r.status).toBe(403);
      expect(r.body.code).toBe('project_access_denied');
    });

    it('a token cannot mint or extend a token beyond its own expiry, nor manage a broader token', async () => {
      const expiresAt = new Date(h.clock.now() + 60_000).toISOString();
      const short = await h.api.admin.issueToken(h.a.owner.id, { scopes: ['read', 'write'], expiresAt });
      const clamped = await h.post('/personal-access-tokens', { name: 'child', scopes: ['read'] }, { token: short.token });
      expect(clamped.status).toBe(201);
      expect(clamped.body.expiresAt).toBe(expiresAt);
      const longer = await h.post('/personal-access-tokens', { name: 'child2', scopes: ['read'], expiresAt: null }, { token: short.token });
      expect(longer.status).toBe(400);
      expect(longer.body.errors[0].code).toBe('exceeds_caller_expiry');
      const broad = await h.post('/personal-access-tokens', { name: 'broad', scopes: ['read', 'write', 'delete'] });
      const narrow = await h.api.admin.issueToken(h.a.owner.id, { scopes: ['personal-access-tokens:write', 'tasks:read'] });
      const r = await h.patch(`/personal-access-tokens/${broad.body.id}`, { name: 'renamed' }, { token: narrow.token });
      expect(r.status).toBe(403);
      expect(r.body.code).toBe('permission_denied');
    });

    it('bad search text and forged token cursors are 400s, never 500s', async () => {
      const q = await h.get('/roles/search?q=abc%00def');
      expect(q.status).toBe(400);
      const forged = `pat1.${Buffer.from(JSON.stringify({ m: h.a.owner.id, s: '-createdAt', b: [1e300, 'x'] })).toString('base64url')}`;
      const c = await h.get(`/personal-access-tokens?cursor=${forged}`);
      expect(c.status).toBe(400);
      expect(c.body.code).toBe('cursor_invalid');
    });
  });
}
