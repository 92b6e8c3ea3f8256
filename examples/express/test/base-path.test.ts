import { describe, it, expect, afterAll } from 'vitest';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { createPmapi, type Pmapi } from '@pmapi/core';
import { openSqliteStore } from '@pmapi/adapter-sqlite';
import { toNodeHandler } from '@pmapi/http-node';

// Issue 16 "Mountable anywhere": one setting. A changed createPmapi basePath is not repeated in toNodeHandler:
// the handler reads it from the API. (Before, toNodeHandler assumed /api/v3 and, as Express middleware, handed
// /pm/v3/... to next: the host's 404, the silent fall-through the issue reports.)
describe('Express 5: createPmapi({ basePath }) under app.use("/pm", toNodeHandler(api))', () => {
  let api: Pmapi;
  let server: Server;
  afterAll(async () => {
    server?.closeAllConnections();
    if (server) await new Promise((r) => server.close(r));
    await api?.close();
  });

  it('serves /pm/v3/... with basePath /v3 set once, in createPmapi; other paths stay the host\'s', async () => {
    api = await createPmapi({ store: await openSqliteStore(), basePath: '/v3', rateLimiter: false });
    expect(api.basePath).toBe('/v3');
    const ws = await api.admin.createWorkspace({ name: 'Acme', owner: { name: 'Ada' } });
    const token = (await api.admin.issueToken(ws.ownerMemberId, { scopes: ['read'] })).token;
    const app = express();
    app.use('/pm', toNodeHandler(api));
    app.use((_req, res) => void res.status(404).type('text/plain').send('host 404'));
    server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

    const r = await fetch(`${base}/pm/v3/members`, { headers: { authorization: `Bearer ${token}` } });
    expect(r.status).toBe(200);
    expect(((await r.json()) as { data: { name: string }[] }).data.map((m) => m.name)).toEqual(['Ada']);
    // A problem written back carries the mount and the basePath.
    const p = await fetch(`${base}/pm/v3/members`);
    expect(p.status).toBe(401);
    expect(((await p.json()) as { instance: string }).instance).toBe('/pm/v3/members');
    // The old default is no longer pmapi's: the host answers it.
    const old = await fetch(`${base}/pm/api/v3/members`, { headers: { authorization: `Bearer ${token}` } });
    expect(old.status).toBe(404);
    expect(await old.text()).toBe('host 404');
  });
});
