import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { createPmapi, type Pmapi, type RequestInfo } from '@pmapi/core';
import { toNodeHandler, toFetchHandler } from '@pmapi/http-node';
import { frontEndStores } from './stores';

// Issue 16 "Operable": createPmapi({ onRequest }) fires exactly once for every request the front ends
// serve — v3, legacy v1.0, health, the reference pages, blob links, the API-host token endpoint and the
// OAuth server (api.oauth.handle) — with method, route pattern, status, duration, request id and workspace.

for (const { name, open } of frontEndStores()) {
  describe(`[${name}] onRequest covers every surface`, () => {
    let api: Pmapi;
    let token: string;
    let teamId: string;
    let base: string;
    let server: http.Server;
    const events: RequestInfo[] = [];

    beforeAll(async () => {
      api = await createPmapi({
        store: await open(),
        rateLimiter: false,
        onRequest: (i) => events.push(i),
        oauth: { issuer: 'http://127.0.0.1/as', currentMember: () => null, signInUrl: (r) => `/login?next=${encodeURIComponent(r)}` },
      });
      const ws = await api.admin.createWorkspace({ name: 'Acme', owner: { name: 'Ada' } });
      teamId = ws.id;
      token = (await api.admin.issueToken(ws.ownerMemberId, { scopes: ['read', 'write', 'delete'] })).token;
      server = http.createServer(toNodeHandler(api));
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterAll(async () => {
      server.closeAllConnections();
      server.close();
      await api.close();
    });

    /** The one event a request fired (fails on none or several). */
    async function one(path: string, init: RequestInit = {}): Promise<{ res: Response; event: RequestInfo }> {
      events.length = 0;
      const res = await fetch(`${base}${path}`, init);
      await res.arrayBuffer();
      expect(events, `${init.method ?? 'GET'} ${path}`).toHaveLength(1);
      const event = events[0]!;
      expect(event.status).toBe(res.status);
      expect(event.durationMs).toBeGreaterThanOrEqual(0);
      expect(event.method).toBe(init.method ?? 'GET');
      return { res, event };
    }
    const auth = () => ({ authorization: `Bearer ${token}` });

    it('v3: route pattern, workspace and the answer\'s request id', async () => {
      const { res, event } = await one('/api/v3/members', { headers: auth() });
      expect(event).toMatchObject({ route: '/api/v3/members', status: 200, workspace: teamId, requestId: res.headers.get('x-request-id') });
    });

    it('legacy v1.0: its route pattern and workspace; unauthenticated: no route, no workspace', async () => {
      const { res, event } = await one('/api/v1.0/subteams/0000nope', { headers: auth() });
      expect(event).toMatchObject({ route: '/api/v1.0/subteams/{id}', status: 404, workspace: teamId, requestId: res.headers.get('x-request-id') });
      const anon = await one('/api/v1.0/members');
      expect(anon.event).toMatchObject({ route: null, status: 401, workspace: null });
    });

    it('health and the reference pages: fixed routes, no workspace', async () => {
      expect((await one('/api/v3/health')).event).toMatchObject({ route: '/api/v3/health', status: 200, workspace: null, requestId: null });
      expect((await one('/api/v3/errors/stale_write')).event).toMatchObject({ route: '/api/v3/errors/{code}', status: 200, workspace: null });
      expect((await one('/api/v3/errors')).event).toMatchObject({ route: '/api/v3/errors', status: 200 });
      expect((await one('/api/v3/versioning', { method: 'HEAD' })).event).toMatchObject({ route: '/api/v3/versioning', status: 200, method: 'HEAD' });
    });

    it('blob links: the link pattern, never the key', async () => {
      expect((await one('/api/v3/blobs/team/secret-key?sig=x')).event).toMatchObject({ route: '/api/v3/blobs/{key}', workspace: null });
    });

    it('the OAuth server (api.oauth.handle): discovery and token endpoint, its path as the route', async () => {
      const meta = await one('/as/.well-known/oauth-authorization-server');
      expect(meta.event).toMatchObject({ route: '/as/.well-known/oauth-authorization-server', status: 200, workspace: null });
      const tok = await one('/as/oauth/token', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=nope' });
      expect(tok.event).toMatchObject({ route: '/as/oauth/token', status: 400, method: 'POST' });
      // The token endpoint on the API host, served by api.handle.
      const apiTok = await one('/oauth/token', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=nope' });
      expect(apiTok.event).toMatchObject({ route: '/oauth/token', status: 400 });
    });

    it('answers the front ends make themselves (413, two Authorization headers, CORS preflight) are reported once too', async () => {
      const small = http.createServer(toNodeHandler(api, { bodyLimit: 16, cors: { origins: ['https://app.example.com'] } }));
      await new Promise<void>((r) => small.listen(0, '127.0.0.1', r));
      const at = `http://127.0.0.1:${(small.address() as AddressInfo).port}`;
      try {
        const hit = async (init: RequestInit) => {
          events.length = 0;
          const res = await fetch(`${at}/api/v3/projects`, init);
          await res.arrayBuffer();
          expect(events).toHaveLength(1);
          expect(events[0]).toMatchObject({ route: null, status: res.status, workspace: null, method: init.method ?? 'GET' });
          return res;
        };
        expect((await hit({ method: 'POST', headers: { ...auth(), 'content-type': 'application/json' }, body: JSON.stringify({ name: 'x'.repeat(100) }) })).status).toBe(413);
        expect(events[0]!.requestId).toEqual(expect.any(String));
        // Two Authorization headers (node:http keeps both in headersDistinct).
        const two = await new Promise<number>((resolve, reject) => {
          events.length = 0;
          const u = new URL(at);
          const sock = net.connect(Number(u.port), '127.0.0.1', () => {
            sock.write(`GET /api/v3/members HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nAuthorization: Bearer other\r\nConnection: close\r\n\r\n`);
          });
          let text = '';
          sock.on('data', (c) => (text += c.toString()));
          sock.on('end', () => resolve(Number(/^HTTP\/1\.1 (\d+)/.exec(text)?.[1])));
          sock.on('error', reject);
        });
        expect(two).toBe(401);
        expect(events.map((e) => [e.status, e.route])).toEqual([[401, null]]);
        expect((await hit({ method: 'OPTIONS', headers: { origin: 'https://app.example.com', 'access-control-request-method': 'POST' } })).status).toBe(204);
        const pm = toFetchHandler(api, { bodyLimit: 16 });
        events.length = 0;
        const big = await pm(new Request('http://pm.test/api/v3/projects', { method: 'POST', headers: { ...auth(), 'content-type': 'application/json' }, body: JSON.stringify({ name: 'x'.repeat(100) }) }));
        expect(big.status).toBe(413);
        expect(events.map((e) => [e.status, e.route])).toEqual([[413, null]]);
      } finally {
        small.closeAllConnections();
        small.close();
      }
    });

    it('through toFetchHandler too (one event per request, OAuth included)', async () => {
      const pm = toFetchHandler(api);
      events.length = 0;
      await pm(new Request('http://pm.test/api/v3/members', { headers: auth() }));
      await pm(new Request('http://pm.test/as/.well-known/oauth-authorization-server'));
      await pm(new Request('http://pm.test/api/v1.0/members', { headers: auth() }));
      expect(events.map((e) => [e.route, e.status])).toEqual([['/api/v3/members', 200], ['/as/.well-known/oauth-authorization-server', 200], ['/api/v1.0/members', 200]]);
    });
  });
}
