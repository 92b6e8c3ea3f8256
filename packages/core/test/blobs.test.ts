import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BLOB_KEY_PATTERN, createDirectoryBlobStore, createMemoryBlobStore, serveBlobRequest, signBlobLink, verifyBlobLink,
  errorCodes, type BlobLink, type BlobStore, type ErrorCode, type HttpRequest, type HttpResponse,
} from '@pmapi/core';

const secret = new Uint8Array(32).fill(7);
const binary = () => {
  const b = new Uint8Array(1024);
  for (let i = 0; i < b.length; i++) b[i] = (i * 31 + 7) & 0xff;
  b[0] = 0;
  b[1] = 0xff;
  b[2] = 0xc3; // a lone UTF-8 lead byte: mangled by any text decoding
  return b;
};

const TRAVERSAL = ['../x', 'a/../../b', '/abs', '', 'a/b/c/d/e', 'a//b', 'a/', '.', '..', 'a\\b', 'a/b.c', 'x'.repeat(129), 'a b', 'é'];

function storeContract(name: string, make: () => Promise<BlobStore>) {
  describe(`${name} store`, () => {
    it('round-trips binary bytes, replaces, sizes and deletes', async () => {
      const s = await make();
      const bytes = binary();
      await s.put('team1/abc-DEF_123', bytes);
      expect(await s.get('team1/abc-DEF_123')).toEqual(bytes);
      expect(await s.size('team1/abc-DEF_123')).toBe(1024);
      await s.put('team1/abc-DEF_123', new Uint8Array([1, 2, 3]));
      expect(Array.from((await s.get('team1/abc-DEF_123'))!)).toEqual([1, 2, 3]);
      expect(await s.size('team1/abc-DEF_123')).toBe(3);
      await s.put('empty', new Uint8Array(0));
      expect((await s.get('empty'))!.byteLength).toBe(0);
      expect(await s.size('empty')).toBe(0);
      await s.delete('team1/abc-DEF_123');
      expect(await s.get('team1/abc-DEF_123')).toBeUndefined();
      expect(await s.size('team1/abc-DEF_123')).toBeUndefined();
    });

    it('copies bytes: changing the caller buffer changes nothing stored', async () => {
      const s = await make();
      const bytes = new Uint8Array([1, 2, 3]);
      await s.put('k', bytes);
      bytes[0] = 99;
      const out = (await s.get('k'))!;
      expect(out[0]).toBe(1);
      out[1] = 99;
      expect((await s.get('k'))![1]).toBe(2);
    });

    it('missing keys: get and size undefined, delete is no error', async () => {
      const s = await make();
      expect(await s.get('nope')).toBeUndefined();
      expect(await s.size('nope/deeper/still')).toBeUndefined();
      await expect(s.delete('nope/x')).resolves.toBeUndefined();
      // A key below one that is a blob (a file where a directory would be), and a key that is only a prefix.
      await s.put('p/q', new Uint8Array([1]));
      expect(await s.get('p/q/r')).toBeUndefined();
      expect(await s.get('p')).toBeUndefined();
      expect(await s.size('p')).toBeUndefined();
      await expect(s.delete('p')).resolves.toBeUndefined();
      await expect(s.delete('p/q/r')).resolves.toBeUndefined();
      expect(await s.size('p/q')).toBe(1);
    });

    it('refuses keys outside the pattern in every method', async () => {
      const s = await make();
      for (const key of TRAVERSAL) {
        expect(BLOB_KEY_PATTERN.test(key), key).toBe(false);
        await expect(s.put(key, new Uint8Array([1])), key).rejects.toThrow(/Invalid blob key/);
        await expect(s.get(key), key).rejects.toThrow(/Invalid blob key/);
        await expect(s.size(key), key).rejects.toThrow(/Invalid blob key/);
        await expect(s.delete(key), key).rejects.toThrow(/Invalid blob key/);
      }
      expect(BLOB_KEY_PATTERN.test('a/b/c/d')).toBe(true);
      expect(BLOB_KEY_PATTERN.test('x'.repeat(128))).toBe(true);
    });
  });
}

storeContract('memory', async () => createMemoryBlobStore());

describe('directory store on disk', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pmapi-blobs-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  let n = 0;
  storeContract('directory', async () => createDirectoryBlobStore(join(dir, `s${n++}`, 'nested')));

  it('has kind local, keeps key k at dir/k, and leaves no temporary file behind', async () => {
    const root = join(dir, 'layout');
    const s = createDirectoryBlobStore(root);
    expect(s.kind).toBe('local');
    expect(createMemoryBlobStore().kind).toBe('memory');
    await s.put('team/one', binary());
    await s.put('team/one', binary());
    expect(await readdir(join(root, 'team'))).toEqual(['one']);
  });

  it('a file next to the store directory is out of reach', async () => {
    const root = join(dir, 'jail');
    await writeFile(join(dir, 'secret'), 'top secret');
    const s = createDirectoryBlobStore(root);
    await expect(s.get('../secret')).rejects.toThrow();
    expect(await s.get('secret')).toBeUndefined();
  });
});

describe('signed links', () => {
  const put: BlobLink = { op: 'put', key: 'team/abc', expiresAt: 2_000_000_000, size: 1024 };
  const get: BlobLink = { op: 'get', key: 'team/abc', expiresAt: 2_000_000_000, fileName: 'Résumé "final".pdf', disposition: 'inline' };
  const parse = (url: string) => {
    const u = new URL(url, 'http://x');
    return { key: u.pathname.replace(/^\/api\/v3\/blobs\//, ''), query: u.searchParams };
  };

  it('signs a URL under base and verifies back to the same link', () => {
    const url = signBlobLink(secret, 'http://127.0.0.1:3000/api/v3/blobs/', put);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:3000\/api\/v3\/blobs\/team\/abc\?op=put&exp=2000000000&size=1024&sig=[0-9a-f]{64}$/);
    expect(verifyBlobLink(secret, parse(url), 1_000)).toEqual({ ok: true, link: put });
    const g = signBlobLink(secret, '/api/v3/blobs', get);
    expect(g.startsWith('/api/v3/blobs/team/abc?op=get&exp=2000000000&name=')).toBe(true);
    expect(verifyBlobLink(secret, parse(g), 1_000)).toEqual({ ok: true, link: get });
  });

  it('any changed field fails the signature', () => {
    const p = parse(signBlobLink(secret, '/api/v3/blobs', put));
    const g = parse(signBlobLink(secret, '/api/v3/blobs', get));
    const tamper = (base: typeof p, f: (q: URLSearchParams) => void, key = base.key) => {
      const query = new URLSearchParams(base.query);
      f(query);
      return verifyBlobLink(secret, { key, query }, 1_000);
    };
    const bad = { ok: false, reason: 'bad_signature' };
    expect(tamper(p, () => {}, 'team/abd')).toEqual(bad);
    expect(tamper(p, (q) => q.set('op', 'get'))).toEqual(bad);
    expect(tamper(p, (q) => q.set('exp', '2000000001'))).toEqual(bad);
    expect(tamper(p, (q) => q.set('size', '1025'))).toEqual(bad);
    expect(tamper(p, (q) => q.set('name', 'x.pdf'))).toEqual(bad);
    expect(tamper(p, (q) => q.set('disp', 'inline'))).toEqual(bad);
    expect(tamper(g, (q) => q.set('name', 'Resume "final".pdf'))).toEqual(bad);
    expect(tamper(g, (q) => q.set('disp', 'attachment'))).toEqual(bad);
    expect(tamper(g, (q) => q.delete('disp'))).toEqual(bad);
    expect(tamper(g, (q) => q.delete('name'))).toEqual(bad);
    expect(tamper(g, (q) => q.set('size', '0'))).toEqual(bad);
    const sig = p.query.get('sig')!;
    expect(tamper(p, (q) => q.set('sig', (sig[0] === 'a' ? 'b' : 'a') + sig.slice(1)))).toEqual(bad);
    expect(tamper(p, (q) => q.set('sig', sig.toUpperCase()))).toEqual({ ok: true, link: put });
    // Another secret.
    expect(verifyBlobLink(new Uint8Array(32).fill(8), p, 1_000)).toEqual(bad);
    // Unknown parameters are not signed and change nothing.
    expect(tamper(p, (q) => q.set('utm', '1')).ok).toBe(true);
  });

  it('expires at exactly exp', () => {
    const p = parse(signBlobLink(secret, '/api/v3/blobs', put));
    expect(verifyBlobLink(secret, p, 1_999_999_999).ok).toBe(true);
    expect(verifyBlobLink(secret, p, 2_000_000_000)).toEqual({ ok: false, reason: 'expired' });
    expect(verifyBlobLink(secret, p, 2_000_000_001)).toEqual({ ok: false, reason: 'expired' });
    // A forged exp is a bad signature, not a fresh link.
    const q = new URLSearchParams(p.query);
    q.set('exp', '3000000000');
    expect(verifyBlobLink(secret, { key: p.key, query: q }, 2_500_000_000)).toEqual({ ok: false, reason: 'bad_signature' });
  });

  it('malformed links', () => {
    const p = parse(signBlobLink(secret, '/api/v3/blobs', put));
    const malformed = { ok: false, reason: 'malformed' };
    const with_ = (f: (q: URLSearchParams) => void, key = p.key) => {
      const query = new URLSearchParams(p.query);
      f(query);
      return verifyBlobLink(secret, { key, query }, 1_000);
    };
    for (const exp of ['', '1.5', '-1', '1e9', ' 1', '0x10', '01', '9'.repeat(16)]) expect(with_((q) => q.set('exp', exp)), exp).toEqual(malformed);
    for (const size of ['', '-1', '1.0', 'abc']) expect(with_((q) => q.set('size', size)), size).toEqual(malformed);
    expect(with_((q) => q.delete('size'))).toEqual(malformed);
    expect(with_((q) => q.delete('op'))).toEqual(malformed);
    expect(with_((q) => q.set('op', 'delete'))).toEqual(malformed);
    expect(with_((q) => q.set('disp', 'download'))).toEqual(malformed);
    expect(with_((q) => q.set('name', ''))).toEqual(malformed);
    expect(with_((q) => q.delete('sig'))).toEqual(malformed);
    expect(with_((q) => q.set('sig', 'abc'))).toEqual(malformed);
    expect(with_((q) => q.set('sig', 'z'.repeat(64)))).toEqual(malformed);
    expect(with_((q) => q.append('exp', '2000000000'))).toEqual(malformed);
    expect(with_(() => {}, '../team/abc')).toEqual(malformed);
    expect(with_(() => {}, '')).toEqual(malformed);
  });

  it('signing refuses what a link cannot carry', () => {
    expect(() => signBlobLink(secret, '/b', { ...put, key: '../x' })).toThrow();
    expect(() => signBlobLink(secret, '/b', { op: 'put', key: 'k', expiresAt: 10 })).toThrow(/size/);
    expect(() => signBlobLink(secret, '/b', { ...put, expiresAt: 1.5 })).toThrow();
    expect(() => signBlobLink(secret, '/b', { ...put, size: -1 })).toThrow();
    expect(() => signBlobLink(new Uint8Array(4), '/b', put)).toThrow(/secret/);
  });
});

describe('serveBlobRequest', () => {
  const mount = '/api/v3/blobs';
  let now = 1_000_000 * 1000;
  const problem = (code: ErrorCode, detail: string, extras: Record<string, unknown> = {}): HttpResponse => ({
    status: errorCodes[code].status,
    headers: { 'content-type': 'application/json; charset=utf-8' },
    body: JSON.stringify({ type: code, code, detail, ...extras }),
  });
  const store = createMemoryBlobStore();
  const deps = { store, secret, nowMs: () => now, mount, problem };
  const exp = (s: number) => Math.floor(now / 1000) + s;
  const call = (method: string, url: string, body?: HttpRequest['body']) => serveBlobRequest({ method, url, headers: {}, body }, deps);
  const json = (r: HttpResponse) => JSON.parse(r.body as string);

  it('PUT then GET round-trips bytes exactly', async () => {
    const bytes = binary();
    const up = signBlobLink(secret, mount, { op: 'put', key: 't/file1', expiresAt: exp(60), size: bytes.length });
    const r = await call('PUT', up, bytes);
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toMatch(/^application\/json/);
    expect(json(r)).toEqual({ uploaded: true, size: 1024 });

    const down = signBlobLink(secret, mount, { op: 'get', key: 't/file1', expiresAt: exp(300), fileName: 'photo.PNG', disposition: 'inline' });
    const g = await call('GET', down);
    expect(g.status).toBe(200);
    expect(g.body).toBeInstanceOf(Uint8Array);
    expect(Buffer.from(g.body as Uint8Array).equals(Buffer.from(bytes))).toBe(true);
    expect(g.headers).toEqual({
      'content-type': 'image/png',
      'content-disposition': `inline; filename="photo.PNG"; filename*=UTF-8''photo.PNG`,
      'x-content-type-options': 'nosniff',
      'cache-control': 'private, max-age=300',
    });
  });

  it('string and absent PUT bodies count their UTF-8 bytes', async () => {
    const s = 'héllo';
    const r = await call('PUT', signBlobLink(secret, mount, { op: 'put', key: 't/str', expiresAt: exp(60), size: 6 }), s);
    expect(r.status).toBe(200);
    expect(new TextDecoder().decode((await store.get('t/str'))!)).toBe(s);
    const e = await call('PUT', signBlobLink(secret, mount, { op: 'put', key: 't/empty', expiresAt: exp(60), size: 0 }));
    expect(json(e)).toEqual({ uploaded: true, size: 0 });
  });

  it('a body of another size is 400 validation_failed size_mismatch, and nothing is stored', async () => {
    const url = signBlobLink(secret, mount, { op: 'put', key: 't/sized', expiresAt: exp(60), size: 10 });
    for (const body of [new Uint8Array(9), new Uint8Array(11), undefined]) {
      const r = await call('PUT', url, body);
      expect(r.status).toBe(400);
      expect(json(r)).toMatchObject({ code: 'validation_failed', errors: [{ field: 'body', code: 'size_mismatch', message: expect.any(String) }] });
    }
    expect(await store.get('t/sized')).toBeUndefined();
  });

  it('expired links are 403 link_expired, tampered ones 403 link_invalid', async () => {
    const url = signBlobLink(secret, mount, { op: 'get', key: 't/file1', expiresAt: exp(10) });
    now += 10_000;
    const r = await call('GET', url);
    expect(r.status).toBe(403);
    expect(json(r).code).toBe('link_expired');
    now -= 10_000;
    const t = await call('GET', url.replace('t/file1', 't/file2'));
    expect(r.status).toBe(403);
    expect(json(t).code).toBe('link_invalid');
    const m = await call('GET', url.replace(/&sig=.*/, ''));
    expect(json(m).code).toBe('link_invalid');
    const tampered = await call('PUT', signBlobLink(secret, mount, { op: 'put', key: 't/file1', expiresAt: exp(60), size: 3 }).replace('size=3', 'size=4'), new Uint8Array(4));
    expect(tampered.status).toBe(403);
    expect(json(tampered).code).toBe('link_invalid');
    expect(errorCodes.link_invalid.status).toBe(403);
    expect(errorCodes.link_expired.status).toBe(403);
  });

  it('a get link used to PUT, or a put link used to GET, is 403 link_invalid', async () => {
    const getLink = signBlobLink(secret, mount, { op: 'get', key: 't/file1', expiresAt: exp(60) });
    const r = await call('PUT', getLink, new Uint8Array(0));
    expect(r.status).toBe(403);
    expect(json(r).code).toBe('link_invalid');
    expect((await store.get('t/file1'))!.length).toBe(1024);
    const putLink = signBlobLink(secret, mount, { op: 'put', key: 't/file1', expiresAt: exp(60), size: 1024 });
    const g = await call('GET', putLink);
    expect(g.status).toBe(403);
    expect(json(g).code).toBe('link_invalid');
  });

  it('HEAD answers the GET headers without a body; missing bytes are 404', async () => {
    const url = signBlobLink(secret, mount, { op: 'get', key: 't/file1', expiresAt: exp(60), fileName: 'a.pdf' });
    const h = await call('HEAD', url);
    expect(h.status).toBe(200);
    expect(h.body).toBeUndefined();
    expect(h.headers['content-type']).toBe('application/pdf');
    expect(h.headers['content-disposition']).toBe('attachment; filename="a.pdf"; filename*=UTF-8\'\'a.pdf');
    expect(h.headers['cache-control']).toBe('private, max-age=60');
    const missing = signBlobLink(secret, mount, { op: 'get', key: 't/none', expiresAt: exp(60) });
    const g = await call('GET', missing);
    expect(g.status).toBe(404);
    expect(json(g).code).toBe('resource_not_found');
    const hm = await call('HEAD', missing);
    expect(hm.status).toBe(404);
    expect(hm.body).toBeUndefined();
  });

  it('serves SVG (and unknown types) as octet-stream, SVG always as an attachment', async () => {
    const svg = await call('GET', signBlobLink(secret, mount, { op: 'get', key: 't/file1', expiresAt: exp(60), fileName: 'logo.svg', disposition: 'inline' }));
    expect(svg.headers['content-type']).toBe('application/octet-stream');
    expect(svg.headers['content-disposition']).toMatch(/^attachment; /);
    expect(svg.headers['x-content-type-options']).toBe('nosniff');
    const html = await call('GET', signBlobLink(secret, mount, { op: 'get', key: 't/file1', expiresAt: exp(60), fileName: 'page.html', disposition: 'inline' }));
    expect(html.headers['content-type']).toBe('application/octet-stream');
    const none = await call('GET', signBlobLink(secret, mount, { op: 'get', key: 't/file1', expiresAt: exp(60) }));
    expect(none.headers['content-type']).toBe('application/octet-stream');
    expect(none.headers['content-disposition']).toBe('attachment');
  });

  it('content-disposition carries a non-ASCII name twice: ASCII-safe quoted and RFC 8187 encoded', async () => {
    const name = 'Résumé "2024" 日本\\語/(1)\r\n.txt';
    const r = await call('GET', signBlobLink(secret, mount, { op: 'get', key: 't/file1', expiresAt: exp(60), fileName: name, disposition: 'attachment' }));
    expect(r.status).toBe(200);
    const cd = r.headers['content-disposition']!;
    expect(cd).toBe(`attachment; filename="R_sum_ _2024_ _____(1)__.txt"; filename*=UTF-8''R%C3%A9sum%C3%A9%20%222024%22%20%E6%97%A5%E6%9C%AC%5C%E8%AA%9E%2F%281%29%0D%0A.txt`);
    expect(/^[\x20-\x7e]*$/.test(cd)).toBe(true);
    expect(decodeURIComponent(cd.split("UTF-8''")[1]!)).toBe(name);
    expect(r.headers['content-type']).toBe('text/plain; charset=utf-8');
  });

  it('other methods are 405 with Allow; paths outside the mount are 404', async () => {
    const url = signBlobLink(secret, mount, { op: 'get', key: 't/file1', expiresAt: exp(60) });
    const r = await call('DELETE', url);
    expect(r.status).toBe(405);
    expect(r.headers.allow).toBe('GET, HEAD, PUT');
    expect(json(r).code).toBe('method_not_allowed');
    expect((await call('GET', url.replace(mount, '/elsewhere'))).status).toBe(404);
    expect(json(await call('GET', `${mount}/t/file1`)).code).toBe('link_invalid');
  });
});
