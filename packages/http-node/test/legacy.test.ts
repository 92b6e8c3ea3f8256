import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createPmapi, type Pmapi } from '@pmapi/core';
import { openSqliteStore } from '@pmapi/adapter-sqlite';
import { toNodeHandler } from '@pmapi/http-node';

/**
 * The legacy v1.0 surface (issue 15; second document, "Errors", "Versioning")
 * over a real socket: served in middleware use too, and the front end's own
 * refusals (413) in the legacy shape with the versioning headers.
 */

async function listen(handler: http.RequestListener): Promise<{ server: http.Server; base: string }> {
  const server = http.createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

describe('http-node: the legacy v1.0 surface', () => {
  let api: Pmapi;
  let token: string;

  beforeAll(async () => {
    api = await createPmapi({ store: await openSqliteStore(), rateLimiter: false });
    const ws = await api.admin.createWorkspace({ name: 'Acme', owner: { name: 'Ada' } });
    token = (await api.admin.issueToken(ws.ownerMemberId, { scopes: ['read', 'write', 'delete'] })).token;
  });
  afterAll(() => api.close());

  const auth = () => ({ authorization: `Bearer ${token}`, 'content-type': 'application/json' });

  it('as middleware: /api/v1.0 is answered (not passed to next), other paths still are', async () => {
    const handler = toNodeHandler(api);
    const app = (req: IncomingMessage, res: ServerResponse) => handler(req, res, () => res.writeHead(200, { 'content-type': 'text/plain' }).end('host app'));
    const { server, base } = await listen(app);
    try {
      expect(await (await fetch(`${base}/health`)).text()).toBe('host app');
      const r = await fetch(`${base}/api/v1.0/subteams`, { headers: auth() });
      expect(r.status).toBe(200);
      expect(r.headers.get('deprecation')).toBe('true');
      expect(((await r.json()) as { subteams: unknown[] }).subteams.length).toBeGreaterThan(0);
      const none = await fetch(`${base}/api/v1.0/subteams`);
      expect(none.status).toBe(401);
      expect(await none.json()).toEqual({ message: expect.any(String), code: 401 });
    } finally {
      server.close();
    }
  });

  it('a body over the limit is 413 {message, code: 413} with the versioning headers; a legacy PUT gets the body limit, not the upload limit', async () => {
    const { server, base } = await listen(toNodeHandler(api, { bodyLimit: 1024 }));
    try {
      const post = await fetch(`${base}/api/v1.0/labels`, { method: 'POST', headers: auth(), body: JSON.stringify({ name: 'x'.repeat(2000), type: 0 }) });
      expect(post.status).toBe(413);
      expect(await post.json()).toEqual({ message: expect.any(String), code: 413 });
      expect(post.headers.get('sunset')).toBe('Wed, 01 Sep 2027 00:00:00 GMT');
      expect(post.headers.get('link')).toBe('</api/v3/versioning>; rel="deprecation"');
      const put = await fetch(`${base}/api/v1.0/labels/AnyLabel1`, { method: 'PUT', headers: auth(), body: JSON.stringify({ name: 'x'.repeat(2000) }) });
      expect(put.status).toBe(413);
      expect(await put.json()).toEqual({ message: expect.any(String), code: 413 });
    } finally {
      server.close();
    }
  });
});
