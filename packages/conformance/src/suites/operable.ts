import { describe, it, expect } from 'vitest';
import { createPmapi, fakeClock, type RequestInfo } from '@pmapi/core';
import { harness, type Harness, type StoreFactory } from '../kit';

/**
 * Issue 16, "Operable": the health/readiness endpoint and the per-request
 * hook, on every store. (Options validation is store-independent:
 * packages/core/test/options.test.ts.)
 */
export function operableSuite(factory: StoreFactory): void {
  describe('Operable: GET {basePath}/health (issue 16)', () => {
    it('answers 200 {status: ok} without authentication, HEAD without a body, other methods 405', async () => {
      const h = await harness(factory);
      try {
        const get = await h.api.handle({ method: 'GET', url: '/api/v3/health', headers: {} });
        expect(get.status).toBe(200);
        expect(JSON.parse(get.body as string)).toEqual({ status: 'ok' });
        expect(get.headers['cache-control']).toBe('no-store');
        // A bad token does not matter either: health is not authenticated.
        const withBadToken = await h.api.handle({ method: 'GET', url: '/api/v3/health?x=1', headers: { authorization: 'Bearer nope' } });
        expect(withBadToken.status).toBe(200);
        const head = await h.api.handle({ method: 'HEAD', url: '/api/v3/health', headers: {} });
        expect(head.status).toBe(200);
        expect(head.body).toBeUndefined();
        const post = await h.api.handle({ method: 'POST', url: '/api/v3/health', headers: {} });
        expect(post.status).toBe(405);
        expect(post.headers.allow).toBe('GET, HEAD');
        // Everything else under the base path still needs a token.
        expect((await h.api.handle({ method: 'GET', url: '/api/v3/projects', headers: {} })).status).toBe(401);
      } finally {
        await h.close();
      }
    });

    it('answers 503 {status: unavailable} when the store is down (closed), and follows basePath', async () => {
      const store = await factory.open();
      const api = await createPmapi({ store, clock: fakeClock('2026-03-01T09:00:00.000Z'), rateLimiter: false, basePath: '/v3/' });
      expect((await api.handle({ method: 'GET', url: '/v3/health', headers: {} })).status).toBe(200);
      await api.close();
      const down = await api.handle({ method: 'GET', url: '/v3/health', headers: {} });
      expect(down.status).toBe(503);
      expect(JSON.parse(down.body as string)).toEqual({ status: 'unavailable' });
      expect(down.headers['retry-after']).toBe('1');
    });
  });

  describe('Operable: the per-request hook onRequest (issue 16)', () => {
    it('reports method, route pattern, status, duration, request id and workspace, never the token', async () => {
      const seen: RequestInfo[] = [];
      const h: Harness = await harness(factory, { api: () => ({ onRequest: (i) => seen.push(i) }) });
      try {
        const last = () => seen[seen.length - 1]!;
        const p = await h.project({ name: 'Logged' });
        expect(last()).toMatchObject({ method: 'POST', route: '/api/v3/projects', status: 201, workspace: h.a.id });
        const got = await h.get(`/projects/${p.id}`, { headers: { 'x-request-id': 'req-123' } });
        expect(got.status).toBe(200);
        expect(last()).toMatchObject({ method: 'GET', route: '/api/v3/projects/{id}', status: 200, requestId: 'req-123', workspace: h.a.id });
        expect(typeof last().durationMs).toBe('number');
        expect(last().durationMs).toBeGreaterThanOrEqual(0);
        // Workspace B's owner: its own workspace; a custom route: its pattern.
        await h.post(`/projects/${p.id}/add-member`, { memberIds: [] }, { token: h.b.owner.token });
        expect(last()).toMatchObject({ method: 'POST', route: '/api/v3/projects/{id}/add-member', workspace: h.b.id });
        await h.post(`/projects/${p.id}/restore`, undefined);
        expect(last()).toMatchObject({ route: '/api/v3/projects/{id}/restore', workspace: h.a.id });
        // Not authenticated: no workspace, no route; an unknown resource: no route.
        await h.get('/projects', { token: null });
        expect(last()).toMatchObject({ method: 'GET', route: null, status: 401, workspace: null });
        expect(last().requestId).toMatch(/\S/);
        await h.get('/no-such-thing');
        expect(last()).toMatchObject({ route: null, status: 400, workspace: h.a.id }); // resource_unknown
        await h.api.handle({ method: 'GET', url: '/api/v3/health', headers: {} });
        expect(last()).toMatchObject({ route: '/api/v3/health', status: 200, workspace: null });
        const text = JSON.stringify(seen);
        for (const tok of [h.a.owner.token, h.b.owner.token]) expect(text).not.toContain(tok);
        expect(Object.keys(last()).sort()).toEqual(['durationMs', 'method', 'requestId', 'route', 'status', 'workspace']);
      } finally {
        await h.close();
      }
    });

    it('a hook that throws is reported to onError and leaves the answer alone', async () => {
      const reported: unknown[] = [];
      const h = await harness(factory, { api: () => ({ onRequest: () => { throw new Error('logger down'); }, onError: (e) => reported.push(e) }) });
      try {
        expect((await h.get('/projects')).status).toBe(200);
        expect(reported.map((e) => (e as Error).message)).toContain('logger down');
      } finally {
        await h.close();
      }
    });
  });
}
