import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMemoryBlobStore, createPmapi, errorCodes, type Pmapi } from '@pmapi/core';
import { toFetchHandler, toNodeHandler } from '@pmapi/http-node';
import { frontEndStores } from './stores';

// Issue 16 "Mountable anywhere": paths pmapi writes back (problem instance and docsUrl, the retired path's
// Link, the legacy versioning Link) carry the host's mount prefix, through toNodeHandler and toFetchHandler.
// Issue 17: the default docsUrl and versioning Link lead to real reference pages, served by the API itself.

const H = 'http://pm.test';

/** What Express/Connect do for `app.use(prefix, mw)`: strip the prefix from req.url, keep req.originalUrl. */
function mountAt(prefix: string, mw: ReturnType<typeof toNodeHandler>): http.RequestListener {
  return (req: IncomingMessage, res: ServerResponse) => {
    const url = req.url ?? '/';
    const fallthrough = () => {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('host 404');
    };
    if (!url.startsWith(`${prefix}/`)) return fallthrough();
    Object.assign(req, { originalUrl: url, baseUrl: prefix, url: url.slice(prefix.length) });
    mw(req, res, fallthrough);
  };
}

for (const { name, open } of frontEndStores()) {
  describe(`[${name}] paths written under a mount, and the reference pages`, () => {
    let api: Pmapi;
    let token: string;
    const servers: http.Server[] = [];
    beforeAll(async () => {
      api = await createPmapi({ store: await open(), rateLimiter: false });
      const ws = await api.admin.createWorkspace({ name: 'Acme', owner: { name: 'Ada' } });
      token = (await api.admin.issueToken(ws.ownerMemberId, { scopes: ['read', 'write', 'delete'] })).token;
    });
    afterAll(async () => {
      for (const s of servers) s.close();
      await api.close();
    });
    const auth = () => ({ authorization: `Bearer ${token}` });
    const serve = async (h: http.RequestListener) => {
      const server = http.createServer(h);
      servers.push(server);
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    };

    it('toFetchHandler({ mount: "/pm" }), full URLs (Hono app.all("/pm/*")): instance, docsUrl and Links carry /pm and resolve', async () => {
      const pm = toFetchHandler(api, { mount: '/pm' });
      const r = await pm(new Request(`${H}/pm/api/v3/projects/0000nope`, { headers: auth() }));
      expect(r.status).toBe(404);
      const p = (await r.json()) as { instance: string; docsUrl: string };
      expect(p.instance).toBe('/pm/api/v3/projects/0000nope');
      expect(p.docsUrl).toBe('/pm/api/v3/errors/resource_not_found');
      const page = await pm(new Request(new URL(p.docsUrl, H)));
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('resource_not_found');
      const retired = await pm(new Request(`${H}/pm/api/v3/task-groups`, { headers: auth() }));
      expect(retired.headers.get('link')).toBe('</pm/api/v3/statuses>; rel="successor-version"');
      const legacy = await pm(new Request(`${H}/pm/api/v1.0/members`, { headers: auth() }));
      expect(legacy.status).toBe(200);
      expect(legacy.headers.get('link')).toBe('</pm/api/v3/versioning>; rel="deprecation"');
      expect((await pm(new Request(`${H}/pm/api/v3/versioning`))).status).toBe(200);
      // The front end's own problems too (413).
      const big = await toFetchHandler(api, { mount: '/pm', bodyLimit: 10 })(new Request(`${H}/pm/api/v3/projects`, { method: 'POST', headers: { ...auth(), 'content-type': 'application/json' }, body: '{"name":"a long name"}' }));
      expect(big.status).toBe(413);
      expect(((await big.json()) as { instance: string }).instance).toBe('/pm/api/v3/projects');
    });

    it('toFetchHandler({ mount }) behind a framework that strips the prefix (Hono app.mount): same answers', async () => {
      const pm = toFetchHandler(api, { mount: '/pm/' });
      const r = await pm(new Request(`${H}/api/v3/projects/0000nope`, { headers: auth() }));
      const p = (await r.json()) as { instance: string; docsUrl: string };
      expect(p.instance).toBe('/pm/api/v3/projects/0000nope');
      expect(p.docsUrl).toBe('/pm/api/v3/errors/resource_not_found');
      expect(() => toFetchHandler(api, { mount: 'pm' })).toThrow(/mount must start with "\/"/);
    });

    it('toNodeHandler under a /pm mount (Connect-style): instance and docsUrl carry /pm; at the root they do not', async () => {
      const mounted = await serve(mountAt('/pm', toNodeHandler(api)));
      const r = await fetch(`${mounted}/pm/api/v3/projects?limit=nope`, { headers: auth() });
      expect(r.status).toBe(400);
      const p = (await r.json()) as { instance: string; docsUrl: string; code: string };
      expect(p.instance).toBe('/pm/api/v3/projects');
      expect(p.docsUrl).toBe(`/pm/api/v3/errors/${p.code}`);
      expect((await fetch(new URL(p.docsUrl, mounted))).status).toBe(200);
      const root = await serve(toNodeHandler(api));
      const q = (await (await fetch(`${root}/api/v3/projects/0000nope`, { headers: auth() })).json()) as { instance: string; docsUrl: string };
      expect(q.instance).toBe('/api/v3/projects/0000nope');
      expect(q.docsUrl).toBe('/api/v3/errors/resource_not_found');
    });

    it('pmapi\'s own file links (no publicUrl) carry the mount, and bytes go up and come back through it', async () => {
      const withFiles = await createPmapi({ store: api.store, rateLimiter: false, secret: 's', files: { store: createMemoryBlobStore() } });
      const base = await serve(mountAt('/pm', toNodeHandler(withFiles)));
      const json = { ...auth(), 'content-type': 'application/json' };
      const project = (await (await fetch(`${base}/pm/api/v3/projects`, { method: 'POST', headers: json, body: JSON.stringify({ name: 'Files' }) })).json()) as { id: string };
      const slot = (await (await fetch(`${base}/pm/api/v3/files/upload-url`, { method: 'POST', headers: json, body: JSON.stringify({ size: 5 }) })).json()) as { url: string; uploadKey: string };
      expect(slot.url.startsWith('/pm/api/v3/blobs/'), slot.url).toBe(true);
      expect((await fetch(new URL(slot.url, base), { method: 'PUT', body: 'hello' })).status).toBe(200);
      const created = await fetch(`${base}/pm/api/v3/files`, { method: 'POST', headers: json, body: JSON.stringify({ uploadKey: slot.uploadKey, name: 'a.txt', size: 5, projectId: project.id }) });
      expect(created.status).toBe(201);
      const file = (await created.json()) as { url: string; download: string };
      expect(file.download.startsWith('/pm/api/v3/blobs/'), file.download).toBe(true);
      expect(await (await fetch(new URL(file.download, base))).text()).toBe('hello');
      // At the root, the same file's links have no prefix; with publicUrl set, that is used as given.
      const root = await serve(toNodeHandler(withFiles));
      const again = (await (await fetch(`${root}/api/v3/files/${(file as unknown as { id: string }).id}`, { headers: auth() })).json()) as { url: string };
      expect(again.url.startsWith('/api/v3/blobs/'), again.url).toBe(true);
      const pub = await createPmapi({ store: api.store, rateLimiter: false, secret: 's', files: { store: createMemoryBlobStore(), publicUrl: 'https://app.example.com/pm' } });
      const viaPub = (await (await toFetchHandler(pub, { mount: '/pm' })(new Request(`${H}/pm/api/v3/files/upload-url`, { method: 'POST', headers: json, body: JSON.stringify({ size: 5 }) }))).json()) as { url: string };
      expect(viaPub.url.startsWith('https://app.example.com/pm/api/v3/blobs/'), viaPub.url).toBe(true);
    });

    it('a docsBaseUrl set by the host is used as given (absolute), mount or not', async () => {
      const withDocs = await createPmapi({ store: api.store, rateLimiter: false, secret: 's', docsBaseUrl: 'https://docs.example.com/pm/' });
      const pm = toFetchHandler(withDocs, { mount: '/pm' });
      const p = (await (await pm(new Request(`${H}/pm/api/v3/projects/0000nope`, { headers: auth() }))).json()) as { instance: string; docsUrl: string };
      expect(p.docsUrl).toBe('https://docs.example.com/pm/errors/resource_not_found');
      expect(p.instance).toBe('/pm/api/v3/projects/0000nope');
      const legacy = await pm(new Request(`${H}/pm/api/v1.0/members`, { headers: auth() }));
      expect(legacy.headers.get('link')).toBe('<https://docs.example.com/pm/versioning>; rel="deprecation"');
    });

    it('reference pages: every code has one (HTML, or Markdown on request), no auth; unknown codes and other methods refused', async () => {
      const pm = toFetchHandler(api);
      for (const code of Object.keys(errorCodes)) {
        const r = await pm(new Request(`${H}/api/v3/errors/${code}`));
        expect(r.status, code).toBe(200);
        const html = await r.text();
        expect(html).toContain(`<h1><code>${code}</code></h1>`);
        expect(html).toContain(`HTTP ${errorCodes[code as keyof typeof errorCodes].status}`);
      }
      const md = await pm(new Request(`${H}/api/v3/errors/stale_write`, { headers: { accept: 'text/markdown' } }));
      expect(md.headers.get('content-type')).toBe('text/markdown; charset=utf-8');
      expect(await md.text()).toMatch(/^# `stale_write`\n\nHTTP 409/);
      const index = await pm(new Request(`${H}/api/v3/errors`));
      expect(index.status).toBe(200);
      expect(await index.text()).toContain('href="errors/rate_limited"');
      const head = await pm(new Request(`${H}/api/v3/errors/conflict`, { method: 'HEAD' }));
      expect(head.status).toBe(200);
      const unknown = await pm(new Request(`${H}/api/v3/errors/no_such_code`));
      expect(unknown.status).toBe(404);
      expect(((await unknown.json()) as { code: string }).code).toBe('route_not_found');
      const post = await pm(new Request(`${H}/api/v3/errors/conflict`, { method: 'POST' }));
      expect(post.status).toBe(405);
      expect(post.headers.get('allow')).toBe('GET, HEAD');
    });

    it('the docsUrl of real problems (401, 400, 404, 405, 415) resolves to a 200 page about that code', async () => {
      const pm = toFetchHandler(api);
      const cases: [RequestInit & { path: string }, string][] = [
        [{ path: '/api/v3/members' }, 'unauthorized'],
        [{ path: '/api/v3/tasks?sort=nope', headers: auth() }, 'sort_field_invalid'],
        [{ path: '/api/v3/nothings', headers: auth() }, 'resource_unknown'],
        [{ path: '/api/v3/members', method: 'PUT', headers: auth() }, 'method_not_allowed'],
        [{ path: '/api/v3/projects', method: 'POST', headers: { ...auth(), 'content-type': 'text/plain' }, body: 'x' }, 'unsupported_media_type'],
      ];
      for (const [{ path, ...init }, code] of cases) {
        const p = (await (await pm(new Request(`${H}${path}`, init))).json()) as { code: string; docsUrl: string };
        expect(p.code).toBe(code);
        const page = await pm(new Request(new URL(p.docsUrl, `${H}${path}`)));
        expect(page.status, p.docsUrl).toBe(200);
        expect(await page.text()).toContain(`<code>${code}</code>`);
      }
    });
  });
}
