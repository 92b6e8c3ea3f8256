import { describe, it, expect, beforeAll, afterAll, inject } from 'vitest';
import { createServer, type Server } from 'node:http';
import { randomBytes } from 'node:crypto';
import { createPmapi, fakeClock, type Pmapi } from '@pmapi/core';
import type { SqlStore } from '@pmapi/core/sql';
import { openSqliteStore } from '@pmapi/adapter-sqlite';
import { openPostgresStore } from '@pmapi/adapter-postgres';
import { createWebhookSender, createWebhookWorker, type ClosableWebhookSender } from '@pmapi/webhooks';

/**
 * Issue 16, "Operable": local webhook development. An explicit opt-in
 * (createPmapi({ webhooks: { allowLoopback: true } }) and
 * createWebhookSender({ allowLoopback: true })) lets http://localhost,
 * 127.0.0.1 and [::1] receivers register and get deliveries; off by default
 * (spec "Webhook": https, no private or loopback targets).
 */
const pgUrl = inject('pgUrl');
const stores: { name: string; open: () => Promise<SqlStore> }[] = [
  { name: 'sqlite', open: () => openSqliteStore() },
  ...(pgUrl
    ? [{
        name: 'postgres',
        async open() {
          const schema = `loop_${randomBytes(5).toString('hex')}`;
          const s = await openPostgresStore({ connectionString: pgUrl, schema, max: 4 });
          return { ...s, close: async () => { await s.db.schema.dropSchema(schema).cascade().execute(); await s.close(); } };
        },
      }]
    : []),
];

for (const f of stores) {
  describe(`[${f.name}] Local webhook development: loopback receivers only by explicit opt-in (issue 16)`, () => {
    let server: Server;
    let port: number;
    const hits: { path: string; event: string | undefined }[] = [];
    let store: SqlStore;
    let dev: Pmapi;
    let strict: Pmapi;
    let devSender: ClosableWebhookSender;
    let strictSender: ClosableWebhookSender;
    let devToken: string;
    let strictToken: string;

    const call = async (api: Pmapi, token: string, method: string, path: string, body?: unknown) => {
      const r = await api.handle({ method, url: `/api/v3${path}`, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
      return { status: r.status, body: r.body ? JSON.parse(r.body as string) : undefined };
    };

    beforeAll(async () => {
      server = createServer((req, res) => {
        req.resume();
        req.on('end', () => {
          hits.push({ path: req.url ?? '', event: req.headers['x-webhook-event'] as string | undefined });
          res.writeHead(204).end();
        });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as { port: number }).port;
      store = await f.open();
      const clock = fakeClock('2026-05-01T10:00:00.000Z');
      // The name `localhost` is what is under test; its resolution is pinned to 127.0.0.1 (the system's may give ::1).
      devSender = createWebhookSender({ allowLoopback: true, timeoutMs: 3000, lookup: async (h) => (h === 'localhost' ? [{ address: '127.0.0.1', family: 4 }] : []) });
      strictSender = createWebhookSender({ timeoutMs: 3000 });
      const shared = { ...store, close: async () => undefined };
      dev = await createPmapi({ store: shared, clock, rateLimiter: false, webhookSender: devSender, webhooks: { allowLoopback: true } });
      strict = await createPmapi({ store: shared, clock, rateLimiter: false, webhookSender: strictSender });
      const a = await dev.admin.createWorkspace({ name: 'Dev', owner: { name: 'Dev Owner' } });
      devToken = (await dev.admin.issueToken(a.ownerMemberId, { scopes: ['read', 'write', 'delete'] })).token;
      const b = await strict.admin.createWorkspace({ name: 'Strict', owner: { name: 'Strict Owner' } });
      strictToken = (await strict.admin.issueToken(b.ownerMemberId, { scopes: ['read', 'write', 'delete'] })).token;
    });
    afterAll(async () => {
      await devSender?.close();
      await strictSender?.close();
      await store?.close();
      await new Promise((r) => server?.close(r));
    });

    it('off by default: http://localhost, 127.0.0.1 and [::1] are refused at registration (create and update) and by the sender', async () => {
      for (const url of [`http://localhost:${port}/in`, `http://127.0.0.1:${port}/in`, `http://[::1]:${port}/in`, `https://127.0.0.1:${port}/in`]) {
        const r = await call(strict, strictToken, 'POST', '/webhooks', { url, events: ['*'] });
        expect(r.status, url).toBe(400);
        expect(r.body.errors.map((e: { field: string }) => e.field)).toEqual(['url']);
      }
      const ok = await call(strict, strictToken, 'POST', '/webhooks', { url: 'https://hooks.example.invalid/in', events: ['*'] });
      expect(ok.status).toBe(201);
      const patched = await call(strict, strictToken, 'PATCH', `/webhooks/${ok.body.id}`, { url: `http://localhost:${port}/in` });
      expect(patched.status).toBe(400);
      const sent = await strictSender({ url: `http://127.0.0.1:${port}/direct`, headers: {}, body: '{}' });
      expect(sent).toMatchObject({ ok: false, error: 'refused: https required' });
      const tls = await strictSender({ url: `https://127.0.0.1:${port}/direct`, headers: {}, body: '{}' });
      expect(tls).toMatchObject({ ok: false, error: expect.stringMatching(/not a public address/) });
      expect(hits).toEqual([]);
    });

    it('opted in: loopback receivers over http register and get signed deliveries; other private or plain-http targets stay refused', async () => {
      for (const url of ['http://10.0.0.1/in', 'http://192.168.1.1/in', 'http://hooks.example.invalid/in', 'https://10.0.0.1/in', 'http://[::ffff:127.0.0.1]/in']) {
        const r = await call(dev, devToken, 'POST', '/webhooks', { url, events: ['*'] });
        expect(r.status, url).toBe(400);
      }
      const viaName = await call(dev, devToken, 'POST', '/webhooks', { url: `http://localhost:${port}/by-name`, events: ['project.created'] });
      const viaIp = await call(dev, devToken, 'POST', '/webhooks', { url: `http://127.0.0.1:${port}/by-ip`, events: ['project.created'] });
      const v6 = await call(dev, devToken, 'POST', '/webhooks', { url: `http://[::1]:${port}/v6`, events: ['task.created'] });
      expect([viaName.status, viaIp.status, v6.status]).toEqual([201, 201, 201]);
      expect((await call(dev, devToken, 'POST', '/projects', { name: 'Local' })).status).toBe(201);
      const worker = createWebhookWorker({ store, sender: devSender, clock: dev.clock });
      while ((await worker.runOnce()).claimed > 0);
      expect(hits.map((h) => h.path).sort()).toEqual(['/by-ip', '/by-name']);
      expect(hits.every((h) => h.event === 'project.created')).toBe(true);
    });

    it('the opted-in sender still refuses a loopback name resolving elsewhere and a public name resolving to loopback', async () => {
      const lying = createWebhookSender({ allowLoopback: true, timeoutMs: 3000, lookup: async (h) => (h === 'localhost' ? [{ address: '10.0.0.1', family: 4 }] : [{ address: '127.0.0.1', family: 4 }]) });
      try {
        expect(await lying({ url: `http://localhost:${port}/x`, headers: {}, body: '{}' })).toMatchObject({ ok: false, error: expect.stringMatching(/not a public address/) });
        expect(await lying({ url: `http://hooks.example.invalid:${port}/x`, headers: {}, body: '{}' })).toMatchObject({ ok: false, error: 'refused: https required' });
        expect(await lying({ url: `https://hooks.example.invalid:${port}/x`, headers: {}, body: '{}' })).toMatchObject({ ok: false, error: expect.stringMatching(/not a public address/) });
        expect(await lying({ url: `http://10.0.0.1:${port}/x`, headers: {}, body: '{}' })).toMatchObject({ ok: false, error: 'refused: https required' });
      } finally {
        await lying.close();
      }
    });
  });
}
