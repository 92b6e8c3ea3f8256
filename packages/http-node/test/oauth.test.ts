import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import http from 'node:http';
import { createHash, randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { createPmapi, type Pmapi } from '@pmapi/core';
import { openSqliteStore } from '@pmapi/adapter-sqlite';
import { toNodeHandler } from '@pmapi/http-node';

describe('[http-node] OAuth 2.1 authorization server over a real socket (http loopback issuer)', () => {
  let server: http.Server;
  let base: string;
  let api: Pmapi;
  let memberId: string;

  beforeAll(async () => {
    let handler: http.RequestListener = (_q, s) => s.end();
    server = http.createServer((q, s) => handler(q, s));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    api = await createPmapi({
      store: await openSqliteStore(), rateLimiter: false,
      oauth: { issuer: base, currentMember: (req) => (req.headers.cookie === 'session=ok' ? memberId : null), signInUrl: (r) => `/login?next=${encodeURIComponent(r)}` },
    });
    const ws = await api.admin.createWorkspace({ name: 'Socket', owner: { name: 'Ann' } });
    memberId = ws.ownerMemberId;
    handler = toNodeHandler(api);
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    await api.close();
  });

  it('discovery, consent, code exchange and a v3 call, all through toNodeHandler', async () => {
    const meta = (await (await fetch(`${base}/.well-known/oauth-authorization-server`)).json()) as Record<string, string>;
    expect(meta.issuer).toBe(base);
    const { clientId } = await api.admin.registerOAuthClient({ name: 'CLI', type: 'public', redirectUris: ['http://127.0.0.1/cb'] });
    const verifier = randomBytes(32).toString('base64url');
    const q = new URLSearchParams({
      response_type: 'code', client_id: clientId, redirect_uri: 'http://127.0.0.1/cb', scope: 'read', state: 'st1',
      code_challenge: createHash('sha256').update(verifier).digest('base64url'), code_challenge_method: 'S256',
    });
    const anon = await fetch(`${meta.authorization_endpoint}?${q}`, { redirect: 'manual' });
    expect(anon.status).toBe(303);
    expect(anon.headers.get('location')).toMatch(/^\/login\?next=/);
    const page = await (await fetch(`${meta.authorization_endpoint}?${q}`, { headers: { cookie: 'session=ok' } })).text();
    const fields = Object.fromEntries([...page.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)].map((m) => [m[1]!, m[2]!]));
    const post = await fetch(meta.authorization_endpoint!, {
      method: 'POST', redirect: 'manual', headers: { cookie: 'session=ok', 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ...fields, decision: 'allow' }),
    });
    expect(post.status).toBe(303);
    const back = new URL(post.headers.get('location')!);
    expect(back.searchParams.get('iss')).toBe(base);
    const tok = await fetch(meta.token_endpoint!, {
      method: 'POST',
      body: new URLSearchParams({ grant_type: 'authorization_code', code: back.searchParams.get('code')!, redirect_uri: 'http://127.0.0.1/cb', client_id: clientId, code_verifier: verifier }),
    });
    expect(tok.status).toBe(200);
    expect(tok.headers.get('cache-control')).toBe('no-store');
    const body = (await tok.json()) as { access_token: string };
    const v3 = await fetch(`${base}/api/v3/projects`, { headers: { authorization: `Bearer ${body.access_token}` } });
    expect(v3.status).toBe(200);
  });
});
