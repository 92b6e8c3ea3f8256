import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import { UrlFetchError, type UrlFetchFailure } from '@pmapi/core';
import { createUrlFetcher, type HostLookup } from '@pmapi/webhooks';

/** A plain HTTP server on a loopback address recording every request it gets. */
interface Origin {
  url: string;
  port: number;
  hits: string[];
  /** TCP connections accepted (a refused target must not even connect). */
  connections: number;
  handle: (req: IncomingMessage, res: ServerResponse) => void;
  close(): Promise<void>;
}

async function origin(host = '127.0.0.1'): Promise<Origin> {
  const o: Origin = { url: '', port: 0, hits: [], connections: 0, handle: (_req, res) => res.end('ok'), close: async () => {} };
  const server: Server = createServer((req, res) => {
    o.hits.push(req.url ?? '/');
    res.on('error', () => {});
    o.handle(req, res);
  });
  server.on('clientError', () => {});
  server.on('connection', () => {
    o.connections += 1;
  });
  await new Promise<void>((res, rej) => {
    server.once('error', rej);
    server.listen(0, host, res);
  });
  o.port = (server.address() as { port: number }).port;
  o.url = `http://${host.includes(':') ? `[${host}]` : host}:${o.port}`;
  o.close = () =>
    new Promise<void>((res) => {
      server.closeAllConnections();
      server.close(() => res());
    });
  return o;
}

/** Run `p`, expect a UrlFetchError with `reason`, and return it. */
async function failure(p: Promise<unknown>, reason: UrlFetchFailure): Promise<UrlFetchError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(UrlFetchError);
  expect((err as UrlFetchError).reason, (err as Error).message).toBe(reason);
  return err as UrlFetchError;
}

const LIMITS = { maxBytes: 1024 * 1024, timeoutMs: 2_000 };
const REFUSED = 'target refused: not a public address';

describe('createUrlFetcher: fetching (development policy, local origin)', () => {
  let o: Origin;
  const fetcher = createUrlFetcher({ allowPrivateTargets: true });
  beforeAll(async () => {
    o = await origin();
  });
  beforeEach(() => {
    o.hits.length = 0;
  });
  afterAll(async () => {
    await fetcher.close();
    await o.close();
  });

  it('returns the bytes byte-identical (binary) with the content type', async () => {
    const body = Buffer.concat([randomBytes(200_000), Buffer.from([0, 0xff, 0xfe, 0x0d, 0x0a, 0x00])]);
    o.handle = (_req, res) => {
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': String(body.length) });
      res.end(body);
    };
    const r = await fetcher.fetch(`${o.url}/a.png`, LIMITS);
    expect(r.contentType).toBe('image/png');
    expect(r.bytes).toBeInstanceOf(Uint8Array);
    expect(r.bytes.byteLength).toBe(body.length);
    expect(Buffer.from(r.bytes).equals(body)).toBe(true);
    expect(o.hits).toEqual(['/a.png']);
  });

  it('reads a chunked body (no Content-Length) up to exactly maxBytes', async () => {
    const body = randomBytes(4096);
    o.handle = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream; x=1' });
      res.write(body.subarray(0, 1000));
      setTimeout(() => res.end(body.subarray(1000)), 20);
    };
    const r = await fetcher.fetch(`${o.url}/chunked`, { maxBytes: 4096, timeoutMs: 2_000 });
    expect(Buffer.from(r.bytes).equals(body)).toBe(true);
    expect(r.contentType).toBe('application/octet-stream; x=1');
  });

  it('no content type: contentType is absent; an empty body is empty bytes', async () => {
    o.handle = (_req, res) => {
      res.removeHeader('content-type');
      res.writeHead(200);
      res.end();
    };
    const r = await fetcher.fetch(`${o.url}/empty`, LIMITS);
    expect(r.bytes.byteLength).toBe(0);
    expect(r.contentType).toBeUndefined();
  });

  it('sends a GET with the User-Agent pmapi-fetch/1 (or the configured one)', async () => {
    const seen: Array<{ method?: string; ua?: string }> = [];
    o.handle = (req, res) => {
      seen.push({ method: req.method, ua: req.headers['user-agent'] });
      res.end('x');
    };
    await fetcher.fetch(`${o.url}/ua`, LIMITS);
    const custom = createUrlFetcher({ allowPrivateTargets: true, userAgent: 'custom/2' });
    await custom.fetch(`${o.url}/ua`, LIMITS);
    await custom.close();
    expect(seen).toEqual([{ method: 'GET', ua: 'pmapi-fetch/1' }, { method: 'GET', ua: 'custom/2' }]);
  });

  it('a 404 (and any non-2xx) fails with bad_status naming the status', async () => {
    for (const status of [404, 500, 410]) {
      o.handle = (_req, res) => {
        res.writeHead(status, { 'content-type': 'text/plain' });
        res.end('nope');
      };
      const e = await failure(fetcher.fetch(`${o.url}/missing`, LIMITS), 'bad_status');
      expect(e.message).toContain(String(status));
    }
  });

  it('a 302 fails with bad_status and its target is never fetched', async () => {
    o.handle = (req, res) => {
      if (req.url === '/moved') {
        res.writeHead(302, { location: `${o.url}/target` });
        res.end();
      } else res.end('target');
    };
    const e = await failure(fetcher.fetch(`${o.url}/moved`, LIMITS), 'bad_status');
    expect(e.message).toContain('302');
    expect(o.hits).toEqual(['/moved']);
  });

  it('a Content-Length above maxBytes fails with too_large before the body is read', async () => {
    let wrote = 0;
    o.handle = (_req, res) => {
      // Announce 50 MB, send 1 KiB and stall: reading the body would end in a timeout, not too_large.
      res.writeHead(200, { 'content-length': String(50 * 1024 * 1024) });
      res.write(Buffer.alloc(1024, 1));
      wrote += 1024;
    };
    const t0 = Date.now();
    const e = await failure(fetcher.fetch(`${o.url}/huge`, { maxBytes: 1024 * 1024, timeoutMs: 3_000 }), 'too_large');
    expect(Date.now() - t0).toBeLessThan(1_500);
    expect(e.message).toContain(String(50 * 1024 * 1024));
    expect(wrote).toBe(1024);
  });

  it('a chunked body growing past maxBytes is cut off with too_large', async () => {
    let sent = 0;
    let stopped = false;
    o.handle = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const tick = () => {
        if (res.destroyed || res.writableEnded) {
          stopped = true;
          return;
        }
        if (sent >= 64 * 1024 * 1024) return void res.end();
        sent += 16 * 1024;
        res.write(Buffer.alloc(16 * 1024, 7), () => setImmediate(tick));
      };
      res.on('close', () => {
        stopped = true;
      });
      tick();
    };
    await failure(fetcher.fetch(`${o.url}/stream`, { maxBytes: 100_000, timeoutMs: 5_000 }), 'too_large');
    await new Promise((r) => setTimeout(r, 100));
    expect(stopped).toBe(true);
    expect(sent).toBeLessThan(64 * 1024 * 1024);
  });

  it('a server slower than timeoutMs fails with timeout (headers late, or body stalled)', async () => {
    o.handle = (_req, res) => {
      setTimeout(() => {
        if (!res.destroyed) res.end('late');
      }, 2_000).unref();
    };
    let t0 = Date.now();
    await failure(fetcher.fetch(`${o.url}/slow`, { maxBytes: 1024, timeoutMs: 200 }), 'timeout');
    expect(Date.now() - t0).toBeLessThan(1_000);

    o.handle = (_req, res) => {
      res.writeHead(200, { 'content-length': '10' });
      res.write('abc');
    };
    t0 = Date.now();
    await failure(fetcher.fetch(`${o.url}/stall`, { maxBytes: 1024, timeoutMs: 200 }), 'timeout');
    expect(Date.now() - t0).toBeLessThan(1_000);
  });

  it('a closed port fails with network, without naming the address', async () => {
    const dead = await origin();
    const url = dead.url;
    await dead.close();
    const e = await failure(fetcher.fetch(`${url}/x`, LIMITS), 'network');
    expect(e.message).toBe('ECONNREFUSED: connection refused');
    expect(e.message).not.toContain('127.0.0.1');
  });

  it('a name that does not resolve fails with network', async () => {
    const lookup: HostLookup = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND nowhere.invalid'), { code: 'ENOTFOUND' });
    };
    const f = createUrlFetcher({ allowPrivateTargets: true, lookup });
    try {
      const e = await failure(f.fetch('http://nowhere.invalid/x', LIMITS), 'network');
      expect(e.message).toBe('ENOTFOUND: host not found');
    } finally {
      await f.close();
    }
  });

  it('a name pointed at 127.0.0.1 by the lookup is fetched when private targets are allowed', async () => {
    o.handle = (_req, res) => res.end('named');
    const lookup: HostLookup = async (h) => (h === 'files.example.test' ? [{ address: '127.0.0.1', family: 4 }] : []);
    const f = createUrlFetcher({ allowPrivateTargets: true, lookup });
    try {
      const r = await f.fetch(`http://files.example.test:${o.port}/n`, LIMITS);
      expect(Buffer.from(r.bytes).toString()).toBe('named');
      expect(o.hits).toEqual(['/n']);
    } finally {
      await f.close();
    }
  });
});

describe('createUrlFetcher: refused targets (default policy), never connecting', () => {
  let o: Origin;
  let o6: Origin | undefined;
  const lookup: HostLookup = async (h) =>
    h === 'loopback.example.test' ? [{ address: '127.0.0.1', family: 4 }]
      : h === 'mixed.example.test' ? [{ address: '93.184.215.14', family: 4 }, { address: '10.0.0.7', family: 4 }]
        : h === 'compat.example.test' ? [{ address: '::7f00:1', family: 6 }]
          : [];
  const strict = createUrlFetcher({ lookup });
  beforeAll(async () => {
    o = await origin();
    try {
      o6 = await origin('::1');
    } catch {
      o6 = undefined; // no IPv6 loopback on this machine
    }
  });
  afterAll(async () => {
    await strict.close();
    await o.close();
    await o6?.close();
  });

  it('non-public IP literals are refused by the connector', async () => {
    const urls = [
      `http://127.0.0.1:${o.port}/`, `http://[::1]:${o6?.port ?? 80}/`, 'http://[::1]/', 'http://10.0.0.1/', 'http://169.254.169.254/latest/meta-data',
      'http://192.168.1.1/', 'http://172.16.0.1/', 'http://0.0.0.0/', `http://[::ffff:127.0.0.1]:${o.port}/`, `http://2130706433:${o.port}/`,
      'https://127.0.0.1/', 'https://[fd00::1]/',
    ];
    for (const url of urls) {
      const e = await failure(strict.fetch(url, LIMITS), 'refused_target');
      expect(e.message, url).toBe(REFUSED);
    }
    expect(o.hits).toHaveLength(0);
    expect(o6?.hits ?? []).toHaveLength(0);
    expect(o.connections + (o6?.connections ?? 0)).toBe(0);
  });

  it('a name resolving to a non-public address (any of them) is refused by the lookup; the message names neither host nor address', async () => {
    for (const [url, hidden] of [
      [`http://loopback.example.test:${o.port}/x`, ['127.0.0.1', 'loopback.example.test']],
      ['http://mixed.example.test/x', ['10.0.0.7', '93.184.215.14', 'mixed.example.test']],
      [`https://compat.example.test:${o.port}/x`, ['7f00', '127.0.0.1', 'compat.example.test']],
    ] as const) {
      const e = await failure(strict.fetch(url, LIMITS), 'refused_target');
      expect(e.message, url).toBe(REFUSED);
      for (const h of hidden) expect(e.message, url).not.toContain(h);
    }
    expect(o.hits).toHaveLength(0);
    expect(o.connections).toBe(0);
  });

  it('only http: and https: URLs; no credentials; no garbage', async () => {
    for (const url of ['ftp://127.0.0.1/x', 'file:///etc/passwd', 'data:text/plain,hi', 'gopher://127.0.0.1/', 'javascript:alert(1)', 'not a url', '']) {
      await failure(strict.fetch(url, LIMITS), 'refused_target');
    }
    const dev = createUrlFetcher({ allowPrivateTargets: true });
    try {
      // Even where the target itself is allowed, these never leave the process.
      for (const url of [`ftp://127.0.0.1:${o.port}/x`, `file:///etc/passwd`, `http://user:pass@127.0.0.1:${o.port}/x`, `http://user@127.0.0.1:${o.port}/x`, `https://:secret@127.0.0.1:${o.port}/x`]) {
        await failure(dev.fetch(url, LIMITS), 'refused_target');
      }
    } finally {
      await dev.close();
    }
    expect(o.hits).toHaveLength(0);
    expect(o.connections).toBe(0);
  });
});
