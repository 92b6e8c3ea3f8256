import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createPmapi, type Pmapi } from '@pmapi/core';
import { openSqliteStore } from '@pmapi/adapter-sqlite';
import { toNodeHandler, clientAddress } from '@pmapi/http-node';

async function listen(handler: http.RequestListener): Promise<{ server: http.Server; base: string }> {
  const server = http.createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

describe('http-node: a real node:http server in front of the core', () => {
  let api: Pmapi;
  let token: string;
  let server: http.Server;
  let base: string;

  beforeAll(async () => {
    api = await createPmapi({ store: await openSqliteStore() });
    const ws = await api.admin.createWorkspace({ name: 'Acme', owner: { name: 'Ada' } });
    token = (await api.admin.issueToken(ws.ownerMemberId, { scopes: ['read', 'write', 'delete'] })).token;
    ({ server, base } = await listen(toNodeHandler(api, { bodyLimit: 1024 })));
  });
  afterAll(async () => {
    server.close();
    await api.close();
  });

  const auth = () => ({ authorization: `Bearer ${token}`, 'content-type': 'application/json' });

  it('round-trips a create and a read', async () => {
    const r = await fetch(`${base}/api/v3/projects`, { method: 'POST', headers: auth(), body: JSON.stringify({ name: 'Web' }) });
    expect(r.status).toBe(201);
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
    const p = (await r.json()) as { id: string };
    const g = await fetch(`${base}/api/v3/projects/${p.id}`, { headers: auth() });
    expect(((await g.json()) as { name: string }).name).toBe('Web');
  });

  it('refuses a body over the limit with a 413 problem, never a 500', async () => {
    const r = await fetch(`${base}/api/v3/projects`, { method: 'POST', headers: auth(), body: JSON.stringify({ name: 'x'.repeat(2000) }) });
    expect(r.status).toBe(413);
    const body = (await r.json()) as { code: string; status: number; instance: string };
    expect(body.code).toBe('payload_too_large');
    expect(body.status).toBe(413);
    expect(body.instance).toBe('/api/v3/projects');
  });

  it('answers 204 with no body for a delete', async () => {
    const r = await fetch(`${base}/api/v3/projects`, { method: 'POST', headers: auth(), body: JSON.stringify({ name: 'Gone' }) });
    const p = (await r.json()) as { id: string };
    const d = await fetch(`${base}/api/v3/projects/${p.id}`, { method: 'DELETE', headers: auth() });
    expect(d.status).toBe(204);
    expect(await d.text()).toBe('');
  });

  it('works as Connect/Express-style middleware: v3 answered, other paths passed to next()', async () => {
    const handler = toNodeHandler(api);
    const app = (req: IncomingMessage, res: ServerResponse) => {
      // A mounted app sees a stripped url and keeps originalUrl, as Express does.
      handler(req, res, () => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('host app');
      });
    };
    const { server: s2, base: b2 } = await listen(app);
    try {
      expect(await (await fetch(`${b2}/health`)).text()).toBe('host app');
      const r = await fetch(`${b2}/api/v3/projects`, { headers: auth() });
      expect(r.status).toBe(200);
    } finally {
      s2.close();
    }
  });

  it('derives the client address only from trusted proxies', () => {
    const req = { socket: { remoteAddress: '10.0.0.5' }, headers: { 'x-forwarded-for': '203.0.113.9, 10.0.0.7' } } as unknown as IncomingMessage;
    expect(clientAddress(req, false)).toBe('10.0.0.5');
    expect(clientAddress(req, true)).toBe('203.0.113.9');
    expect(clientAddress(req, (a) => a.startsWith('10.'))).toBe('203.0.113.9');
    const spoof = { socket: { remoteAddress: '198.51.100.1' }, headers: { 'x-forwarded-for': '1.2.3.4' } } as unknown as IncomingMessage;
    expect(clientAddress(spoof, (a) => a.startsWith('10.'))).toBe('198.51.100.1');
  });
});
