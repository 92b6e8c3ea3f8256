import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { createPmapi, type Pmapi } from '@pmapi/core';
import { openSqliteStore } from '@pmapi/adapter-sqlite';
import { createApp } from '../src/app';

// Issue 16 "Mountable anywhere" / "Examples": Hono via toFetchHandler, served by @hono/node-server on 127.0.0.1.
describe('example: Hono through the fetch handler', () => {
  let api: Pmapi;
  let token: string;
  let server: ServerType;
  let base: string;
  const seen: (string | undefined)[] = [];

  beforeAll(async () => {
    const real = await createPmapi({ store: await openSqliteStore() });
    // Watch what reaches the core (the client address), answering as the real api.
    api = { ...real, handle: (req) => (seen.push(req.remoteAddress), real.handle(req)) };
    const ws = await api.admin.createWorkspace({ name: 'Acme', owner: { name: 'Ada' } });
    token = (await api.admin.issueToken(ws.ownerMemberId, { scopes: ['read', 'write', 'delete'] })).token;
    await new Promise<void>((r) => {
      server = serve({ fetch: createApp(api).fetch, port: 0, hostname: '127.0.0.1' }, () => r());
    });
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    await api.close();
  });

  it('GET /api/v3/members answers the workspace roster; the host keeps its own routes', async () => {
    const r = await fetch(`${base}/api/v3/members`, { headers: { authorization: `Bearer ${token}` } });
    expect(r.status).toBe(200);
    expect(((await r.json()) as { data: { name: string }[] }).data.map((m) => m.name)).toEqual(['Ada']);
    expect(seen.at(-1)).toBe('127.0.0.1');
    expect(await (await fetch(`${base}/`)).text()).toBe('host app');
  });

  it('a JSON write, a 401 problem and a 413 come through Hono unchanged', async () => {
    const c = await fetch(`${base}/api/v3/projects`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Web' }) });
    expect(c.status).toBe(201);
    expect(((await c.json()) as { name: string }).name).toBe('Web');
    const u = await fetch(`${base}/api/v3/projects`);
    expect(u.status).toBe(401);
    expect(u.headers.get('content-type')).toMatch(/json/);
    const big = await fetch(`${base}/api/v3/projects`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'x'.repeat(5 * 1024 * 1024) }) });
    expect(big.status).toBe(413);
  });
});
