import { describe, it, expect } from 'vitest';
import { request } from 'node:http';
import { startQuickstart } from './start';
import { exitAfter } from '../../../test/processes';

// Issue 16, "Operable": graceful shutdown of the quickstart.

describe('quickstart graceful shutdown (issue 16, Operable)', () => {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`${signal}: drains HTTP, stops the worker, closes the store and exits 0 within seconds`, async () => {
      const { child, seed } = await startQuickstart();
      const tok = seed.teams[0]!.members[0]!.token;
      // A kept-alive connection that served a request must not hold the shutdown up.
      const res = await fetch(`${seed.baseUrl}/api/v3/projects`, { headers: { authorization: `Bearer ${tok}` } });
      expect(res.status).toBe(200);
      await res.arrayBuffer();
      const r = await exitAfter(child, signal);
      expect(r).toMatchObject({ code: 0, signal: null });
      expect(r.tookMs).toBeLessThan(5_000);
    });
  }
});

describe('quickstart graceful shutdown: a request in flight at SIGTERM is answered (issue 16, Operable)', () => {
  it('a POST whose body is still arriving when SIGTERM comes gets its 201, then the process exits 0', async () => {
    const { child, seed } = await startQuickstart();
    const tok = seed.teams[0]!.members[0]!.token;
    const body = JSON.stringify({ name: 'Written during shutdown' });
    const { port } = new URL(seed.baseUrl);
    const answer = new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: Number(port), method: 'POST', path: '/api/v3/projects', headers: { authorization: `Bearer ${tok}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString('utf8')));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.on('error', reject);
      req.write(body.slice(0, 5));
      // The rest after the signal: the request is in flight while the server shuts down.
      setTimeout(() => req.end(body.slice(5)), 600);
    });
    await new Promise((r) => setTimeout(r, 200));
    const exited = exitAfter(child, 'SIGTERM');
    const got = await answer;
    expect(got.status).toBe(201);
    expect(JSON.parse(got.text).name).toBe('Written during shutdown');
    expect(await exited).toMatchObject({ code: 0, signal: null });
  });
});

// The worker in a process of its own (node examples/worker/dist/main.js) is tested in examples/worker/test.
