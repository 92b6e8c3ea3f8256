import { describe, it, expect } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startQuickstart } from './start';

/** Issue 16, "Operable": graceful shutdown of the quickstart and of the worker in its own process. */
const workerJs = fileURLToPath(new URL('../dist/worker.js', import.meta.url));

/** Resolve with the exit code and how long after the signal it came (SIGKILL and fail after `ms`). */
function exitAfter(child: ChildProcess, signal: NodeJS.Signals, ms = 8_000): Promise<{ code: number | null; signal: string | null; tookMs: number }> {
  return new Promise((resolve, reject) => {
    const t0 = Date.now();
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`no exit within ${ms} ms of ${signal}`)); }, ms);
    child.once('exit', (code, sig) => { clearTimeout(timer); resolve({ code, signal: sig, tookMs: Date.now() - t0 }); });
    child.kill(signal);
  });
}

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

describe('the webhook worker in its own process: node dist/worker.js --db (issue 16, Operable)', () => {
  it('starts on a SQLite file, stops on SIGTERM after its round and exits 0', async () => {
    if (!existsSync(workerJs)) throw new Error(`${workerJs} is missing: run pnpm build`);
    const dir = mkdtempSync(join(tmpdir(), 'pmapi-worker-'));
    try {
      const child = spawn(process.execPath, [workerJs, '--db', join(dir, 'pm.db'), '--interval', '50'], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stderr!.on('data', (c: Buffer) => (err += c.toString('utf8')));
      await new Promise<void>((resolve, reject) => {
        child.stdout!.on('data', (c: Buffer) => {
          out += c.toString('utf8');
          if (out.includes('"started"')) resolve();
        });
        child.once('exit', (code) => reject(new Error(`worker exited with ${code}: ${err}`)));
      });
      // Let it run a few rounds, then stop it.
      await new Promise((r) => setTimeout(r, 300));
      const r = await exitAfter(child, 'SIGTERM');
      expect(r).toMatchObject({ code: 0, signal: null });
      expect(r.tookMs).toBeLessThan(5_000);
      expect(out).toContain('"stopping"');
      expect(err).toBe('');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses to start without a database, naming --db', async () => {
    const child = spawn(process.execPath, [workerJs], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, DATABASE_URL: '' } });
    let err = '';
    child.stderr!.on('data', (c: Buffer) => (err += c.toString('utf8')));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(1);
    expect(err.trim()).toMatch(/^pmapi webhook worker: --db \(or DATABASE_URL\) is required/);
  });
});
