import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { createPmapi, createMemoryBlobStore, serveBlobRequest, signBlobLink, type HttpRequest, type Pmapi } from '@pmapi/core';
import { toFetchHandler } from '@pmapi/http-node';
import { frontEndStores } from './stores';

// Issue 16 "Mountable anywhere": the fetch-style front end (Request → Response) does toNodeHandler's
// transport duties — body limits (spec "Limits": 413 payload_too_large), content types, binary bodies,
// headers, the client address, CORS, the last-resort 500 — for Hono, Next.js and other fetch runtimes.

const H = 'http://pm.test';

for (const { name, open } of frontEndStores()) {
  describe(`[${name}] toFetchHandler: Request in, Response out`, () => {
    let api: Pmapi;
    let token: string;
    let pm: ReturnType<typeof toFetchHandler>;
    const auth = () => ({ authorization: `Bearer ${token}` });

    beforeAll(async () => {
      api = await createPmapi({ store: await open() });
      const ws = await api.admin.createWorkspace({ name: 'Acme', owner: { name: 'Ada' } });
      token = (await api.admin.issueToken(ws.ownerMemberId, { scopes: ['read', 'write', 'delete'] })).token;
      pm = toFetchHandler(api, { bodyLimit: 1024, uploadLimit: 4096 });
    });
    afterAll(() => api.close());

    it('round-trips a create, a read, a 204 delete and a HEAD', async () => {
      const c = await pm(new Request(`${H}/api/v3/projects`, { method: 'POST', headers: { ...auth(), 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Web' }) }));
      expect(c.status).toBe(201);
      expect(c.headers.get('content-type')).toMatch(/^application\/json/);
      expect(c.headers.get('x-request-id')).toBeTruthy();
      const p = (await c.json()) as { id: string };
      const g = await pm(new Request(`${H}/api/v3/projects/${p.id}`, { headers: auth() }));
      expect(((await g.json()) as { name: string }).name).toBe('Web');
      const d = await pm(new Request(`${H}/api/v3/projects/${p.id}`, { method: 'DELETE', headers: auth() }));
      expect(d.status).toBe(204);
      expect(await d.text()).toBe('');
      const h = await pm(new Request(`${H}/api/v3/members`, { method: 'HEAD', headers: auth() }));
      expect(await h.text()).toBe('');
    });

    it('problems as the node handler gives them: 401 without a token, 404 off the API, 415 for a non-JSON body', async () => {
      const u = await pm(new Request(`${H}/api/v3/members`));
      expect(u.status).toBe(401);
      expect(((await u.json()) as { code: string }).code).toBe('unauthorized');
      expect((await pm(new Request(`${H}/elsewhere`, { headers: auth() }))).status).toBe(404);
      const t = await pm(new Request(`${H}/api/v3/projects`, { method: 'POST', headers: { ...auth(), 'content-type': 'text/plain' }, body: 'name=Web' }));
      expect(t.status).toBe(415);
      expect(((await t.json()) as { code: string }).code).toBe('unsupported_media_type');
    });

    it('a body over the limit is 413 whether declared or streamed (chunked, no length); PUT gets the upload limit', async () => {
      const big = JSON.stringify({ name: 'x'.repeat(2000) });
      const r = await pm(new Request(`${H}/api/v3/projects`, { method: 'POST', headers: { ...auth(), 'content-type': 'application/json' }, body: big }));
      expect(r.status).toBe(413);
      const body = (await r.json()) as { code: string; instance: string; limit: number };
      expect(body.code).toBe('payload_too_large');
      expect(body.instance).toBe('/api/v3/projects');
      const enc = new TextEncoder().encode(big);
      const stream = new ReadableStream<Uint8Array>({
        start(c) {
          for (let i = 0; i < enc.length; i += 256) c.enqueue(enc.slice(i, i + 256));
          c.close();
        },
      });
      const s = await pm(new Request(`${H}/api/v3/projects`, { method: 'POST', headers: { ...auth(), 'content-type': 'application/json' }, body: stream, duplex: 'half' } as RequestInit));
      expect(s.status).toBe(413);
      // 2,000 bytes by PUT: over bodyLimit, under uploadLimit — not refused for size (a bad link instead).
      const put = await pm(new Request(`${H}/api/v3/blobs/nope?sig=x`, { method: 'PUT', body: new Uint8Array(2000) }));
      expect(put.status).not.toBe(413);
      expect((await pm(new Request(`${H}/api/v3/blobs/nope?sig=x`, { method: 'PUT', body: new Uint8Array(5000) }))).status).toBe(413);
    });

    it('binary bodies both ways: an upload through a signed link and its download, byte for byte', async () => {
      // A stand-in api serving signed blob links from a memory store (as blob-body.test.ts does for the node handler).
      const secret = new Uint8Array(32).fill(5);
      const store = createMemoryBlobStore();
      const mount = '/api/v3/blobs';
      const blobs = toFetchHandler({
        problem: api.problem,
        handle: (req: HttpRequest) => serveBlobRequest(req, { store, secret, nowMs: () => Date.now(), mount, problem: (code, detail, extras) => api.problem(code, detail, req.url, extras) }),
      }, { bodyLimit: 1024, uploadLimit: 8192 });
      const data = new Uint8Array(4000).map((_, i) => (i * 131 + 17) & 0xff);
      data[0] = 0xc3; // invalid UTF-8 alone: a text round trip would change it
      const exp = Math.floor(Date.now() / 1000) + 60;
      const up = signBlobLink(secret, H + mount, { op: 'put', key: 'team/b1', expiresAt: exp, size: data.length });
      const put = await blobs(new Request(up, { method: 'PUT', body: data, headers: { 'content-type': 'application/octet-stream' } }));
      expect(put.status).toBe(200);
      const down = signBlobLink(secret, H + mount, { op: 'get', key: 'team/b1', expiresAt: exp, fileName: 'data.bin' });
      const got = await blobs(new Request(down));
      expect(got.status).toBe(200);
      expect(got.headers.get('content-type')).toBe('application/octet-stream');
      expect(new Uint8Array(await got.arrayBuffer())).toEqual(data);
    });

    it('the client address: the one given by the runtime, or from clientIp', async () => {
      const seen: (string | undefined)[] = [];
      const spy = { handle: (r: Parameters<Pmapi['handle']>[0]) => (seen.push(r.remoteAddress), api.handle(r)), problem: api.problem };
      await toFetchHandler(spy)(new Request(`${H}/api/v3/members`, { headers: auth() }), { remoteAddress: '10.1.2.3' });
      await toFetchHandler(spy, { clientIp: (req) => req.headers.get('x-real-ip') ?? undefined })(new Request(`${H}/api/v3/members`, { headers: { ...auth(), 'x-real-ip': '203.0.113.9' } }));
      expect(seen).toEqual(['10.1.2.3', '203.0.113.9']);
    });

    it('an unexpected failure is a 500 problem, not a thrown error', async () => {
      const broken = { handle: async () => { throw new Error('boom'); }, problem: api.problem };
      const err = console.error;
      console.error = () => {};
      try {
        const r = await toFetchHandler(broken)(new Request(`${H}/api/v3/members`, { headers: auth() }));
        expect(r.status).toBe(500);
        expect(((await r.json()) as { code: string }).code).toBe('internal_error');
      } finally {
        console.error = err;
      }
    });

    it('the OAuth server\'s paths go to api.oauth.handle when it is mounted', async () => {
      const withAs = await createPmapi({
        store: api.store, rateLimiter: false, secret: 's2',
        oauth: { issuer: H, currentMember: () => null, signInUrl: (r) => `/login?next=${encodeURIComponent(r)}` },
      });
      const f = toFetchHandler(withAs);
      const meta = await f(new Request(`${H}/.well-known/oauth-authorization-server`));
      expect(meta.status).toBe(200);
      expect(((await meta.json()) as { issuer: string }).issuer).toBe(H);
      const t = await f(new Request(`${H}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=nope' }));
      expect(t.status).toBe(400);
      expect(typeof ((await t.json()) as { error: string }).error).toBe('string');
    });

    it('CORS as the node handler: preflight 204 for an allowed origin before auth, the origin on answers, nothing for others', async () => {
      const c = toFetchHandler(api, { cors: { origins: ['https://app.example.com'] } });
      const pre = (origin: string) => new Request(`${H}/api/v3/projects`, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST' } });
      const ok = await c(pre('https://app.example.com'));
      expect(ok.status).toBe(204);
      expect(ok.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
      expect(ok.headers.get('access-control-allow-credentials')).toBeNull();
      expect(ok.headers.get('access-control-max-age')).toBe('600');
      const no = await c(pre('https://evil.example'));
      expect(no.status).toBe(401);
      expect(no.headers.get('access-control-allow-origin')).toBeNull();
      const g = await c(new Request(`${H}/api/v3/members`, { headers: { ...auth(), origin: 'https://app.example.com' } }));
      expect(g.status).toBe(200);
      expect(g.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
      expect((await pm(pre('https://app.example.com'))).status).toBe(401);
    });
  });
}

describe('@pmapi/http-node/fetch: an entry for fetch runtimes', () => {
  it('exports the same toFetchHandler, and neither it nor what it imports loads a node: module', async () => {
    const { readFileSync } = await import('node:fs');
    const sub = await import('@pmapi/http-node/fetch');
    expect(sub.toFetchHandler).toBe(toFetchHandler);
    for (const f of ['fetch.ts', 'cors.ts', 'option-names.ts']) {
      const text = readFileSync(new URL(`../src/${f}`, import.meta.url), 'utf8');
      expect(text, f).not.toMatch(/from\s+['"]node:|require\(['"]node:|from\s+['"](http|net|fs|buffer)['"]/);
      // Only type imports of core, and relative modules from this list.
      for (const m of text.matchAll(/^import\s+(type\s+)?[^;]*?from\s+'([^']+)'/gm)) {
        expect(m[1] !== undefined || m[2] === './cors' || m[2] === './option-names', `${f} imports ${m[2]}`).toBe(true);
      }
    }
  });
});
