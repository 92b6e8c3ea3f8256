import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import Stripe from 'stripe';
import { fakeClock, type FakeClock, type WebhookAttempt, type WebhookRequest } from '@pmapi/core';
import type { SqlStore } from '@pmapi/core/sql';
import { openSqliteStore } from '@pmapi/adapter-sqlite';
import { openPostgresStore } from '@pmapi/adapter-postgres';
import { createWebhookSender, createWebhookWorker, verifyWebhookSignature, type WebhookWorker } from '@pmapi/webhooks';
import { deliveries, httpsReceiver, insertEvent, insertWebhook, jobRow, selfSignedCert, webhookRow, type Receiver } from './helpers';

const pgUrl = inject('pgUrl');
const tls = selfSignedCert();
const stripe = new Stripe('sk_test_unused');

interface Factory {
  name: string;
  open(): Promise<SqlStore>;
  /** A second connection pool on the same database (Postgres only). */
  openAnother?(store: SqlStore): Promise<SqlStore>;
}

const schemas = new WeakMap<SqlStore, string>();
const factories: Factory[] = [
  { name: 'sqlite', open: () => openSqliteStore() },
  {
    name: 'postgres',
    async open() {
      const schema = `wh_${randomBytes(6).toString('hex')}`;
      const store = await openPostgresStore({ connectionString: pgUrl!, schema, max: 6 });
      const s: SqlStore = {
        ...store,
        async close() {
          await store.db.schema.dropSchema(schema).cascade().execute();
          await store.close();
        },
      };
      schemas.set(s, schema);
      return s;
    },
    openAnother: (s) => openPostgresStore({ connectionString: pgUrl!, schema: schemas.get(s)!, max: 6 }),
  },
];

/** A scripted sender: answers from `next`, remembers every request. */
function fakeSender(next: (r: WebhookRequest, n: number) => Partial<WebhookAttempt> = () => ({ ok: true, status: 204 })) {
  const calls: WebhookRequest[] = [];
  const send = async (r: WebhookRequest): Promise<WebhookAttempt> => {
    calls.push(r);
    const a = next(r, calls.length);
    return { ok: a.ok ?? false, status: a.status ?? null, durationMs: a.durationMs ?? 3, error: a.ok ? null : (a.error ?? `HTTP ${a.status}`) };
  };
  return Object.assign(send, { calls });
}

for (const f of factories) {
  describe.skipIf(f.name === 'postgres' && !pgUrl)(`[${f.name}] Webhooks Delivery: the worker`, () => {
    let store: SqlStore;
    let clock: FakeClock;
    const now = () => clock.now();
    beforeEach(async () => {
      store = await f.open();
      clock = fakeClock('2026-03-01T12:00:00.000Z');
    });
    afterEach(async () => {
      await store.close();
    });

    describe('Delivery request: headers and signature over real HTTPS', () => {
      let rx: Receiver;
      const sender = createWebhookSender({ allowPrivateTargets: true, connect: { ca: tls.cert }, timeoutMs: 2_000 });
      beforeAll(async () => {
        rx = await httpsReceiver(tls);
      });
      afterAll(async () => {
        await sender.close();
        await rx.close();
      });

      it('POSTs the stored envelope with every header of the table; stripe verifies the signature', async () => {
        rx.hits.length = 0;
        rx.answer = () => ({ status: 200, body: 'thanks' });
        const hook = await insertWebhook(store, now(), { url: `${rx.url}/hooks?x=1`, apiVersion: '2026-03-20' });
        const ev = await insertEvent(store, now(), hook.id, { type: 'task.updated' });
        const worker = createWebhookWorker({ store, sender, clock });
        expect(await worker.runOnce()).toMatchObject({ claimed: 1, delivered: 1, failed: 0 });
        expect(rx.hits).toHaveLength(1);
        const hit = rx.hits[0]!;
        expect(hit.path).toBe('/hooks?x=1');
        expect(JSON.parse(hit.body)).toEqual(ev.envelope);
        expect(hit.headers['content-type']).toBe('application/json');
        expect(hit.headers['user-agent']).toBe('Service-Webhooks/2.0');
        expect(hit.headers['x-webhook-id']).toBe(hook.id);
        expect(hit.headers['x-webhook-event']).toBe('task.updated');
        expect(hit.headers['x-webhook-delivery-id']).toBe(`${hook.id}:${ev.eventId}`);
        expect(hit.headers['x-api-version']).toBe('2026-03-20');
        const sig = String(hit.headers['x-webhook-signature']);
        expect(sig).toMatch(new RegExp(`^t=${Math.floor(now() / 1000)},v1=[0-9a-f]{64}$`));
        // The independent verifier (Stripe's scheme is exactly t=…,v1=HMAC-SHA256("<t>.<raw body>")).
        const evt = stripe.webhooks.constructEvent(hit.body, sig, hook.secret, 300, undefined, now());
        expect((evt as any).eventId).toBe(ev.eventId);
        expect(() => stripe.webhooks.constructEvent(hit.body, sig, 'whsec_wrong', 300, undefined, now())).toThrow();
        expect(() => stripe.webhooks.constructEvent(hit.body, sig, hook.secret, 300, undefined, now() + 301_000)).toThrow();
        expect(verifyWebhookSignature(hit.body, sig, hook.secret, { now: now() })).toBe(true);
        expect(verifyWebhookSignature(`${hit.body} `, sig, hook.secret, { now: now() })).toBe(false);

        const log = await deliveries(store, hook.id);
        expect(log).toHaveLength(1);
        expect(log[0]).toMatchObject({ webhookId: hook.id, eventType: 'task.updated', status: 'delivered', responseStatus: 200, error: null, createdAt: now() });
        expect(await jobRow(store, ev.jobId)).toMatchObject({ status: 'delivered', attempts: 1, leaseToken: null });
        expect(await webhookRow(store, hook.id)).toMatchObject({ failCount: 0, lastDeliveredAt: now() });
      });

      it('a 302 fails the attempt and the redirect target is never hit', async () => {
        rx.hits.length = 0;
        rx.answer = (h) => (h.path === '/moved' ? { status: 302, headers: { location: `${rx.url}/elsewhere` } } : { status: 200 });
        const hook = await insertWebhook(store, now(), { url: `${rx.url}/moved` });
        const ev = await insertEvent(store, now(), hook.id);
        const worker = createWebhookWorker({ store, sender, clock });
        expect(await worker.runOnce()).toMatchObject({ claimed: 1, delivered: 0, failed: 1 });
        expect(rx.hits.map((h) => h.path)).toEqual(['/moved']);
        expect((await deliveries(store, hook.id))[0]).toMatchObject({ status: 'failed', responseStatus: 302 });
        expect(await jobRow(store, ev.jobId)).toMatchObject({ status: 'pending', attempts: 1 });
      });

      it('with private targets refused (the default), a loopback webhook fails at delivery and is never reached', async () => {
        rx.hits.length = 0;
        const strict = createWebhookSender({ connect: { ca: tls.cert } });
        const hook = await insertWebhook(store, now(), { url: `${rx.url}/in` });
        await insertEvent(store, now(), hook.id);
        expect(await createWebhookWorker({ store, sender: strict, clock }).runOnce()).toMatchObject({ failed: 1 });
        expect(rx.hits).toHaveLength(0);
        expect((await deliveries(store, hook.id))[0]!.error).toBe('target refused: not a public address');
        await strict.close();
      });
    });

    describe('Delivery semantics rule 4: 4 attempts, backoff ≈1 s, 10 s, 60 s', () => {
      it('retries on schedule with the same delivery id, freshly signed, then gives up', async () => {
        const sender = fakeSender(() => ({ ok: false, status: 500 }));
        const hook = await insertWebhook(store, now(), { url: 'https://hooks.example.com/in' });
        const ev = await insertEvent(store, now(), hook.id);
        const worker = createWebhookWorker({ store, sender, clock, random: () => 0.5 });
        const t0 = now();
        expect(await worker.runOnce()).toMatchObject({ claimed: 1, failed: 1 });
        for (const [wait, attempt] of [[1_000, 2], [10_000, 3], [60_000, 4]] as const) {
          expect(await jobRow(store, ev.jobId)).toMatchObject({ status: 'pending', attempts: attempt - 1, nextAttemptAt: now() + wait });
          clock.advance(wait - 1);
          expect((await worker.runOnce()).claimed).toBe(0);
          clock.advance(1);
          expect(await worker.runOnce()).toMatchObject({ claimed: 1, failed: 1 });
        }
        expect(await jobRow(store, ev.jobId)).toMatchObject({ status: 'failed', attempts: 4, leaseToken: null });
        clock.advance(3600_000);
        expect((await worker.runOnce()).claimed).toBe(0);
        expect(sender.calls).toHaveLength(4);
        expect(new Set(sender.calls.map((c) => c.headers['X-Webhook-Delivery-Id']))).toEqual(new Set([`${hook.id}:${ev.eventId}`]));
        const ts = sender.calls.map((c) => Number(/^t=(\d+)/.exec(c.headers['X-Webhook-Signature']!)![1]));
        expect(ts).toEqual([t0, t0 + 1_000, t0 + 11_000, t0 + 71_000].map((ms) => Math.floor(ms / 1000)));
        for (const c of sender.calls) expect(verifyWebhookSignature(c.body, c.headers['X-Webhook-Signature'], hook.secret, { now: t0 + 71_000, toleranceSeconds: 100 })).toBe(true);
        const log = await deliveries(store, hook.id);
        expect(log.map((l) => [l.status, l.responseStatus, l.error])).toEqual(Array(4).fill(['failed', 500, 'HTTP 500']));
        expect(await webhookRow(store, hook.id)).toMatchObject({ failCount: 4, active: true });
      });

      it('backoff is jittered within ±20 %', async () => {
        for (const [r, delay] of [[0, 800], [0.999999, 1_200]] as const) {
          const hook = await insertWebhook(store, now(), { url: 'https://hooks.example.com/in' });
          const ev = await insertEvent(store, now(), hook.id);
          await createWebhookWorker({ store, sender: fakeSender(() => ({ status: 503 })), clock, random: () => r }).runOnce();
          expect((await jobRow(store, ev.jobId)).nextAttemptAt - now()).toBe(delay);
        }
      });

      it('a success after failures finishes the job and resets failCount', async () => {
        const sender = fakeSender((_r, n) => (n < 3 ? { status: 500 } : { ok: true, status: 202 }));
        const hook = await insertWebhook(store, now(), { url: 'https://hooks.example.com/in', failCount: 5 });
        const ev = await insertEvent(store, now(), hook.id);
        const worker = createWebhookWorker({ store, sender, clock, random: () => 0.5 });
        await worker.runOnce();
        clock.advance(1_000);
        await worker.runOnce();
        expect(await webhookRow(store, hook.id)).toMatchObject({ failCount: 7, lastDeliveredAt: null });
        clock.advance(10_000);
        expect(await worker.runOnce()).toMatchObject({ delivered: 1 });
        expect(await jobRow(store, ev.jobId)).toMatchObject({ status: 'delivered', attempts: 3 });
        expect(await webhookRow(store, hook.id)).toMatchObject({ failCount: 0, lastDeliveredAt: now(), active: true });
        expect((await deliveries(store, hook.id)).map((l) => l.status)).toEqual(['failed', 'failed', 'delivered']);
      });
    });

    describe('Delivery semantics rule 5: 10 consecutive failed attempts set active false', () => {
      it('the 9th failure leaves it active, the 10th pauses it; its pending events are then dropped unsent', async () => {
        const sender = fakeSender(() => ({ status: 500 }));
        const hook = await insertWebhook(store, now(), { url: 'https://hooks.example.com/in' });
        const jobs = [];
        for (let i = 0; i < 10; i++) jobs.push(await insertEvent(store, now(), hook.id));
        const worker = createWebhookWorker({ store, sender, clock, batchSize: 9 });
        expect(await worker.runOnce()).toMatchObject({ claimed: 9, failed: 9 });
        expect(await webhookRow(store, hook.id)).toMatchObject({ failCount: 9, active: true });
        expect(await worker.runOnce()).toMatchObject({ claimed: 1, failed: 1 });
        expect(await webhookRow(store, hook.id)).toMatchObject({ failCount: 10, active: false });
        clock.advance(2_000);
        expect(await worker.runOnce()).toMatchObject({ claimed: 9, dropped: 9, failed: 0 });
        expect(sender.calls).toHaveLength(10);
        expect(await worker.runOnce()).toMatchObject({ claimed: 1, dropped: 1, failed: 0 });
        for (const j of jobs) expect(await jobRow(store, j.jobId)).toMatchObject({ status: 'dropped', attempts: 1 });
        expect(await deliveries(store, hook.id)).toHaveLength(10);
      });

      it('jobs of a soft-deleted webhook are dropped unsent', async () => {
        const sender = fakeSender();
        const hook = await insertWebhook(store, now(), { url: 'https://hooks.example.com/in', purgeAt: now() + 86400_000 });
        const ev = await insertEvent(store, now(), hook.id);
        expect(await createWebhookWorker({ store, sender, clock }).runOnce()).toMatchObject({ claimed: 1, dropped: 1 });
        expect(sender.calls).toHaveLength(0);
        expect((await jobRow(store, ev.jobId)).status).toBe('dropped');
        expect(await deliveries(store)).toHaveLength(0);
      });
    });

    describe('Delivery semantics rule 3: payload cap 1 MiB', () => {
      it('an envelope over 1 MiB is not sent and counts as a failed attempt', async () => {
        const sender = fakeSender();
        const hook = await insertWebhook(store, now(), { url: 'https://hooks.example.com/in' });
        const big = await insertEvent(store, now(), hook.id, { payload: { task: { description: 'x'.repeat(1024 * 1024) } } });
        const worker = createWebhookWorker({ store, sender, clock });
        expect(await worker.runOnce()).toMatchObject({ claimed: 1, failed: 1, delivered: 0 });
        expect(sender.calls).toHaveLength(0);
        expect((await deliveries(store, hook.id))[0]).toMatchObject({ status: 'failed', responseStatus: null, error: 'payload too large' });
        expect(await jobRow(store, big.jobId)).toMatchObject({ attempts: 1, status: 'pending' });
        expect((await webhookRow(store, hook.id)).failCount).toBe(1);
        // Just under the cap goes out.
        const envelopeOverhead = JSON.stringify({ ...big.envelope, payload: { task: { description: '' } } }).length;
        await insertEvent(store, now(), hook.id, { eventId: big.eventId.replace(/.$/, 'z'), payload: { task: { description: 'y'.repeat(1024 * 1024 - envelopeOverhead) } } });
        expect(await worker.runOnce()).toMatchObject({ delivered: 1 });
        expect(Buffer.byteLength(sender.calls[0]!.body)).toBeLessThanOrEqual(1024 * 1024);
      });
    });

    describe('Crash safety: leases', () => {
      it('a claimed job is not claimed again before its lease expires; a late result with a stale token is refused', async () => {
        let release!: (a: WebhookAttempt) => void;
        let entered!: () => void;
        const inFlight = new Promise<void>((r) => (entered = r));
        const slow = async (): Promise<WebhookAttempt> => {
          entered();
          return new Promise((r) => (release = r));
        };
        const hook = await insertWebhook(store, now(), { url: 'https://hooks.example.com/in' });
        const ev = await insertEvent(store, now(), hook.id);
        const a = createWebhookWorker({ store, sender: slow, clock, leaseMs: 60_000 });
        const fast = fakeSender();
        const b = createWebhookWorker({ store, sender: fast, clock, leaseMs: 60_000 });
        const aRun = a.runOnce();
        await inFlight;
        const leased = await jobRow(store, ev.jobId);
        expect(leased.leaseUntil).toBe(now() + 60_000);
        expect(leased.leaseToken).toBeTruthy();
        clock.advance(59_999);
        expect((await b.runOnce()).claimed).toBe(0);
        clock.advance(1);
        expect(await b.runOnce()).toMatchObject({ claimed: 1, delivered: 1 });
        expect(fast.calls[0]!.headers['X-Webhook-Delivery-Id']).toBe(`${hook.id}:${ev.eventId}`);
        // A finally answers (it would have failed): its result is discarded.
        release({ ok: false, status: 500, durationMs: 60_000, error: 'HTTP 500' });
        expect(await aRun).toMatchObject({ claimed: 1, failed: 0, delivered: 0, stale: 1 });
        expect(await jobRow(store, ev.jobId)).toMatchObject({ status: 'delivered', attempts: 1 });
        expect((await deliveries(store, hook.id)).map((l) => l.status)).toEqual(['delivered']);
        expect(await webhookRow(store, hook.id)).toMatchObject({ failCount: 0, active: true });
      });

      it('two workers claiming at once never send the same job twice', async () => {
        const sender = fakeSender();
        const hook = await insertWebhook(store, now(), { url: 'https://hooks.example.com/in' });
        for (let i = 0; i < 30; i++) await insertEvent(store, now(), hook.id);
        const w = [0, 1, 2].map(() => createWebhookWorker({ store, sender, clock, batchSize: 4 }));
        for (;;) {
          const rs = await Promise.all(w.map((x) => x.runOnce()));
          if (rs.every((r) => r.claimed === 0)) break;
        }
        const ids = sender.calls.map((c) => c.headers['X-Webhook-Delivery-Id']);
        expect(ids).toHaveLength(30);
        expect(new Set(ids).size).toBe(30);
      });
    });

    describe('Delivery: the worker runs in the background', () => {
      it('start() delivers due jobs in rounds; stop() waits for the round in flight', async () => {
        const sender = fakeSender();
        const hook = await insertWebhook(store, now(), { url: 'https://hooks.example.com/in' });
        for (let i = 0; i < 5; i++) await insertEvent(store, now(), hook.id);
        const worker = createWebhookWorker({ store, sender, clock, batchSize: 2 });
        worker.start(10);
        const end = Date.now() + 5_000;
        while (sender.calls.length < 5 && Date.now() < end) await new Promise((r) => setTimeout(r, 5));
        await worker.stop();
        expect(sender.calls).toHaveLength(5);
        await insertEvent(store, now(), hook.id);
        await new Promise((r) => setTimeout(r, 50));
        expect(sender.calls).toHaveLength(5);
      });
    });

    describe('Delivery semantics rule 7: the log keeps attempts 30 days', () => {
      it('sweep deletes log records older than 30 days and finished jobs older than 7 days', async () => {
        const hook = await insertWebhook(store, now(), { url: 'https://hooks.example.com/in' });
        const old = await insertEvent(store, now(), hook.id);
        const worker = createWebhookWorker({ store, sender: fakeSender(), clock });
        await worker.runOnce();
        clock.advance(8 * 86400_000);
        const fresh = await insertEvent(store, now(), hook.id);
        await worker.runOnce();
        expect(await worker.sweep()).toEqual({ deliveries: 0, jobs: 1 });
        await expect(jobRow(store, old.jobId)).rejects.toThrow();
        expect((await jobRow(store, fresh.jobId)).status).toBe('delivered');
        clock.advance(22 * 86400_000);
        expect((await worker.sweep()).deliveries).toBe(0);
        clock.advance(1);
        expect((await worker.sweep()).deliveries).toBe(1);
        expect(await deliveries(store, hook.id)).toHaveLength(1);
      });
    });

    if (f.openAnother) {
      const openAnother = f.openAnother;
      describe('Crash safety: several processes on one Postgres (FOR UPDATE SKIP LOCKED)', () => {
        it('two workers on separate pools racing over one queue never both deliver one attempt (receiver hits)', async () => {
          const rx = await httpsReceiver(tls);
          const other = await openAnother(store);
          const sender = createWebhookSender({ allowPrivateTargets: true, connect: { ca: tls.cert } });
          try {
            const hook = await insertWebhook(store, now(), { url: `${rx.url}/in` });
            const n = 80;
            for (let i = 0; i < n; i++) await insertEvent(store, now(), hook.id);
            const workers = [store, other, store, other].map((s) => createWebhookWorker({ store: s, sender, clock, batchSize: 5 }));
            const loop = async (w: WebhookWorker) => {
              while ((await w.runOnce()).claimed > 0);
            };
            await Promise.all(workers.map(loop));
            const ids = rx.hits.map((h) => String(h.headers['x-webhook-delivery-id']));
            expect(ids).toHaveLength(n);
            expect(new Set(ids).size).toBe(n);
            expect(await deliveries(store, hook.id)).toHaveLength(n);
          } finally {
            await sender.close();
            await other.close();
            await rx.close();
          }
        });
      });
    }
  });
}
