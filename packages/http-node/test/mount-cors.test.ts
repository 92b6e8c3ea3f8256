import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createPmapi, type Pmapi } from '@pmapi/core';
import { toNodeHandler } from '@pmapi/http-node';
import { frontEndStores } from './stores';

// Issue 16 "Mountable anywhere": a prefix mount is set once (where the host mounts the handler), and
// optional CORS answers browser preflights before authentication. Spec "Authentication": every v3 call
// needs a bearer token; a preflight carries none, so without CORS it is 401.

async function listen(handler: http.RequestListener): Promise<{ server: http.Server; base: string }> {
  const server = http.createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** What Express/Connect do for `app.use(prefix, mw)`: strip the prefix from req.url, keep req.originalUrl and req.baseUrl. */
function mountAt(prefix: string, mw: ReturnType<typeof toNodeHandler>): http.RequestListener {
  return (req: IncomingMessage, res: ServerResponse) => {
    const fallthrough = () => {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('host 404');
    };
    const url = req.url ?? '/';
    if (url !== prefix && !url.startsWith(`${prefix}/`) && !url.startsWith(`${prefix}?`)) return fallthrough();
    Object.assign(req, { originalUrl: url, baseUrl: prefix, url: url.slice(prefix.length) || '/' });
    mw(req, res, fallthrough);
  };
}

for (const { name, open } of frontEndStores()) {
  describe(`[${name}] http-node: mounted under a prefix, and CORS`, () => {
    let api: Pmapi;
    let token: string;
    const servers: http.Server[] = [];

    beforeAll(async () => {
      api = await createPmapi({ store: await open(), rateLimiter: false });
      const ws = await api.admin.createWorkspace({ name: 'Acme', owner: { name: 'Ada' } });
      token = (await api.admin.issueToken(ws.ownerMemberId, { scopes: ['read', 'write', 'delete'] })).token;
    });
    afterAll(async () => {
      for (const s of servers) s.close();
      await api.close();
    });
    const serve = async (h: http.RequestListener) => {
      const l = await listen(h);
      servers.push(l.server);
      return l.base;
    };

    it('app.use("/pm", toNodeHandler(api)): the API answers at /pm/api/v3, with basePath left at its default', async () => {
      const base = await serve(mountAt('/pm', toNodeHandler(api)));
      const r = await fetch(`${base}/pm/api/v3/members`, { headers: { authorization: `Bearer ${token}` } });
      expect(r.status).toBe(200);
      expect(((await r.json()) as { data: unknown[] }).data.length).toBe(1);
      // A write round-trips through the mount too.
      const c = await fetch(`${base}/pm/api/v3/projects`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Web' }) });
      expect(c.status).toBe(201);
      // Outside the API, inside the mount: the host's next handler.
      const other = await fetch(`${base}/pm/health-of-host`);
      expect(other.status).toBe(404);
      expect(await other.text()).toBe('host 404');
      // The unprefixed path is not the API any more.
      expect(await (await fetch(`${base}/api/v3/members`, { headers: { authorization: `Bearer ${token}` } })).text()).toBe('host 404');
    });

    it('a body over the limit under the mount is 413, the old way (prefix in basePath too) still works', async () => {
      const base = await serve(mountAt('/pm', toNodeHandler(api, { bodyLimit: 64 })));
      const r = await fetch(`${base}/pm/api/v3/projects`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'x'.repeat(200) }) });
      expect(r.status).toBe(413);
      const old = await createPmapi({ store: api.store, basePath: '/pm/api/v3', rateLimiter: false, secret: 's' });
      const base2 = await serve(mountAt('/pm', toNodeHandler(old, { basePath: '/pm/api/v3' })));
      expect((await fetch(`${base2}/pm/api/v3/members`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    });

    it('the OAuth server under the mount follows its issuer URL (full path): discovery and token at /pm/…', async () => {
      const withAs = await createPmapi({
        store: api.store, rateLimiter: false, secret: 's2',
        oauth: { issuer: 'http://127.0.0.1/pm', currentMember: () => null, signInUrl: (r) => `/login?next=${encodeURIComponent(r)}` },
      });
      const base = await serve(mountAt('/pm', toNodeHandler(withAs)));
      const meta = await fetch(`${base}/pm/.well-known/oauth-authorization-server`);
      expect(meta.status).toBe(200);
      expect(((await meta.json()) as { token_endpoint: string }).token_endpoint).toBe('http://127.0.0.1/pm/oauth/token');
      // The token endpoint answers in RFC 6749's shape (not the host's 404), and v3 still answers inside the mount.
      const t = await fetch(`${base}/pm/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=nope' });
      expect(t.status).toBe(400);
      expect(((await t.json()) as { error: string }).error).toMatch(/^(unsupported_grant_type|invalid_request|invalid_client)$/);
      expect((await fetch(`${base}/pm/api/v3/members`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    });

    it('without cors a preflight is 401 (as before); with cors an allowed origin gets a 204 preflight before auth, others nothing', async () => {
      const plain = await serve(toNodeHandler(api));
      const pre = { method: 'OPTIONS', headers: { origin: 'https://app.example.com', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' } };
      const p0 = await fetch(`${plain}/api/v3/projects`, pre);
      expect(p0.status).toBe(401);
      expect(p0.headers.get('access-control-allow-origin')).toBeNull();

      const base = await serve(mountAt('/pm', toNodeHandler(api, { cors: { origins: ['https://app.example.com'], credentials: true, maxAge: 120 } })));
      const p = await fetch(`${base}/pm/api/v3/projects`, pre);
      expect(p.status).toBe(204);
      expect(p.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
      expect(p.headers.get('access-control-allow-credentials')).toBe('true');
      expect(p.headers.get('access-control-max-age')).toBe('120');
      expect(p.headers.get('access-control-allow-methods')).toMatch(/POST/);
      expect(p.headers.get('access-control-allow-headers')).toMatch(/authorization/);
      expect(p.headers.get('vary')).toMatch(/Origin/);
      // Another origin: no preflight answer, no CORS headers (the browser refuses); the request goes on as usual (401).
      const evil = await fetch(`${base}/pm/api/v3/projects`, { ...pre, headers: { ...pre.headers, origin: 'https://evil.example' } });
      expect(evil.status).toBe(401);
      expect(evil.headers.get('access-control-allow-origin')).toBeNull();
      // Actual answers carry the allowed origin (errors too), and expose the request id.
      const g = await fetch(`${base}/pm/api/v3/members`, { headers: { origin: 'https://app.example.com', authorization: `Bearer ${token}` } });
      expect(g.status).toBe(200);
      expect(g.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
      expect(g.headers.get('access-control-expose-headers')).toMatch(/x-request-id/);
      const e = await fetch(`${base}/pm/api/v3/members`, { headers: { origin: 'https://app.example.com' } });
      expect(e.status).toBe(401);
      expect(e.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
      const o = await fetch(`${base}/pm/api/v3/members`, { headers: { origin: 'https://evil.example', authorization: `Bearer ${token}` } });
      expect(o.status).toBe(200);
      expect(o.headers.get('access-control-allow-origin')).toBeNull();
    });

    it('bad cors options are refused when the handler is built, naming the option', () => {
      expect(() => toNodeHandler(api, { cors: { origins: ['https://app.example.com/'] } })).toThrow(/cors\.origins/);
      expect(() => toNodeHandler(api, { cors: { origins: 'https://x.example' as unknown as string[] } })).toThrow(/cors\.origins/);
      expect(() => toNodeHandler(api, { cors: { origins: ['*'], maxAge: -1 } })).toThrow(/cors\.maxAge/);
    });
  });
}
