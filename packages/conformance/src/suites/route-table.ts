import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { builtinRolePermissions, grants, type ScopeAction } from '@pmapi/core';
import { harness, type Harness, type StoreFactory } from '../kit';

/**
 * Spec "Authentication" rules 4-5: every route declares its scope (and role
 * permissions) in one place — api.routes() — and each one refuses a token
 * without its scope and lets in one with it.
 */
export function routeTableSuite(factory: StoreFactory): void {
  describe(`[${factory.name}] v3 Authentication rule 4: every route refuses a token without its scope and accepts one with it`, () => {
    let h: Harness;
    beforeAll(async () => {
      h = await harness(factory);
    });
    afterAll(() => h.close());

    const concrete = (path: string) => path.replace(/\{id\}/g, 'x0000000001');
    const bodyFor = (method: string) => (method === 'POST' || method === 'PATCH' || method === 'DELETE' ? { ids: ['x0000000002'] } : undefined);

    it('the table covers every resource operation', () => {
      const routes = h.api.routes();
      expect(routes.length).toBeGreaterThan(40);
      for (const r of routes) expect(r.scope).toMatch(/^[a-z-]+:(read|write|delete)$/);
      expect(routes).toContainEqual(expect.objectContaining({ method: 'GET', path: '/tasks', scope: 'tasks:read' }));
      expect(routes).toContainEqual(expect.objectContaining({ method: 'POST', path: '/projects/{id}/restore', scope: 'projects:delete' }));
    });

    it('a token without the scope gets 403 permission_denied naming it', async () => {
      const { token } = await h.api.admin.issueToken(h.a.owner.id, { scopes: [] });
      for (const r of h.api.routes()) {
        const res = await h.req(r.method, concrete(r.path), { token, body: bodyFor(r.method) });
        expect(res.status, `${r.method} ${r.path}`).toBe(403);
        expect(res.body.code).toBe('permission_denied');
        expect(res.body.missingPermissions, `${r.method} ${r.path}`).toContain(r.scope);
      }
    });

    it('a token with exactly the scope (and a role holding it) is let in', async () => {
      for (const r of h.api.routes()) {
        const { token } = await h.api.admin.issueToken(h.a.owner.id, { scopes: [r.scope] });
        const res = await h.req(r.method, concrete(r.path), { token, body: bodyFor(r.method) });
        expect([401, 403], `${r.method} ${r.path} → ${res.status} ${JSON.stringify(res.body)}`).not.toContain(res.status);
      }
    });

    it('breadth follows the role: a full-scope token of a role without the permission is refused', async () => {
      // What the client role holds is each resource's declared policy; the client holds reads of tasks, projects, … and writes of tasks.
      const clientHolds = new Set(builtinRolePermissions('client', h.api.registry));
      expect([...clientHolds]).toEqual(expect.arrayContaining(['tasks:read', 'tasks:write', 'projects:read', 'labels:read']));
      expect([...clientHolds]).not.toContain('projects:write');
      for (const r of h.api.routes()) {
        const [resource, action] = r.scope.split(':') as [string, ScopeAction];
        const clientLacks = !grants(clientHolds, resource, action);
        // Routes on the caller's own records (their tokens) need the scope only: every member manages their own.
        if (!clientLacks || r.ownRecords) continue;
        const res = await h.req(r.method, concrete(r.path), { token: h.a.client.token, body: bodyFor(r.method) });
        expect(res.status, `${r.method} ${r.path}`).toBe(403);
        expect(res.body.missingPermissions, `${r.method} ${r.path}`).toContain(r.scope);
      }
    });

    it('routes with extra role permissions name them when the role lacks them', async () => {
      const extra = h.api.routes().filter((r) => r.permissions.length > 0);
      for (const r of extra) {
        const res = await h.req(r.method, concrete(r.path), { token: h.a.regular.token, body: bodyFor(r.method) });
        expect(res.status, `${r.method} ${r.path}`).toBe(403);
        for (const p of r.permissions) expect(res.body.missingPermissions).toContain(p);
      }
    });
  });
}
