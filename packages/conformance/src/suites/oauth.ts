import { createHash } from 'node:crypto';
import { describe, it, expect, beforeEach, afterEach, beforeAll, afterAll } from 'vitest';
import * as oauth from 'oauth4webapi';
import type { HttpRequest, RateLimitStore } from '@pmapi/core';
import type { SqlStore } from '@pmapi/core/sql';
import { harness, type Harness, type StoreFactory } from '../kit';

const ISSUER = 'https://auth.alpha.test';
export const APP = 'https://app.example/callback';
const MEMBER_HEADER = 'x-test-member';

export interface Setup {
  h: Harness;
  pub: { clientId: string };
  conf: { clientId: string; clientSecret: string };
}

/** A harness with the authorization server mounted; the "session" is a test header naming the member. */
export async function setup(factory: StoreFactory, extra: { loopbackAnyPort?: boolean; rateLimited?: boolean; tokenRateLimit?: (store: SqlStore) => RateLimitStore } = {}): Promise<Setup> {
  const h = await harness(factory, {
    api: (_clock, store) => ({
      oauth: {
        issuer: ISSUER,
        currentMember: (req: HttpRequest) => (req.headers[MEMBER_HEADER] as string | undefined) ?? null,
        signInUrl: (returnTo: string) => `https://app.alpha.test/sign-in?returnTo=${encodeURIComponent(returnTo)}`,
        ...(extra.rateLimited ? (extra.tokenRateLimit ? { tokenRateLimit: extra.tokenRateLimit(store) } : {}) : { tokenRateLimit: false as const }),
        ...(extra.loopbackAnyPort ? { loopbackAnyPort: true } : {}),
      },
    }),
  });
  const pub = await h.api.admin.registerOAuthClient({ name: 'Pocket Planner', type: 'public', redirectUris: [APP, 'http://127.0.0.1:8400/cb'] });
  const conf = await h.api.admin.registerOAuthClient({ name: 'Server Sync', type: 'confidential', redirectUris: [APP] });
  return { h, pub, conf: { clientId: conf.clientId, clientSecret: conf.clientSecret! } };
}

/** oauth4webapi's fetch, answered in-process by `api.oauth.handle`. */
function fetcher(h: Harness, ip = '198.51.100.7') {
  return async (url: string, init: { method?: string; headers?: Headers | Record<string, string>; body?: unknown } = {}): Promise<Response> => {
    const u = new URL(url);
    const headers: Record<string, string> = {};
    new Headers(init.headers as ConstructorParameters<typeof Headers>[0]).forEach((v, k) => { headers[k] = v; });
    const body = init.body === undefined || init.body === null ? undefined : String(init.body);
    const res = await h.api.oauth!.handle({ method: init.method ?? 'GET', url: `${u.pathname}${u.search}`, headers, body, remoteAddress: ip });
    return new Response(res.body ?? null, { status: res.status, headers: res.headers });
  };
}

async function discover(h: Harness) {
  const issuer = new URL(ISSUER);
  const res = await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', [oauth.customFetch]: fetcher(h) });
  return oauth.processDiscoveryResponse(issuer, res);
}

/** Raw form POST to the token endpoint. */
export async function token(h: Harness, form: Record<string, string>, o: { headers?: Record<string, string>; ip?: string } = {}) {
  const res = await h.api.oauth!.handle({
    method: 'POST', url: '/oauth/token', remoteAddress: o.ip ?? '198.51.100.7',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(o.headers ?? {}) }, body: new URLSearchParams(form).toString(),
  });
  return { status: res.status, headers: res.headers, body: res.body ? JSON.parse(typeof res.body === 'string' ? res.body : new TextDecoder().decode(res.body)) : undefined };
}

function hiddenFields(html: string): Record<string, string> {
  const out: Record<string, string> = {};
  const unescape = (s: string) => s.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
  for (const m of html.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)) out[unescape(m[1]!)] = unescape(m[2]!);
  return out;
}

interface AuthRequest {
  clientId: string;
  memberId: string;
  scope?: string;
  redirectUri?: string;
  decision?: 'allow' | 'deny';
  params?: Record<string, string | null>;
}

/** GET the authorization endpoint as a signed-in member, then post the consent form; returns the redirect and PKCE material. */
async function authorize(h: Harness, r: AuthRequest) {
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const q = new URLSearchParams({
    response_type: 'code', client_id: r.clientId, redirect_uri: r.redirectUri ?? APP, scope: r.scope ?? 'read write',
    state, code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
  });
  for (const [k, v] of Object.entries(r.params ?? {})) {
    if (v === null) q.delete(k);
    else q.set(k, v);
  }
  const page = await h.api.oauth!.handle({ method: 'GET', url: `/oauth/authorize?${q}`, headers: { [MEMBER_HEADER]: r.memberId } });
  if (page.status !== 200) return { page, verifier, state, location: page.headers.location };
  const fields = hiddenFields(page.body as string);
  const post = await h.api.oauth!.handle({
    method: 'POST', url: '/oauth/authorize', headers: { [MEMBER_HEADER]: r.memberId, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ ...fields, decision: r.decision ?? 'allow' }).toString(),
  });
  return { page, post, fields, verifier, state, location: post.headers.location };
}

function query(location: string | undefined): URLSearchParams {
  expect(location).toBeTruthy();
  return new URL(location!).searchParams;
}

/** A code and verifier for a public client, consented by `memberId`. */
export async function codeFor(s: Setup, memberId: string, scope = 'read write', clientId = s.pub.clientId) {
  const a = await authorize(s.h, { clientId, memberId, scope });
  const q = query(a.location);
  expect(q.get('code')).toBeTruthy();
  return { code: q.get('code')!, verifier: a.verifier };
}

export async function tokensFor(s: Setup, memberId: string, scope = 'read write') {
  const { code, verifier } = await codeFor(s, memberId, scope);
  const r = await token(s.h, { grant_type: 'authorization_code', code, redirect_uri: APP, client_id: s.pub.clientId, code_verifier: verifier });
  expect(r.status).toBe(200);
  return r.body as { access_token: string; refresh_token: string; expires_in: number; scope: string };
}

const refreshWith = (s: Setup, rt: string, extra: Record<string, string> = {}) =>
  token(s.h, { grant_type: 'refresh_token', refresh_token: rt, client_id: s.pub.clientId, ...extra });

export function oauthSuite(factory: StoreFactory): void {
  describe(`[${factory.name}] OAuth 2.1 authorization server: discovery and the full flow with oauth4webapi`, () => {
    let s: Setup;
    beforeEach(async () => { s = await setup(factory); });
    afterEach(async () => { await s.h.close(); });

    it('serves the RFC 8414 document exactly as the issue lists it', async () => {
      const res = await s.h.api.oauth!.handle({ method: 'GET', url: '/.well-known/oauth-authorization-server', headers: {} });
      expect(res.status).toBe(200);
      const m = JSON.parse(res.body as string);
      expect(m.issuer).toBe(ISSUER);
      expect(m.authorization_endpoint).toBe(`${ISSUER}/oauth/authorize`);
      expect(m.token_endpoint).toBe(`${ISSUER}/oauth/token`);
      expect(m.grant_types_supported).toEqual(['authorization_code', 'refresh_token']);
      expect(m.code_challenge_methods_supported).toEqual(['S256']);
      expect(m.token_endpoint_auth_methods_supported).toEqual(['none', 'client_secret_post']);
      expect(m.response_types_supported).toEqual(['code']);
      expect(m.authorization_response_iss_parameter_supported).toBe(true);
      expect(m.registration_endpoint).toBeUndefined();
      expect(m.scopes_supported).toEqual(expect.arrayContaining(['read', 'write', 'delete', 'tasks:read', 'tasks:write', 'tasks:delete', 'projects:delete']));
      for (const sc of m.scopes_supported) expect(sc).toMatch(/^(read|write|delete|[a-z][a-z-]*:(read|write|delete))$/);
    });

    it('public client: discovery, PKCE, consent, iss validation, code exchange, v3 use, refresh rotation, replay revokes the family', async () => {
      const { h, pub } = s;
      const as = await discover(h);
      const client: oauth.Client = { client_id: pub.clientId };
      const opts = { [oauth.customFetch]: fetcher(h) };
      const a = await authorize(h, { clientId: pub.clientId, memberId: h.a.regular.id, scope: 'read write' });
      expect(a.post!.status).toBe(303);
      const loc = new URL(a.location!);
      expect(`${loc.origin}${loc.pathname}`).toBe(APP);
      expect(loc.searchParams.get('iss')).toBe(ISSUER);
      // RFC 9207: a response claiming another issuer is refused by the client.
      const forged = new URL(loc);
      forged.searchParams.set('iss', 'https://evil.example');
      expect(() => oauth.validateAuthResponse(as, client, forged, a.state)).toThrow();
      const params = oauth.validateAuthResponse(as, client, loc, a.state);
      const res = await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, APP, a.verifier, opts);
      const tok = await oauth.processAuthorizationCodeResponse(as, client, res);
      expect(tok.access_token).toMatch(/^svc_oauth_[0-9A-Za-z]{12}_[0-9A-Za-z]{40}$/);
      expect(tok.token_type).toBe('bearer');
      expect(tok.expires_in).toBe(3600);
      expect(tok.scope).toBe('read write');
      expect(res.headers.get('cache-control')).toBe('no-store');
      // The access token works on v3 as a bearer token, within its scope.
      const p = await h.project({}, h.a.regular.token);
      expect((await h.get('/tasks', { token: tok.access_token })).status).toBe(200);
      expect((await h.post('/tasks', { name: 'From the app', projectId: p.id }, { token: tok.access_token })).status).toBe(201);
      expect((await h.del(`/projects/${p.id}`, { token: tok.access_token })).status).toBe(403);
      // Rotation: a new pair; the old refresh token is spent.
      const r1 = await oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tok.refresh_token!, opts));
      expect(r1.refresh_token).toBeTruthy();
      expect(r1.refresh_token).not.toBe(tok.refresh_token);
      expect(r1.access_token).not.toBe(tok.access_token);
      expect((await h.get('/tasks', { token: r1.access_token })).status).toBe(200);
      // Replay of the spent refresh token: invalid_grant, and the whole family dies.
      const replay = await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tok.refresh_token!, opts);
      await expect(oauth.processRefreshTokenResponse(as, client, replay)).rejects.toMatchObject({ error: 'invalid_grant', status: 400 });
      expect((await h.get('/tasks', { token: r1.access_token })).status).toBe(401);
      expect((await h.get('/tasks', { token: tok.access_token })).status).toBe(401);
      expect((await refreshWith(s, r1.refresh_token!)).body.error).toBe('invalid_grant');
    });

    it('confidential client authenticates with client_secret_post; PKCE is still required', async () => {
      const { h, conf } = s;
      const as = await discover(h);
      const client: oauth.Client = { client_id: conf.clientId };
      const opts = { [oauth.customFetch]: fetcher(h) };
      const a = await authorize(h, { clientId: conf.clientId, memberId: h.a.owner.id, scope: 'tasks:read' });
      const params = oauth.validateAuthResponse(as, client, new URL(a.location!), a.state);
      const res = await oauth.authorizationCodeGrantRequest(as, client, oauth.ClientSecretPost(conf.clientSecret), params, APP, a.verifier, opts);
      const tok = await oauth.processAuthorizationCodeResponse(as, client, res);
      expect(tok.scope).toBe('read');
      expect((await h.get('/tasks', { token: tok.access_token })).status).toBe(200);
      expect((await h.get('/projects', { token: tok.access_token })).status).toBe(403);
      const r = await oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, oauth.ClientSecretPost(conf.clientSecret), tok.refresh_token!, opts));
      expect(r.access_token).toBeTruthy();
      // Without PKCE the exchange fails, for confidential clients too.
      const b = await authorize(h, { clientId: conf.clientId, memberId: h.a.owner.id, scope: 'tasks:read' });
      const noPkce = await token(h, { grant_type: 'authorization_code', code: query(b.location).get('code')!, redirect_uri: APP, client_id: conf.clientId, client_secret: conf.clientSecret });
      expect(noPkce.status).toBe(400);
      expect(noPkce.body.error).toBe('invalid_request');
    });

    it('stores only SHA-256 digests of client secrets, codes, refresh and access tokens', async () => {
      const { h, conf } = s;
      const row = await h.api.store.db.selectFrom('oauth_clients').selectAll().where('id', '=', conf.clientId).executeTakeFirstOrThrow();
      expect(row.secret_hash).toBe(createHash('sha256').update(conf.clientSecret).digest('hex'));
      const { code } = await codeFor(s, h.a.owner.id);
      const codes = await h.api.store.db.selectFrom('oauth_codes').select('hash').execute();
      expect(codes.map((c) => c.hash)).toContain(createHash('sha256').update(code).digest('hex'));
      const tok = await tokensFor(s, h.a.owner.id);
      const rts = await h.api.store.db.selectFrom('oauth_refresh_tokens').select('hash').execute();
      expect(rts.map((r) => r.hash)).toContain(createHash('sha256').update(tok.refresh_token).digest('hex'));
      const ats = await h.api.store.db.selectFrom('access_tokens').select(['hash', 'kind']).where('kind', '=', 'oauth').execute();
      expect(ats.map((r) => r.hash)).toContain(createHash('sha256').update(tok.access_token).digest('hex'));
      const dump = JSON.stringify([await h.api.store.db.selectFrom('oauth_codes').selectAll().execute(), await h.api.store.db.selectFrom('oauth_refresh_tokens').selectAll().execute()]);
      expect(dump).not.toContain(code);
      expect(dump).not.toContain(tok.refresh_token);
    });
  });

  describe(`[${factory.name}] OAuth 2.1 authorization endpoint and consent screen`, () => {
    let s: Setup;
    beforeEach(async () => { s = await setup(factory); });
    afterEach(async () => { await s.h.close(); });

    it('shows an accessible consent page: app, workspace, scopes in words, Allow and Deny, CSRF token; not framable', async () => {
      const a = await authorize(s.h, { clientId: s.pub.clientId, memberId: s.h.a.regular.id, scope: 'tasks:write projects:read', decision: 'deny' });
      const html = a.page.body!;
      expect(a.page.status).toBe(200);
      expect(a.page.headers['content-type']).toMatch(/^text\/html/);
      expect(a.page.headers['x-frame-options']).toBe('DENY');
      expect(a.page.headers['cache-control']).toBe('no-store');
      expect(html).toContain('<html lang="en">');
      expect(html).toContain('Pocket Planner');
      expect(html).toContain('Alpha');
      expect(html).toContain('See and create and change tasks'.replace('See and create', 'See and create'));
      expect(html).toContain('See projects');
      expect(html).toMatch(/<button type="submit" name="decision" value="allow">Allow<\/button>/);
      expect(html).toMatch(/<button type="submit" name="decision" value="deny">Deny<\/button>/);
      expect(a.fields!.csrf_token).toMatch(/^\d+\.[A-Za-z0-9_-]{43}$/);
      // Deny → access_denied with state and iss.
      const q = query(a.location);
      expect(q.get('error')).toBe('access_denied');
      expect(q.get('state')).toBe(a.state);
      expect(q.get('iss')).toBe(ISSUER);
      expect(q.get('code')).toBeNull();
    });

    it('success redirects with code, state and iss; the consent form needs a valid CSRF token bound to the member', async () => {
      const { h, pub } = s;
      const a = await authorize(h, { clientId: pub.clientId, memberId: h.a.regular.id });
      const q = query(a.location);
      expect(q.get('code')).toMatch(/^[0-9A-Za-z]{43}$/);
      expect(q.get('state')).toBe(a.state);
      expect(q.get('iss')).toBe(ISSUER);
      const post = (member: string, fields: Record<string, string>) => h.api.oauth!.handle({
        method: 'POST', url: '/oauth/authorize', headers: { [MEMBER_HEADER]: member, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ ...fields, decision: 'allow' }).toString(),
      });
      const forged = await post(h.a.regular.id, { ...a.fields!, csrf_token: `${Date.parse('2027-01-01')}.${'A'.repeat(43)}` });
      expect(forged.status).toBe(403);
      expect(forged.headers.location).toBeUndefined();
      const { csrf_token: _, ...without } = a.fields!;
      expect((await post(h.a.regular.id, without)).status).toBe(403);
      // Another member cannot replay the form issued to the regular member.
      expect((await post(h.a.owner.id, a.fields!)).status).toBe(403);
      // A changed parameter invalidates the token.
      expect((await post(h.a.regular.id, { ...a.fields!, scope: 'read write delete' })).status).toBe(403);
      // The token expires (10 minutes).
      h.clock.advance(10 * 60_000 + 1);
      expect((await post(h.a.regular.id, a.fields!)).status).toBe(403);
    });

    it('someone not signed in is sent to the embedding application\'s sign-in, with the way back', async () => {
      const q = new URLSearchParams({ response_type: 'code', client_id: s.pub.clientId, redirect_uri: APP, scope: 'read', state: 'xyz', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256' });
      const res = await s.h.api.oauth!.handle({ method: 'GET', url: `/oauth/authorize?${q}`, headers: {} });
      expect(res.status).toBe(303);
      const to = new URL(res.headers.location!);
      expect(to.origin + to.pathname).toBe('https://app.alpha.test/sign-in');
      expect(to.searchParams.get('returnTo')).toBe(`/oauth/authorize?${q}`);
    });

    it('the consent screen is replaceable by the embedding application', async () => {
      const h = await harness(factory, {
        api: () => ({ oauth: { issuer: ISSUER, currentMember: () => null, signInUrl: () => '/x', renderConsent: (v) => `<p>custom ${v.client.name} ${v.scopes.join(',')}</p>` } }),
      });
      try {
        const c = await h.api.admin.registerOAuthClient({ name: 'Custom', type: 'public', redirectUris: [APP] });
        const hh = h as Harness;
        const api = hh.api;
        const q = new URLSearchParams({ response_type: 'code', client_id: c.clientId, redirect_uri: APP, scope: 'tasks:read', state: 's', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256' });
        // currentMember says nobody: sign-in first.
        expect((await api.oauth!.handle({ method: 'GET', url: `/oauth/authorize?${q}`, headers: {} })).status).toBe(303);
      } finally {
        await h.close();
      }
      const h2 = await harness(factory, {
        api: () => ({ oauth: { issuer: ISSUER, currentMember: (r) => (r.headers[MEMBER_HEADER] as string) ?? null, signInUrl: () => '/x', renderConsent: (v) => `<p>custom ${v.client.name} ${v.scopes.join(',')}</p>` } }),
      });
      try {
        const c = await h2.api.admin.registerOAuthClient({ name: 'Custom', type: 'public', redirectUris: [APP] });
        const a = await authorize(h2, { clientId: c.clientId, memberId: h2.a.owner.id, scope: 'tasks:read', decision: 'deny' });
        expect(a.page.body).toBe('<p>custom Custom tasks:read</p>');
      } finally {
        await h2.close();
      }
    });
  });

  describe(`[${factory.name}] OAuth 2.1 error table: every row provoked`, () => {
    let s: Setup;
    beforeEach(async () => { s = await setup(factory); });
    afterEach(async () => { await s.h.close(); });

    it('invalid_request: an unregistered redirect_uri is answered without redirecting (also a prefix or a trailing-slash variant)', async () => {
      for (const uri of ['https://app.example/callback/', 'https://app.example/callback/x', 'https://app.example/call', 'https://evil.example/callback', 'http://127.0.0.1:8401/cb']) {
        const a = await authorize(s.h, { clientId: s.pub.clientId, memberId: s.h.a.owner.id, redirectUri: uri });
        expect(a.page.status).toBe(400);
        expect(a.page.headers.location).toBeUndefined();
        expect(a.page.body).toContain('data-error="invalid_request"');
      }
      const missing = await authorize(s.h, { clientId: s.pub.clientId, memberId: s.h.a.owner.id, params: { redirect_uri: null } });
      expect(missing.page.status).toBe(400);
      expect(missing.page.headers.location).toBeUndefined();
    });

    it('invalid_request: every other missing or malformed authorization parameter redirects with error, state and iss', async () => {
      const cases: Record<string, string | null>[] = [
        { code_challenge: null }, { code_challenge: 'short' }, { code_challenge_method: null }, { code_challenge_method: 'plain' },
        { scope: null }, { response_type: null },
      ];
      for (const params of cases) {
        const a = await authorize(s.h, { clientId: s.pub.clientId, memberId: s.h.a.owner.id, params });
        expect(a.page.status, JSON.stringify(params)).toBe(303);
        const q = query(a.location);
        expect(q.get('error'), JSON.stringify(params)).toBe('invalid_request');
        expect(q.get('state')).toBe(a.state);
        expect(q.get('iss')).toBe(ISSUER);
      }
      const noState = await authorize(s.h, { clientId: s.pub.clientId, memberId: s.h.a.owner.id, params: { state: null } });
      expect(query(noState.location).get('error')).toBe('invalid_request');
      // A repeated parameter (RFC 6749 §3.1).
      const q = new URLSearchParams({ response_type: 'code', client_id: s.pub.clientId, redirect_uri: APP, scope: 'read', state: 'st', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256' });
      q.append('scope', 'write');
      const dup = await s.h.api.oauth!.handle({ method: 'GET', url: `/oauth/authorize?${q}`, headers: { [MEMBER_HEADER]: s.h.a.owner.id } });
      expect(query(dup.headers.location).get('error')).toBe('invalid_request');
    });

    it('invalid_request at the token endpoint: missing parameters, wrong content type, malformed verifier', async () => {
      const { code } = await codeFor(s, s.h.a.owner.id);
      const base = { grant_type: 'authorization_code', code, redirect_uri: APP, client_id: s.pub.clientId, code_verifier: 'a'.repeat(43) };
      for (const k of ['grant_type', 'code', 'redirect_uri', 'code_verifier', 'client_id']) {
        const { [k]: _, ...rest } = base as Record<string, string>;
        const r = await token(s.h, rest);
        expect(r.status, k).toBe(400);
        expect(r.body, k).toEqual({ error: 'invalid_request', error_description: expect.any(String) });
        expect(r.headers['cache-control']).toBe('no-store');
      }
      expect((await token(s.h, { ...base, code_verifier: 'too-short' })).body.error).toBe('invalid_request');
      const json = await s.h.api.oauth!.handle({ method: 'POST', url: '/oauth/token', headers: { 'content-type': 'application/json' }, body: JSON.stringify(base) });
      expect(json.status).toBe(400);
      expect(JSON.parse(json.body as string).error).toBe('invalid_request');
      expect((await refreshWith(s, '')).body.error).toBe('invalid_request');
      // Grants the server does not implement (spec: implicit and password are unsupported).
      expect((await token(s.h, { grant_type: 'password', username: 'a', password: 'b', client_id: s.pub.clientId })).body.error).toBe('unsupported_grant_type');
    });

    it('invalid_client: unknown client, missing or wrong secret (401), a public client sending a secret, HTTP Basic (401 + WWW-Authenticate)', async () => {
      const { h, conf, pub } = s;
      const { code, verifier } = await codeFor(s, h.a.owner.id, 'read', conf.clientId);
      const base = { grant_type: 'authorization_code', code, redirect_uri: APP, client_id: conf.clientId, code_verifier: verifier };
      for (const form of [{ ...base, client_id: 'nosuchclient' }, base, { ...base, client_secret: 'wrong' }, { ...base, client_id: pub.clientId, client_secret: 'x' }]) {
        const r = await token(h, form);
        expect(r.status).toBe(401);
        expect(r.body.error).toBe('invalid_client');
      }
      const basic = await token(h, base, { headers: { authorization: `Basic ${Buffer.from(`${conf.clientId}:${conf.clientSecret}`).toString('base64')}` } });
      expect(basic.status).toBe(401);
      expect(basic.body.error).toBe('invalid_client');
      expect(basic.headers['www-authenticate']).toMatch(/^Basic realm=/);
      // The code survived every refused attempt.
      expect((await token(h, { ...base, client_secret: conf.clientSecret })).status).toBe(200);
      // At the authorization endpoint an unknown client is answered on a page, never redirected.
      const a = await authorize(h, { clientId: 'nosuchclient', memberId: h.a.owner.id });
      expect(a.page.status).toBe(400);
      expect(a.page.headers.location).toBeUndefined();
      expect(a.page.body).toContain('data-error="invalid_client"');
    });

    it('invalid_grant: expired code (60 s), reused code (revokes what the first issued), wrong verifier, other client, other redirect_uri', async () => {
      const { h, pub, conf } = s;
      const ex = (code: string, verifier: string, more: Record<string, string> = {}) =>
        token(h, { grant_type: 'authorization_code', code, redirect_uri: APP, client_id: pub.clientId, code_verifier: verifier, ...more });
      const c1 = await codeFor(s, h.a.owner.id);
      h.clock.advance(60_000);
      expect((await ex(c1.code, c1.verifier)).body.error).toBe('invalid_grant');

      const c2 = await codeFor(s, h.a.owner.id);
      const first = await ex(c2.code, c2.verifier);
      expect(first.status).toBe(200);
      expect((await h.get('/tasks', { token: first.body.access_token })).status).toBe(200);
      const again = await ex(c2.code, c2.verifier);
      expect(again.status).toBe(400);
      expect(again.body.error).toBe('invalid_grant');
      expect((await h.get('/tasks', { token: first.body.access_token })).status).toBe(401);
      expect((await refreshWith(s, first.body.refresh_token)).body.error).toBe('invalid_grant');

      const c3 = await codeFor(s, h.a.owner.id);
      expect((await ex(c3.code, oauth.generateRandomCodeVerifier())).body.error).toBe('invalid_grant');
      const c4 = await codeFor(s, h.a.owner.id);
      expect((await ex(c4.code, c4.verifier, { client_id: conf.clientId, client_secret: conf.clientSecret })).body.error).toBe('invalid_grant');
      expect((await ex(c4.code, c4.verifier, { redirect_uri: 'http://127.0.0.1:8400/cb' })).body.error).toBe('invalid_grant');
      expect((await ex('x'.repeat(43), c4.verifier)).body.error).toBe('invalid_grant');
    });

    it('invalid_grant: refresh token expired (7 days), unknown, or of another client', async () => {
      const { h, conf } = s;
      const tok = await tokensFor(s, h.a.owner.id);
      expect((await refreshWith(s, 'nope')).body.error).toBe('invalid_grant');
      const other = await token(h, { grant_type: 'refresh_token', refresh_token: tok.refresh_token, client_id: conf.clientId, client_secret: conf.clientSecret });
      expect(other.body.error).toBe('invalid_grant');
      h.clock.advance(7 * 24 * 3600_000 - 1);
      const ok = await refreshWith(s, tok.refresh_token);
      expect(ok.status).toBe(200);
      h.clock.advance(7 * 24 * 3600_000);
      expect((await refreshWith(s, ok.body.refresh_token)).body.error).toBe('invalid_grant');
    });

    it('invalid_scope: a scope not advertised, a role granting none of it, a refresh asking beyond the ceiling', async () => {
      const { h, pub } = s;
      const unknown = await authorize(h, { clientId: pub.clientId, memberId: h.a.owner.id, scope: 'tasks:read admin' });
      expect(query(unknown.location).get('error')).toBe('invalid_scope');
      expect(query(unknown.location).get('state')).toBe(unknown.state);
      // A client (guest) holds no roles permission.
      const none = await authorize(h, { clientId: pub.clientId, memberId: h.a.client.id, scope: 'roles:write roles:delete' });
      expect(query(none.location).get('error')).toBe('invalid_scope');
      const tok = await tokensFor(s, h.a.owner.id, 'tasks:read');
      const beyond = await refreshWith(s, tok.refresh_token, { scope: 'tasks:write' });
      expect(beyond.body.error).toBe('invalid_scope');
      expect((await refreshWith(s, tok.refresh_token, { scope: 'bogus' })).body.error).toBe('invalid_scope');
      // The refused refresh did not spend the token; a narrower-or-equal scope is fine.
      const same = await refreshWith(s, tok.refresh_token, { scope: 'tasks:read' });
      expect(same.status).toBe(200);
      expect(same.body.scope).toBe('read');
    });

    it('unsupported_response_type: response_type=token', async () => {
      const a = await authorize(s.h, { clientId: s.pub.clientId, memberId: s.h.a.owner.id, params: { response_type: 'token' } });
      const q = query(a.location);
      expect(q.get('error')).toBe('unsupported_response_type');
      expect(q.get('state')).toBe(a.state);
    });

    it('access_denied: the member declines', async () => {
      const a = await authorize(s.h, { clientId: s.pub.clientId, memberId: s.h.a.owner.id, decision: 'deny' });
      expect(query(a.location).get('error')).toBe('access_denied');
      expect(await s.h.api.store.db.selectFrom('oauth_codes').selectAll().execute()).toHaveLength(0);
    });

    it('temporarily_unavailable: the database is unreachable (503 with Retry-After)', async () => {
      const tok = await tokensFor(s, s.h.a.owner.id);
      const store = s.h.api.store as { transaction: unknown };
      const real = store.transaction;
      const err = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
      const busy = Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
      const down = s.h.api.store.dialect.isUnavailable(err) ? err : busy;
      expect(s.h.api.store.dialect.isUnavailable(down)).toBe(true);
      store.transaction = async () => { throw down; };
      try {
        const r = await refreshWith(s, tok.refresh_token);
        expect(r.status).toBe(503);
        expect(r.headers['retry-after']).toBe('1');
        expect(r.body.error).toBe('temporarily_unavailable');
      } finally {
        store.transaction = real;
      }
    });
  });

  describe(`[${factory.name}] OAuth 2.1 tokens: lifetimes, role clamp, revocation`, () => {
    let s: Setup;
    beforeEach(async () => { s = await setup(factory); });
    afterEach(async () => { await s.h.close(); });

    it('an access token lives 3600 s', async () => {
      const tok = await tokensFor(s, s.h.a.owner.id);
      s.h.clock.advance(3600_000 - 1);
      expect((await s.h.get('/tasks', { token: tok.access_token })).status).toBe(200);
      s.h.clock.advance(1);
      expect((await s.h.get('/tasks', { token: tok.access_token })).status).toBe(401);
    });

    it('role clamp at consent, at issue and at every refresh; a clamp to nothing revokes the family', async () => {
      const { h } = s;
      // A regular member may delete tasks but not projects: the consent clamps `delete` to what the role allows.
      const tok = await tokensFor(s, h.a.regular.id, 'tasks:delete projects:delete');
      expect(tok.scope).toBe('delete');
      const p = await h.project({}, h.a.regular.token);
      const t = await h.task(p.id, {}, h.a.regular.token);
      expect((await h.del(`/tasks/${t.id}`, { token: tok.access_token })).status).toBe(204);
      expect((await h.del(`/projects/${p.id}`, { token: tok.access_token })).status).toBe(403);
      const fam = await h.api.store.db.selectFrom('oauth_families').selectAll().where('member_id', '=', h.a.regular.id).executeTakeFirstOrThrow();
      expect(h.api.store.dialect.decode('json', fam.scopes)).toEqual(['tasks:delete']);
      // Demoted to client (no tasks:delete): the next refresh finds nothing left → invalid_grant, family revoked.
      const readTok = await tokensFor(s, h.a.regular.id, 'tasks:write');
      await h.api.store.db.updateTable('members').set({ role_id: h.a.roleIds.client, role: 'client' }).where('id', '=', h.a.regular.id).execute();
      const emptied = await refreshWith(s, tok.refresh_token);
      expect(emptied.body.error).toBe('invalid_grant');
      const again = await refreshWith(s, tok.refresh_token);
      expect(again.body.error).toBe('invalid_grant');
      // The other family (tasks:write) survives the demotion: a client may still write tasks.
      const kept = await refreshWith(s, readTok.refresh_token);
      expect(kept.status).toBe(200);
      expect((await h.get('/tasks', { token: kept.body.access_token })).status).toBe(200);
    });

    it('a refresh never widens the consented ceiling even when the role grows', async () => {
      const { h } = s;
      const tok = await tokensFor(s, h.a.client.id, 'tasks:write projects:write');
      const fam = await h.api.store.db.selectFrom('oauth_families').selectAll().where('member_id', '=', h.a.client.id).executeTakeFirstOrThrow();
      expect(h.api.store.dialect.decode('json', fam.scopes)).toEqual(['projects:read', 'tasks:read', 'tasks:write']);
      await h.api.store.db.updateTable('members').set({ role_id: h.a.roleIds.owner, role: 'owner' }).where('id', '=', h.a.client.id).execute();
      const r = await refreshWith(s, tok.refresh_token);
      expect(r.status).toBe(200);
      expect((await h.post('/projects', { name: 'Nope' }, { token: r.body.access_token })).status).toBe(403);
      expect((await refreshWith(s, r.body.refresh_token, { scope: 'projects:write' })).body.error).toBe('invalid_scope');
    });

    it('revoking a client kills its tokens at once; its requests then fail with invalid_client', async () => {
      const { h, pub } = s;
      const tok = await tokensFor(s, h.a.owner.id);
      expect(await h.api.admin.revokeOAuthClient(pub.clientId)).toBe(true);
      expect((await h.get('/tasks', { token: tok.access_token })).status).toBe(401);
      const r = await refreshWith(s, tok.refresh_token);
      expect(r.status).toBe(401);
      expect(r.body.error).toBe('invalid_client');
      const a = await authorize(h, { clientId: pub.clientId, memberId: h.a.owner.id });
      expect(a.page.status).toBe(400);
    });

    it('a removed (trashed) member is as inactive as a deactivated one: tokens stop working, no refresh, no code exchange, no consent (access_denied)', async () => {
      const { h } = s;
      const tok = await tokensFor(s, h.a.regular.id);
      const pending = await codeFor(s, h.a.regular.id);
      expect((await h.del(`/members/${h.a.regular.id}`)).status).toBe(204);
      expect((await h.get('/tasks', { token: tok.access_token })).status).toBe(401);
      expect((await refreshWith(s, tok.refresh_token)).body.error).toBe('invalid_grant');
      const exchanged = await token(h, { grant_type: 'authorization_code', code: pending.code, redirect_uri: APP, client_id: s.pub.clientId, code_verifier: pending.verifier });
      expect(exchanged.body.error).toBe('invalid_grant');
      const a = await authorize(h, { clientId: s.pub.clientId, memberId: h.a.regular.id });
      expect(query(a.location).get('error')).toBe('access_denied');
    });

    it('a deactivated member\'s OAuth tokens stop working and cannot be refreshed', async () => {
      const tok = await tokensFor(s, s.h.a.regular.id);
      await s.h.api.admin.setMemberActive(s.h.a.regular.id, false);
      expect((await s.h.get('/tasks', { token: tok.access_token })).status).toBe(401);
      expect((await refreshWith(s, tok.refresh_token)).body.error).toBe('invalid_grant');
    });
  });

  describe(`[${factory.name}] OAuth 2.1 single use under concurrency`, () => {
    let s: Setup;
    beforeEach(async () => { s = await setup(factory); });
    afterEach(async () => { await s.h.close(); });

    it('ten concurrent exchanges of one code: exactly one success, the rest invalid_grant', async () => {
      const { code, verifier } = await codeFor(s, s.h.a.owner.id);
      const all = await Promise.all(Array.from({ length: 10 }, () =>
        token(s.h, { grant_type: 'authorization_code', code, redirect_uri: APP, client_id: s.pub.clientId, code_verifier: verifier })));
      expect(all.filter((r) => r.status === 200)).toHaveLength(1);
      expect(all.filter((r) => r.status === 400 && r.body.error === 'invalid_grant')).toHaveLength(9);
    });

    it('twenty concurrent refreshes of one token: exactly one success, the rest invalid_grant, the family revoked', async () => {
      const tok = await tokensFor(s, s.h.a.owner.id);
      const all = await Promise.all(Array.from({ length: 20 }, () => refreshWith(s, tok.refresh_token)));
      const won = all.filter((r) => r.status === 200);
      expect(won).toHaveLength(1);
      expect(all.filter((r) => r.status === 400 && r.body.error === 'invalid_grant')).toHaveLength(19);
      expect((await s.h.get('/tasks', { token: won[0]!.body.access_token })).status).toBe(401);
      expect((await refreshWith(s, won[0]!.body.refresh_token)).body.error).toBe('invalid_grant');
    });
  });

  describe(`[${factory.name}] OAuth 2.1 redirect URIs and registration`, () => {
    it('registration enforces rules 2-4; the secret is shown once', async () => {
      const s = await setup(factory);
      try {
        const reg = (uris: string[], type: 'public' | 'confidential' = 'public') => s.h.api.admin.registerOAuthClient({ name: 'X', type, redirectUris: uris });
        for (const bad of ['https://*.example/cb', 'https://app.example/*', 'com.example.app:/cb', 'myapp://cb', 'https://app.example/cb#frag', 'https://user:pw@app.example/cb',
          'http://app.example/cb', 'ftp://app.example/cb', 'relative/cb', '']) {
          await expect(reg([bad]), bad).rejects.toThrow(/redirect URI/);
        }
        await expect(reg([])).rejects.toThrow(/at least one/);
        for (const ok of ['https://app.example/cb', 'http://localhost:3000/cb', 'http://127.0.0.1/cb', 'http://[::1]:8080/cb']) {
          const c = await reg([ok]);
          expect(c.clientSecret).toBeUndefined();
          expect(c.redirectUris).toEqual([ok]);
        }
        const conf = await reg(['https://a.example/cb', 'https://b.example/cb'], 'confidential');
        expect(conf.clientSecret).toMatch(/^[0-9A-Za-z]{48}$/);
      } finally {
        await s.h.close();
      }
    });

    it('loopback any-port (RFC 8252 §7.3) is opt-in: off by default, on with loopbackAnyPort', async () => {
      const off = await setup(factory);
      try {
        const a = await authorize(off.h, { clientId: off.pub.clientId, memberId: off.h.a.owner.id, redirectUri: 'http://127.0.0.1:51234/cb' });
        expect(a.page.status).toBe(400);
        expect(a.page.headers.location).toBeUndefined();
      } finally {
        await off.h.close();
      }
      const on = await setup(factory, { loopbackAnyPort: true });
      try {
        const a = await authorize(on.h, { clientId: on.pub.clientId, memberId: on.h.a.owner.id, redirectUri: 'http://127.0.0.1:51234/cb' });
        expect(a.location).toMatch(/^http:\/\/127\.0\.0\.1:51234\/cb\?code=/);
        const code = query(a.location).get('code')!;
        // The token request names the same URI as the authorization request.
        const t = await token(on.h, { grant_type: 'authorization_code', code, redirect_uri: 'http://127.0.0.1:51234/cb', client_id: on.pub.clientId, code_verifier: a.verifier });
        expect(t.status).toBe(200);
        // Only the port may differ: not the path, not a non-loopback host.
        const path = await authorize(on.h, { clientId: on.pub.clientId, memberId: on.h.a.owner.id, redirectUri: 'http://127.0.0.1:51234/other' });
        expect(path.page.status).toBe(400);
      } finally {
        await on.h.close();
      }
    });
  });

  describe(`[${factory.name}] OAuth 2.1 token endpoint limit: 120 per minute per IP`, () => {
    it('the 121st request in a minute gets 429 {error: rate_limited, error_description, retryAfter}; X-Forwarded-For does not help', async () => {
      const s2 = await setup(factory, { rateLimited: true });
      try {
        const form = { grant_type: 'refresh_token', refresh_token: 'nope', client_id: s2.pub.clientId };
        s2.h.clock.set('2026-03-01T09:00:00.000Z');
        for (let i = 0; i < 120; i++) {
          const r = await token(s2.h, form, { ip: '203.0.113.9', headers: { 'x-forwarded-for': `10.0.0.${i % 250}` } });
          expect(r.status).toBe(400);
        }
        const over = await token(s2.h, form, { ip: '203.0.113.9', headers: { 'x-forwarded-for': '10.9.9.9' } });
        expect(over.status).toBe(429);
        expect(over.body).toEqual({ error: 'rate_limited', error_description: expect.any(String), retryAfter: expect.any(Number) });
        expect(over.headers['retry-after']).toBe(String(over.body.retryAfter));
        expect(over.headers['cache-control']).toBe('no-store');
        // Another address is not affected; a minute later the first is admitted again (no block period).
        expect((await token(s2.h, form, { ip: '203.0.113.10' })).status).toBe(400);
        s2.h.clock.advance(120_000);
        expect((await token(s2.h, form, { ip: '203.0.113.9' })).status).toBe(400);
      } finally {
        await s2.h.close();
      }
    });
  });
  describe(`[${factory.name}] v3 File: uploaderId is null for an upload through an OAuth app (an integration), the member's own otherwise`, () => {
    let s: Setup;
    beforeAll(async () => { s = await setup(factory); });
    afterAll(async () => { await s.h.close(); });

    it('an OAuth app\'s upload has uploaderId null (and filters as null); the same member\'s personal token uploads with their id', async () => {
      const { h } = s;
      const tok = await tokensFor(s, h.a.regular.id);
      const p = await h.project({ name: 'OAuth uploads', members: [h.a.regular.id] });
      const viaApp = await h.upload('from an app', { name: 'app.txt', projectId: p.id }, tok.access_token);
      expect(viaApp.status, JSON.stringify(viaApp.body)).toBe(201);
      expect(viaApp.body.uploaderId).toBeNull();
      const own = await h.upload('by hand', { name: 'hand.txt', projectId: p.id }, h.a.regular.token);
      expect(own.body.uploaderId).toBe(h.a.regular.id);
      const byMember = (await h.get(`/files?projectId=${p.id}&uploaderId[eq]=${h.a.regular.id}`)).body.data.map((f: any) => f.id);
      expect(byMember).toEqual([own.body.id]);
      const fromContent = await h.post('/files/from-content', { name: 'c.txt', content: 'hi', projectId: p.id }, { token: tok.access_token });
      expect(fromContent.status, JSON.stringify(fromContent.body)).toBe(201);
      expect(fromContent.body).toHaveProperty('uploaderId', null);
    });

    it('a file an OAuth app uploads onto its member\'s private document stays that member\'s alone', async () => {
      const { h } = s;
      const tok = await tokensFor(s, h.a.regular.id);
      const p = await h.project({ name: 'OAuth private docs', members: [h.a.regular.id] });
      const doc = await h.post('/documents', { title: 'Mine', projectId: p.id, accessType: 'private' }, { token: h.a.regular.token });
      expect(doc.status).toBe(201);
      const f = await h.upload('secret', { name: 'secret.txt', documentId: doc.body.id }, tok.access_token);
      expect(f.status, JSON.stringify(f.body)).toBe(201);
      expect(f.body.uploaderId).toBeNull();
      expect((await h.get(`/files/${f.body.id}`, { token: h.a.regular.token })).status).toBe(200);
      expect((await h.get(`/files/${f.body.id}`)).status).toBe(404);
    });
  });
}
