import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { createPmapi, type Pmapi } from '@pmapi/core';
import { toNodeHandler } from '@pmapi/http-node';
import { toFetchHandler } from '@pmapi/http-node/fetch';
import { frontEndStores } from './stores';

/**
 * A large page (issue 11) is built in pieces (`bodyParts`) and written piece by
 * piece, never joined into one string. What a client receives must not change:
 * the same bytes as `body`, a Content-Length that counts bytes (the text holds
 * two-, three- and four-byte characters), across the boundaries between pieces,
 * with CORS headers added, and through the fetch front end.
 */
const ORIGIN = 'https://app.example.com';
const TEXT = 'é ü 漢字 😀 "quoted" \\ '.repeat(40);

for (const s of frontEndStores()) {
  describe(`[http-node, ${s.name}] a page built in pieces reaches the client whole`, () => {
    let api: Pmapi;
    let token: string;
    let projectId: string;
    const servers: http.Server[] = [];

    const serve = async (handler: http.RequestListener): Promise<string> => {
      const server = http.createServer(handler);
      servers.push(server);
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    };
    const get = (base: string, path: string, origin?: string) => new Promise<{ status: number; headers: http.IncomingHttpHeaders; bytes: Buffer }>((resolve, reject) => {
      const req = http.request(`${base}${path}`, { agent: false, headers: { authorization: `Bearer ${token}`, 'x-request-id': 'same', ...(origin ? { origin } : {}) } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, bytes: Buffer.concat(chunks) }));
      });
      req.on('error', reject);
      req.end();
    });

    beforeAll(async () => {
      api = await createPmapi({ store: await s.open(), rateLimiter: false });
      const ws = await api.admin.createWorkspace({ name: 'W', owner: { name: 'Owner' } });
      token = (await api.admin.issueToken(ws.ownerMemberId, { scopes: ['read', 'write'] })).token;
      const call = async (method: string, url: string, body?: unknown) => {
        const r = await api.handle({ method, url: `/api/v3${url}`, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
        expect(r.status, String(r.body)).toBeLessThan(300);
        return JSON.parse(r.body as string);
      };
      projectId = (await call('POST', '/projects', { name: 'Large' })).id;
      for (let i = 0; i < 90; i++) await call('POST', '/tasks', { projectId, name: `t${i} ${TEXT.slice(0, 30)}`, description: TEXT, assignees: [ws.ownerMemberId] });
    });
    afterAll(async () => {
      for (const server of servers) await new Promise((r) => server.close(r));
      await api.close();
    });

    const pages = ['limit=200', 'limit=200&expand=assignees,status,project'];

    it('the core answers a large page in flat pieces whose concatenation is its body', async () => {
      for (const q of pages) {
        const out = await api.handle({ method: 'GET', url: `/api/v3/tasks?projectId=${projectId}&${q}`, headers: { authorization: `Bearer ${token}` } });
        expect(out.status).toBe(200);
        const parts = out.bodyParts!;
        expect(parts.length, q).toBeGreaterThan(2);
        // The point of the pieces: none reaches the 128 KiB at which V8 allocates a string apart.
        for (const p of parts) expect(p.length).toBeLessThan(128 * 1024);
        // A page over one piece is built as UTF-8 bytes (off V8's heap), each piece whole characters: decoded one by
        // one, the pieces are the body.
        expect(parts.some((p) => p instanceof Uint8Array), q).toBe(true);
        const body = out.body as string;
        const utf8 = new TextDecoder('utf-8', { fatal: true });
        expect(parts.map((p) => (typeof p === 'string' ? p : utf8.decode(p))).join('')).toBe(body);
        const page = JSON.parse(body);
        expect(page.data).toHaveLength(90);
        expect(page.data.every((t: { description: string }) => t.description === TEXT)).toBe(true);
        expect(page).toMatchObject({ limit: 200, hasMore: false, nextCursor: null });
      }
    });

    it('a page that fits one piece is one string, whichever way the store builds it', async () => {
      for (const q of ['limit=3', 'limit=3&expand=assignees']) {
        const out = await api.handle({ method: 'GET', url: `/api/v3/tasks?projectId=${projectId}&${q}`, headers: { authorization: `Bearer ${token}` } });
        expect(out.status).toBe(200);
        if (!q.includes('expand')) expect(out.bodyParts, q).toBeUndefined();
        expect(typeof out.body).toBe('string');
        expect(JSON.parse(out.body as string).data).toHaveLength(3);
      }
    });

    it('assigning body replaces the pieces; a spread copy keeps the joined body', async () => {
      const out = await api.handle({ method: 'GET', url: `/api/v3/tasks?projectId=${projectId}&limit=200`, headers: { authorization: `Bearer ${token}` } });
      const copy = { ...out };
      expect(copy.body).toBe(out.body);
      expect(JSON.parse(JSON.stringify(out)).body).toBe(out.body);
      out.body = '{"replaced":true}';
      expect(out.body).toBe('{"replaced":true}');
      expect(out.bodyParts).toBeUndefined();
    });

    it('over node:http: the same bytes, Content-Length in bytes, with CORS headers too', async () => {
      const plain = await serve(toNodeHandler(api));
      const cors = await serve(toNodeHandler(api, { cors: { origins: [ORIGIN] } }));
      for (const q of pages) {
        const path = `/api/v3/tasks?projectId=${projectId}&${q}`;
        const expected = Buffer.from((await api.handle({ method: 'GET', url: path, headers: { authorization: `Bearer ${token}`, 'x-request-id': 'same' } })).body as string);
        for (const [base, origin] of [[plain, undefined], [cors, ORIGIN]] as const) {
          const r = await get(base, path, origin);
          expect(r.status).toBe(200);
          expect(Number(r.headers['content-length'])).toBe(expected.length);
          expect(r.bytes.equals(expected), `${q} ${origin ?? ''}`).toBe(true);
          if (origin) expect(r.headers['access-control-allow-origin']).toBe(ORIGIN);
        }
      }
    });

    it("many expanded pages at once over node:http: each client gets its own page's bytes, and each answer's pieces are handed back once it is written", async () => {
      // Pieces' memory serves later answers once handed back (HttpResponse.release): handed back before the socket
      // took every byte, another page would overwrite one still being sent. Different limits give different bytes.
      const released: number[] = [];
      let answers = 0;
      const counting = {
        ...api,
        basePath: api.basePath,
        handle: async (r: Parameters<Pmapi['handle']>[0]) => {
          const out = await api.handle(r);
          const release = out.release;
          if (release) {
            const n = answers++;
            out.release = function (this: typeof out) {
              released.push(n);
              release.call(this);
            };
          }
          return out;
        },
      } as Pmapi;
      const base = await serve(toNodeHandler(counting));
      const limits = Array.from({ length: 24 }, (_, i) => 40 + i * 2);
      const path = (limit: number) => `/api/v3/tasks?projectId=${projectId}&limit=${limit}&expand=assignees,status,project`;
      const expected = new Map<number, string>();
      for (const limit of limits) {
        const body = (await api.handle({ method: 'GET', url: path(limit), headers: { authorization: `Bearer ${token}` } })).body as string;
        expected.set(limit, body.replace(/"nextCursor":"[^"]+"/, '"nextCursor":"…"'));
      }
      // A client that reads nothing for a while, its pages pipelined on one connection: more than the kernel holds
      // (about 2 MB here) waits in the server's socket while the other pages are built, and must still arrive whole.
      const slowPath = `/api/v3/tasks?projectId=${projectId}&limit=200&expand=assignees,status,project`;
      const slowExpected = ((await api.handle({ method: 'GET', url: slowPath, headers: { authorization: `Bearer ${token}` } })).body as string).replace(/"nextCursor":"[^"]+"/, '"nextCursor":"…"');
      const PIPELINED = 12;
      let started!: () => void;
      const firstBytes = new Promise<void>((r) => (started = r));
      const slow = new Promise<Buffer>((resolve, reject) => {
        const socket = net.connect(Number(new URL(base).port), '127.0.0.1', () => {
          for (let i = 0; i < PIPELINED; i++) {
            socket.write(`GET ${slowPath} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\n${i === PIPELINED - 1 ? 'Connection: close\r\n' : ''}\r\n`);
          }
        });
        const chunks: Buffer[] = [];
        socket.on('data', (c: Buffer) => {
          chunks.push(c);
          if (chunks.length === 1) {
            socket.pause();
            setTimeout(() => socket.resume(), 500);
            // The other pages are built while these wait (all twelve answered by then: Node queues them in order).
            setTimeout(started, 50);
          }
        });
        socket.on('end', () => resolve(Buffer.concat(chunks)));
        socket.on('error', reject);
      });
      await firstBytes;
      for (let round = 0; round < 3; round++) {
        const got = await Promise.all(limits.map((limit) => get(base, path(limit))));
        got.forEach((r, i) => {
          expect(r.status).toBe(200);
          // The next cursor carries the instant it was made: everything else is byte for byte the page's.
          const text = new TextDecoder('utf-8', { fatal: true }).decode(r.bytes).replace(/"nextCursor":"[^"]+"/, '"nextCursor":"…"');
          expect(text === expected.get(limits[i]!), `limit ${limits[i]} round ${round}`).toBe(true);
        });
      }
      let raw = await slow;
      for (let i = 0; i < PIPELINED; i++) {
        const headEnd = raw.indexOf('\r\n\r\n');
        const length = Number(/content-length: (\d+)/i.exec(raw.subarray(0, headEnd).toString())![1]);
        const body = raw.subarray(headEnd + 4, headEnd + 4 + length);
        expect(body.length).toBeGreaterThan(300_000);
        const text = new TextDecoder('utf-8', { fatal: true }).decode(body).replace(/"nextCursor":"[^"]+"/, '"nextCursor":"…"');
        expect(text === slowExpected, `pipelined page ${i}`).toBe(true);
        raw = raw.subarray(headEnd + 4 + length);
      }
      expect(raw.length).toBe(0);
      expect(answers).toBe(limits.length * 3 + PIPELINED);
      expect([...released].sort((a, b) => a - b)).toEqual(Array.from({ length: answers }, (_, i) => i));
    });

    it('through the fetch front end: the same bytes', async () => {
      const fetchHandler = toFetchHandler(api);
      for (const q of pages) {
        const path = `/api/v3/tasks?projectId=${projectId}&${q}`;
        const expected = Buffer.from((await api.handle({ method: 'GET', url: path, headers: { authorization: `Bearer ${token}`, 'x-request-id': 'same' } })).body as string);
        const res = await fetchHandler(new Request(`http://127.0.0.1${path}`, { headers: { authorization: `Bearer ${token}`, 'x-request-id': 'same' } }));
        expect(res.status).toBe(200);
        expect(res.headers.get('content-type')).toMatch(/^application\/json/);
        expect(Buffer.from(await res.arrayBuffer()).equals(expected), q).toBe(true);
      }
    });
  });
}
