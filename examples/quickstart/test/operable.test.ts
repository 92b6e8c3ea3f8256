import { describe, it, expect } from 'vitest';
import { createServer } from 'node:net';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { run as runBuilt } from '../../../test/processes';

/** Issue 16, "Operable": the quickstart's start-up errors are one clear line and a non-zero exit. */
const main = fileURLToPath(new URL('../dist/main.js', import.meta.url));

const run = (args: string[], env: NodeJS.ProcessEnv = {}) => runBuilt(main, args, { env });

describe('quickstart start-up errors (issue 16, Operable)', () => {
  it("--db with a URL scheme other than postgres:// is refused, not taken as a SQLite file", async () => {
    const r = await run(['--port', '0', '--json', '--db', 'postgress:/oops']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^pmapi quickstart: --db starts with 'postgress:' but is not a postgres:\/\/ \(or postgresql:\/\/\) URL/)]);
    expect(existsSync('postgress:/oops')).toBe(false);
    const fromEnv = await run(['--port', '0', '--json'], { DATABASE_URL: 'postgres:/oops' });
    expect(fromEnv.code).toBe(1);
    expect(fromEnv.stderr).toMatch(/^pmapi quickstart: DATABASE_URL starts with 'postgres:' but is not a postgres:\/\//);
  });

  it('a port in use prints one line (no EADDRINUSE stack) and exits 1', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    try {
      const r = await run(['--port', String(port), '--json']);
      expect(r.code).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr.trim().split('\n')).toEqual([`pmapi quickstart: port ${port} on 127.0.0.1 is already in use; stop what is listening there or choose another with --port`]);
    } finally {
      blocker.close();
    }
  });
});

describe('quickstart --allow-loopback-webhooks: a local http receiver gets deliveries (issue 16, Operable)', () => {
  it('registers http://127.0.0.1:PORT and delivers a project.created to it', async () => {
    const { createServer: createHttpServer } = await import('node:http');
    const { startQuickstart } = await import('./start');
    const events: string[] = [];
    const receiver = createHttpServer((req, res) => {
      req.resume();
      req.on('end', () => { events.push(String(req.headers['x-webhook-event'])); res.writeHead(204).end(); });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const port = (receiver.address() as { port: number }).port;
    const { child, seed } = await startQuickstart(['--allow-loopback-webhooks']);
    try {
      const tok = seed.teams[0]!.members[0]!.token;
      const post = (path: string, body: unknown) => fetch(`${seed.baseUrl}/api/v3${path}`, { method: 'POST', headers: { authorization: `Bearer ${tok}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      expect((await post('/webhooks', { url: `http://127.0.0.1:${port}/hook`, events: ['project.created'] })).status).toBe(201);
      expect((await post('/projects', { name: 'Delivered locally' })).status).toBe(201);
      for (let i = 0; i < 50 && events.length === 0; i++) await new Promise((r) => setTimeout(r, 100));
      expect(events).toEqual(['project.created']);
    } finally {
      child.kill('SIGTERM');
      receiver.close();
    }
  });
});
