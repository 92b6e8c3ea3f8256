import { createHash, randomBytes } from 'node:crypto';
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { ProblemError, projectResource, type HttpRequest, type Resource } from '@pmapi/core';
import { uncachedShapes } from '@pmapi/core/sql';
import { harness, type Harness, type Reply, type StoreFactory } from '../kit';
import { during, ofType } from './shared';

/*
 * The frozen legacy v1.0 surface (issue 15): second document, sections
 * "Legacy portfolio", "Legacy app", "Legacy label (tag)", "Legacy v1.0
 * endpoints", "Authentication", "Errors", "Versioning"; decisions in
 * docs/not-shown.md "Legacy v1.0 surface".
 */

const ISSUER = 'https://auth.alpha.test';
const APP = 'https://legacy-app.example/callback';
const MEMBER_HEADER = 'x-test-member';
const SUNSET = 'Wed, 01 Sep 2027 00:00:00 GMT';
const LINK = '</api/v3/versioning>; rel="deprecation"';

/** What the plugged-in test limiter does next: nothing, refuse (429), or fail unexpectedly (500). */
type LimiterMode = 'pass' | 'refuse' | 'crash';

interface Ctx {
  h: Harness;
  limiter: { mode: LimiterMode; calls: Array<{ tokenId: string; method: string; path: string; clientIp: string | undefined }> };
  errors: unknown[];
}

async function setup(factory: StoreFactory): Promise<Ctx> {
  const limiter: Ctx['limiter'] = { mode: 'pass', calls: [] };
  const errors: unknown[] = [];
  const h = await harness(factory, {
    api: () => ({
      onError: (e: unknown) => { errors.push(e); },
      oauth: {
        issuer: ISSUER,
        currentMember: (req: HttpRequest) => (req.headers[MEMBER_HEADER] as string | undefined) ?? null,
        signInUrl: (returnTo: string) => `https://app.alpha.test/sign-in?returnTo=${encodeURIComponent(returnTo)}`,
        tokenRateLimit: false as const,
      },
      // Stands in for the legacy limiter (limits/legacy.ts, built separately): this suite checks the call site.
      legacyRateLimiter: {
        async check(a: { tokenId: string; method: string; path: string; clientIp: string | undefined }): Promise<Record<string, string>> {
          limiter.calls.push({ tokenId: a.tokenId, method: a.method, path: a.path, clientIp: a.clientIp });
          if (limiter.mode === 'refuse') throw new ProblemError('rate_limited', 'Too many requests', { retryAfter: 600 }, { 'Retry-After': '600' });
          if (limiter.mode === 'crash') throw new Error('limiter store exploded');
          return { 'x-ratelimit-remaining': '7' };
        },
      },
    }),
  });
  return { h, limiter, errors };
}

/** A request to /api/v1.0 (as a.owner unless another token is given). */
async function legacy(h: Harness, method: string, path: string, o: { token?: string | null; body?: unknown; raw?: string; headers?: Record<string, string> } = {}): Promise<Reply> {
  const headers: Record<string, string> = { ...(o.headers ?? {}) };
  const token = o.token === undefined ? h.a.owner.token : o.token;
  if (token !== null) headers.authorization = `Bearer ${token}`;
  let body: string | undefined;
  if (o.raw !== undefined) body = o.raw;
  else if (o.body !== undefined) {
    body = JSON.stringify(o.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await h.api.handle({ method, url: `/api/v1.0${path}`, headers, body, remoteAddress: '203.0.113.9' });
  return { status: res.status, headers: res.headers, body: res.body === undefined ? undefined : JSON.parse(typeof res.body === 'string' ? res.body : new TextDecoder().decode(res.body)) };
}

/** The three versioning headers of every legacy answer (spec "Versioning"). */
function expectLegacyHeaders(r: Reply): void {
  expect(r.headers.deprecation).toBe('true');
  expect(r.headers.sunset).toBe(SUNSET);
  expect(r.headers.link).toBe(LINK);
  expect(r.headers['content-type']).toBe('application/json; charset=utf-8');
}

/** A legacy error (spec "Errors"): exactly `{message, code}`, code the status, with the three headers. */
function expectLegacyError(r: Reply, status: number): void {
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  expect(Object.keys(r.body).sort()).toEqual(['code', 'message']);
  expect(r.body.code).toBe(status);
  expect(typeof r.body.message).toBe('string');
  expect(r.body.message.length).toBeGreaterThan(0);
  expectLegacyHeaders(r);
}

function ok(r: Reply, status = 200): any {
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  expectLegacyHeaders(r);
  return r.body;
}

const SUBTEAM_KEYS = ['color', 'id', 'initials', 'is_general', 'logo', 'members', 'name', 'owner', 'secondary_color'];
const LABEL_KEYS = ['color', 'created_by', 'default', 'id', 'name', 'team', 'type'];
const APP_KEYS = ['created_at', 'created_by', 'description', 'id', 'logo', 'name', 'redirect_urls', 'scopes', 'updated_at'];

/** Spec "Legacy portfolio": all nine fields, typed, none null. */
function expectSubteam(s: any): void {
  expect(Object.keys(s).sort()).toEqual(SUBTEAM_KEYS);
  for (const k of ['id', 'name', 'initials', 'logo', 'color', 'secondary_color', 'owner']) expect(typeof s[k], k).toBe('string');
  expect(typeof s.is_general).toBe('boolean');
  expect(Array.isArray(s.members) && s.members.every((m: unknown) => typeof m === 'string')).toBe(true);
}

const snake = (s: string) => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** An OAuth access token for `memberId` through the authorization server (code flow with PKCE), for `clientId`. */
async function oauthToken(h: Harness, clientId: string, memberId: string, scope: string): Promise<string> {
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const q = new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: APP, scope, state: 'st4te', code_challenge: challenge, code_challenge_method: 'S256' });
  const page = await h.api.oauth!.handle({ method: 'GET', url: `/oauth/authorize?${q}`, headers: { [MEMBER_HEADER]: memberId } });
  expect(page.status, String(page.body)).toBe(200);
  const fields: Record<string, string> = {};
  const unescape = (s: string) => s.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
  for (const m of (page.body as string).matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)) fields[unescape(m[1]!)] = unescape(m[2]!);
  const post = await h.api.oauth!.handle({
    method: 'POST', url: '/oauth/authorize', headers: { [MEMBER_HEADER]: memberId, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ ...fields, decision: 'allow' }).toString(),
  });
  const code = new URL(post.headers.location!).searchParams.get('code');
  expect(code).toBeTruthy();
  const tok = await h.api.oauth!.handle({
    method: 'POST', url: '/oauth/token', remoteAddress: '198.51.100.7', headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code: code!, redirect_uri: APP, client_id: clientId, code_verifier: verifier }).toString(),
  });
  expect(tok.status, String(tok.body)).toBe(200);
  return JSON.parse(tok.body as string).access_token as string;
}

export function legacySuite(factory: StoreFactory): void {
  describe(`[${factory.name}] Legacy v1.0 surface`, () => {
    let c: Ctx;
    let h: Harness;
    let clientId: string;
    let oauthTok: string;
    const pat = async (memberId: string, scopes: string[]) => (await h.api.admin.issueToken(memberId, { scopes })).token;
    beforeAll(async () => {
      c = await setup(factory);
      h = c.h;
      clientId = (await h.api.admin.registerOAuthClient({ teamId: h.a.id, name: 'Legacy Sync', type: 'public', redirectUris: [APP] })).clientId;
      oauthTok = await oauthToken(h, clientId, h.a.owner.id, 'read write delete');
    });
    afterAll(() => h.close());

    describe('Versioning and Errors: headers and bodies of every answer', () => {
      it('a success and every error carry Deprecation, Sunset and Link (spec "Versioning")', async () => {
        ok(await legacy(h, 'GET', '/subteams'));
        expectLegacyError(await legacy(h, 'GET', '/subteams', { token: null }), 401);
        expectLegacyError(await legacy(h, 'GET', '/nothing-here'), 404);
      });

      it('401 is {message, code: 401} for a missing, malformed, unknown, revoked or expired token (the legacy-style 401), with WWW-Authenticate', async () => {
        const missing = await legacy(h, 'GET', '/labels', { token: null });
        expectLegacyError(missing, 401);
        expect(missing.headers['www-authenticate']).toMatch(/^Bearer/);
        expectLegacyError(await legacy(h, 'GET', '/labels', { token: 'svc_user_truncated' }), 401);
        expectLegacyError(await legacy(h, 'GET', '/labels', { token: `svc_user_${'a'.repeat(12)}_${'b'.repeat(40)}` }), 401);
        expectLegacyError(await legacy(h, 'GET', '/labels', { headers: { authorization: 'Basic abc' }, token: null }), 401);
        const tok = await h.api.admin.issueToken(h.a.regular.id, { scopes: ['read'], expiresAt: h.clock.now() + 60_000 });
        ok(await legacy(h, 'GET', '/labels', { token: tok.token }));
        h.clock.advance(61_000);
        expectLegacyError(await legacy(h, 'GET', '/labels', { token: tok.token }), 401);
        // Every unusable token answers the same body.
        const a = await legacy(h, 'GET', '/labels', { token: 'svc_user_truncated' });
        const b = await legacy(h, 'GET', '/labels', { token: `svc_user_${'a'.repeat(12)}_${'b'.repeat(40)}` });
        expect(a.body).toEqual(b.body);
      });

      it('404 for an unknown route, an unknown id and the bare prefix; 405 with Allow for a wrong method', async () => {
        expectLegacyError(await legacy(h, 'GET', '/subteams/NoSuchId1'), 404);
        expectLegacyError(await legacy(h, 'GET', '/subteams/not%20an%20id'), 404);
        expectLegacyError(await legacy(h, 'GET', '/labels/x/y/z'), 404);
        expectLegacyError(await legacy(h, 'GET', ''), 404);
        const wrong = await legacy(h, 'PATCH', '/subteams');
        expectLegacyError(wrong, 405);
        expect(wrong.headers.allow).toBe('GET, POST');
        const del = await legacy(h, 'DELETE', '/tasks');
        expectLegacyError(del, 405);
      });

      it('validation failures are 400 {message, code: 400}, naming the field as the client sent it', async () => {
        const noName = await legacy(h, 'POST', '/subteams', { body: { logo: 'https://img.example/x.png' } });
        expectLegacyError(noName, 400);
        expect(noName.body.message).toMatch(/name/);
        const badLogo = await legacy(h, 'POST', '/subteams', { body: { name: 'Logo', logo: 'ftp://x' } });
        expectLegacyError(badLogo, 400);
        expect(badLogo.body.message).toMatch(/logo/);
        const unknownKey = await legacy(h, 'POST', '/labels', { body: { name: 'X', type: 0, colour: '#ffffff' } });
        expectLegacyError(unknownKey, 400);
        expect(unknownKey.body.message).toMatch(/colour/);
        expectLegacyError(await legacy(h, 'POST', '/labels', { raw: '{"name":', headers: { 'content-type': 'application/json' } }), 400);
        expectLegacyError(await legacy(h, 'GET', '/labels?limit=10&sort=name'), 400);
      });

      it('413 for a body over the limit, in process and from a front end (api.problem)', async () => {
        const big = JSON.stringify({ name: 'x'.repeat(4 * 1024 * 1024 + 10), type: 0 });
        expectLegacyError(await legacy(h, 'POST', '/labels', { raw: big, headers: { 'content-type': 'application/json' } }), 413);
        const fromFront = h.api.problem('payload_too_large', 'The body exceeds 4194304 bytes', '/api/v1.0/labels', { limit: 4194304 });
        const r = { status: fromFront.status, headers: fromFront.headers, body: JSON.parse(fromFront.body as string) };
        expectLegacyError(r, 413);
        // The v3 surface keeps its problem bodies.
        const v3 = h.api.problem('payload_too_large', 'too big', '/api/v3/labels');
        expect(JSON.parse(v3.body as string)).toMatchObject({ type: 'payload_too_large', status: 413 });
      });

      it('415 for a body that is not JSON; 429 from the legacy limiter with Retry-After; 500 for an unexpected failure', async () => {
        expectLegacyError(await legacy(h, 'POST', '/labels', { raw: 'name=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } }), 415);
        c.limiter.mode = 'refuse';
        try {
          const r = await legacy(h, 'GET', '/labels');
          expectLegacyError(r, 429);
          expect(r.headers['retry-after']).toBe('600');
        } finally {
          c.limiter.mode = 'pass';
        }
        c.limiter.mode = 'crash';
        try {
          const before = c.errors.length;
          const r = await legacy(h, 'GET', '/labels');
          expectLegacyError(r, 500);
          expect(r.body.message).not.toMatch(/exploded/);
          expect(c.errors.length).toBe(before + 1);
        } finally {
          c.limiter.mode = 'pass';
        }
      });

      it('the legacy limiter sees every authenticated request with its token, method, path and client IP', async () => {
        c.limiter.calls.length = 0;
        const r = await legacy(h, 'DELETE', '/labels/NoSuchLabel');
        expectLegacyError(r, 404);
        expect(r.headers['x-ratelimit-remaining']).toBe('7');
        expect(c.limiter.calls).toHaveLength(1);
        expect(c.limiter.calls[0]).toMatchObject({ method: 'DELETE', path: '/labels/NoSuchLabel', clientIp: '203.0.113.9' });
        expect(typeof c.limiter.calls[0]!.tokenId).toBe('string');
        // v3 requests never reach the legacy limiter.
        await h.get('/labels');
        expect(c.limiter.calls).toHaveLength(1);
      });
    });

    describe('Authentication: both credential kinds, the legacy scope check, role permissions', () => {
      it('a personal access token and an OAuth access token both list, create, update and delete subteams and labels', async () => {
        for (const token of [h.a.owner.token, oauthTok]) {
          const s = ok(await legacy(h, 'POST', '/subteams', { token, body: { name: `Both ${token.slice(0, 9)}` } }), 201);
          ok(await legacy(h, 'PUT', `/subteams/${s.id}`, { token, body: { name: `Renamed ${token.slice(0, 9)}` } }));
          const list = ok(await legacy(h, 'GET', '/subteams?limit=200', { token }));
          expect(list.subteams.map((x: any) => x.id)).toContain(s.id);
          ok(await legacy(h, 'DELETE', `/subteams/${s.id}`, { token }));
          const l = ok(await legacy(h, 'POST', '/labels', { token, body: { name: `L ${token.slice(0, 9)}`, color: '#112233', type: 1 } }), 201);
          ok(await legacy(h, 'PUT', `/labels/${l.id}`, { token, body: { name: `M ${token.slice(0, 9)}` } }));
          ok(await legacy(h, 'GET', '/labels', { token }));
          ok(await legacy(h, 'DELETE', `/labels/${l.id}`, { token }));
          ok(await legacy(h, 'GET', '/apps?limit=10&offset=0', { token }));
        }
      });

      it('the resource comes from the segment and the action from the method; write implies read (rule 2)', async () => {
        const read = await pat(h.a.owner.id, ['tasks:read']);
        const write = await pat(h.a.owner.id, ['tasks:write']);
        const labelsWrite = await pat(h.a.owner.id, ['labels:write']);
        ok(await legacy(h, 'GET', '/tasks', { token: read }));
        ok(await legacy(h, 'GET', '/tasks', { token: write }));
        expectLegacyError(await legacy(h, 'GET', '/labels', { token: read }), 403);
        ok(await legacy(h, 'GET', '/labels', { token: labelsWrite }));
        const l = ok(await legacy(h, 'POST', '/labels', { token: labelsWrite, body: { name: 'Scoped', type: 0 } }), 201);
        // DELETE needs labels:delete (or the delete macro): write does not imply delete.
        expectLegacyError(await legacy(h, 'DELETE', `/labels/${l.id}`, { token: labelsWrite }), 403);
        ok(await legacy(h, 'DELETE', `/labels/${l.id}`, { token: await pat(h.a.owner.id, ['labels:delete']) }));
        // Fine-grained scopes of the other resources do not reach a covered segment.
        expectLegacyError(await legacy(h, 'POST', '/labels', { token: write, body: { name: 'No', type: 0 } }), 403);
      });

      it('the macros: read covers every GET, write every PUT/POST (and GET), delete every DELETE', async () => {
        const read = await pat(h.a.owner.id, ['read']);
        const write = await pat(h.a.owner.id, ['write']);
        ok(await legacy(h, 'GET', '/subteams', { token: read }));
        ok(await legacy(h, 'GET', '/subteams', { token: write }));
        ok(await legacy(h, 'GET', '/apps?limit=5&offset=0', { token: read }));
        expectLegacyError(await legacy(h, 'POST', '/subteams', { token: read, body: { name: 'Nope' } }), 403);
        const s = ok(await legacy(h, 'POST', '/subteams', { token: write, body: { name: 'Macro' } }), 201);
        expectLegacyError(await legacy(h, 'DELETE', `/subteams/${s.id}`, { token: write }), 403);
        ok(await legacy(h, 'DELETE', `/subteams/${s.id}`, { token: await pat(h.a.owner.id, ['delete']) }));
      });

      it('fine-grained scopes answer 403 on every other segment (subteams, apps, unserved ones) and on routes deeper than /{segment}/{id} (rule 3)', async () => {
        const fine = await pat(h.a.owner.id, ['tasks:write', 'projects:write', 'documents:write', 'labels:write', 'members:write', 'portfolios:write', 'portfolios:delete']);
        expectLegacyError(await legacy(h, 'GET', '/subteams', { token: fine }), 403);
        expectLegacyError(await legacy(h, 'POST', '/subteams', { token: fine, body: { name: 'No' } }), 403);
        expectLegacyError(await legacy(h, 'GET', '/apps?limit=1&offset=0', { token: fine }), 403);
        expectLegacyError(await legacy(h, 'GET', '/chats', { token: fine }), 403);
        expectLegacyError(await legacy(h, 'GET', '/tasks/AnyTask1/subtasks', { token: fine }), 403);
        ok(await legacy(h, 'GET', '/tasks', { token: fine }));
        ok(await legacy(h, 'GET', '/projects', { token: fine }));
        ok(await legacy(h, 'GET', '/docs', { token: fine }));
        ok(await legacy(h, 'GET', '/members', { token: fine }));
        ok(await legacy(h, 'GET', '/labels', { token: fine }));
        // A macro token reaches the same paths: unserved ones are 404, not 403.
        expectLegacyError(await legacy(h, 'GET', '/chats'), 404);
        expectLegacyError(await legacy(h, 'GET', '/tasks/AnyTask1/subtasks'), 404);
        // An OAuth token holding only fine-grained scopes is judged the same way.
        const narrow = await oauthToken(h, clientId, h.a.owner.id, 'labels:read');
        ok(await legacy(h, 'GET', '/labels', { token: narrow }));
        expectLegacyError(await legacy(h, 'GET', '/subteams', { token: narrow }), 403);
        expectLegacyError(await legacy(h, 'GET', '/tasks', { token: narrow }), 403);
      });

      it('role permissions apply as in v3: a client (guest) reads subteams but cannot create one or a label', async () => {
        ok(await legacy(h, 'GET', '/subteams', { token: h.a.client.token }));
        expectLegacyError(await legacy(h, 'POST', '/subteams', { token: h.a.client.token, body: { name: 'Guest' } }), 403);
        expectLegacyError(await legacy(h, 'POST', '/labels', { token: h.a.client.token, body: { name: 'Guest', type: 0 } }), 403);
        // The other workspace's records are invisible: 404.
        const other = (await h.get('/labels', { token: h.b.owner.token })).body.data[0];
        expectLegacyError(await legacy(h, 'GET', `/labels/${other.id}`), 404);
        expectLegacyError(await legacy(h, 'GET', `/subteams/${h.b.generalPortfolioId}`), 404);
      });
    });

    describe('Subteams (legacy portfolios)', () => {
      it('the list is {subteams, items, hasMore} with all nine fields on every subteam; the General one has logo ""', async () => {
        const b = ok(await legacy(h, 'GET', '/subteams'));
        expect(Object.keys(b).sort()).toEqual(['hasMore', 'items', 'subteams']);
        expect(b.items).toBe(true);
        expect(typeof b.hasMore).toBe('boolean');
        for (const s of b.subteams) expectSubteam(s);
        const general = b.subteams.find((s: any) => s.is_general);
        expect(general).toMatchObject({ id: h.a.generalPortfolioId, logo: '', owner: h.a.owner.id });
      });

      it('POST answers 201 {message, id}; GET shows the v3 portfolio through the legacy fields; a legacy write is a v3 write (same event)', async () => {
        const { result: r, events } = await during(h, () => legacy(h, 'POST', '/subteams', {
          body: { name: 'Field Sales', logo: 'https://img.example/fs.png', color: '#336699', members: [h.a.regular.id], secondary_color: '#000000', is_general: true, id: 'ignored' },
        }));
        const w = ok(r, 201);
        expect(Object.keys(w).sort()).toEqual(['id', 'message']);
        expect(ofType(events, 'portfolio.created', w.id)).toHaveLength(1);
        const got = ok(await legacy(h, 'GET', `/subteams/${w.id}`));
        expectSubteam(got);
        const v3 = (await h.get(`/portfolios/${w.id}`)).body;
        expect(got).toEqual({
          id: w.id, name: 'Field Sales', initials: v3.initials, logo: 'https://img.example/fs.png', color: '#336699', secondary_color: v3.secondaryColor,
          is_general: false, owner: h.a.owner.id, members: v3.members,
        });
        expect(got.initials).toBe('FS');
        expect(got.members).toContain(h.a.regular.id);
      });

      it('PUT updates only the fields sent (PUT replaces PATCH); logo "" clears the icon; owner is settable; an empty PUT is 400', async () => {
        const { id } = ok(await legacy(h, 'POST', '/subteams', { body: { name: 'Partial', logo: 'https://img.example/p.png', color: '#102030' } }), 201);
        const u = ok(await legacy(h, 'PUT', `/subteams/${id}`, { body: { name: 'Partial 2' } }));
        expect(u).toEqual({ message: expect.any(String), id });
        let got = ok(await legacy(h, 'GET', `/subteams/${id}`));
        expect(got).toMatchObject({ name: 'Partial 2', logo: 'https://img.example/p.png', color: '#102030' });
        ok(await legacy(h, 'PUT', `/subteams/${id}`, { body: { logo: '', owner: h.a.regular.id } }));
        got = ok(await legacy(h, 'GET', `/subteams/${id}`));
        expect(got).toMatchObject({ name: 'Partial 2', logo: '', owner: h.a.regular.id });
        expectLegacyError(await legacy(h, 'PUT', `/subteams/${id}`, { body: {} }), 400);
        expectLegacyError(await legacy(h, 'PUT', '/subteams/NoSuchOne', { body: { name: 'x' } }), 404);
      });

      it('DELETE answers {message, id}; the General subteam cannot be deleted (409)', async () => {
        const { id } = ok(await legacy(h, 'POST', '/subteams', { body: { name: 'Short lived' } }), 201);
        const { result, events } = await during(h, () => legacy(h, 'DELETE', `/subteams/${id}`));
        expect(ok(result)).toEqual({ message: expect.any(String), id });
        expect(ofType(events, 'portfolio.removed', id)).toHaveLength(1);
        expectLegacyError(await legacy(h, 'GET', `/subteams/${id}`), 404);
        expectLegacyError(await legacy(h, 'DELETE', `/subteams/${h.a.generalPortfolioId}`), 409);
      });

      it('PUT /members replaces the roster, DELETE /members removes ids, both require members_ids; POST /leave is 201 and the caller leaves', async () => {
        const { id } = ok(await legacy(h, 'POST', '/subteams', { body: { name: 'Roster' } }), 201);
        const put = ok(await legacy(h, 'PUT', `/subteams/${id}/members`, { body: { members_ids: [h.a.regular.id, h.a.client.id, h.a.owner.id] } }));
        expect(put).toEqual({ message: expect.any(String), id });
        expect(new Set(ok(await legacy(h, 'GET', `/subteams/${id}`)).members)).toEqual(new Set([h.a.regular.id, h.a.client.id, h.a.owner.id]));
        ok(await legacy(h, 'PUT', `/subteams/${id}/members`, { body: { members_ids: [h.a.regular.id, h.a.owner.id] } }));
        expect(new Set(ok(await legacy(h, 'GET', `/subteams/${id}`)).members)).toEqual(new Set([h.a.regular.id, h.a.owner.id]));
        const { result, events } = await during(h, () => legacy(h, 'DELETE', `/subteams/${id}/members`, { body: { members_ids: [h.a.regular.id] } }));
        ok(result);
        expect(ofType(events, 'portfolio.members.removed', id)).toHaveLength(1);
        expect(ok(await legacy(h, 'GET', `/subteams/${id}`)).members).toEqual([h.a.owner.id]);
        expectLegacyError(await legacy(h, 'PUT', `/subteams/${id}/members`, { body: {} }), 400);
        expectLegacyError(await legacy(h, 'PUT', `/subteams/${id}/members`, { body: { members_ids: 'x' } }), 400);
        expectLegacyError(await legacy(h, 'DELETE', `/subteams/${id}/members`), 400);
        expectLegacyError(await legacy(h, 'PUT', `/subteams/${id}/members`, { body: { members_ids: ['NoSuchMember1'] } }), 404);
        const leave = ok(await legacy(h, 'POST', `/subteams/${id}/leave`), 201);
        expect(leave).toEqual({ message: expect.any(String), id });
        expect(ok(await legacy(h, 'GET', `/subteams/${id}`)).members).toEqual([]);
        expectLegacyError(await legacy(h, 'GET', `/subteams/${id}/leave`), 405);
        // Leaving again, and removing ids that are not on the roster, change nothing and still answer.
        const { result: again, events: none } = await during(h, () => legacy(h, 'POST', `/subteams/${id}/leave`));
        ok(again, 201);
        expect(ofType(none, 'portfolio.members.removed')).toHaveLength(0);
        ok(await legacy(h, 'DELETE', `/subteams/${id}/members`, { body: { members_ids: [h.a.client.id] } }));
        // A member without portfolios:write (a client) cannot leave: roster changes are writes.
        ok(await legacy(h, 'PUT', `/subteams/${id}/members`, { body: { members_ids: [h.a.client.id] } }));
        expectLegacyError(await legacy(h, 'POST', `/subteams/${id}/leave`, { token: h.a.client.token }), 403);
      });

      it('an Idempotency-Key replays a legacy create like a v3 one (one record, one event)', async () => {
        const send = () => legacy(h, 'POST', '/subteams', { body: { name: 'Once only' }, headers: { 'idempotency-key': 'legacy-key-1' } });
        const { result: first, events } = await during(h, send);
        const second = await send();
        expect(ok(second, 201)).toEqual(ok(first, 201));
        expect(second.headers['idempotency-replayed']).toBe('true');
        expect(ofType(events, 'portfolio.created')).toHaveLength(1);
        const again = await during(h, send);
        expect(ofType(again.events, 'portfolio.created')).toHaveLength(0);
        const reused = await legacy(h, 'POST', '/subteams', { body: { name: 'Other' }, headers: { 'idempotency-key': 'legacy-key-1' } });
        expectLegacyError(reused, 422);
      });
    });

    describe('Paging: limit, offset, hasMore', () => {
      it('offset skips rows in the list order, limit bounds the page, hasMore tells whether more exist', async () => {
        for (let i = 0; i < 5; i++) ok(await legacy(h, 'POST', '/labels', { body: { name: `Page ${i}`, type: 1 } }), 201);
        const all = ok(await legacy(h, 'GET', '/labels?limit=200')).labels.map((l: any) => l.id);
        expect(all.length).toBeGreaterThanOrEqual(8);
        const p1 = ok(await legacy(h, 'GET', '/labels?limit=3&offset=0'));
        const p2 = ok(await legacy(h, 'GET', '/labels?limit=3&offset=3'));
        expect(p1.labels.map((l: any) => l.id)).toEqual(all.slice(0, 3));
        expect(p2.labels.map((l: any) => l.id)).toEqual(all.slice(3, 6));
        expect(p1.hasMore).toBe(true);
        const last = ok(await legacy(h, 'GET', `/labels?limit=3&offset=${all.length - 2}`));
        expect(last.labels.map((l: any) => l.id)).toEqual(all.slice(-2));
        expect(last.hasMore).toBe(false);
        const past = ok(await legacy(h, 'GET', `/labels?offset=${all.length + 5}`));
        expect(past).toEqual({ labels: [], hasMore: false });
        const empty = ok(await legacy(h, 'GET', '/subteams?offset=10000'));
        expect(empty).toEqual({ subteams: [], items: false, hasMore: false });
      });

      it('limit is 1-200 (larger clamped), offset 0-10,000; anything else is 400', async () => {
        ok(await legacy(h, 'GET', '/labels?limit=1000'));
        for (const q of ['limit=0', 'limit=-1', 'limit=abc', 'limit=1.5', 'offset=-1', 'offset=10001', 'offset=x', 'limit=2&limit=3']) {
          expectLegacyError(await legacy(h, 'GET', `/labels?${q}`), 400);
        }
      });
    });

    describe('Labels', () => {
      it('POST {name, color, type} answers 201 {message, id}; GET shows the seven fields; created_by is the member, team the workspace', async () => {
        const { result, events } = await during(h, () => legacy(h, 'POST', '/labels', { token: h.a.regular.token, body: { name: 'Legacy tag', color: '#abcdef', type: 1 } }));
        const w = ok(result, 201);
        expect(Object.keys(w).sort()).toEqual(['id', 'message']);
        expect(ofType(events, 'label.created', w.id)).toHaveLength(1);
        const got = ok(await legacy(h, 'GET', `/labels/${w.id}`));
        expect(Object.keys(got).sort()).toEqual(LABEL_KEYS);
        expect(got).toEqual({ id: w.id, name: 'Legacy tag', color: '#abcdef', type: 1, created_by: h.a.regular.id, team: h.a.id, default: false });
        // The same label over v3: type is a field of the one label resource.
        expect((await h.get(`/labels/${w.id}`)).body).toMatchObject({ name: 'Legacy tag', type: 1, isDefault: false });
      });

      it('type is required on create and must be 0 or 1; a default label shows default true and created_by ""', async () => {
        expectLegacyError(await legacy(h, 'POST', '/labels', { body: { name: 'No type' } }), 400);
        expectLegacyError(await legacy(h, 'POST', '/labels', { body: { name: 'Bad type', type: 2 } }), 400);
        expectLegacyError(await legacy(h, 'POST', '/labels', { body: { name: 'Bad type', type: '1' } }), 400);
        expectLegacyError(await legacy(h, 'POST', '/labels', { body: { type: 0 } }), 400);
        const list = ok(await legacy(h, 'GET', '/labels?limit=200'));
        const bug = list.labels.find((l: any) => l.name === 'Bug');
        expect(bug).toMatchObject({ default: true, created_by: '', type: 0, team: h.a.id });
      });

      it('the list filters by type and pages with hasMore; its array is `labels`', async () => {
        const t1 = ok(await legacy(h, 'GET', '/labels?type=1&limit=200'));
        expect(Object.keys(t1).sort()).toEqual(['hasMore', 'labels']);
        expect(t1.labels.length).toBeGreaterThan(0);
        expect(t1.labels.every((l: any) => l.type === 1)).toBe(true);
        const t0 = ok(await legacy(h, 'GET', '/labels?type=0&limit=200'));
        expect(t0.labels.every((l: any) => l.type === 0)).toBe(true);
        for (const l of t0.labels) expect(Object.keys(l).sort()).toEqual(LABEL_KEYS);
        expectLegacyError(await legacy(h, 'GET', '/labels?type=2'), 400);
      });

      it('PUT updates the fields sent and answers {message, id}; DELETE answers {message, id}; default labels stay locked (403)', async () => {
        const { id } = ok(await legacy(h, 'POST', '/labels', { body: { name: 'Mutable', color: '#000000', type: 0 } }), 201);
        expect(ok(await legacy(h, 'PUT', `/labels/${id}`, { body: { type: 1 } }))).toEqual({ message: expect.any(String), id });
        expect(ok(await legacy(h, 'GET', `/labels/${id}`))).toMatchObject({ name: 'Mutable', color: '#000000', type: 1 });
        ok(await legacy(h, 'PUT', `/labels/${id}`, { body: { color: '' } }));
        expect(ok(await legacy(h, 'GET', `/labels/${id}`)).color).toBe('');
        const { result, events } = await during(h, () => legacy(h, 'DELETE', `/labels/${id}`));
        expect(ok(result)).toEqual({ message: expect.any(String), id });
        expect(ofType(events, 'label.removed', id)).toHaveLength(1);
        expectLegacyError(await legacy(h, 'GET', `/labels/${id}`), 404);
        const bug = ok(await legacy(h, 'GET', '/labels?limit=200')).labels.find((l: any) => l.name === 'Bug');
        expectLegacyError(await legacy(h, 'PUT', `/labels/${bug.id}`, { body: { name: 'Defect' } }), 403);
        expectLegacyError(await legacy(h, 'DELETE', `/labels/${bug.id}`), 403);
      });
    });

    describe('Apps (OAuth clients)', () => {
      it('GET /apps requires limit and offset and answers an array of legacy apps: the workspace\'s clients and those its members connected', async () => {
        expectLegacyError(await legacy(h, 'GET', '/apps'), 400);
        expectLegacyError(await legacy(h, 'GET', '/apps?limit=10'), 400);
        expectLegacyError(await legacy(h, 'GET', '/apps?offset=0'), 400);
        const elsewhere = await h.api.admin.registerOAuthClient({ teamId: h.b.id, name: 'Beta only', type: 'public', redirectUris: [APP] });
        const open = await h.api.admin.registerOAuthClient({ name: 'Open app', type: 'public', redirectUris: [APP, 'http://localhost:9000/cb'] });
        const unused = await h.api.admin.registerOAuthClient({ name: 'Never connected', type: 'public', redirectUris: [APP] });
        const before = ok(await legacy(h, 'GET', '/apps?limit=100&offset=0'));
        expect(Array.isArray(before)).toBe(true);
        const ids = before.map((a: any) => a.id);
        expect(ids).toContain(clientId);
        expect(ids).not.toContain(elsewhere.clientId);
        expect(ids).not.toContain(open.clientId);
        expect(ids).not.toContain(unused.clientId);
        await oauthToken(h, open.clientId, h.a.regular.id, 'tasks:read lists:write');
        const after = ok(await legacy(h, 'GET', '/apps?limit=100&offset=0'));
        const app = after.find((a: any) => a.id === open.clientId);
        expect(Object.keys(app).sort()).toEqual(APP_KEYS);
        expect(app).toMatchObject({ name: 'Open app', logo: '', description: '', redirect_urls: `${APP} http://localhost:9000/cb`, scopes: 'milestone subtask', created_by: '' });
        expect(app.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
        expect(app.updated_at).toBe(app.created_at);
        // The first app was approved with the macros: every enum value.
        expect(after.find((a: any) => a.id === clientId).scopes).toBe('file label doc milestone message subtask project task_group');
        // Paging: offset and limit slice the same order.
        const second = ok(await legacy(h, 'GET', '/apps?limit=1&offset=1'));
        expect(second.map((a: any) => a.id)).toEqual(after.slice(1, 2).map((a: any) => a.id));
        // Workspace B sees its own client only.
        expect(ok(await legacy(h, 'GET', '/apps?limit=10&offset=0', { token: h.b.owner.token })).map((a: any) => a.id)).toEqual([elsewhere.clientId]);
      });

      it('GET /apps/{appId} answers one app; another workspace\'s, a revoked or an unknown one is 404', async () => {
        const got = ok(await legacy(h, 'GET', `/apps/${clientId}`));
        expect(got).toMatchObject({ id: clientId, name: 'Legacy Sync' });
        expect(Object.keys(got).sort()).toEqual(APP_KEYS);
        const beta = await h.api.admin.registerOAuthClient({ teamId: h.b.id, name: 'Beta two', type: 'public', redirectUris: [APP] });
        expectLegacyError(await legacy(h, 'GET', `/apps/${beta.clientId}`), 404);
        expectLegacyError(await legacy(h, 'GET', '/apps/NoSuchApp1'), 404);
        const gone = await h.api.admin.registerOAuthClient({ teamId: h.a.id, name: 'Gone', type: 'public', redirectUris: [APP] });
        ok(await legacy(h, 'GET', `/apps/${gone.clientId}`));
        await h.api.admin.revokeOAuthClient(gone.clientId);
        expectLegacyError(await legacy(h, 'GET', `/apps/${gone.clientId}`), 404);
      });
    });

    describe('Read endpoints: tasks, projects, docs, members', () => {
      it('list and get answer the v3 record\'s fields in snake_case, with limit, offset and hasMore', async () => {
        const p = await h.project({ name: 'Legacy reads' });
        await h.project({ name: 'Legacy reads 2' });
        const t1 = await h.task(p.id, { name: 'First legacy task' });
        await h.task(p.id, { name: 'Second legacy task' });
        const doc = (await h.post('/documents', { title: 'Legacy doc', projectId: p.id })).body;
        expect(doc.id, JSON.stringify(doc)).toBeTruthy();
        await h.post('/documents', { title: 'Second legacy doc', projectId: p.id });
        const cases: Array<[string, string, string]> = [
          ['tasks', `/tasks/${t1.id}`, `/tasks/${t1.id}`],
          ['projects', `/projects/${p.id}`, `/projects/${p.id}`],
          ['docs', `/docs/${doc.id}`, `/documents/${doc.id}`],
          ['members', `/members/${h.a.regular.id}`, `/members/${h.a.regular.id}`],
        ];
        for (const [segment, legacyPath, v3Path] of cases) {
          const v3 = (await h.get(v3Path)).body;
          const got = ok(await legacy(h, 'GET', legacyPath));
          for (const [k, v] of Object.entries(got)) expect(v, `${segment}.${k}`).toEqual(v3[Object.keys(v3).find((x) => snake(x) === k)!] ?? null);
          expect(got.id).toBe(v3.id);
          const list = ok(await legacy(h, 'GET', `/${segment}?limit=1`));
          expect(Object.keys(list).sort()).toEqual(['hasMore', segment].sort());
          expect(list[segment]).toHaveLength(1);
          expect(Object.keys(list[segment][0]).sort()).toEqual(Object.keys(got).sort());
          expect(list.hasMore, segment).toBe(true);
        }
        const inProject = ok(await legacy(h, 'GET', `/tasks?project_id=${p.id}&limit=200`));
        expect(inProject.tasks).toHaveLength(2);
        expect(inProject.tasks.every((t: any) => t.project_id === p.id)).toBe(true);
        expect(ok(await legacy(h, 'GET', `/tasks/${t1.id}`)).created_at).toBe(t1.createdAt);
        expectLegacyError(await legacy(h, 'GET', '/tasks/NoSuchTask1'), 404);
        expectLegacyError(await legacy(h, 'POST', '/tasks', { body: { name: 'no writes here' } }), 405);
        expectLegacyError(await legacy(h, 'GET', '/projects?archived=true'), 400);
      });
    });

    describe('Review findings (issue 15)', () => {
      // Spec "Authentication" rule 2 and docs/not-shown.md "Legacy v1.0 surface" (Scope check): the roster removal is the
      // v3 relation change, which v3 gates on write; legacy must not let a delete-only token do it.
      it('DELETE /subteams/{id}/members needs the write scope, as v3: a delete-only token is 403 and the roster stays', async () => {
        const { id } = ok(await legacy(h, 'POST', '/subteams', { body: { name: 'Scope roster', members: [h.a.regular.id, h.a.owner.id] } }), 201);
        const del = await pat(h.a.owner.id, ['delete']);
        // v3 refuses the same removal to the same token.
        expect((await h.req('DELETE', `/portfolios/${id}/members`, { token: del, body: { ids: [h.a.regular.id] } })).status).toBe(403);
        expectLegacyError(await legacy(h, 'DELETE', `/subteams/${id}/members`, { token: del, body: { members_ids: [h.a.regular.id] } }), 403);
        expect(new Set(ok(await legacy(h, 'GET', `/subteams/${id}`)).members)).toEqual(new Set([h.a.regular.id, h.a.owner.id]));
        const write = await pat(h.a.owner.id, ['write']);
        ok(await legacy(h, 'DELETE', `/subteams/${id}/members`, { token: write, body: { members_ids: [h.a.regular.id] } }));
        expect(ok(await legacy(h, 'GET', `/subteams/${id}`)).members).toEqual([h.a.owner.id]);
        // Deleting the subteam itself still needs delete.
        expectLegacyError(await legacy(h, 'DELETE', `/subteams/${id}`, { token: write }), 403);
        ok(await legacy(h, 'DELETE', `/subteams/${id}`, { token: del }));
      });

      // Spec "Errors": the message names the field as the client sent it, whatever its name (no prototype lookups).
      it('a parameter or body key named like an Object.prototype member is named as sent in the 400 message', async () => {
        for (const name of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
          const q = await legacy(h, 'GET', `/labels?${name}=1`);
          expectLegacyError(q, 400);
          expect(q.body.message.startsWith(`${name}: `), q.body.message).toBe(true);
          const b = await legacy(h, 'POST', '/labels', { raw: `{"name":"Proto","type":0,${JSON.stringify(name)}:1}`, headers: { 'content-type': 'application/json' } });
          expectLegacyError(b, 400);
          expect(b.body.message.startsWith(`${name}: `), b.body.message).toBe(true);
          expect(b.body.message).not.toMatch(/\[object Object\]|function /);
        }
        // A segment named like one is no covered segment: a fine-grained token is refused without naming a prototype member.
        const fine = await pat(h.a.owner.id, ['tasks:read']);
        const seg = await legacy(h, 'GET', '/constructor', { token: fine });
        expectLegacyError(seg, 403);
        expect(seg.body.message).not.toMatch(/function |native code/);
      });

      // Spec "Errors" and docs/not-shown.md "Legacy v1.0 surface" (Errors): messages speak the legacy surface's names.
      it('404 names the record by its legacy segment whether the id is malformed or unknown; the members routes name members_ids', async () => {
        const unknown = 'ZZZZZZZZZZZZ';
        const malformed = 'not.an.id';
        const subjects: Array<[string, string]> = [['subteams', 'subteam'], ['labels', 'label'], ['docs', 'doc'], ['tasks', 'task'], ['projects', 'project'], ['members', 'member'], ['apps', 'app']];
        for (const [segment, subject] of subjects) {
          for (const id of [unknown, malformed]) {
            const r = await legacy(h, 'GET', `/${segment}/${id}`);
            expectLegacyError(r, 404);
            expect(r.body.message).toBe(`No ${subject} '${id}'`);
          }
        }
        for (const [m, path, body] of [['PUT', `/subteams/${unknown}`, { name: 'x' }], ['DELETE', `/subteams/${unknown}`, undefined], ['POST', `/subteams/${unknown}/leave`, undefined],
          ['PUT', `/subteams/${unknown}/members`, { members_ids: [] }], ['DELETE', `/subteams/${unknown}/members`, { members_ids: [h.a.owner.id] }],
          ['PUT', `/labels/${unknown}`, { name: 'x' }], ['DELETE', `/labels/${unknown}`, undefined]] as const) {
          const r = await legacy(h, m, path, body === undefined ? {} : { body });
          expectLegacyError(r, 404);
          expect(r.body.message, `${m} ${path}`).toBe(`No ${path.startsWith('/labels') ? 'label' : 'subteam'} '${unknown}'`);
        }
        const { id } = ok(await legacy(h, 'POST', '/subteams', { body: { name: 'Named ids', members: [h.a.owner.id] } }), 201);
        for (const m of ['PUT', 'DELETE']) {
          const missing = await legacy(h, m, `/subteams/${id}/members`, { body: { members_ids: [unknown] } });
          expectLegacyError(missing, 404);
          expect(missing.body.message).toBe(`members_ids: no member '${unknown}' in this workspace`);
          const bad = await legacy(h, m, `/subteams/${id}/members`, { body: { members_ids: ['x'] } });
          expect(bad.body.message, m).toMatch(/^members_ids: /);
          const many = await legacy(h, m, `/subteams/${id}/members`, { body: { members_ids: Array.from({ length: 200 }, () => h.a.owner.id) } });
          expectLegacyError(many, 400);
          expect(many.body.message, m).toMatch(/^members_ids: /);
        }
        const empty = await legacy(h, 'DELETE', `/subteams/${id}/members`, { body: { members_ids: [] } });
        expectLegacyError(empty, 400);
        expect(empty.body.message).toMatch(/^members_ids: /);
        // A body field naming an id is named as the legacy body names it.
        const owner = await legacy(h, 'PUT', `/subteams/${id}`, { body: { owner: unknown } });
        expectLegacyError(owner, 404);
        expect(owner.body.message).toBe(`owner: no member '${unknown}' in this workspace`);
        const roster = await legacy(h, 'POST', '/subteams', { body: { name: 'Roster ids', members: [unknown] } });
        expectLegacyError(roster, 404);
        expect(roster.body.message).toBe(`members: no member '${unknown}' in this workspace`);
      });

      // Spec "Errors" (405, {message, code}) and "Limits": a method no route serves is refused before the token lookup,
      // so it costs no statement and reaches no rate-limit bucket (docs/not-shown.md "Legacy v1.0 surface", Methods).
      it('PATCH, OPTIONS, TRACE are 405 before authentication: no statement, no limiter call, with Allow and the versioning headers', async () => {
        const before = c.limiter.calls.length;
        for (const method of ['PATCH', 'OPTIONS', 'TRACE', 'PROPFIND']) {
          for (const token of [h.a.owner.token, null, 'svc_pat_nope_nope']) {
            let r: Reply | undefined;
            const statements = await h.countQueries(async () => { r = await legacy(h, method, '/subteams', { token }); });
            expectLegacyError(r!, 405);
            expect(r!.headers.allow).toBe('GET, POST');
            expect(statements, `${method} ran SQL`).toEqual([]);
          }
        }
        const unserved = await legacy(h, 'PATCH', '/chats', { token: null });
        expectLegacyError(unserved, 405);
        expect(unserved.headers.allow).toBe('GET, POST, PUT, DELETE');
        expect(c.limiter.calls.length).toBe(before);
      });

      it('a list parameter given twice or empty is 400, like limit and offset (project_id, type)', async () => {
        const p = await h.project({ name: 'Param rules' });
        ok(await legacy(h, 'GET', `/tasks?project_id=${p.id}`));
        for (const q of [`/tasks?project_id=${p.id}&project_id=${p.id}`, `/tasks?project_id=${p.id}&project_id=ZZZZZZZZZZZZ`, '/tasks?project_id=', `/docs?project_id=${p.id}&project_id=${p.id}`, '/docs?project_id=',
          '/labels?type=0&type=0', '/labels?type=', '/labels?limit=', '/labels?offset=']) {
          const r = await legacy(h, 'GET', q);
          expectLegacyError(r, 400);
          expect(r.body.message, q).toMatch(/^(project_id|type|limit|offset): /);
        }
      });

      // Spec "Versioning": the legacy surface is frozen, no new fields. The read endpoints pin their fields, so a field
      // v3 gains never reaches them (docs/not-shown.md "Legacy v1.0 surface", Read endpoints).
      it('a field v3 gains does not appear on the legacy read endpoints', async () => {
        // The v3 project resource grown by one field: its task counter, a stored column v3 did not show.
        const grown: Resource = { ...projectResource, columns: projectResource.columns.map((col) => (col.key === 'taskCounter' ? { ...col, internal: false } : col)) };
        const g = await harness(factory, { api: () => ({ resources: [grown] }) });
        try {
          const p = await g.project({ name: 'Grown' });
          const v3 = (await g.get(`/projects/${p.id}`)).body;
          expect(v3, 'the v3 shape grew').toHaveProperty('taskCounter');
          const res = await g.api.handle({ method: 'GET', url: `/api/v1.0/projects/${p.id}`, headers: { authorization: `Bearer ${g.a.owner.token}` } });
          const one = JSON.parse(res.body as string);
          expect(res.status).toBe(200);
          const listed = JSON.parse((await g.api.handle({ method: 'GET', url: '/api/v1.0/projects?limit=200', headers: { authorization: `Bearer ${g.a.owner.token}` } })).body as string);
          // The fields the surface had when it was frozen, in the same order, on both the default and the grown API.
          const frozen = Object.keys(ok(await legacy(h, 'GET', `/projects/${(await h.project({ name: 'Frozen' })).id}`)));
          expect(frozen).not.toContain('task_counter');
          expect(Object.keys(one)).toEqual(frozen);
          for (const row of listed.projects) expect(Object.keys(row)).toEqual(frozen);
        } finally {
          await g.close();
        }
      });

      // docs/not-shown.md "Legacy v1.0 surface" (Paging): the offset is passed over by the database, never read and sliced.
      it('offset paging skips rows in the list statement itself (OFFSET): only the page is read and built', async () => {
        for (let i = 0; i < 6; i++) ok(await legacy(h, 'POST', '/labels', { body: { name: `Offset ${i}`, type: 0 } }), 201);
        const all = ok(await legacy(h, 'GET', '/labels?limit=200')).labels.map((l: any) => l.id);
        let page: any;
        const statements = await h.countQueries(async () => { page = ok(await legacy(h, 'GET', '/labels?limit=2&offset=3')); });
        expect(page.labels.map((l: any) => l.id)).toEqual(all.slice(3, 5));
        expect(page.hasMore).toBe(all.length > 5);
        const lists = statements.filter((q) => /from\s+"labels"/i.test(q) && /\blimit\b/i.test(q));
        expect(lists, statements.join('\n')).toHaveLength(1);
        expect(lists[0]).toMatch(/\boffset\b/i);
        // The last page: hasMore false, the rows the offset leaves.
        const last = ok(await legacy(h, 'GET', `/labels?limit=5&offset=${all.length - 2}`));
        expect(last.labels.map((l: any) => l.id)).toEqual(all.slice(-2));
        expect(last.hasMore).toBe(false);
        // The offset statement's bound values are predicted, so it is compiled once and re-run (statement cache).
        expect(uncachedShapes().filter((k) => k.includes('|offset'))).toEqual([]);
        // Without an offset, and on v3 (keyset pages), the statement has none.
        const plain = await h.countQueries(() => legacy(h, 'GET', '/labels?limit=2'));
        expect(plain.filter((q) => /from\s+"labels"/i.test(q) && /\boffset\b/i.test(q))).toEqual([]);
        const v3 = await h.countQueries(() => h.get('/labels?limit=2'));
        expect(v3.filter((q) => /from\s+"labels"/i.test(q) && /\boffset\b/i.test(q))).toEqual([]);
      });

      // Spec "Authentication" rules 2-3 and docs/not-shown.md "Legacy v1.0 surface" (Macros held by OAuth tokens): a token
      // holds a macro only when its consent asked for it, never because a narrow role clamps the macro down to its scopes.
      it('an OAuth token is a macro holder only when its consent asked for the macro, whatever the role clamps it to', async () => {
        const role = await h.post('/roles', { name: 'Legacy label reader', permissions: ['labels:read'] });
        expect(role.status, JSON.stringify(role.body)).toBe(201);
        const m = await h.api.admin.addMember(h.a.id, { name: 'Label Reader', role: 'Legacy label reader' });
        const narrowOauth = await oauthToken(h, clientId, m.id, 'labels:read');
        const narrowPat = await pat(m.id, ['labels:read']);
        for (const token of [narrowPat, narrowOauth]) {
          ok(await legacy(h, 'GET', '/labels', { token }));
          expectLegacyError(await legacy(h, 'GET', '/apps?limit=1&offset=0', { token }), 403);
          expectLegacyError(await legacy(h, 'GET', '/chats', { token }), 403);
          expectLegacyError(await legacy(h, 'GET', '/subteams', { token }), 403);
        }
        // Consenting the macro itself makes the holder (clamped to the role: apps need no permission, unserved paths are 404).
        const macro = await oauthToken(h, clientId, m.id, 'read');
        ok(await legacy(h, 'GET', '/apps?limit=1&offset=0', { token: macro }));
        expectLegacyError(await legacy(h, 'GET', '/chats', { token: macro }), 404);
        ok(await legacy(h, 'GET', '/labels', { token: macro }));
      });
    });
  });
}
