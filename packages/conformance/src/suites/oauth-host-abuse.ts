import { describe, it, expect, beforeEach, afterEach } from 'vitest';
import { createHash, randomBytes } from 'node:crypto';
import { defaultConsentPage, type ConsentPage, type ConsentView, type HttpRequest, type HttpResponse } from '@pmapi/core';
import { harness, type Harness, type StoreFactory } from '../kit';

/**
 * Issue 17, OAuth in a host application, probed as an attacker would: the
 * workspace choice at consent (whose memberships, which roles, which app,
 * which request part), what the chosen membership means for refresh and the
 * legacy app listing, the headers a host's renderer may set, and the host's
 * request never leaving the hooks.
 */
const ISSUER = 'https://auth.host.test';
const APP = 'https://app.example/callback';

interface HostReq { session: { memberId?: string }; [k: string]: unknown }

function hiddenFields(html: string): Record<string, string> {
  const out: Record<string, string> = {};
  const unescape = (s: string) => s.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
  for (const m of html.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)) out[unescape(m[1]!)] = unescape(m[2]!);
  return out;
}

/** A renderer written before the workspace choice existed: the hidden fields only, no `workspace` field. */
function hiddenOnly(view: ConsentView): string {
  const e = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;');
  return `<form>${Object.entries(view.fields).map(([k, v]) => `<input type="hidden" name="${e(k)}" value="${e(v)}">`).join('')}</form>`;
}

export function oauthHostAbuseSuite(factory: StoreFactory): void {
  describe(`[${factory.name}] OAuth in a host application, abused: workspace choice, refresh, legacy apps, host headers, host request`, () => {
    let h: Harness;
    let clientId: string;
    let renderer: ((view: ConsentView, host: unknown) => ConsentPage | Promise<ConsentPage>) | undefined;
    let errors: unknown[];
    let lastView: ConsentView | undefined;
    let hostExtra: Record<string, unknown>;
    let signIn: ((returnTo: string) => unknown) | undefined;

    beforeEach(async () => {
      renderer = undefined;
      errors = [];
      lastView = undefined;
      hostExtra = {};
      signIn = undefined;
      h = await harness(factory, {
        api: () => ({
          onError: (err: unknown) => { errors.push(err); },
          oauth: {
            issuer: ISSUER,
            tokenRateLimit: false as const,
            currentMember: (_req: HttpRequest, host: HostReq | undefined) => host?.session.memberId ?? null,
            signInUrl: (returnTo: string) => (signIn ? signIn(returnTo) as string : `https://host.test/login?next=${encodeURIComponent(returnTo)}`),
            renderConsent: (view: ConsentView, host: unknown) => {
              lastView = view;
              return renderer ? renderer(view, host) : defaultConsentPage(view);
            },
          },
        }),
      });
      clientId = (await h.api.admin.registerOAuthClient({ name: 'Pocket Planner', type: 'public', redirectUris: [APP] })).clientId;
    });
    afterEach(async () => { await h.close(); });

    function authUrl(o: { state?: string; scope?: string; extra?: Record<string, string> } = {}) {
      const verifier = randomBytes(32).toString('base64url');
      const q = new URLSearchParams({
        response_type: 'code', client_id: clientId, redirect_uri: APP, scope: o.scope ?? 'read write', state: o.state ?? 'st-1',
        code_challenge: createHash('sha256').update(verifier).digest('base64url'), code_challenge_method: 'S256', ...(o.extra ?? {}),
      });
      return { url: `/oauth/authorize?${q}`, verifier };
    }
    const hostOf = (memberId: string | undefined): HostReq => ({ session: memberId ? { memberId } : {}, ...hostExtra });
    const getPage = (url: string, memberId: string | undefined) => h.api.oauth!.handle({ method: 'GET', url, headers: {}, hostRequest: hostOf(memberId) });
    const postForm = (memberId: string | undefined, form: Record<string, string>, url = '/oauth/authorize') => h.api.oauth!.handle({
      method: 'POST', url, headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form).toString(), hostRequest: hostOf(memberId),
    });
    const loc = (r: HttpResponse) => new URL(r.headers.location!).searchParams;
    const tokenReq = (form: Record<string, string>) => h.api.oauth!.handle({
      method: 'POST', url: '/oauth/token', remoteAddress: '198.51.100.9', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form).toString(), hostRequest: hostOf(undefined),
    });

    async function exchange(code: string, verifier: string) {
      const res = await tokenReq({ grant_type: 'authorization_code', code, redirect_uri: APP, client_id: clientId, code_verifier: verifier });
      expect(res.status).toBe(200);
      return JSON.parse(res.body as string) as { access_token: string; refresh_token: string };
    }
    const refresh = async (rt: string) => {
      const res = await tokenReq({ grant_type: 'refresh_token', refresh_token: rt, client_id: clientId });
      return { status: res.status, body: JSON.parse(res.body as string) as Record<string, string> };
    };
    const memberNames = async (token: string) => {
      const r = await h.get('/members', { token });
      expect(r.status).toBe(200);
      return (r.body.data as { name: string }[]).map((m) => m.name);
    };

    /** Consent as `memberId` (default page), posting `extra`; returns the redirect's query. */
    async function consent(memberId: string, extra: Record<string, string>, o: { scope?: string; state?: string } = {}) {
      const { url, verifier } = authUrl(o);
      const page = await getPage(url, memberId);
      expect(page.status).toBe(200);
      const res = await postForm(memberId, { ...hiddenFields(page.body as string), decision: 'allow', ...extra });
      expect(res.status).toBe(303);
      return { q: loc(res), verifier };
    }

    /** Pat: a manager membership in Alpha and a regular one in Beta, one person (same userId). */
    async function pat(roleInB = 'regular') {
      const inA = await h.api.admin.addMember(h.a.id, { name: 'Pat', role: 'manager' });
      const inB = await h.api.admin.addMember(h.b.id, { name: 'Pat', role: roleInB, userId: inA.userId });
      return { inA, inB };
    }

    // Spec OAuth "Scopes": the requested scope is intersected with the approving member's role (invalid_scope when empty).
    it("a membership whose role grants none of the requested scope is neither offered nor accepted (no escalation through the other workspace's role)", async () => {
      const { inA } = await pat('regular');
      // projects:delete: Alpha's manager role grants it, Beta's regular role does not.
      const { url } = authUrl({ scope: 'projects:delete', state: 'st-role' });
      const page = await getPage(url, inA.id);
      expect(lastView!.workspaces.map((w) => w.id)).toEqual([h.a.id]);
      const res = await postForm(inA.id, { ...hiddenFields(page.body as string), decision: 'allow', workspace: h.b.id });
      expect(loc(res).get('error')).toBe('invalid_request');
      expect(loc(res).get('state')).toBe('st-role');
      expect(loc(res).get('code')).toBeNull();
    });

    it('a removed (trashed) membership is neither offered nor accepted', async () => {
      const { inA, inB } = await pat();
      const { url } = authUrl({ state: 'st-removed' });
      const fields = hiddenFields((await getPage(url, inA.id)).body as string);
      expect(lastView!.workspaces.map((w) => w.id)).toEqual([h.a.id, h.b.id]);
      const del = await h.del(`/members/${inB.id}`, { token: h.b.owner.token });
      expect(del.status).toBeLessThan(300);
      const res = await postForm(inA.id, { ...fields, decision: 'allow', workspace: h.b.id });
      expect(loc(res).get('error')).toBe('invalid_request');
      expect(loc(res).get('code')).toBeNull();
      await getPage(url, inA.id);
      expect(lastView!.workspaces.map((w) => w.id)).toEqual([h.a.id]);
    });

    it('members of different people never merge into one person: each sees only its own workspace and cannot pick the other', async () => {
      const samA = await h.api.admin.addMember(h.a.id, { name: 'Sam', role: 'manager' });
      const samB = await h.api.admin.addMember(h.b.id, { name: 'Sam', role: 'manager', userId: '' });
      expect(samA.userId).not.toBe(samB.userId);
      expect(samB.userId).not.toBe('');
      const { url } = authUrl();
      const page = await getPage(url, samA.id);
      expect(lastView!.workspaces.map((w) => w.id)).toEqual([h.a.id]);
      await getPage(url, samB.id);
      expect(lastView!.workspaces.map((w) => w.id)).toEqual([h.b.id]);
      const res = await postForm(samA.id, { ...hiddenFields(page.body as string), decision: 'allow', workspace: h.b.id });
      expect(loc(res).get('error')).toBe('invalid_request');
      // The seeded owners of Alpha and Beta are two people too.
      await getPage(url, h.a.owner.id);
      expect(lastView!.workspaces.map((w) => w.id)).toEqual([h.a.id]);
    });

    it('the choice is read from the posted form only: a workspace in the query string (GET or POST) changes nothing', async () => {
      const { inA } = await pat();
      const { url, verifier } = authUrl({ extra: { workspace: h.b.id } });
      const page = await getPage(url, inA.id);
      expect(page.status).toBe(200);
      expect(lastView!.workspace.id).toBe(h.a.id);
      const fields = hiddenFields(page.body as string);
      expect(fields.workspace).toBeUndefined();
      const res = await postForm(inA.id, { ...fields, decision: 'allow' }, `/oauth/authorize?workspace=${h.b.id}`);
      const tok = await exchange(loc(res).get('code')!, verifier);
      const names = await memberNames(tok.access_token);
      expect(names).toContain('Alpha Owner');
      expect(names).not.toContain('Beta Owner');
    });

    it('an app registered for Alpha cannot be given Beta by the choice', async () => {
      const { inA } = await pat();
      clientId = (await h.api.admin.registerOAuthClient({ name: 'Alpha Tool', type: 'public', redirectUris: [APP], teamId: h.a.id })).clientId;
      const { q } = await consent(inA.id, { workspace: h.b.id }, { state: 'st-team' });
      expect(q.get('error')).toBe('invalid_request');
      expect(q.get('code')).toBeNull();
    });

    // Spec OAuth "Scopes": the approving member's role clamps every refresh (here the chosen membership's); "Errors": invalid_grant.
    it("the chosen membership governs refresh: deactivating the signed-in one changes nothing, deactivating the chosen one ends the connection", async () => {
      const { inA, inB } = await pat();
      const { q, verifier } = await consent(inA.id, { workspace: h.b.id });
      const tok = await exchange(q.get('code')!, verifier);
      await h.api.admin.setMemberActive(inA.id, false);
      const r1 = await refresh(tok.refresh_token);
      expect(r1.status).toBe(200);
      expect(await memberNames(r1.body.access_token!)).toContain('Beta Owner');
      await h.api.admin.setMemberActive(inB.id, false);
      const r2 = await refresh(r1.body.refresh_token!);
      expect(r2.status).toBe(400);
      expect(r2.body.error).toBe('invalid_grant');
      expect((await h.get('/members', { token: r1.body.access_token })).status).toBe(401);
    });

    it('legacy v1.0 GET /apps lists the connection in the chosen workspace only', async () => {
      const { inA } = await pat();
      const { q, verifier } = await consent(inA.id, { workspace: h.b.id });
      await exchange(q.get('code')!, verifier);
      const apps = async (token: string) => {
        const r = await h.api.handle({ method: 'GET', url: '/api/v1.0/apps?limit=10&offset=0', headers: { authorization: `Bearer ${token}` }, remoteAddress: '203.0.113.9' });
        expect(r.status).toBe(200);
        const body = JSON.parse(r.body as string) as { id: string }[] | { apps?: { id: string }[] };
        return (Array.isArray(body) ? body : body.apps ?? []).map((a) => a.id);
      };
      expect(await apps(h.b.owner.token)).toContain(clientId);
      expect(await apps(h.a.owner.token)).not.toContain(clientId);
    });

    it('two memberships of one person in the same workspace are one choice (no duplicate ids), the signed-in one acting', async () => {
      const { inA } = await pat();
      await h.api.admin.addMember(h.a.id, { name: 'Pat again', role: 'owner', userId: inA.userId });
      const { url, verifier } = authUrl();
      const page = await getPage(url, inA.id);
      expect(lastView!.workspaces.map((w) => [w.id, w.memberId])).toEqual([[h.a.id, inA.id], [h.b.id, expect.any(String)]]);
      const res = await postForm(inA.id, { ...hiddenFields(page.body as string), decision: 'allow', workspace: h.a.id });
      const tok = await exchange(loc(res).get('code')!, verifier);
      expect(tok.access_token).toMatch(/^svc_oauth_/);
      // The connection acts as Pat the manager (the signed-in membership), not as the owner membership.
      const fam = await h.api.store.db.selectFrom('oauth_families').select(['member_id', 'team_id']).where('client_id', '=', clientId).execute();
      expect(fam).toEqual([{ member_id: inA.id, team_id: h.a.id }]);
    });

    it('a form posted without a choice reaches the workspace its page showed, or nothing: never another one the default moved to', async () => {
      const { inA } = await pat('owner');
      renderer = (view) => hiddenOnly(view);
      const { url } = authUrl({ scope: 'projects:delete', state: 'st-moved' });
      const page = await getPage(url, inA.id);
      expect(lastView!.workspace.id).toBe(h.a.id);
      // Between page and post, Pat's Alpha role stops granting the scope: Beta becomes the default.
      await h.api.store.db.updateTable('members').set({ role_id: h.a.roleIds.regular, role: 'regular' }).where('id', '=', inA.id).execute();
      const res = await postForm(inA.id, { ...hiddenFields(page.body as string), decision: 'allow' });
      expect(res.headers.location === undefined || loc(res).get('code') === null).toBe(true);
      expect(res.status).toBe(403);
      // A fresh page shows Beta, and posting it reaches Beta.
      const { url: url2, verifier } = authUrl({ scope: 'projects:delete' });
      const again = await getPage(url2, inA.id);
      expect(lastView!.workspace.id).toBe(h.b.id);
      const ok = await postForm(inA.id, { ...hiddenFields(again.body as string), decision: 'allow' });
      await exchange(loc(ok).get('code')!, verifier);
      const fam = await h.api.store.db.selectFrom('oauth_families').select(['member_id', 'team_id']).where('client_id', '=', clientId).execute();
      expect(fam).toEqual([{ member_id: expect.any(String), team_id: h.b.id }]);
      expect(fam[0]!.member_id).not.toBe(inA.id);
    });

    it("a renderer's headers that are not valid HTTP (line breaks, bad names, non-Latin-1, arrays, not an object) give the 500 server_error page and onError, never a broken response", async () => {
      const { url } = authUrl();
      const bad: unknown[] = [
        { 'x-brand': 'a\r\nset-cookie: sid=evil' },
        { 'x-brand': 'a\nb' },
        { 'x brand': 'a' },
        { 'x-brand\r\nset-cookie': 'a' },
        { 'x-brand': 'caf\u00e9 \u2603' },
        { 'x-brand': 'nul\u0000' },
        { 'set-cookie': ['a=1', 'b=2'] },
        { 'x-brand': 5 },
        'content-security-policy: none',
      ];
      for (const headers of bad) {
        errors = [];
        renderer = (view) => ({ body: hiddenOnly(view), headers: headers as Record<string, string> });
        const res = await getPage(url, h.a.owner.id);
        expect(res.status, JSON.stringify(headers)).toBe(500);
        expect(res.body).toContain('data-error="server_error"');
        expect(res.headers['content-security-policy']).toContain("default-src 'none'");
        expect(Object.keys(res.headers).every((k) => /^[!#$%&'*+.^_`|~0-9a-z-]+$/.test(k))).toBe(true);
        expect(Object.values(res.headers).every((v) => /^[\t\x20-\x7e]*$/.test(v))).toBe(true);
        expect(errors).toHaveLength(1);
        expect((errors[0] as Error).message).toMatch(/renderConsent/);
      }
    });

    it("a renderer cannot re-type, re-encode, make cacheable or open to other origins the page (content-encoding, CDN cache, CORS headers); a plain cookie it may set", async () => {
      renderer = (view) => ({
        body: hiddenOnly(view),
        headers: {
          'Content-Encoding': 'gzip', 'CDN-Cache-Control': 'max-age=600', 'Surrogate-Control': 'max-age=600', 'Expires': 'Thu, 01 Jan 2099 00:00:00 GMT',
          'Content-Type': 'text/plain', 'Cache-Control': 'public', 'Set-Cookie': 'brand=1; Path=/; HttpOnly',
          'Access-Control-Allow-Origin': 'https://evil.invalid', 'Access-Control-Allow-Credentials': 'true',
        },
      });
      const { url } = authUrl();
      const res = await getPage(url, h.a.owner.id);
      expect(res.status).toBe(200);
      expect(res.headers['content-encoding']).toBeUndefined();
      expect(res.headers['cdn-cache-control']).toBeUndefined();
      expect(res.headers['surrogate-control']).toBeUndefined();
      expect(res.headers.expires).toBeUndefined();
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers['set-cookie']).toBe('brand=1; Path=/; HttpOnly');
      // No CORS on the page: another origin must never read its CSRF token.
      expect(Object.keys(res.headers).filter((k) => k.startsWith('access-control-'))).toEqual([]);
    });

    it('a signInUrl hook that returns no sendable URL (an async hook\'s Promise, a line break) gives the 500 server_error page and onError, not a redirect to garbage', async () => {
      const { url } = authUrl();
      for (const bad of [async (r: string) => `/login?next=${r}`, () => '/login\r\nset-cookie: sid=evil', () => undefined]) {
        errors = [];
        signIn = bad;
        const res = await getPage(url, undefined);
        expect(res.status).toBe(500);
        expect(res.headers.location).toBeUndefined();
        expect(res.body).toContain('data-error="server_error"');
        expect((errors[0] as Error).message).toMatch(/signInUrl/);
      }
      signIn = (r) => `/login?next=${encodeURIComponent(r)}`;
      const ok = await getPage(url, undefined);
      expect(ok.status).toBe(303);
      expect(ok.headers.location).toMatch(/^\/login\?next=%2Foauth%2Fauthorize/);
    });

    it("the host's request is never serialized or echoed: a flow and a v3 call with an unserializable host request succeed and nothing carries it", async () => {
      const marker = 'HOST-SECRET-7f3a';
      hostExtra = { secret: marker, toJSON: () => { throw new Error('host request serialized'); } };
      const { inA } = await pat();
      const { url, verifier } = authUrl();
      const page = await getPage(url, inA.id);
      expect(page.status).toBe(200);
      expect(JSON.stringify(lastView)).not.toContain(marker);
      const res = await postForm(inA.id, { ...hiddenFields(page.body as string), decision: 'allow', workspace: h.b.id });
      expect(res.status).toBe(303);
      expect(res.headers.location).not.toContain(marker);
      const tok = await exchange(loc(res).get('code')!, verifier);
      const v3 = await h.api.handle({
        method: 'POST', url: '/api/v3/projects', headers: { authorization: `Bearer ${h.a.owner.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Hosted' }), hostRequest: hostOf(inA.id),
      });
      expect(v3.status).toBe(201);
      expect(String(v3.body)).not.toContain(marker);
      expect(JSON.stringify(await h.outbox())).not.toContain(marker);
      expect(errors).toEqual([]);
      expect(tok.access_token).toMatch(/^svc_oauth_/);
    });
  });
}
