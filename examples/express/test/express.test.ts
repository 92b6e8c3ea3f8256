import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { createPmapi, type Pmapi } from '@pmapi/core';
import { openSqliteStore } from '@pmapi/adapter-sqlite';
import { toNodeHandler } from '@pmapi/http-node';
import { createApp } from '../src/app';

// Issue 16 "Mountable anywhere" / "Examples": pmapi under /pm in a real Express 5 app on 127.0.0.1.
describe('example: Express 5, pmapi mounted under /pm', () => {
  let api: Pmapi;
  let token: string;
  let server: Server;
  let base: string;

  beforeAll(async () => {
    api = await createPmapi({ store: await openSqliteStore() });
    const ws = await api.admin.createWorkspace({ name: 'Acme', owner: { name: 'Ada' } });
    token = (await api.admin.issueToken(ws.ownerMemberId, { scopes: ['read', 'write', 'delete'] })).token;
    server = createApp(api).listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await api.close();
  });

  it('serves /pm/api/v3/members with the default basePath; the host keeps its own routes and 404', async () => {
    const r = await fetch(`${base}/pm/api/v3/members`, { headers: { authorization: `Bearer ${token}` } });
    expect(r.status).toBe(200);
    const body = (await r.json()) as { data: { name: string }[] };
    expect(body.data.map((m) => m.name)).toEqual(['Ada']);
    expect(await (await fetch(`${base}/`)).text()).toBe('host app');
    const miss = await fetch(`${base}/pm/nothing-here`);
    expect(miss.status).toBe(404);
    expect(await miss.text()).toBe('host 404');
    // Not mounted at the root: the bare API path is the host's.
    expect(await (await fetch(`${base}/api/v3/members`)).text()).toBe('host 404');
  });

  it('a write through the mount, and a problem whose status is the API\'s (401 without a token)', async () => {
    const c = await fetch(`${base}/pm/api/v3/projects`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Web' }) });
    expect(c.status).toBe(201);
    const u = await fetch(`${base}/pm/api/v3/projects`);
    expect(u.status).toBe(401);
    expect(((await u.json()) as { code: string }).code).toBe('unauthorized');
  });

  it('a browser preflight from the configured origin is answered before auth', async () => {
    const p = await fetch(`${base}/pm/api/v3/projects`, { method: 'OPTIONS', headers: { origin: 'http://localhost:5173', 'access-control-request-method': 'POST' } });
    expect(p.status).toBe(204);
    expect(p.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
  });

  it('inside an Express Router mounted at /pm/v2 after express.json(): nested mounts and a parsed body work too', async () => {
    const app = express();
    const router = express.Router();
    router.use(toNodeHandler(api));
    app.use(express.json());
    app.use('/pm/v2', router);
    const s = app.listen(0, '127.0.0.1');
    await new Promise((r) => s.once('listening', r));
    try {
      const b = `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
      const c = await fetch(`${b}/pm/v2/api/v3/projects`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Nested' }) });
      expect(c.status).toBe(201);
      expect(((await c.json()) as { name: string }).name).toBe('Nested');
    } finally {
      s.closeAllConnections();
      await new Promise((r) => s.close(r));
    }
  });
});
