import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { createHash, randomBytes } from 'node:crypto';
import { createPmapi, fakeClock } from '@pmapi/core';
import { openSqliteStore } from '@pmapi/adapter-sqlite';

/**
 * Spec OAuth "Errors" for the consent post of issue 17 (a signed-in person with memberships in two
 * workspaces, choosing one): oauth-fuzz.test.ts signs nobody in, so the posted form with its
 * `workspace` choice was never fuzzed. Any workspace value, repeated or not, beside any extra or
 * missing field answers below 500; a refused post issues no code. A real choice does issue one.
 */
describe('OAuth 2.1 consent post with a workspace choice: any form answers below 500 (issue 17)', () => {
  it('random workspace values and fields after a real consent page', async () => {
    const api = await createPmapi({
      store: await openSqliteStore(), clock: fakeClock(), rateLimiter: false,
      oauth: {
        issuer: 'http://127.0.0.1:9', tokenRateLimit: false,
        currentMember: (_req, host) => (host as { memberId?: string } | undefined)?.memberId ?? null,
        signInUrl: (r) => `/sign-in?r=${encodeURIComponent(r)}`,
      },
    });
    const a = await api.admin.createWorkspace({ name: 'Alpha', owner: { name: 'Alpha Owner' } });
    const b = await api.admin.createWorkspace({ name: 'Beta', owner: { name: 'Beta Owner' } });
    const inA = await api.admin.addMember(a.id, { name: 'Pat', role: 'manager' });
    await api.admin.addMember(b.id, { name: 'Pat', role: 'regular', userId: inA.userId });
    const app = await api.admin.registerOAuthClient({ name: 'Fuzz', type: 'public', redirectUris: ['https://app.example/cb'] });
    const host = { memberId: inA.id };

    const consentPage = async () => {
      const q = new URLSearchParams({
        response_type: 'code', client_id: app.clientId, redirect_uri: 'https://app.example/cb', scope: 'read', state: 's',
        code_challenge: createHash('sha256').update(randomBytes(32).toString('base64url')).digest('base64url'), code_challenge_method: 'S256',
      });
      const page = await api.oauth!.handle({ method: 'GET', url: `/oauth/authorize?${q}`, headers: {}, hostRequest: host });
      expect(page.status).toBe(200);
      const fields: Record<string, string> = {};
      for (const m of String(page.body).matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)) {
        fields[m[1]!] = m[2]!.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
      }
      return fields;
    };
    const post = (body: string) => api.oauth!.handle({
      method: 'POST', url: '/oauth/authorize', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body, hostRequest: host,
    });
    const enc = (s: string) => s.replace(/[^A-Za-z0-9_.~-]/g, (c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0').toUpperCase()}`);

    // The walk is not vacuous: the same form with a real choice issues a code.
    const chosen = await post(new URLSearchParams({ ...(await consentPage()), decision: 'allow', workspace: b.id }).toString());
    expect(chosen.status).toBe(303);
    expect(new URL(chosen.headers.location!).searchParams.get('code')).toBeTruthy();

    const workspace = fc.oneof(
      fc.string(), fc.constantFrom(a.id, b.id, '', ' ', 'null', '[]', '__proto__', `${a.id} `, a.id.toUpperCase(), `../${b.id}`, 'x'.repeat(20_000)),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(workspace, { maxLength: 3 }), fc.constantFrom('allow', 'deny', '', 'maybe'), fc.dictionary(fc.string({ maxLength: 8 }), fc.string(), { maxKeys: 4 }),
        fc.boolean(), fc.boolean(),
        async (choices, decision, extra, dropCsrf, garbage) => {
          const fields: Record<string, string> = { ...extra, ...(await consentPage()), decision };
          if (dropCsrf) for (const k of Object.keys(fields)) if (/csrf/i.test(k)) delete fields[k];
          const body = [garbage ? '%ZZ' : '', new URLSearchParams(fields).toString(), ...choices.map((w) => `workspace=${enc(w)}`)].filter(Boolean).join('&');
          const r = await post(body);
          expect(r.status, body.slice(0, 200)).toBeLessThan(500);
          if (r.status >= 400) expect(r.headers.location, body.slice(0, 200)).toBeUndefined();
        },
      ),
      { numRuns: 150 },
    );
    await api.close();
  });
});
