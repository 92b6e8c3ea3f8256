import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { createPmapi, fakeClock } from '@pmapi/core';
import { openSqliteStore } from '@pmapi/adapter-sqlite';

/** Bad input never gets a 5xx from the authorization server (token and authorize endpoints). */
describe('OAuth 2.1: any input to /oauth/token and /oauth/authorize answers below 500', () => {
  it('random form bodies, parameters and headers', async () => {
    const store = await openSqliteStore();
    const api = await createPmapi({
      store, clock: fakeClock(), rateLimiter: false,
      oauth: { issuer: 'http://127.0.0.1:9', currentMember: () => null, signInUrl: (r) => `/sign-in?r=${encodeURIComponent(r)}`, tokenRateLimit: false },
    });
    const ws = await api.admin.createWorkspace({ name: 'F', owner: { name: 'F' } });
    const app = await api.admin.registerOAuthClient({ name: 'Fuzz', type: 'public', redirectUris: ['https://app.example/cb'], teamId: ws.id } as never);
    const known = ['grant_type', 'code', 'redirect_uri', 'client_id', 'code_verifier', 'client_secret', 'refresh_token', 'scope',
      'response_type', 'state', 'code_challenge', 'code_challenge_method'];
    const value = fc.oneof(fc.string(), fc.constantFrom('authorization_code', 'refresh_token', 'code', 'S256', app.clientId, 'https://app.example/cb', ''));
    const params = fc.dictionary(fc.oneof(fc.constantFrom(...known), fc.string({ maxLength: 8 })), value, { maxKeys: 8 });
    await fc.assert(
      fc.asyncProperty(params, fc.boolean(), fc.constantFrom('application/x-www-form-urlencoded', 'application/json', 'text/plain', ''), async (p, asForm, ct) => {
        const body = asForm ? new URLSearchParams(p as Record<string, string>).toString() : JSON.stringify(p);
        const token = await api.oauth!.handle({ method: 'POST', url: '/oauth/token', headers: ct ? { 'content-type': ct } : {}, body, remoteAddress: '127.0.0.1' });
        expect(token.status).toBeLessThan(500);
        const authorize = await api.oauth!.handle({ method: 'GET', url: `/oauth/authorize?${new URLSearchParams(p as Record<string, string>)}`, headers: {}, remoteAddress: '127.0.0.1' });
        expect(authorize.status).toBeLessThan(500);
      }),
      { numRuns: 200 },
    );
    await api.close();
  });
});

/** Issue "Hardening": the work of a token or consent request is bounded, whatever the form holds. */
describe('OAuth 2.1: large forms are refused before they are parsed', () => {
  it('a 4 MiB form of distinct keys, or one over 16 KiB, answers invalid_request at once', async () => {
    const store = await openSqliteStore();
    const api = await createPmapi({
      store, clock: fakeClock(), rateLimiter: false,
      oauth: { issuer: 'http://127.0.0.1:9', currentMember: () => null, signInUrl: (r) => `/sign-in?r=${encodeURIComponent(r)}`, tokenRateLimit: false },
    });
    const form = (n: number) => Array.from({ length: n }, (_, i) => `k${i}=1`).join('&');
    const headers = { 'content-type': 'application/x-www-form-urlencoded' };
    for (const body of [form(450_000), form(2_500)]) {
      const token = await api.oauth!.handle({ method: 'POST', url: '/oauth/token', headers, body, remoteAddress: '127.0.0.1' });
      expect(token.status).toBe(400);
      expect(JSON.parse(token.body as string)).toMatchObject({ error: 'invalid_request' });
      expect(token.body!.length).toBeLessThan(1024);
      const consent = await api.oauth!.handle({ method: 'POST', url: '/oauth/authorize', headers, body, remoteAddress: '127.0.0.1' });
      expect(consent.status).toBe(400);
      expect(consent.body!.length).toBeLessThan(64 * 1024);
    }
    // Under the bound, a repeated parameter is still found (in one pass).
    const repeated = await api.oauth!.handle({ method: 'POST', url: '/oauth/token', headers, body: `${form(1_000)}&k999=2`, remoteAddress: '127.0.0.1' });
    expect(JSON.parse(repeated.body as string)).toMatchObject({ error: 'invalid_request', error_description: 'k999 is repeated' });
    await api.close();
  });
});
