import { describe, it, expect, beforeAll, afterAll, inject } from 'vitest';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createPmapi, type Pmapi } from '@pmapi/core';
import { openPostgresStore } from '@pmapi/adapter-postgres';
import { verifyWebhookSignature } from '@pmapi/webhooks';
import { exitAfter, run, start } from '../../../test/processes';

/**
 * Issue 16, "Examples": the webhook worker in a separate process
 * (`node examples/worker/dist/main.js --db …`) delivers what an API process
 * writes to the shared database, and stops gracefully on SIGTERM/SIGINT.
 */
const mainJs = fileURLToPath(new URL('../dist/main.js', import.meta.url));
const pgUrl = inject('pgUrl');

/** Start the built worker and resolve once it says it started (its first line). */
const startWorker = (args: string[]) => start<{ worker: string }>(mainJs, args);

async function until(what: string, ok: () => boolean, ms = 8_000): Promise<void> {
  const t0 = Date.now();
  while (!ok()) {
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe.skipIf(!pgUrl)('[postgres] example worker: an API process writes, the worker process delivers (issue 16, Examples)', () => {
  let admin: pg.Client;
  let dbName: string;
  let dbUrl: string;
  let api: Pmapi;
  let token: string;
  let projectId: string;
  let webhookId: string;
  let secret: string;
  let receiver: Server;
  let hookUrl: string;
  /** Every request the receiver got, in arrival order; `answered` once its response went out. */
  const got: { deliveryId: string; event: string; signature: string | undefined; body: string; answered: boolean }[] = [];
  /** How long the receiver holds its next answers back, ms. */
  let holdMs = 0;

  const call = async (method: string, path: string, body?: unknown) => {
    const r = await api.handle({ method, url: `/api/v3${path}`, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: r.status, body: r.body ? JSON.parse(r.body as string) : undefined };
  };
  const createTask = async (name: string): Promise<string> => {
    const t = await call('POST', '/tasks', { name, projectId });
    expect(t.status).toBe(201);
    return t.body.id as string;
  };

  beforeAll(async () => {
    admin = new pg.Client({ connectionString: pgUrl! });
    admin.on('error', () => {});
    await admin.connect();
    dbName = `pmapi_worker_${randomBytes(4).toString('hex')}`;
    await admin.query(`create database ${dbName}`);
    const u = new URL(pgUrl!);
    u.pathname = `/${dbName}`;
    dbUrl = u.toString();

    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const hit = {
          deliveryId: String(req.headers['x-webhook-delivery-id']),
          event: String(req.headers['x-webhook-event']),
          signature: req.headers['x-webhook-signature'] as string | undefined,
          body: Buffer.concat(chunks).toString('utf8'),
          answered: false,
        };
        got.push(hit);
        setTimeout(() => { res.writeHead(204).end(); hit.answered = true; }, holdMs);
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    hookUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;

    // The API process: no worker of its own; loopback receivers allowed (local development opt-in).
    api = await createPmapi({ store: await openPostgresStore({ connectionString: dbUrl, max: 4 }), rateLimiter: false, webhooks: { allowLoopback: true } });
    const ws = await api.admin.createWorkspace({ name: 'Acme', owner: { name: 'Ada' } });
    token = (await api.admin.issueToken(ws.ownerMemberId, { scopes: ['read', 'write', 'delete'] })).token;
    const hook = await call('POST', '/webhooks', { name: 'local', url: hookUrl, events: ['task.created'] });
    expect(hook.status).toBe(201);
    webhookId = hook.body.id;
    secret = hook.body.secret;
    expect(typeof secret).toBe('string');
    const p = await call('POST', '/projects', { name: 'Launch' });
    expect(p.status).toBe(201);
    projectId = p.body.id;
  }, 30_000);

  afterAll(async () => {
    await api?.close();
    await new Promise((r) => receiver?.close(r));
    await admin?.query(`drop database if exists ${dbName} with (force)`);
    await admin?.end();
  });

  it('delivers a signed task.created; SIGTERM during a delivery waits for it, exits 0; a second worker delivers nothing twice', async () => {
    const first = await startWorker(['--db', dbUrl, '--interval', '50', '--allow-loopback-webhooks']);
    const t1 = await createTask('First');
    await until('the first delivery', () => got.length === 1 && got[0]!.answered);
    const d1 = got[0]!;
    expect(d1.event).toBe('task.created');
    expect(d1.deliveryId.startsWith(`${webhookId}:`)).toBe(true);
    // The receiver's check, with the library's own helper: right secret yes, wrong secret or altered body no.
    expect(verifyWebhookSignature(d1.body, d1.signature, secret)).toBe(true);
    expect(verifyWebhookSignature(d1.body, d1.signature, `${secret}x`)).toBe(false);
    expect(verifyWebhookSignature(d1.body.replace('First', 'Forged'), d1.signature, secret)).toBe(false);
    expect(JSON.parse(d1.body)).toMatchObject({ type: 'task.created', payload: { task: { id: t1, name: 'First' } } });

    // A delivery in flight when SIGTERM comes: the receiver holds its answer 1.2 s; the worker waits for it.
    holdMs = 1_200;
    await createTask('In flight');
    await until('the second delivery to arrive', () => got.length === 2);
    const stopped = await exitAfter(first.child, 'SIGTERM');
    expect(stopped).toMatchObject({ code: 0, signal: null });
    expect(got[1]!.answered).toBe(true);
    expect(stopped.tookMs).toBeGreaterThan(500);
    expect(first.stdout()).toContain('"stopping"');
    expect(first.stderr()).toBe('');
    holdMs = 0;

    // The answered delivery was recorded before the exit: both are in the log as delivered.
    const log = await call('GET', `/webhooks/${webhookId}/deliveries`);
    expect(log.status).toBe(200);
    expect(log.body.data.map((d: { status: string }) => d.status)).toEqual(['delivered', 'delivered']);

    // A fresh worker process (SIGINT this time) redelivers nothing and delivers the next event once.
    const second = await startWorker(['--db', dbUrl, '--interval', '50', '--allow-loopback-webhooks']);
    await createTask('Third');
    await until('the third delivery', () => got.length >= 3 && got[2]!.answered);
    await new Promise((r) => setTimeout(r, 400)); // several more rounds
    expect(await exitAfter(second.child, 'SIGINT')).toMatchObject({ code: 0, signal: null });
    expect(second.stderr()).toBe('');
    expect(got).toHaveLength(3);
    expect(new Set(got.map((g) => g.deliveryId)).size).toBe(3);
    expect(got.map((g) => JSON.parse(g.body).payload.task.name)).toEqual(['First', 'In flight', 'Third']);
  }, 20_000);
});

describe('example worker: command line (issue 16, Operable)', () => {
  it('starts on a SQLite file, stops on SIGTERM after its round and exits 0', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pmapi-worker-'));
    try {
      const w = await startWorker(['--db', join(dir, 'pm.db'), '--interval', '50']);
      await new Promise((r) => setTimeout(r, 300)); // a few rounds
      const r = await exitAfter(w.child, 'SIGTERM');
      expect(r).toMatchObject({ code: 0, signal: null });
      expect(r.tookMs).toBeLessThan(5_000);
      expect(w.stdout()).toContain('"stopping"');
      expect(w.stderr()).toBe('');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  for (const [what, args, message] of [
    ['no database', [], /^pmapi webhook worker: --db \(or DATABASE_URL\) is required/],
    ['a mistyped URL scheme', ['--db', 'postgress://127.0.0.1/pm'], /^pmapi webhook worker: --db starts with 'postgress:' but is not a postgres:\/\//],
    ['a bad interval', ['--db', 'x.db', '--interval', '5'], /^pmapi webhook worker: --interval must be a whole number of milliseconds ≥ 10, got '5'/],
  ] as const) {
    it(`refuses ${what} with one line naming the option and exit code 1`, async () => {
      const { code, stderr } = await run(mainJs, [...args]);
      expect(code).toBe(1);
      expect(stderr.trim()).toMatch(message);
      expect(stderr.trim().split('\n')).toHaveLength(1);
    });
  }
});
