import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import http from 'node:http';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import * as client from 'openid-client';
import * as oauth from 'oauth4webapi';
import { createPmapi, type Pmapi } from '@pmapi/core';
import { openSqliteStore } from '@pmapi/adapter-sqlite';
import { createApp, hostOAuth, safeNext } from '../src/app';
import { seed } from '../src/seed';

/**
 * Issue 17 ("Done when") and issue 16 ("a custom sign-in page"): an Express
 * app signs people in with its own form and session; pmapi's OAuth server,
 * mounted under /pm, reads that session, serves the host's branded async
 * consent page (its own stylesheet, its own CSP) and completes the flow with
 * stock clients — openid-client v6 and oauth4webapi, discovery with
 * `algorithm: 'oauth2'`. Everything on 127.0.0.1.
 */
describe('example: custom sign-in page and branded consent in Express, with openid-client and oauth4webapi', () => {
  let server: http.Server;
  let base: string;
  let issuer: string;
  let api: Pmapi;
  let world: Awaited<ReturnType<typeof seed>>;
  const redirectUri = 'http://127.0.0.1:8400/callback';
  const clientCode = readFileSync(new URL(import.meta.url), 'utf8');
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

  beforeAll(async () => {
    let handler: http.RequestListener = (_q, s) => s.end();
    server = http.createServer((q, s) => handler(q, s));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    issuer = `${base}/pm`;
    api = await createPmapi({ store: await openSqliteStore(), rateLimiter: false, oauth: hostOAuth(issuer) });
    world = await seed(api, redirectUri);
    handler = createApp(api, {
      accounts: [{ username: 'pat', password: 'correct horse', displayName: 'Pat Example', memberId: world.patAtAcme.id }],
      sessionSecret: 'test-secret-not-for-production',
    });
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await api.close();
  });

  /** A tiny browser: one cookie jar, redirects followed by hand. */
  function browser() {
    const jar = new Map<string, string>();
    return {
      jar,
      async go(url: string | URL, init: RequestInit = {}): Promise<Response> {
        const headers = new Headers(init.headers);
        if (jar.size) headers.set('cookie', [...jar].map(([k, v]) => `${k}=${v}`).join('; '));
        const res = await fetch(new URL(url, base), { ...init, headers, redirect: 'manual' });
        for (const c of res.headers.getSetCookie()) {
          const [pair] = c.split(';');
          const i = pair!.indexOf('=');
          jar.set(pair!.slice(0, i), pair!.slice(i + 1));
        }
        return res;
      },
    };
  }

  const fieldsOf = (html: string) => {
    const un = (s: string) => s.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
    return Object.fromEntries([...html.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)].map((m) => [un(m[1]!), un(m[2]!)]));
  };

  /**
   * What a person does in the browser: the authorization link sends them to
   * the host's /login; they sign in; the consent page (branded, async) lets
   * them pick Globex; Allow redirects to the app with the code.
   */
  async function signInAndConsent(authorizationUrl: URL, o: { workspace?: 'acme' | 'globex' } = {}): Promise<URL> {
    const b = browser();
    const first = await b.go(authorizationUrl);
    expect(first.status).toBe(303);
    const login = new URL(first.headers.get('location')!, base);
    expect(login.pathname).toBe('/login');
    const form = await (await b.go(login)).text();
    expect(form).toContain('<form method="post" action="/login">');
    const next = /name="next" value="([^"]*)"/.exec(form)![1]!.replace(/&amp;/g, '&');
    expect(next).toBe(`/pm/oauth/authorize${authorizationUrl.search}`);
    const signedIn = await b.go('/login', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ username: 'pat', password: 'correct horse', next }) });
    expect(signedIn.status).toBe(303);
    expect(b.jar.has('acme.sid')).toBe(true);
    const consent = await b.go(signedIn.headers.get('location')!);
    expect(consent.status).toBe(200);
    const html = await consent.text();
    // The host's page: its brand, its session's display name, its stylesheet, and a CSP of its own that admits it.
    expect(html).toContain('<header class="brand">Acme Projects</header>');
    expect(html).toContain('Signed in as Pat Example.');
    const sheet = /<link rel="stylesheet" href="([^"]+)">/.exec(html)![1]!;
    const csp = consent.headers.get('content-security-policy')!;
    const directives = new Map(csp.split(';').map((d) => d.trim().split(/\s+/)).map(([k, ...v]) => [k!, v]));
    expect(directives.get('style-src')).toEqual(["'self'"]);
    expect(new URL(sheet, base).origin).toBe(base); // 'self' admits it
    expect(directives.get('frame-ancestors')).toEqual(["'none'"]);
    expect(directives.get('form-action')).toEqual(["'self'", 'http://127.0.0.1:8400']);
    expect(consent.headers.get('cache-control')).toBe('no-store');
    const css = await b.go(sheet);
    expect(css.status).toBe(200);
    expect(css.headers.get('content-type')).toMatch(/^text\/css/);
    // Pat's two workspaces, Acme (signed in there) checked.
    expect(html).toContain(`<input type="radio" name="workspace" value="${world.acme.id}" checked>`);
    expect(html).toContain(`<input type="radio" name="workspace" value="${world.globex.id}">`);
    const chosen = o.workspace === 'acme' ? world.acme.id : world.globex.id;
    const answer = await b.go(/<form method="post" action="([^"]+)">/.exec(html)![1]!, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ...fieldsOf(html), workspace: chosen, decision: 'allow' }),
    });
    expect(answer.status).toBe(303);
    return new URL(answer.headers.get('location')!);
  }

  const membersWith = async (token: string) => {
    const r = await fetch(`${base}/pm/api/v3/members`, { headers: { authorization: `Bearer ${token}` } });
    expect(r.status).toBe(200);
    return ((await r.json()) as { data: { name: string }[] }).data.map((m) => m.name).sort();
  };

  it('openid-client v6: discovery (oauth2), PKCE, sign-in through the Express session, branded consent, code exchange, a v3 call, refresh', async () => {
    const clientId = world.clientId;
    // #region openid-client
    const config = await client.discovery(new URL(issuer), clientId, undefined, client.None(), {
      algorithm: 'oauth2', // pmapi publishes RFC 8414 metadata, not /.well-known/openid-configuration
      execute: [client.allowInsecureRequests], // only for an http:// issuer such as this test's 127.0.0.1
    });
    const codeVerifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const authorizationUrl = client.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri, scope: 'read write', state,
      code_challenge: await client.calculatePKCECodeChallenge(codeVerifier), code_challenge_method: 'S256',
    });
    const callbackUrl = await signInAndConsent(authorizationUrl); // the browser: sign-in, consent, back to redirect_uri
    const tokens = await client.authorizationCodeGrant(config, callbackUrl, { pkceCodeVerifier: codeVerifier, expectedState: state });
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
    // #endregion openid-client
    expect(callbackUrl.searchParams.get('iss')).toBe(issuer);
    expect(tokens.token_type.toLowerCase()).toBe('bearer');
    expect(tokens.scope).toBe('read write');
    // The token reaches exactly the chosen workspace: Globex's members, none of Acme's.
    expect(await membersWith(tokens.access_token)).toEqual(['Gil', 'Pat']);
    expect(await membersWith(refreshed.access_token)).toEqual(['Gil', 'Pat']);
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    // Rotation: the spent refresh token is refused (and revokes the family).
    await expect(client.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    expect((await fetch(`${base}/pm/api/v3/members`, { headers: { authorization: `Bearer ${refreshed.access_token}` } })).status).toBe(401);
  });

  it('oauth4webapi: the same flow, choosing Acme this time', async () => {
    const clientId = world.clientId;
    // #region oauth4webapi
    const issuerUrl = new URL(issuer);
    const as = await oauth.processDiscoveryResponse(issuerUrl, await oauth.discoveryRequest(issuerUrl, {
      algorithm: 'oauth2', // RFC 8414: {origin}/.well-known/oauth-authorization-server{issuer path}
      [oauth.allowInsecureRequests]: true, // only for an http:// issuer such as this test's 127.0.0.1
    }));
    const oauthClient: oauth.Client = { client_id: clientId };
    const codeVerifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const authorizationUrl = new URL(as.authorization_endpoint!);
    authorizationUrl.search = new URLSearchParams({
      response_type: 'code', client_id: clientId, redirect_uri: redirectUri, scope: 'read write', state,
      code_challenge: await oauth.calculatePKCECodeChallenge(codeVerifier), code_challenge_method: 'S256',
    }).toString();
    const callbackUrl = await signInAndConsent(authorizationUrl, { workspace: 'acme' }); // the browser
    const params = oauth.validateAuthResponse(as, oauthClient, callbackUrl, state); // checks state and iss
    const tokens = await oauth.processAuthorizationCodeResponse(as, oauthClient, await oauth.authorizationCodeGrantRequest(
      as, oauthClient, oauth.None(), params, redirectUri, codeVerifier, { [oauth.allowInsecureRequests]: true },
    ));
    // #endregion oauth4webapi
    expect(await membersWith(tokens.access_token)).toEqual(['Ann', 'Pat']);
  });

  it("the README snippets (this example's and the root README's) are the code these tests run", () => {
    const rootReadme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');
    for (const name of ['openid-client', 'oauth4webapi']) {
      const region = new RegExp(`// #region ${name}\\n([\\s\\S]*?)\\n\\s*// #endregion ${name}`).exec(clientCode)![1]!;
      const lines = region.split('\n');
      const indent = Math.min(...lines.filter((l) => l.trim()).map((l) => /^ */.exec(l)![0].length));
      const snippet = lines.map((l) => l.slice(indent)).join('\n');
      expect(readme, `README has the ${name} snippet verbatim`).toContain(snippet);
      expect(rootReadme, `the root README has the ${name} snippet verbatim`).toContain(snippet);
    }
  });

  it('sign-in: a wrong password is 401 and sets no session; the way back is only ever a path of this site', async () => {
    const b = browser();
    const bad = await b.go('/login', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ username: 'pat', password: 'nope', next: '/' }) });
    expect(bad.status).toBe(401);
    expect(b.jar.has('acme.sid')).toBe(false);
    expect(safeNext('//evil.invalid/x')).toBe('/');
    expect(safeNext('https://evil.invalid/')).toBe('/');
    expect(safeNext('/\\evil.invalid')).toBe('/');
    expect(safeNext('/pm/oauth/authorize?x=1')).toBe('/pm/oauth/authorize?x=1');
    const sneaky = await b.go('/login', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ username: 'pat', password: 'correct horse', next: '//evil.invalid/' }) });
    expect(sneaky.headers.get('location')).toBe('/');
  });
});
