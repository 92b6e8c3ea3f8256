import { describe, it, expect, beforeAll, afterAll, inject } from 'vitest';
import { randomBytes } from 'node:crypto';
import Stripe from 'stripe';
import { createPmapi, fakeClock, type Pmapi, type FakeClock } from '@pmapi/core';
import type { SqlStore } from '@pmapi/core/sql';
import { openSqliteStore } from '@pmapi/adapter-sqlite';
import { openPostgresStore } from '@pmapi/adapter-postgres';
import { createWebhookSender, createWebhookWorker, type ClosableWebhookSender } from '@pmapi/webhooks';
import { httpsReceiver, selfSignedCert, type Receiver } from './helpers';

const pgUrl = inject('pgUrl');
const stripe = new Stripe('sk_test_unused');

const stores: { name: string; open: () => Promise<SqlStore & { drop?: () => Promise<void> }> }[] = [
  { name: 'sqlite', open: () => openSqliteStore() },
  ...(pgUrl
    ? [{
        name: 'postgres',
        async open() {
          const schema = `e2e_${randomBytes(5).toString('hex')}`;
          const s = await openPostgresStore({ connectionString: pgUrl, schema, max: 4 });
          return { ...s, close: async () => { await s.db.schema.dropSchema(schema).cascade().execute(); await s.close(); } };
        },
      }]
    : []),
];

/** Issue 5 "Done when": a receiver registered through the API gets correctly signed deliveries for every write. */
for (const f of stores) {
  describe(`[${f.name}] Webhooks end to end: register through the API, write, deliver over HTTPS`, () => {
    let api: Pmapi;
    let clock: FakeClock;
    let receiver: Receiver;
    let sender: ClosableWebhookSender;
    let token: string;
    let secret: string;
    let webhookId: string;

    const call = async (method: string, path: string, body?: unknown) => {
      const r = await api.handle({
        method, url: `/api/v3${path}`,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: r.status, body: r.body ? JSON.parse(r.body as string) : undefined };
    };

    beforeAll(async () => {
      const tls = selfSignedCert();
      receiver = await httpsReceiver(tls);
      // The receiver is registered by name (localhost); its resolution is pinned to 127.0.0.1 (the system's may give ::1).
      sender = createWebhookSender({ allowPrivateTargets: true, connect: { ca: tls.cert }, lookup: async (h) => (h === 'localhost' ? [{ address: '127.0.0.1', family: 4 }] : []) });
      clock = fakeClock('2026-05-01T10:00:00.000Z');
      api = await createPmapi({ store: await f.open(), clock, rateLimiter: false, webhookSender: sender });
      const ws = await api.admin.createWorkspace({ name: 'Hooks', owner: { name: 'Hook Owner' } });
      token = (await api.admin.issueToken(ws.ownerMemberId, { scopes: ['read', 'write', 'delete'] })).token;
      // IP literals in private ranges are refused at registration; a name is checked at delivery.
      const refused = await call('POST', '/webhooks', { url: receiver.url, events: ['*'] });
      expect(refused.status).toBe(400);
      const created = await call('POST', '/webhooks', { name: 'all', url: receiver.url.replace('127.0.0.1', 'localhost'), events: ['*'] });
      expect(created.status).toBe(201);
      webhookId = created.body.id;
      secret = created.body.secret;
      expect(secret).toBeTypeOf('string');
    });
    afterAll(async () => {
      await api?.close();
      await sender?.close();
      await receiver?.close();
    });

    it('every write arrives once, signed, with the envelope and headers of the spec', async () => {
      const project = (await call('POST', '/projects', { name: 'Delivered' })).body;
      const task = (await call('POST', '/tasks', { name: 'ping', projectId: project.id })).body;
      await call('PATCH', `/tasks/${task.id}`, { name: 'pong' });
      await call('POST', `/tasks/${task.id}/assignees`, { ids: [project.ownerId] });
      await call('DELETE', `/tasks/${task.id}`);
      const worker = createWebhookWorker({ store: api.store, sender, clock });
      while ((await worker.runOnce()).claimed > 0);

      const types = receiver.hits.map((h) => h.headers['x-webhook-event']);
      for (const t of ['project.created', 'status.created', 'task.created', 'task.updated', 'task.assignees.added', 'task.removed']) {
        expect(types, t).toContain(t);
      }
      const ids = receiver.hits.map((h) => h.headers['x-webhook-delivery-id']);
      expect(new Set(ids).size).toBe(ids.length);
      for (const hit of receiver.hits) {
        expect(hit.headers['content-type']).toBe('application/json');
        expect(hit.headers['user-agent']).toBe('Service-Webhooks/2.0');
        expect(hit.headers['x-webhook-id']).toBe(webhookId);
        expect(hit.headers['x-api-version']).toBe('latest');
        const event = stripe.webhooks.constructEvent(hit.body, hit.headers['x-webhook-signature'] as string, secret, 300, undefined, clock.now()) as any;
        const envelope = JSON.parse(hit.body);
        expect(event.type ?? envelope.type).toBe(hit.headers['x-webhook-event']);
        expect(hit.headers['x-webhook-delivery-id']).toBe(`${webhookId}:${envelope.eventId}`);
        expect(Object.keys(envelope).sort()).toEqual(['aggregateId', 'aggregateType', 'eventId', 'payload', 'projectId', 'teamId', 'timestamp', 'triggeredBy', 'type']);
      }
      const updated = JSON.parse(receiver.hits.find((h) => h.headers['x-webhook-event'] === 'task.updated')!.body);
      expect(updated.payload.task.name).toBe('pong');
      // The log holds one record per attempt, newest first.
      const log = await call('GET', `/webhooks/${webhookId}/deliveries?limit=100`);
      expect(log.body.data.length).toBe(receiver.hits.length);
      expect(log.body.data.every((d: any) => d.status === 'delivered')).toBe(true);
      const hook = await call('GET', `/webhooks/${webhookId}`);
      expect(hook.body.failCount).toBe(0);
      expect(hook.body.lastDeliveredAt).toBe(clock.now() ? new Date(clock.now()).toISOString() : null);
      expect(hook.body).not.toHaveProperty('secret');
    });

    it('POST /webhooks/{id}/test sends one signed synthetic delivery, not logged', async () => {
      const before = receiver.hits.length;
      const logBefore = (await call('GET', `/webhooks/${webhookId}/deliveries`)).body.data.length;
      const r = await call('POST', `/webhooks/${webhookId}/test`);
      expect(r.status).toBe(200);
      expect(receiver.hits.length).toBe(before + 1);
      const hit = receiver.hits[before]!;
      const envelope = JSON.parse(hit.body);
      expect(envelope.eventId).toMatch(/^test-/);
      expect(envelope.payload._test).toBe(true);
      expect(envelope.triggeredBy).toEqual({ source: 'system' });
      stripe.webhooks.constructEvent(hit.body, hit.headers['x-webhook-signature'] as string, secret, 300, undefined, clock.now());
      expect((await call('GET', `/webhooks/${webhookId}/deliveries`)).body.data.length).toBe(logBefore);
    });
  });
}
