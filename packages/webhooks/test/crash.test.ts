import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SqlStore } from '@pmapi/core/sql';
import { openPostgresStore } from '@pmapi/adapter-postgres';
import { httpsReceiver, insertEvent, insertWebhook, selfSignedCert, type Receiver } from './helpers';

const url = inject('pgUrl');
const pkg = fileURLToPath(new URL('..', import.meta.url));
const child = fileURLToPath(new URL('./fixtures/crash-worker.mjs', import.meta.url));

// The figure: 2,000 events, 20 kills (CRASH_EVENTS / CRASH_KILLS scale it down for quick local runs).
const EVENTS = Number(process.env.CRASH_EVENTS ?? 2000);
const KILLS = Number(process.env.CRASH_KILLS ?? 20);
const BATCH = 10;
const LEASE_MS = 1_000;
const FAIL_RATE = 0.05;

/** The child runs the built package: rebuild it when the sources are newer than dist. */
function ensureBuilt() {
  const dist = join(pkg, 'dist', 'index.js');
  const newest = Math.max(...readdirSync(join(pkg, 'src')).map((f) => statSync(join(pkg, 'src', f)).mtimeMs));
  if (!existsSync(dist) || statSync(dist).mtimeMs < newest) execFileSync('pnpm', ['build'], { cwd: pkg, stdio: 'ignore' });
}

async function until(cond: () => boolean | Promise<boolean>, ms: number, what: string) {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe.skipIf(!url)('[postgres] Webhooks crash safety: a worker SIGKILLed mid-delivery loses no event', () => {
  const tls = selfSignedCert();
  let dir: string;
  let store: SqlStore;
  let schema: string;
  let rx: Receiver;
  const children = new Set<ChildProcess>();

  beforeAll(async () => {
    ensureBuilt();
    dir = mkdtempSync(join(tmpdir(), 'pmapi-crash-'));
    writeFileSync(join(dir, 'ca.pem'), tls.cert);
    schema = `whc_${randomBytes(6).toString('hex')}`;
    store = await openPostgresStore({ connectionString: url!, schema, max: 4 });
    rx = await httpsReceiver(tls);
  }, 60_000);
  afterAll(async () => {
    for (const c of children) c.kill('SIGKILL');
    await rx?.close();
    await store?.db.schema.dropSchema(schema).cascade().execute();
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  function startWorker(): Promise<ChildProcess> {
    const c = spawn(process.execPath, [child, url!, schema, join(dir, 'ca.pem'), String(LEASE_MS), String(BATCH)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    children.add(c);
    c.on('exit', () => children.delete(c));
    return new Promise((resolve, reject) => {
      c.stdout!.once('data', () => resolve(c));
      c.once('exit', (code, sig) => reject(new Error(`worker exited early (${code ?? sig})`)));
    });
  }
  const kill = (c: ChildProcess) =>
    new Promise<void>((res) => {
      c.once('exit', () => res());
      c.kill('SIGKILL');
    });

  it(`${EVENTS} events, ${KILLS} SIGKILLs at random points, receiver failing ${FAIL_RATE * 100} % → every event received, duplicates ≤ kills × batch, one delivery id per event`, async () => {
    const now = Date.now();
    const hook = await insertWebhook(store, now, { url: `${rx.url}/in` });
    const eventIds = new Set<string>();
    for (let i = 0; i < EVENTS; i++) eventIds.add((await insertEvent(store, now, hook.id)).eventId);

    const failedOnce = new Set<string>();
    const ok: string[] = [];
    rx.answer = (h) => {
      const id = String(h.headers['x-webhook-delivery-id']);
      // Each failure is a first attempt, so retries wait only the ≈1 s backoff.
      if (!failedOnce.has(id) && Math.random() < FAIL_RATE) {
        failedOnce.add(id);
        return { status: 500, delayMs: 15 };
      }
      ok.push(id);
      return { status: 204, delayMs: 15 };
    };

    for (let k = 0; k < KILLS; k++) {
      const w = await startWorker();
      const target = rx.hits.length + 5 + Math.floor(Math.random() * 20);
      await until(() => rx.hits.length >= target || ok.length >= EVENTS, 20_000, 'deliveries');
      await kill(w);
    }
    const last = await startWorker();
    await until(async () => {
      const r = await store.db.selectFrom('webhook_jobs').select((eb) => eb.fn.countAll().as('n')).where('status', '!=', 'delivered').executeTakeFirstOrThrow();
      return Number(r.n) === 0;
    }, 60_000, 'every job delivered');
    await kill(last);

    // Every copy carries `{webhookId}:{eventId}` of its own body.
    for (const h of rx.hits) expect(h.headers['x-webhook-delivery-id']).toBe(`${hook.id}:${JSON.parse(h.body).eventId}`);
    const received = new Set(ok.map((id) => id.slice(hook.id.length + 1)));
    const lost = [...eventIds].filter((e) => !received.has(e));
    expect(lost).toEqual([]);
    const duplicates = ok.length - received.size;
    console.log(`crash figure: ${EVENTS} events, ${KILLS} kills, ${EVENTS - received.size} never received, ${duplicates} duplicate deliveries (bound ${KILLS * BATCH})`);
    expect(duplicates).toBeLessThanOrEqual(KILLS * BATCH);
    expect(failedOnce.size).toBeGreaterThan(0);
  }, 120_000);
});
