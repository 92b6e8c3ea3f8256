import { describe, it, expect, beforeEach, afterEach } from 'vitest';
import { createHash, randomBytes } from 'node:crypto';
import { defaultConsentPage, type ConsentPage, type ConsentView, type HttpRequest, type HttpResponse } from '@pmapi/core';
import { harness, type Harness, type StoreFactory } from '../kit';

/**
 * Issue 17, "OAuth that fits a host application": the host's own request
 * reaches the hooks, the consent renderer may be async and set the page's
 * headers (CSRF protection kept), and a person with several workspaces
 * chooses the one the app gets — validated server-side.
 */
const ISSUER = 'https://auth.host.test';
const APP = 'https://app.example/callback';

interface HostReq { session: { memberId?: string } }

function hiddenFields(html: string): Record<string, string> {
  const out: Record<string, string> = {};
  const unescape = (s: string) => s.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
  for (const m of html.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)) out[unescape(m[1]!)] = unescape(m[2]!);
  return out;
}

export function oauthHostSuite(factory: StoreFactory): void {
  describe(`[${factory.name}] OAuth in a host application: host request, async branded consent, workspace choice`, () => {
    let h: Harness;
    let clientId: string;
    let renderer: ((view: ConsentView, host: unknown) => ConsentPage | Promise<ConsentPage>) | undefined;
    let seenHosts: unknown[];
    let errors: unknown[];
    let lastView: ConsentView | undefined;

    beforeEach(async () => {
      renderer = undefined;
      seenHosts = [];
      errors = [];
      lastView = undefined;
      h = await harness(factory, {
        api: () => ({
          onError: (err: unknown) => { errors.push(err); },
          oauth: {
            issuer: ISSUER,
            tokenRateLimit: false as const,
            // The host's session, read off the host's own request object (never off pmapi's headers).
            currentMember: (_req: HttpRequest, host: HostReq | undefined) => {
              seenHosts.push(host);
              return host?.session.memberId ?? null;
            },
            signInUrl: (returnTo: string, host: unknown) => `https://host.test/login?next=${encodeURIComponent(returnTo)}&host=${host ? 'yes' : 'no'}`,
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

    /** Just the hidden fields and the workspace radios, as the renderer's own markup. */
    function defaultLike(view: ConsentView): string {
      const hidden = Object.entries(view.fields).map(([k, v]) => `<input type="hidden" name="${k}" value="${v.replace(/&/g, '&amp;').replace(/"/g, '&quot;')}">`).join('');
      return `<form>${hidden}${view.workspaces.map((w) => `<input type="radio" name="workspace" value="${w.id}">`).join('')}</form>`;
    }

    function authUrl(state = 'st-1') {
      const verifier = randomBytes(32).toString('base64url');
      const q = new URLSearchParams({
        response_type: 'code', client_id: clientId, redirect_uri: APP, scope: 'read write', state,
        code_challenge: createHash('sha256').update(verifier).digest('base64url'), code_challenge_method: 'S256',
      });
      return { url: `/oauth/authorize?${q}`, verifier };
    }
    const hostOf = (memberId: string | undefined): HostReq => ({ session: memberId ? { memberId } : {} });
    const getPage = (url: string, memberId: string | undefined) => h.api.oauth!.handle({ method: 'GET', url, headers: {}, hostRequest: hostOf(memberId) });
    const postForm = (memberId: string | undefined, form: Record<string, string>) => h.api.oauth!.handle({
      method: 'POST', url: '/oauth/authorize', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form).toString(), hostRequest: hostOf(memberId),
    });
    const loc = (r: HttpResponse) => new URL(r.headers.location!).searchParams;

    async function exchange(code: string, verifier: string) {
      const res = await h.api.oauth!.handle({
        method: 'POST', url: '/oauth/token', remoteAddress: '198.51.100.9', headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: APP, client_id: clientId, code_verifier: verifier }).toString(),
      });
      expect(res.status).toBe(200);
      return JSON.parse(res.body as string) as { access_token: string; refresh_token: string };
    }

    /** A person with a manager membership in Alpha and a regular one in Beta (same userId). */
    async function twoWorkspacePerson() {
      const inA = await h.api.admin.addMember(h.a.id, { name: 'Pat', role: 'manager' });
      const inB = await h.api.admin.addMember(h.b.id, { name: 'Pat', role: 'regular', userId: inA.userId });
      return { inA, inB };
    }

    it("the hooks receive the host's own request: no session there means the sign-in redirect, with the host request in hand", async () => {
      const { url } = authUrl();
      const anon = await getPage(url, undefined);
      expect(anon.status).toBe(303);
      expect(anon.headers.location).toMatch(/^https:\/\/host\.test\/login\?next=%2Foauth%2Fauthorize.*&host=yes$/);
      const page = await getPage(url, h.a.owner.id);
      expect(page.status).toBe(200);
      expect(seenHosts.at(-1)).toEqual({ session: { memberId: h.a.owner.id } });
      // pmapi's own request headers carry no session: without hostRequest nobody is signed in.
      const bare = await h.api.oauth!.handle({ method: 'GET', url, headers: { cookie: 'sid=whatever' } });
      expect(bare.status).toBe(303);
    });

    it('a person in several workspaces chooses one; the token reaches exactly that workspace, with that membership\'s role', async () => {
      const { inA, inB } = await twoWorkspacePerson();
      const { url, verifier } = authUrl('st-choice');
      const page = await getPage(url, inA.id);
      expect(page.status).toBe(200);
      expect(lastView!.workspaces.map((w) => [w.id, w.name, w.memberId])).toEqual([[h.a.id, 'Alpha', inA.id], [h.b.id, 'Beta', inB.id]]);
      expect(lastView!.workspace.id).toBe(h.a.id);
      const fields = hiddenFields(page.body as string);
      const post = await postForm(inA.id, { ...fields, decision: 'allow', workspace: h.b.id });
      expect(post.status).toBe(303);
      expect(loc(post).get('state')).toBe('st-choice');
      const tok = await exchange(loc(post).get('code')!, verifier);
      const members = await h.get('/members', { token: tok.access_token });
      expect(members.status).toBe(200);
      const names = (members.body.data as { name: string }[]).map((m) => m.name);
      expect(names).toContain('Beta Owner');
      expect(names).not.toContain('Alpha Owner');
      // Alpha's data is out of reach: the token belongs to Beta only.
      const project = await h.project();
      expect((await h.get(`/projects/${project.id}`, { token: tok.access_token })).status).toBe(404);
    });

    it('without a workspace field the signed-in workspace is used (single-workspace flows unchanged)', async () => {
      const { inA } = await twoWorkspacePerson();
      const { url, verifier } = authUrl();
      const fields = hiddenFields((await getPage(url, inA.id)).body as string);
      const post = await postForm(inA.id, { ...fields, decision: 'allow' });
      const tok = await exchange(loc(post).get('code')!, verifier);
      const names = ((await h.get('/members', { token: tok.access_token })).body.data as { name: string }[]).map((m) => m.name);
      expect(names).toContain('Alpha Owner');
      expect(names).not.toContain('Beta Owner');
    });

    it("the default consent page lists the person's workspaces as a radio group, the signed-in one checked, only when there is a choice", async () => {
      const { inA } = await twoWorkspacePerson();
      const { url } = authUrl();
      const single = await getPage(url, h.a.owner.id);
      expect(lastView!.workspaces).toHaveLength(1);
      expect(single.body).not.toContain('name="workspace"');
      const several = (await getPage(url, inA.id)).body as string;
      expect(several).toContain(`<input type="radio" name="workspace" value="${h.a.id}" checked`);
      expect(several).toContain(`<input type="radio" name="workspace" value="${h.b.id}" id=`);
      expect(several).toMatch(/<legend>Connect Pocket Planner to<\/legend>/);
    });

    // Spec OAuth "Errors": a malformed request parameter is invalid_request.
    it('a forged workspace (not one of the person\'s, or a deactivated membership) is refused with invalid_request; no code is issued', async () => {
      const { inA, inB } = await twoWorkspacePerson();
      const gamma = await h.api.admin.createWorkspace({ name: 'Gamma', owner: { name: 'Gus' } });
      const { url } = authUrl('st-forged');
      const fields = hiddenFields((await getPage(url, inA.id)).body as string);
      for (const forged of [gamma.id, 'not-a-workspace']) {
        const post = await postForm(inA.id, { ...fields, decision: 'allow', workspace: forged });
        expect(post.status).toBe(303);
        const q = loc(post);
        expect(q.get('error')).toBe('invalid_request');
        expect(q.get('state')).toBe('st-forged');
        expect(q.get('code')).toBeNull();
      }
      // Repeated: refused too, never "the first one".
      const twice = new URLSearchParams({ ...fields, decision: 'allow' });
      twice.append('workspace', h.b.id);
      twice.append('workspace', gamma.id);
      const rep = await h.api.oauth!.handle({ method: 'POST', url: '/oauth/authorize', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: twice.toString(), hostRequest: hostOf(inA.id) });
      expect(loc(rep).get('error')).toBe('invalid_request');
      // A membership deactivated after the page was shown is no longer a choice.
      await h.api.admin.setMemberActive(inB.id, false);
      const late = await postForm(inA.id, { ...fields, decision: 'allow', workspace: h.b.id });
      expect(loc(late).get('error')).toBe('invalid_request');
      expect(loc(late).get('code')).toBeNull();
      await getPage(url, inA.id);
      expect(lastView!.workspaces.map((w) => w.id)).toEqual([h.a.id]);
    });

    it("an app registered for one workspace is offered only that one of the person's workspaces", async () => {
      const { inA } = await twoWorkspacePerson();
      clientId = (await h.api.admin.registerOAuthClient({ name: 'Beta Tool', type: 'public', redirectUris: [APP], teamId: h.b.id })).clientId;
      const { url } = authUrl();
      const page = await getPage(url, inA.id);
      expect(page.status).toBe(200);
      expect(lastView!.workspaces.map((w) => w.id)).toEqual([h.b.id]);
      // Posted without a choice, the one workspace offered is the one the code is for.
      const { url: url2, verifier } = authUrl();
      const fields = hiddenFields((await getPage(url2, inA.id)).body as string);
      const tok = await exchange(loc(await postForm(inA.id, { ...fields, decision: 'allow' })).get('code')!, verifier);
      const names = ((await h.get('/members', { token: tok.access_token })).body.data as { name: string }[]).map((m) => m.name);
      expect(names).toContain('Beta Owner');
      // Someone with no membership in Beta is still turned away.
      const alone = await getPage(url2, h.a.owner.id);
      expect(loc(alone).get('error')).toBe('access_denied');
    });

    it("an async renderer's page is served with the host's headers (its CSP), pmapi's cache and framing protection kept", async () => {
      renderer = async (view) => {
        await new Promise((r) => setTimeout(r, 5));
        return {
          body: `<!doctype html><link rel="stylesheet" href="/static/app.css"><h1>Brand</h1>${defaultLike(view)}`,
          headers: { 'Content-Security-Policy': "default-src 'self'; style-src 'self'", 'Cache-Control': 'public, max-age=600', 'X-Brand': 'acme' },
        };
      };
      const { url, verifier } = authUrl();
      const page = await getPage(url, h.a.owner.id);
      expect(page.status).toBe(200);
      expect(page.body).toContain('<h1>Brand</h1>');
      expect(page.headers['content-security-policy']).toBe("default-src 'self'; style-src 'self'; frame-ancestors 'none'");
      expect(page.headers['cache-control']).toBe('no-store');
      expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(page.headers['x-brand']).toBe('acme');
      // A host policy that names frame-ancestors itself keeps its own.
      renderer = () => ({ body: defaultLike(lastView!), headers: { 'content-security-policy': "default-src 'self'; frame-ancestors 'self'" } });
      const own = await getPage(url, h.a.owner.id);
      expect(own.headers['content-security-policy']).toBe("default-src 'self'; frame-ancestors 'self'");
      // The flow completes through the branded page.
      const fields = hiddenFields(page.body as string);
      const post = await postForm(h.a.owner.id, { ...fields, decision: 'allow' });
      await exchange(loc(post).get('code')!, verifier);
    });

    it('CSRF is still enforced with a host-set CSP: a missing, altered or another member\'s token gets the 403 page', async () => {
      renderer = (view) => ({ body: defaultLike(view), headers: { 'content-security-policy': "default-src 'self'" } });
      const { url } = authUrl('st-csrf');
      const fields = hiddenFields((await getPage(url, h.a.owner.id)).body as string);
      const { csrf_token: csrf, ...rest } = fields;
      const otherMember = hiddenFields((await getPage(url, h.a.regular.id)).body as string).csrf_token!;
      for (const bad of [undefined, `${csrf!.slice(0, -2)}AA`, otherMember]) {
        const res = await postForm(h.a.owner.id, { ...rest, ...(bad ? { csrf_token: bad } : {}), decision: 'allow' });
        expect(res.status).toBe(403);
        expect(res.headers.location).toBeUndefined();
        expect(res.body).toContain('data-error="invalid_request"');
      }
      const ok = await postForm(h.a.owner.id, { ...fields, decision: 'allow' });
      expect(ok.status).toBe(303);
      expect(loc(ok).get('code')).toBeTruthy();
    });

    it('a renderer that throws (or returns garbage) gives a plain 500 server_error page, nothing of the error shown; onError hears of it', async () => {
      renderer = async () => { throw new Error('template exploded: /srv/secret/views/consent.njk line 7'); };
      const { url } = authUrl();
      const res = await getPage(url, h.a.owner.id);
      expect(res.status).toBe(500);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.headers['content-security-policy']).toContain("default-src 'none'");
      expect(res.body).toContain('data-error="server_error"');
      expect(res.body).not.toContain('exploded');
      expect(res.body).not.toContain('/srv/secret');
      expect(errors.map((e) => (e as Error).message)).toEqual(['template exploded: /srv/secret/views/consent.njk line 7']);
      renderer = () => 42 as unknown as string;
      const garbage = await getPage(url, h.a.owner.id);
      expect(garbage.status).toBe(500);
      expect(garbage.body).toContain('data-error="server_error"');
    });
  });
}
