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
