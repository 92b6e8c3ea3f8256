import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createMemoryBlobStore, errorCodes, serveBlobRequest, signBlobLink,
  type ErrorCode, type HttpRequest, type HttpResponse,
} from '@pmapi/core';
import { toNodeHandler } from '@pmapi/http-node';

/**
 * Binary bodies through a real node:http server on 127.0.0.1: a download's
 * Uint8Array body arrives byte for byte, and PUT (blob uploads) has its own
 * body limit. The api is a minimal stand-in whose `handle` serves signed blob
 * links from a memory store.
 */
describe('http-node: binary bodies and the upload limit', () => {
  const secret = new Uint8Array(32).fill(3);
  const mount = '/api/v3/blobs';
  const store = createMemoryBlobStore();
  const problem = (code: ErrorCode, detail: string, url: string, extras: Record<string, unknown> = {}): HttpResponse => ({
    status: errorCodes[code].status,
    headers: { 'content-type': 'application/json; charset=utf-8' },
    body: JSON.stringify({ type: code, code, detail, instance: url.split('?')[0], ...extras }),
  });
  const api = {
    problem,
    handle: (req: HttpRequest) =>
      serveBlobRequest(req, { store, secret, nowMs: () => Date.now(), mount, problem: (code, detail, extras) => problem(code, detail, req.url, extras) }),
  };
  let server: http.Server;
  let base: string;
  const exp = () => Math.floor(Date.now() / 1000) + 60;

  beforeAll(async () => {
    server = http.createServer(toNodeHandler(api, { bodyLimit: 1024, uploadLimit: 8192 }));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  const bytes = (n: number) => {
    const b = new Uint8Array(n);
    for (let i = 0; i < n; i++) b[i] = (i * 131 + 17) & 0xff;
    b[0] = 0xc3; // invalid UTF-8 on its own: any text round trip would change it
    b[1] = 0x00;
    return b;
  };

  it('a PUT above bodyLimit but within uploadLimit is stored, and the GET answers the very same bytes', async () => {
    const data = bytes(4000);
    const up = signBlobLink(secret, base + mount, { op: 'put', key: 'team/blob1', expiresAt: exp(), size: data.length });
    const r = await fetch(up, { method: 'PUT', body: data, headers: { 'content-type': 'application/octet-stream' } });
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ uploaded: true, size: 4000 });

    const down = signBlobLink(secret, base + mount, { op: 'get', key: 'team/blob1', expiresAt: exp(), fileName: 'data.bin' });
    const g = await fetch(down);
    expect(g.status).toBe(200);
    expect(g.headers.get('content-type')).toBe('application/octet-stream');
    expect(g.headers.get('content-length')).toBe('4000');
    expect(g.headers.get('x-content-type-options')).toBe('nosniff');
    const got = new Uint8Array(await g.arrayBuffer());
    expect(Buffer.from(got).equals(Buffer.from(data))).toBe(true);

    const h = await fetch(down, { method: 'HEAD' });
    expect(h.status).toBe(200);
    expect((await h.arrayBuffer()).byteLength).toBe(0);
  });

  it('a PUT above uploadLimit is 413, declared or streamed', async () => {
    const data = bytes(9000);
    const up = signBlobLink(secret, base + mount, { op: 'put', key: 'team/big', expiresAt: exp(), size: data.length });
    const r = await fetch(up, { method: 'PUT', body: data });
    expect(r.status).toBe(413);
    expect(((await r.json()) as { code: string; limit: number })).toMatchObject({ code: 'payload_too_large', limit: 8192 });

    // Chunked, no Content-Length: cut off while reading.
    const u = new URL(up);
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port: u.port, method: 'PUT', path: u.pathname + u.search, headers: { 'transfer-encoding': 'chunked' } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      for (let i = 0; i < 9; i++) req.write(data.subarray(i * 1000, (i + 1) * 1000));
      req.end();
    });
    expect(status).toBe(413);
    expect(await store.get('team/big')).toBeUndefined();
  });

  it('other methods keep bodyLimit', async () => {
    const r = await fetch(`${base}${mount}/team/x`, { method: 'POST', body: bytes(2000) });
    expect(r.status).toBe(413);
    expect(((await r.json()) as { limit: number }).limit).toBe(1024);
  });
});
