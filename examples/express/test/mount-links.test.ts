import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createPmapi, type Pmapi } from '@pmapi/core';
import { openSqliteStore } from '@pmapi/adapter-sqlite';
import { createApp } from '../src/app';

// Issue 16 "Mountable anywhere": under app.use('/pm', …) every path pmapi writes back — a problem's
// instance and docsUrl, the retired path's Link, the legacy versioning Link — carries /pm, so a client can
// follow it; and issue 17: the docsUrl and versioning Link lead to real pages (200) through the same mount.
describe('example: Express 5 under /pm — the paths pmapi writes include the mount', () => {
  let api: Pmapi;
  let token: string;
  let server: Server;
  let base: string;

  beforeAll(async () => {
    api = await createPmapi({ store: await openSqliteStore(), rateLimiter: false });
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
  const auth = () => ({ authorization: `Bearer ${token}` });

  it('a problem names the prefixed path as instance, and its docsUrl is a page served through the mount', async () => {
    const r = await fetch(`${base}/pm/api/v3/tasks/0000nope`, { headers: auth() });
    expect(r.status).toBe(404);
    const p = (await r.json()) as { instance: string; docsUrl: string; code: string };
    expect(p.code).toBe('resource_not_found');
    expect(p.instance).toBe('/pm/api/v3/tasks/0000nope');
    expect(p.docsUrl).toBe('/pm/api/v3/errors/resource_not_found');
    const page = await fetch(new URL(p.docsUrl, `${base}/pm/api/v3/tasks/0000nope`));
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await page.text()).toContain('<code>resource_not_found</code>');
  });

  it('a retired path answers with Deprecation and a Link to the current one under the mount, which answers', async () => {
    const r = await fetch(`${base}/pm/api/v3/task-groups`, { headers: auth() });
    expect(r.headers.get('deprecation')).toBe('true');
    expect(r.headers.get('link')).toBe('</pm/api/v3/statuses>; rel="successor-version"');
    const next = await fetch(`${base}/pm/api/v3/statuses`, { headers: auth() });
    expect(next.status).toBe(r.status);
  });

  it('the legacy surface\'s deprecation Link leads to the versioning page through the mount', async () => {
    const r = await fetch(`${base}/pm/api/v1.0/members`, { headers: auth() });
    expect(r.status).toBe(200);
    expect(r.headers.get('link')).toBe('</pm/api/v3/versioning>; rel="deprecation"');
    const page = await fetch(`${base}/pm/api/v3/versioning`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('1 September 2027');
  });

  it('problems http-node answers itself (413) carry the prefix too', async () => {
    const big = await fetch(`${base}/pm/api/v3/projects`, { method: 'POST', headers: { ...auth(), 'content-type': 'application/json' }, body: JSON.stringify({ name: 'x'.repeat(5 * 1024 * 1024) }) });
    expect(big.status).toBe(413);
    const p = (await big.json()) as { instance: string; docsUrl: string };
    expect(p.instance).toBe('/pm/api/v3/projects');
    expect(p.docsUrl).toBe('/pm/api/v3/errors/payload_too_large');
  });
});
