import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import Fastify, { type FastifyInstance } from 'fastify';
import middie from '@fastify/middie';
import { createPmapi, type Pmapi } from '@pmapi/core';
import { toNodeHandler } from '@pmapi/http-node';
import { frontEndStores } from './stores';

// Issue 16 "Mountable anywhere": pmapi under /pm in a Fastify 5 app, the way the README shows it
// (packages/http-node/README.md, "Fastify"): @fastify/middie runs toNodeHandler before Fastify's routing and
// body parsing, strips /pm from req.url like Express, and passes what pmapi does not serve on to Fastify.

/** The README's Fastify snippet (test/readme-snippets.test.ts checks the README block equals this region). */
async function createFastifyApp(api: Pmapi): Promise<FastifyInstance> {
  // #region fastify
  const app = Fastify();
  await app.register(middie);
  app.use('/pm', toNodeHandler(api, { cors: { origins: ['https://app.example.com'] } }));
  app.get('/', async () => 'host app');          // the host's own routes, and its 404, stay Fastify's
  // #endregion fastify
  return app;
}

for (const { name, open } of frontEndStores()) {
  describe(`[${name}] Fastify 5: pmapi mounted under /pm`, () => {
    let api: Pmapi;
    let token: string;
    let app: FastifyInstance;
    let base: string;

    beforeAll(async () => {
      api = await createPmapi({ store: await open(), rateLimiter: false });
      const ws = await api.admin.createWorkspace({ name: 'Acme', owner: { name: 'Ada' } });
      token = (await api.admin.issueToken(ws.ownerMemberId, { scopes: ['read', 'write', 'delete'] })).token;
      app = await createFastifyApp(api);
      base = await app.listen({ port: 0, host: '127.0.0.1' });
    });
    afterAll(async () => {
      await app.close();
      await api.close();
    });
    const auth = () => ({ authorization: `Bearer ${token}` });

    it('GET /pm/api/v3/members is pmapi\'s, with the mount in the paths it writes back', async () => {
      const r = await fetch(`${base}/pm/api/v3/members`, { headers: auth() });
      expect(r.status).toBe(200);
      expect(((await r.json()) as { data: { name: string }[] }).data.map((m) => m.name)).toEqual(['Ada']);
      const miss = (await (await fetch(`${base}/pm/api/v3/projects/0000nope`, { headers: auth() })).json()) as { instance: string; docsUrl: string };
      expect(miss.instance).toBe('/pm/api/v3/projects/0000nope');
      expect((await fetch(new URL(miss.docsUrl, base))).status).toBe(200);
    });

    it('a POST with a JSON body reaches pmapi unparsed by Fastify (and a bad one is pmapi\'s 400, not Fastify\'s)', async () => {
      const c = await fetch(`${base}/pm/api/v3/projects`, { method: 'POST', headers: { ...auth(), 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Web' }) });
      expect(c.status).toBe(201);
      const p = (await c.json()) as { id: string; name: string };
      expect(p.name).toBe('Web');
      expect((await fetch(`${base}/pm/api/v3/projects/${p.id}`, { headers: auth() })).status).toBe(200);
      const bad = await fetch(`${base}/pm/api/v3/projects`, { method: 'POST', headers: { ...auth(), 'content-type': 'application/json' }, body: '{"name":' });
      expect(bad.status).toBe(400);
      expect(((await bad.json()) as { code: string }).code).toBe('validation_failed');
    });

    it('paths pmapi does not serve fall through to Fastify (its routes and its 404)', async () => {
      expect(await (await fetch(`${base}/`)).text()).toBe('host app');
      const miss = await fetch(`${base}/pm/nothing-here`);
      expect(miss.status).toBe(404);
      expect(((await miss.json()) as { message: string }).message).toMatch(/Route GET:\/pm\/nothing-here not found/);
      // Not mounted at the root: the bare API path is Fastify's 404 too.
      expect((await fetch(`${base}/api/v3/members`, { headers: auth() })).status).toBe(404);
    });

    it('a CORS preflight from an allowed origin is answered 204 before authentication', async () => {
      const pre = await fetch(`${base}/pm/api/v3/projects`, { method: 'OPTIONS', headers: { origin: 'https://app.example.com', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' } });
      expect(pre.status).toBe(204);
      expect(pre.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
      const other = await fetch(`${base}/pm/api/v3/projects`, { method: 'OPTIONS', headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' } });
      expect(other.headers.get('access-control-allow-origin')).toBeNull();
    });
  });
}
