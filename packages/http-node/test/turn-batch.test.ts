import { describe, it, expect, beforeAll, afterAll, vi } from 'vitest';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createPmapi, type Pmapi } from '@pmapi/core';
import { openSqliteStore } from '@pmapi/adapter-sqlite';
import { toNodeHandler } from '@pmapi/http-node';

/**
 * http-node hands the requests that are ready in one turn of the event loop to
 * the core together, in the next turn (issue 11). Each must still get its own
 * answer, whatever the others do, and a test suite's fake timers must not hold
 * requests back.
 */
describe('[http-node] requests ready together are handled together', () => {
  let server: http.Server;
  let port: number;
  let api: Pmapi;
  let token: string;
  let memberId: string;

  beforeAll(async () => {
    api = await createPmapi({ store: await openSqliteStore(), rateLimiter: false });
    const ws = await api.admin.createWorkspace({ name: 'W', owner: { name: 'Owner' } });
    memberId = ws.ownerMemberId;
    token = (await api.admin.issueToken(ws.ownerMemberId, { scopes: ['read', 'write'] })).token;
    server = http.createServer(toNodeHandler(api));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    await api.close();
  });

  /** One request on a connection of its own (node:http, which uses no timer the tests fake). */
  const request = (path: string, auth: string, method = 'GET', body?: string) => new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, method, agent: false, headers: { authorization: auth, ...(body ? { 'content-type': 'application/json' } : {}) } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });

  it('each of many concurrent requests gets its own answer: good and bad tokens, reads and writes mixed', async () => {
    const calls = Array.from({ length: 30 }, (_, i) => {
      if (i % 3 === 0) return request(`/api/v3/members/${memberId}`, `Bearer ${token}`).then((r) => ['get', r] as const);
      if (i % 3 === 1) return request(`/api/v3/members/${memberId}`, `Bearer svc_user_nope${i}_${'x'.repeat(40)}`).then((r) => ['bad', r] as const);
      return request('/api/v3/projects', `Bearer ${token}`, 'POST', JSON.stringify({ name: `P${i}` })).then((r) => ['post', r, `P${i}`] as const);
    });
    for (const [kind, r, name] of await Promise.all(calls)) {
      if (kind === 'get') expect([r.status, JSON.parse(r.body).id]).toEqual([200, memberId]);
      if (kind === 'bad') expect([r.status, JSON.parse(r.body).code]).toEqual([401, 'invalid_token']);
      if (kind === 'post') expect([r.status, JSON.parse(r.body).name]).toEqual([201, name]);
    }
  });

  it('a test that fakes setImmediate after load does not hold requests back', async () => {
    vi.useFakeTimers({ toFake: ['setImmediate', 'setTimeout', 'setInterval'] });
    try {
      const r = await request(`/api/v3/members/${memberId}`, `Bearer ${token}`);
      expect(r.status).toBe(200);
    } finally {
      vi.useRealTimers();
    }
  });
});
