import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import http from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { createPmapi, type Pmapi } from '@pmapi/core';
import { openSqliteStore } from '@pmapi/adapter-sqlite';
import { toNodeHandler } from '@pmapi/http-node';

/**
 * The token endpoint on the API host (spec "Limits": `{base_url}/oauth/token`,
 * 120 per minute and 1,000 per hour per IP) over a real socket, with the
 * authorization server at an issuer path of its own (`{base}/auth`), so the
 * two token endpoints are two URLs on one server.
 */
describe('[http-node] the token endpoint on the API host', () => {
  let server: http.Server;
  let base: string;
  let api: Pmapi;
  let clientId: string;
  /** Set per test: the listener behind the socket. */
  let handler: http.RequestListener = (_q, s) => s.end();

  beforeAll(async () => {
    server = http.createServer((q, s) => handler(q, s));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    api = await createPmapi({
      store: await openSqliteStore(), rateLimiter: false,
      // Each test counts under an address of its own.
      clientIp: (req) => (req.headers['x-test-ip'] as string | undefined) ?? req.remoteAddress,
      oauth: { issuer: `${base}/auth`, currentMember: () => null, signInUrl: (r) => `/login?next=${encodeURIComponent(r)}` },
    });
    clientId = (await api.admin.registerOAuthClient({ name: 'CLI', type: 'public', redirectUris: ['http://127.0.0.1/cb'] })).clientId;
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    await api.close();
  });

  const post = (path: string, form: Record<string, string>, headers: Record<string, string> = {}) =>
    fetch(`${base}${path}`, { method: 'POST', headers, body: new URLSearchParams(form) });

  it('standalone: POST /oauth/token reaches api.handle (RFC 6749 answers), the discovery document names the authorization server\'s own', async () => {
    handler = toNodeHandler(api);
    const meta = (await (await fetch(`${base}/auth/.well-known/oauth-authorization-server`)).json()) as Record<string, string>;
    expect(meta.token_endpoint).toBe(`${base}/auth/oauth/token`);
    const r = await post('/oauth/token', { grant_type: 'refresh_token', refresh_token: 'nope', client_id: clientId });
    expect(r.status).toBe(400);
    expect(r.headers.get('cache-control')).toBe('no-store');
    expect(await r.json()).toEqual({ error: 'invalid_grant', error_description: expect.any(String) });
    // Two Authorization headers: the token endpoint answers in its own shape (invalid_client), as the AS's does.
    const form = `grant_type=refresh_token&refresh_token=x&client_id=${clientId}`;
    const raw = await new Promise<string>((resolve, reject) => {
      const sock = connect((server.address() as AddressInfo).port, '127.0.0.1');
      let text = '';
      sock.setEncoding('utf8');
      sock.on('data', (c: string) => { text += c; });
      sock.on('end', () => resolve(text));
      sock.on('error', reject);
      sock.write(`POST /oauth/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nAuthorization: Basic eDp5\r\nAuthorization: Basic eTp6\r\nContent-Length: ${form.length}\r\nConnection: close\r\n\r\n${form}`);
    });
    const two = { status: Number(raw.split(' ')[1]), body: raw.slice(raw.indexOf('\r\n\r\n') + 4) };
    expect(two.status).toBe(401);
    expect(JSON.parse(two.body).error).toBe('invalid_client');
  });

  it('as middleware after a urlencoded body parser: the form is passed on, not handed to next()', async () => {
    const mw = toNodeHandler(api);
    handler = (q, s) => {
      let raw = '';
      q.setEncoding('utf8');
      q.on('data', (c) => { raw += c; });
      q.on('end', () => {
        // What express.urlencoded() leaves behind.
        (q as http.IncomingMessage & { body?: unknown }).body = Object.fromEntries(new URLSearchParams(raw));
        mw(q, s, () => { s.statusCode = 418; s.end('next'); });
      });
    };
    const r = await post('/oauth/token', { grant_type: 'refresh_token', refresh_token: 'nope', client_id: clientId });
    expect(r.status).toBe(400);
    expect(((await r.json()) as { error: string }).error).toBe('invalid_grant');
    // Other paths outside the API still go to next().
    expect((await post('/elsewhere', { a: 'b' })).status).toBe(418);
  });

  it('the 121st request of an address in a minute is 429 rate_limited with Retry-After', async () => {
    handler = toNodeHandler(api);
    const form = { client_id: clientId };
    const ip = { 'x-test-ip': '203.0.113.77' };
    for (let i = 0; i < 120; i++) expect((await post('/oauth/token', form, ip)).status).toBe(400);
    const over = await post('/oauth/token', form, ip);
    expect(over.status).toBe(429);
    const body = (await over.json()) as { error: string; retryAfter: number };
    expect(body).toEqual({ error: 'rate_limited', error_description: expect.any(String), retryAfter: expect.any(Number) });
    expect(over.headers.get('retry-after')).toBe(String(body.retryAfter));
    // The authorization server's endpoint counts apart.
    expect((await post('/auth/oauth/token', form, ip)).status).toBe(400);
  });
});
