import { createHash, randomBytes } from 'node:crypto';
import { describe, it, expect, beforeAll, afterAll, inject } from 'vitest';
import type { ChildProcess } from 'node:child_process';
import { startQuickstart, type Seed as BaseSeed } from './start';

/**
 * Issue 15 "Done when", through the quickstart on SQLite and Postgres: a
 * legacy v1.0 client lists, creates, updates and deletes subteams and labels
 * and lists apps, with a personal access token and with an OAuth access
 * token (second document, "Legacy v1.0 endpoints", "Authentication",
 * "Versioning").
 */

interface Seed extends BaseSeed {
  oauthClients: { clientId: string; clientSecret?: string; type: string; redirectUris: string[] }[];
}

const pgUrl = inject('pgUrl');

const stores = [
  { name: 'sqlite', args: [] as string[] },
  ...(pgUrl ? [{ name: 'postgres', args: ['--db', pgUrl] }] : []),
];

describe.each(stores)('quickstart [$name]: the legacy v1.0 surface with both credential kinds (issue 15)', ({ args }) => {
  let child: ChildProcess;
  let seed: Seed;

  beforeAll(async () => {
    ({ child, seed } = await startQuickstart<Seed>(args));
  });
  afterAll(() => {
    child?.kill('SIGTERM');
  });

  const call = async (method: string, path: string, token: string, body?: unknown) => {
    const r = await fetch(`${seed.baseUrl}/api/v1.0${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    // Spec "Versioning": every legacy answer carries the three headers.
    expect(r.headers.get('deprecation')).toBe('true');
    expect(r.headers.get('sunset')).toBe('Wed, 01 Sep 2027 00:00:00 GMT');
    expect(r.headers.get('link')).toMatch(/^<.+>; rel="deprecation"$/);
    return { status: r.status, body: (await r.json()) as any };
  };
  const expectStatus = (r: { status: number; body: any }, status: number) => {
    expect(r.status, JSON.stringify(r.body)).toBe(status);
    return r.body;
  };

  /** An OAuth access token through the quickstart's own authorization server: demo sign-in cookie, consent, code exchange with PKCE. */
  async function oauthToken(memberId: string): Promise<string> {
    const app = seed.oauthClients.find((c) => c.type === 'public')!;
    const redirectUri = app.redirectUris[0]!;
    const verifier = randomBytes(32).toString('base64url');
    const q = new URLSearchParams({
      response_type: 'code', client_id: app.clientId, redirect_uri: redirectUri, scope: 'read write delete', state: 'legacy-state',
      code_challenge: createHash('sha256').update(verifier).digest('base64url'), code_challenge_method: 'S256',
    });
    const cookie = `pmapi_demo_member=${memberId}`;
    const page = await fetch(`${seed.baseUrl}/oauth/authorize?${q}`, { headers: { cookie }, redirect: 'manual' });
    expect(page.status).toBe(200);
    const html = await page.text();
    const unescape = (s: string) => s.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
    const fields: Record<string, string> = {};
    for (const m of html.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)) fields[unescape(m[1]!)] = unescape(m[2]!);
    const post = await fetch(`${seed.baseUrl}/oauth/authorize`, {
      method: 'POST', redirect: 'manual',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ...fields, decision: 'allow' }).toString(),
    });
    expect(post.status).toBe(303);
    const code = new URL(post.headers.get('location')!).searchParams.get('code')!;
    const tok = await fetch(`${seed.baseUrl}/oauth/token`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: redirectUri, client_id: app.clientId, code_verifier: verifier }).toString(),
    });
    expect(tok.status).toBe(200);
    return ((await tok.json()) as { access_token: string }).access_token;
  }

  it('subteams and labels are listed, created, updated and deleted, and apps listed, with a personal access token and an OAuth token', async () => {
    const owner = seed.teams[0]!.members[0]!;
    const tokens = [{ kind: 'personal access token', token: owner.token }, { kind: 'OAuth access token', token: await oauthToken(owner.id) }];
    expect(tokens[1]!.token).toMatch(/^svc_oauth_/);
    for (const { kind, token } of tokens) {
      const tag = `${kind} ${Date.now()}`;
      const list = expectStatus(await call('GET', '/subteams', token), 200);
      expect(list).toMatchObject({ items: true, hasMore: false });
      expect(list.subteams.some((s: any) => s.is_general)).toBe(true);
      const { id } = expectStatus(await call('POST', '/subteams', token, { name: `Subteam ${tag}`, color: '#336699' }), 201);
      expect(expectStatus(await call('PUT', `/subteams/${id}`, token, { name: `Renamed ${tag}` }), 200)).toEqual({ message: expect.any(String), id });
      expect(expectStatus(await call('GET', `/subteams/${id}`, token), 200)).toMatchObject({ id, name: `Renamed ${tag}`, color: '#336699', logo: '', is_general: false, owner: owner.id });
      expect(expectStatus(await call('DELETE', `/subteams/${id}`, token), 200)).toEqual({ message: expect.any(String), id });
      expectStatus(await call('GET', `/subteams/${id}`, token), 404);

      const label = expectStatus(await call('POST', '/labels', token, { name: `Label ${tag}`, color: '#aa0000', type: 1 }), 201);
      expectStatus(await call('PUT', `/labels/${label.id}`, token, { name: `Relabelled ${tag}` }), 200);
      const labels = expectStatus(await call('GET', '/labels?type=1&limit=200', token), 200);
      expect(labels.labels.find((l: any) => l.id === label.id)).toMatchObject({ name: `Relabelled ${tag}`, type: 1, created_by: owner.id, default: false });
      expect(expectStatus(await call('DELETE', `/labels/${label.id}`, token), 200)).toEqual({ message: expect.any(String), id: label.id });

      const apps = expectStatus(await call('GET', '/apps?limit=10&offset=0', token), 200);
      expect(Array.isArray(apps)).toBe(true);
      // The OAuth connection made above shows its app to the workspace.
      expect(apps.map((a: any) => a.name)).toContain('Demo public app');
      expectStatus(await call('GET', '/apps', token), 400);
    }
  });

  it('errors are {message, code}: 401 without a credential, 404 for an unknown route', async () => {
    const r = await fetch(`${seed.baseUrl}/api/v1.0/subteams`);
    expect(r.status).toBe(401);
    expect(await r.json()).toEqual({ message: expect.any(String), code: 401 });
    expect(r.headers.get('deprecation')).toBe('true');
    const unknown = await call('GET', '/no-such-route', seed.teams[0]!.members[0]!.token);
    expect(unknown).toEqual({ status: 404, body: { message: expect.any(String), code: 404 } });
  });
});
