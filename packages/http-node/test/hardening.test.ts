import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { createPmapi, type Pmapi } from '@pmapi/core';
import { openSqliteStore } from '@pmapi/adapter-sqlite';
import { createNodeServer, toNodeHandler } from '@pmapi/http-node';

/**
 * Issue "Hardening" item 7: slow and oversized requests at the front end.
 * Every test talks to a real server on 127.0.0.1 through a raw socket, as an
 * attacker would (fetch would hide what happens on the wire).
 */

interface Wire {
  socket: Socket;
  /** Everything the server sent so far. */
  text(): string;
  /** Resolves when the server closed the connection (or reset it), with the time it took. */
  closed: Promise<number>;
}

function open(port: number): Promise<Wire> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = connect(port, '127.0.0.1');
    let received = '';
    const closed = new Promise<number>((r) => socket.once('close', () => r(Date.now() - started)));
    socket.on('data', (d) => {
      received += d.toString('latin1');
    });
    socket.on('error', () => {
      // A reset after the answer is part of what some tests provoke.
    });
    socket.once('connect', () => resolve({ socket, text: () => received, closed }));
    socket.once('error', reject);
  });
}

function statusOf(raw: string): number {
  return Number(/^HTTP\/1\.1 (\d{3})/.exec(raw)?.[1] ?? 0);
}

function bodyOf(raw: string): any {
  const i = raw.indexOf('\r\n\r\n');
  return JSON.parse(raw.slice(i + 4));
}

const until = async (cond: () => boolean, ms: number) => {
  const end = Date.now() + ms;
  while (!cond() && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
};

describe('http-node: deadlines, early answers and duplicate credentials (real sockets)', () => {
  let api: Pmapi;
  let token: string;
  let server: Server;
  let port: number;

  beforeAll(async () => {
    api = await createPmapi({ store: await openSqliteStore(), rateLimiter: false });
    const ws = await api.admin.createWorkspace({ name: 'Acme', owner: { name: 'Ada' } });
    token = (await api.admin.issueToken(ws.ownerMemberId, { scopes: ['read', 'write', 'delete'] })).token;
    server = createNodeServer(api, { bodyLimit: 64 * 1024, bodyTimeoutMs: 400, headersTimeoutMs: 500, requestTimeoutMs: 4000, drainTimeoutMs: 1000 });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await api.close();
  });

  it('a body trickled a byte at a time is cut off at the body deadline with 408 request_timeout', async () => {
    const w = await open(port);
    w.socket.write(`POST /api/v3/projects HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{`);
    const trickle = setInterval(() => w.socket.writable && w.socket.write(' '), 150);
    const took = await Promise.race([w.closed, new Promise<number>((r) => setTimeout(() => r(-1), 5000))]);
    clearInterval(trickle);
    expect(took).toBeGreaterThan(0);
    // The handler's 400 ms body deadline, not the server's 4 s request deadline (checked every second).
    expect(took).toBeLessThan(2500);
    expect(statusOf(w.text())).toBe(408);
    expect(w.text()).toMatch(/\r\nconnection: close\r\n/i);
    expect(bodyOf(w.text()).code).toBe('request_timeout');
  });

  it('six trickling connections are all closed within the deadline, and the server still answers', async () => {
    const wires = await Promise.all(Array.from({ length: 6 }, () => open(port)));
    for (const w of wires) w.socket.write('POST /api/v3/projects HTTP/1.1\r\nHost: x\r\nContent-Length: 50\r\n\r\n');
    const trickle = setInterval(() => wires.forEach((w) => w.socket.writable && w.socket.write('x')), 200);
    const times = await Promise.all(wires.map((w) => w.closed));
    clearInterval(trickle);
    for (const t of times) expect(t).toBeLessThan(2500);
    const r = await fetch(`http://127.0.0.1:${port}/api/v3/projects`, { headers: { authorization: `Bearer ${token}` } });
    expect(r.status).toBe(200);
  });

  it('headers trickled slowly are cut off by the server header deadline', async () => {
    const w = await open(port);
    w.socket.write('GET /api/v3/projects HTTP/1.1\r\n');
    const trickle = setInterval(() => w.socket.writable && w.socket.write('X-Slow: 1\r\n'), 200);
    const took = await Promise.race([w.closed, new Promise<number>((r) => setTimeout(() => r(-1), 6000))]);
    clearInterval(trickle);
    expect(took).toBeGreaterThan(0);
    expect(took).toBeLessThan(3000);
  });

  it('a connection that sends nothing is closed by the header deadline', async () => {
    const w = await open(port);
    const took = await Promise.race([w.closed, new Promise<number>((r) => setTimeout(() => r(-1), 6000))]);
    expect(took).toBeGreaterThan(0);
    expect(took).toBeLessThan(3000);
  });

  it('a Content-Length over the limit gets its 413 problem before the connection closes', async () => {
    const w = await open(port);
    w.socket.write(`POST /api/v3/projects HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${50 * 1024 * 1024}\r\n\r\n`);
    // Keep sending, as a real client does. Like the many clients that write their body before reading, do
    // not read for the first 300 ms: closing then, with this input unread, reset the connection (0 bytes).
    w.socket.pause();
    setTimeout(() => w.socket.resume(), 300);
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    const pump = setInterval(() => w.socket.writable && w.socket.write(chunk), 20);
    await until(() => w.text().includes('\r\n\r\n{') && w.text().trimEnd().endsWith('}'), 3000);
    clearInterval(pump);
    expect(statusOf(w.text())).toBe(413);
    expect(bodyOf(w.text())).toMatchObject({ code: 'payload_too_large', limit: 64 * 1024 });
    // The connection is closed once the drain budget is spent.
    const took = await Promise.race([w.closed, new Promise<number>((r) => setTimeout(() => r(-1), 5000))]);
    expect(took).toBeGreaterThan(0);
  });

  it('a client that sends its whole oversized body reads the 413 without a reset, and the connection stays usable', async () => {
    const w = await open(port);
    const errors: string[] = [];
    w.socket.on('error', (e: NodeJS.ErrnoException) => errors.push(e.code ?? e.message));
    const size = 2 * 1024 * 1024;
    w.socket.write(`POST /api/v3/projects HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${size}\r\n\r\n`);
    w.socket.write(Buffer.alloc(size, 0x20));
    await until(() => w.text().trimEnd().endsWith('}'), 3000);
    expect(statusOf(w.text())).toBe(413);
    expect(bodyOf(w.text()).code).toBe('payload_too_large');
    // The body was drained to its end: the same connection serves the next request.
    const before = w.text().length;
    w.socket.write(`GET /api/v3/projects HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n\r\n`);
    await until(() => w.text().length > before && w.text().slice(before).includes('"data"'), 3000);
    expect(statusOf(w.text().slice(before))).toBe(200);
    expect(errors).toEqual([]);
    w.socket.destroy();
  });

  it('a chunked body that grows past the limit gets its 413 too', async () => {
    const w = await open(port);
    w.socket.write(`POST /api/v3/projects HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`);
    const chunk = Buffer.alloc(16 * 1024, 0x20);
    const frame = Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]);
    w.socket.pause();
    setTimeout(() => w.socket.resume(), 300);
    const pump = setInterval(() => w.socket.writable && w.socket.write(frame), 10);
    await until(() => w.text().trimEnd().endsWith('}'), 3000);
    clearInterval(pump);
    expect(statusOf(w.text())).toBe(413);
    expect(bodyOf(w.text()).code).toBe('payload_too_large');
    w.socket.destroy();
  });

  it('fetch posting more than the limit reads the 413', async () => {
    const r = await fetch(`http://127.0.0.1:${port}/api/v3/projects`, {
      method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'x'.repeat(200 * 1024) }),
    });
    expect(r.status).toBe(413);
    expect(((await r.json()) as { code: string }).code).toBe('payload_too_large');
  });

  it('fetch streaming a chunked body past the limit reads the 413', async () => {
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      async pull(c) {
        await new Promise((r) => setTimeout(r, 5));
        if (sent++ < 200) c.enqueue(new Uint8Array(16 * 1024).fill(0x20));
        else c.close();
      },
    });
    const r = await fetch(`http://127.0.0.1:${port}/api/v3/projects`, {
      method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body, duplex: 'half',
    } as RequestInit);
    expect(r.status).toBe(413);
    expect(((await r.json()) as { code: string }).code).toBe('payload_too_large');
  });

  it('two Authorization headers are refused with 401, even when both are valid', async () => {
    for (const second of [token, 'svc_user_nope_nope']) {
      const w = await open(port);
      w.socket.write(`GET /api/v3/projects HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nAuthorization: Bearer ${second}\r\nConnection: close\r\n\r\n`);
      await w.closed;
      expect(statusOf(w.text())).toBe(401);
      expect(bodyOf(w.text()).code).toBe('unauthorized');
    }
    const one = await open(port);
    one.socket.write(`GET /api/v3/projects HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nConnection: close\r\n\r\n`);
    await one.closed;
    expect(statusOf(one.text())).toBe(200);
  });
});

describe('http-node: transport refusals that do not depend on the core', () => {
  /** A stand-in core that answers 200 to anything: whatever is refused here, http-node refused. */
  const calls: { headers: Record<string, unknown> }[] = [];
  const stub = {
    handle: async (req: { headers: Record<string, unknown> }) => {
      calls.push(req);
      return { status: 200, headers: { 'content-type': 'application/json' }, body: '{"ok":true}' };
    },
    problem: (code: string, detail: string, url: string, extras: Record<string, unknown> = {}) => ({
      status: code === 'unauthorized' ? 401 : code === 'payload_too_large' ? 413 : 500,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ code, detail, instance: url, ...extras }),
    }),
  } as unknown as Parameters<typeof toNodeHandler>[0];

  async function serve(listener: (req: IncomingMessage, res: import('node:http').ServerResponse) => void): Promise<{ server: Server; port: number }> {
    const server = createServer(listener);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return { server, port: (server.address() as AddressInfo).port };
  }

  it('two Authorization headers get 401 from http-node itself, and the core is never called', async () => {
    const { server, port } = await serve(toNodeHandler(stub));
    try {
      calls.length = 0;
      const w = await open(port);
      w.socket.write('POST /api/v3/projects HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer a\r\nauthorization: Bearer b\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}');
      await w.closed;
      expect(statusOf(w.text())).toBe(401);
      expect(w.text()).toMatch(/\r\nwww-authenticate: Bearer\r\n/i);
      expect(bodyOf(w.text())).toMatchObject({ code: 'unauthorized', detail: 'Send exactly one Authorization header' });
      expect(calls).toHaveLength(0);
      // One header still reaches the core, as a string.
      const r = await fetch(`http://127.0.0.1:${port}/api/v3/projects`, { headers: { authorization: 'Bearer a' } });
      expect(r.status).toBe(200);
      expect(calls[0]!.headers.authorization).toBe('Bearer a');
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it('a 413 for a body a parser already read leaves the kept-alive connection alone', async () => {
    const handler = toNodeHandler(stub, { bodyLimit: 16, drainTimeoutMs: 150 });
    // What express.json() leaves behind: the stream read to its end, the value on req.body.
    const { server, port } = await serve((req, res) => {
      const parts: Buffer[] = [];
      req.on('data', (c: Buffer) => parts.push(c));
      req.on('end', () => {
        const text = Buffer.concat(parts).toString();
        (req as IncomingMessage & { body?: unknown }).body = text ? JSON.parse(text) : {};
        handler(req, res);
      });
    });
    try {
      const w = await open(port);
      const json = JSON.stringify({ name: 'x'.repeat(64) });
      w.socket.write(`POST /api/v3/projects HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${json.length}\r\n\r\n${json}`);
      await until(() => w.text().trimEnd().endsWith('}'), 2000);
      expect(statusOf(w.text())).toBe(413);
      // Past the drain budget, the same connection still carries the next request.
      await new Promise((r) => setTimeout(r, 300));
      const before = w.text().length;
      w.socket.write('GET /api/v3/projects HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer a\r\n\r\n');
      await until(() => w.text().slice(before).includes('{"ok":true}'), 2000);
      expect(statusOf(w.text().slice(before))).toBe(200);
      w.socket.destroy();
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});
