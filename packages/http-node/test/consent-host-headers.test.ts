import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createPmapi, type ConsentPage, type Pmapi } from '@pmapi/core';
import { openSqliteStore } from '@pmapi/adapter-sqlite';
import { toNodeHandler, toFetchHandler } from '@pmapi/http-node';

// Issue 17 review: a host renderer's header that is not valid HTTP (a name with a space, a value with a character
// above U+00FF) used to reach res.writeHead / new Response, which throw: under toNodeHandler the throw escaped the
// promise chain (the request hung, the rejection went unhandled). It is now the renderer's failure: 500 server_error.
describe('[http-node] a consent renderer with invalid headers over a real server', () => {
  let api: Pmapi;
  let server: http.Server;
  let base = '';
  let memberId: string;
  let clientId: string;
  let page: ConsentPage = '';
  const errors: unknown[] = [];
  const issuer = 'http://127.0.0.1:1';
  const q = () => new URLSearchParams({
    response_type: 'code', client_id: clientId, redirect_uri: 'http://127.0.0.1/cb', scope: 'read', state: 's',
    code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256',
  });

  beforeAll(async () => {
    api = await createPmapi({
      store: await openSqliteStore(), rateLimiter: false, onError: (err) => { errors.push(err); },
      oauth: { issuer, currentMember: () => memberId, signInUrl: (r) => `/login?next=${encodeURIComponent(r)}`, renderConsent: () => page },
    });
    const ws = await api.admin.createWorkspace({ name: 'Host', owner: { name: 'Hana' } });
    memberId = ws.ownerMemberId;
    clientId = (await api.admin.registerOAuthClient({ name: 'CLI', type: 'public', redirectUris: ['http://127.0.0.1/cb'] })).clientId;
    server = http.createServer(toNodeHandler(api));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    await api.close();
  });

  for (const headers of [{ 'x brand': 'a' }, { 'x-brand': 'snow \u2603' }, { 'x-brand': 'nul\u0000' }] as Record<string, string>[]) {
    it(`toNodeHandler and toFetchHandler answer 500 server_error for ${JSON.stringify(headers)}, and keep serving`, async () => {
      page = { body: '<p>consent</p>', headers };
      errors.length = 0;
      const res = await fetch(`${base}/oauth/authorize?${q()}`, { signal: AbortSignal.timeout(5000) });
      expect(res.status).toBe(500);
      expect(await res.text()).toContain('data-error="server_error"');
      expect(errors).toHaveLength(1);
      const viaFetch = await toFetchHandler(api)(new Request(`http://127.0.0.1/oauth/authorize?${q()}`));
      expect(viaFetch.status).toBe(500);
      expect(await viaFetch.text()).toContain('data-error="server_error"');
      page = { body: '<p>consent</p>', headers: { 'x-brand': 'ok' } };
      const fine = await fetch(`${base}/oauth/authorize?${q()}`, { signal: AbortSignal.timeout(5000) });
      expect(fine.status).toBe(200);
      expect(fine.headers.get('x-brand')).toBe('ok');
    });
  }
});

describe('[http-node] toNodeHandler and a response whose headers Node cannot send', () => {
  it('answers 500 internal_error (not a hung request or an unhandled rejection) and keeps serving', async () => {
    const api = await createPmapi({ store: await openSqliteStore(), rateLimiter: false });
    let headers: Record<string, string> = { 'x bad': '1' };
    const server = http.createServer(toNodeHandler({ handle: async () => ({ status: 200, headers, body: 'ok' }), problem: api.problem.bind(api) }));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      for (const bad of [{ 'x bad': '1' }, { 'x-ok': 'a\r\nset-cookie: sid=evil' }, { 'x-ok': '\u2603' }] as Record<string, string>[]) {
        headers = bad;
        const res = await fetch(`${base}/api/v3/projects`, { signal: AbortSignal.timeout(5000) });
        expect(res.status).toBe(500);
        expect(res.headers.get('set-cookie')).toBeNull();
        expect((await res.json() as { code?: string }).code).toBe('internal_error');
      }
      headers = { 'x-ok': 'fine' };
      const ok = await fetch(`${base}/api/v3/projects`, { signal: AbortSignal.timeout(5000) });
      expect(ok.status).toBe(200);
      expect(ok.headers.get('x-ok')).toBe('fine');
    } finally {
      await new Promise((r) => server.close(r));
      await api.close();
    }
  });
});

// The consent page holds the CSRF token: a page another origin may read with the person's cookies is a consent
// CSRF (read the token, post "allow" for the attacker's client). CORS (meant for the API's bearer callers) never
// applies to GET/POST /oauth/authorize, even with origins '*' and credentials; the token endpoint keeps it (SPAs).
describe('[http-node] CORS never covers the consent page', () => {
  let api: Pmapi;
  let memberId: string;
  let clientId: string;
  const issuer = 'http://127.0.0.1:1';
  const cors = { origins: ['*'], credentials: true };
  const evil = { origin: 'https://evil.invalid' };
  const q = () => new URLSearchParams({
    response_type: 'code', client_id: clientId, redirect_uri: 'http://127.0.0.1/cb', scope: 'read', state: 's',
    code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256',
  });
  beforeAll(async () => {
    api = await createPmapi({
      store: await openSqliteStore(), rateLimiter: false,
      oauth: { issuer, currentMember: () => memberId, signInUrl: (r) => `/login?next=${encodeURIComponent(r)}`, tokenRateLimit: false },
    });
    const ws = await api.admin.createWorkspace({ name: 'Host', owner: { name: 'Hana' } });
    memberId = ws.ownerMemberId;
    clientId = (await api.admin.registerOAuthClient({ name: 'CLI', type: 'public', redirectUris: ['http://127.0.0.1/cb'] })).clientId;
  });
  afterAll(async () => { await api.close(); });

  it('toNodeHandler: the consent page and its post carry no CORS headers; a preflight to it is not answered; the token endpoint keeps CORS', async () => {
    const server = http.createServer(toNodeHandler(api, { cors }));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const page = await fetch(`${base}/oauth/authorize?${q()}`, { headers: evil });
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('csrf_token');
      expect(page.headers.get('access-control-allow-origin')).toBeNull();
      expect(page.headers.get('access-control-allow-credentials')).toBeNull();
      const post = await fetch(`${base}/oauth/authorize`, { method: 'POST', headers: { ...evil, 'content-type': 'application/x-www-form-urlencoded' }, body: `${q()}&decision=deny`, redirect: 'manual' });
      expect(post.headers.get('access-control-allow-origin')).toBeNull();
      const pre = await fetch(`${base}/oauth/authorize`, { method: 'OPTIONS', headers: { ...evil, 'access-control-request-method': 'POST' } });
      expect(pre.headers.get('access-control-allow-origin')).toBeNull();
      const token = await fetch(`${base}/oauth/token`, { method: 'POST', headers: { ...evil, 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=refresh_token&refresh_token=x&client_id=y' });
      expect(token.headers.get('access-control-allow-origin')).toBe('https://evil.invalid');
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it('toFetchHandler: the same', async () => {
    const handler = toFetchHandler(api, { cors });
    const page = await handler(new Request(`http://127.0.0.1/oauth/authorize?${q()}`, { headers: evil }));
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('csrf_token');
    expect(page.headers.get('access-control-allow-origin')).toBeNull();
    const pre = await handler(new Request('http://127.0.0.1/oauth/authorize', { method: 'OPTIONS', headers: { ...evil, 'access-control-request-method': 'POST' } }));
    expect(pre.headers.get('access-control-allow-origin')).toBeNull();
    const token = await handler(new Request('http://127.0.0.1/oauth/token', { method: 'POST', headers: { ...evil, 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=refresh_token&refresh_token=x&client_id=y' }));
    expect(token.headers.get('access-control-allow-origin')).toBe('https://evil.invalid');
  });
});
