import { describe, it, expect, beforeAll, afterAll, inject } from 'vitest';
import { randomBytes } from 'node:crypto';
import dns from 'node:dns';
import net from 'node:net';
import { createMemoryBlobStore, verifyWebhookSignature, type BlobStore } from '@pmapi/core';
import { openPostgresStore } from '@pmapi/adapter-postgres';
import { createTestApi, DEFAULT_START, parseDuration, type TestApi, type TestStoreFactory } from '@pmapi/testing';

// Issue 17 "A public test harness": @pmapi/testing behaves the same on both stores (SQLite by default, Postgres through `store`).
const pgUrl = inject('pgUrl');
const stores: Array<{ name: string; store?: TestStoreFactory }> = [{ name: 'sqlite' }];
if (pgUrl) {
  stores.push({
    name: 'postgres',
    store: {
      name: 'postgres',
      async open(o) {
        const schema = `t_${randomBytes(6).toString('hex')}`;
        const s = await openPostgresStore({ connectionString: pgUrl, schema, max: o?.max ?? 4, onQuery: o?.onQuery });
        return { ...s, async close() { await s.db.schema.dropSchema(schema).cascade().execute(); await s.close(); } };
      },
    },
  });
}

const DAY = 24 * 3600_000;

/** The member a token acts as: a reminder's createdById is its creator's member id (spec "Reminder"). */
async function whoAmI(t: TestApi, m: { token: string }): Promise<string> {
  const me = t.as(m);
  const p = await me.post('/projects', { name: 'Mine' });
  expect(p.status, JSON.stringify(p.body)).toBe(201);
  const task = (await me.post('/tasks', { name: 'Mine', projectId: p.body.id })).body;
  const r = await me.post('/reminders', { taskId: task.id, date: new Date(t.clock.now() + 3_600_000).toISOString() });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.createdById;
}

for (const { name, store } of stores) {
  describe(`[${name}] @pmapi/testing (issue 17)`, () => {
    let t: TestApi;
    beforeAll(async () => {
      t = await createTestApi(store ? { store } : {});
    });
    afterAll(() => t?.close());

    it('starts a fake clock at a fixed instant and seeds two workspaces whose members act with their own tokens', async () => {
      expect(new Date(t.clock.now()).toISOString()).toBe('2026-03-01T09:00:00.000Z');
      expect(t.a.id).not.toBe(t.b.id);
      expect([t.a.owner.role, t.a.regular.role, t.a.client.role]).toEqual(['owner', 'regular', 'client']);
      expect(await whoAmI(t, t.a.regular)).toBe(t.a.regular.id);
      expect(await whoAmI(t, t.b.owner)).toBe(t.b.owner.id);
      const roster = await t.as(t.b.owner).get('/members');
      expect(roster.body.data.map((m: { name: string }) => m.name).sort()).toEqual(['Beta Client', 'Beta Owner', 'Beta Regular']);
      expect((await t.anon.get('/members')).status).toBe(401);
    });

    it('as(member) carries that member\'s role: a client gets 403 permission_denied creating a webhook, the owner 201', async () => {
      const denied = await t.as(t.a.client).post('/webhooks', { url: 'https://hooks.example.com/in', events: ['task.*'] });
      expect(denied.status).toBe(403);
      expect(denied.body.code).toBe('permission_denied');
      const made = await t.as(t.a.owner).post('/webhooks', { url: 'https://hooks.example.com/in', events: ['task.*'] });
      expect(made.status).toBe(201);
      await t.as(t.a.owner).del(`/webhooks/${made.body.id}`);
    });

    it('t.workspace() seeds members with the roles asked for, each with a working token', async () => {
      const ws = await t.workspace({ name: 'Gamma', members: [{ role: 'manager' }, { role: 'client', name: 'Guest' }] });
      expect(ws.members.map((m) => [m.name, m.role])).toEqual([['Gamma Manager', 'manager'], ['Guest', 'client']]);
      expect(ws.manager?.id).toBe(ws.members[0]!.id);
      expect(await whoAmI(t, ws.manager!)).toBe(ws.manager!.id);
      expect((await t.as(ws.client!).get('/members')).status).toBe(200);
      // Another tenant's member sees nothing of it.
      expect((await t.as(t.a.owner).get(`/members/${ws.owner.id}`)).status).toBe(404);
    });

    it('advance + runJobs: a reminder fires when its date comes, not before', async () => {
      const owner = t.as(t.a.owner);
      const p = (await owner.post('/projects', { name: 'Reminded' })).body;
      const task = (await owner.post('/tasks', { name: 'Call back', projectId: p.id })).body;
      const rem = await owner.post('/reminders', { taskId: task.id, date: new Date(t.clock.now() + 10 * 60_000).toISOString() });
      expect(rem.status, JSON.stringify(rem.body)).toBe(201);
      await t.advance('9m');
      expect((await t.runJobs()).reminders.fired).toBe(0);
      expect((await owner.get(`/reminders/${rem.body.id}`)).body.firedAt).toBeNull();
      await t.advance('1m');
      const run = await t.runJobs();
      expect(run.reminders.fired).toBe(1);
      expect((await owner.get(`/reminders/${rem.body.id}`)).body.firedAt).toBe(new Date(t.clock.now()).toISOString());
    });

    it('advance + runJobs: a trashed project is purged after the 30-day retention, not a day before', async () => {
      const owner = t.as(t.a.owner);
      const p = (await owner.post('/projects', { name: 'Trash' })).body;
      expect((await owner.del(`/projects/${p.id}`)).status).toBe(204);
      await t.advance(29 * DAY);
      await t.runJobs();
      const back = await owner.post(`/projects/${p.id}/restore`);
      expect(back.status, JSON.stringify(back.body)).toBe(200);
      expect((await owner.del(`/projects/${p.id}`)).status).toBe(204);
      const trashed = async () => (await owner.get('/projects?purgeAt[notNull]=true')).body.data.map((x: { id: string }) => x.id);
      await t.advance('29d');
      await t.runJobs();
      expect(await trashed()).toContain(p.id);
      await t.advance('1d');
      const run = await t.runJobs();
      expect(run.purge.purged).toBeGreaterThanOrEqual(1);
      expect(await trashed()).not.toContain(p.id);
      expect((await owner.get(`/projects/${p.id}`)).status).toBe(404);
      expect((await owner.post(`/projects/${p.id}/restore`)).status).toBe(404);
    });

    it('advance + runJobs: a purged file\'s bytes leave the blob store in the same run (purge before file jobs)', async () => {
      const blobs = createMemoryBlobStore();
      const live = new Set<string>();
      const tracked: BlobStore = { ...blobs, async put(k, b) { await blobs.put(k, b); live.add(k); }, async delete(k) { await blobs.delete(k); live.delete(k); } };
      const f = await createTestApi({ ...(store ? { store } : {}), api: { files: { store: tracked } } });
      try {
        const owner = f.as(f.a.owner);
        const p = (await owner.post('/projects', { name: 'Files' })).body;
        const slot = await owner.post('/files/upload-url', { size: 5 });
        expect(slot.status, JSON.stringify(slot.body)).toBe(200);
        expect((await f.fetchLink('PUT', slot.body.url, new TextEncoder().encode('bytes'))).status).toBe(200);
        const file = await owner.post('/files', { size: 5, uploadKey: slot.body.uploadKey, name: 'a.txt', projectId: p.id });
        expect(file.status, JSON.stringify(file.body)).toBe(201);
        await f.runJobs();
        expect(live.size).toBe(1);
        expect((await owner.del(`/files/${file.body.id}`)).status).toBe(204);
        await f.advance('30d');
        const run = await f.runJobs();
        expect(run.purge.purged).toBeGreaterThanOrEqual(1);
        expect(run.files.removed).toBe(1);
        expect([...live]).toEqual([]);
        // Nothing is left due.
        expect((await f.runJobs()).files.claimed).toBe(0);
      } finally {
        await f.close();
      }
    });

    it('advance + runJobs: a recurring rule makes its task when its time comes, and the task.created delivery goes out in the same run', async () => {
      const owner = t.as(t.a.owner);
      const p = (await owner.post('/projects', { name: 'Routine' })).body;
      const hook = (await owner.post('/webhooks', { url: 'https://receiver.example.com/rec', events: ['task.created'] })).body;
      const rule = await owner.post('/recurring-rules', { name: 'Water the plants', frequency: 'daily', projectId: p.id });
      expect(rule.status, JSON.stringify(rule.body)).toBe(201);
      t.deliveries.length = 0;
      await t.advance(Date.parse(rule.body.nextRunAt) - t.clock.now() - 1);
      expect((await t.runJobs()).recurring.created).toBe(0);
      await t.advance(1);
      const run = await t.runJobs();
      expect(run.recurring.created).toBe(1);
      const made = (await owner.get('/tasks', { query: { 'recurringRuleId[eq]': rule.body.id } })).body.data;
      expect(made.map((x: { name: string }) => x.name)).toEqual(['Water the plants']);
      expect(t.deliveries.map((d) => [d.headers['x-webhook-event'], d.body.aggregateId])).toEqual([['task.created', made[0].id]]);
      await owner.del(`/webhooks/${hook.id}`);
    });

    it('runJobs delivers webhooks into t.deliveries (no network), signed with the webhook\'s secret at the fake time', async () => {
      const owner = t.as(t.a.owner);
      const hook = await owner.post('/webhooks', { url: 'https://receiver.example.com/pm', events: ['project.created'] });
      expect(hook.status).toBe(201);
      t.deliveries.length = 0;
      const p = (await owner.post('/projects', { name: 'Announced' })).body;
      expect(t.deliveries).toEqual([]);
      const run = await t.runJobs();
      expect(run.webhooks.delivered).toBe(1);
      expect(t.deliveries).toHaveLength(1);
      const d = t.deliveries[0]!;
      expect(d.url).toBe('https://receiver.example.com/pm');
      expect(d.headers['x-webhook-event']).toBe('project.created');
      expect(d.body.type).toBe('project.created');
      expect(d.body.aggregateId).toBe(p.id);
      expect(d.body.payload.project.name).toBe('Announced');
      const now = t.clock.now();
      expect(verifyWebhookSignature(d.raw, d.headers['x-webhook-signature'], hook.body.secret, { now })).toBe(true);
      expect(verifyWebhookSignature(d.raw, d.headers['x-webhook-signature'], 'whsec_wrong', { now })).toBe(false);
      // Nothing more is due: a second run delivers nothing again.
      expect((await t.runJobs()).webhooks.claimed).toBe(0);
      await owner.del(`/webhooks/${hook.body.id}`);
    });

    it('countQueries returns the statements a request ran', async () => {
      const none = await t.countQueries(async () => {});
      expect(none).toEqual([]);
      const sql = await t.countQueries(() => t.as(t.a.owner).get('/projects'));
      expect(sql.length).toBeGreaterThan(0);
      expect(sql.some((q) => /projects/i.test(q))).toBe(true);
      // Outside countQueries nothing is collected.
      await t.as(t.a.owner).get('/projects');
      expect((await t.countQueries(async () => {})).length).toBe(0);
    });

    it('outbox lists the events of writes', async () => {
      const before = new Set((await t.outbox()).map((e) => e.eventId));
      const l = await t.as(t.a.owner).post('/labels', { name: `L ${name}` });
      const added = (await t.outbox()).filter((e) => !before.has(e.eventId));
      expect(added.map((e) => [e.type, e.aggregateId])).toEqual([['label.created', l.body.id]]);
    });
  });
}

describe('@pmapi/testing options (issue 17)', () => {
  it('a failing receiver makes the worker retry after its backoff; the retry is captured too', async () => {
    let answer = 500;
    const t = await createTestApi({ webhookReceiver: () => answer });
    try {
      await t.as(t.a.owner).post('/webhooks', { url: 'https://receiver.example.com/x', events: ['label.created'] });
      await t.as(t.a.owner).post('/labels', { name: 'Retry me' });
      expect((await t.runJobs()).webhooks.failed).toBe(1);
      expect((await t.runJobs()).webhooks.claimed).toBe(0);
      answer = 204;
      await t.advance('1s');
      expect((await t.runJobs()).webhooks.delivered).toBe(1);
      expect(t.deliveries.map((d) => d.status)).toEqual([500, 204]);
      expect(t.deliveries[0]!.headers['x-webhook-delivery-id']).toBe(t.deliveries[1]!.headers['x-webhook-delivery-id']);
    } finally {
      await t.close();
    }
  });

  it('retries follow the spec\'s schedule exactly (4 attempts, 1 s, 10 s, 60 s apart), each freshly signed, with a real receiver\'s headers', async () => {
    const t = await createTestApi({ webhookReceiver: () => 503 });
    try {
      const hook = (await t.as(t.a.owner).post('/webhooks', { url: 'https://receiver.example.com/r', events: ['label.created'] })).body;
      await t.as(t.a.owner).post('/labels', { name: 'Never lands' });
      const start = t.clock.now();
      expect((await t.runJobs()).webhooks.failed).toBe(1);
      for (const wait of [1_000, 10_000, 60_000]) {
        await t.advance(wait - 1);
        expect((await t.runJobs()).webhooks.claimed).toBe(0);
        await t.advance(1);
        expect((await t.runJobs()).webhooks.failed).toBe(1);
      }
      await t.advance('1d');
      expect((await t.runJobs()).webhooks.claimed).toBe(0);
      expect(t.deliveries.map((d) => d.at - start)).toEqual([0, 1_000, 11_000, 71_000]);
      const ids = new Set(t.deliveries.map((d) => d.headers['x-webhook-delivery-id']));
      expect(ids.size).toBe(1);
      for (const d of t.deliveries) {
        expect(Object.keys(d.headers).sort()).toEqual(['content-type', 'user-agent', 'x-api-version', 'x-webhook-delivery-id', 'x-webhook-event', 'x-webhook-id', 'x-webhook-signature']);
        expect(d.headers['content-type']).toBe('application/json');
        expect(d.headers['user-agent']).toBe('Service-Webhooks/2.0');
        expect(d.headers['x-webhook-id']).toBe(hook.id);
        expect(d.headers['x-webhook-delivery-id']).toBe(`${hook.id}:${d.body.eventId}`);
        expect(d.headers['x-webhook-signature']).toMatch(new RegExp(`^t=${Math.floor(d.at / 1000)},v1=[0-9a-f]{64}$`));
        expect(verifyWebhookSignature(d.raw, d.headers['x-webhook-signature'], hook.secret, { now: d.at })).toBe(true);
      }
      // The delivery log holds the four failed attempts.
      const log = await t.as(t.a.owner).get(`/webhooks/${hook.id}/deliveries`);
      expect(log.body.data.map((r: { status: string; responseStatus: number }) => [r.status, r.responseStatus])).toEqual(Array(4).fill(['failed', 503]));
    } finally {
      await t.close();
    }
  });

  it('api.files options keep the in-memory byte store unless they bring their own', async () => {
    const t = await createTestApi({ api: { files: { maxUploadBytes: 4 } } });
    try {
      const owner = t.as(t.a.owner);
      const ok = await owner.post('/files/upload-url', { size: 4 });
      expect(ok.status, JSON.stringify(ok.body)).toBe(200);
      expect((await t.fetchLink('PUT', ok.body.url, 'four')).status).toBe(200);
      const big = await owner.post('/files/upload-url', { size: 5 });
      expect(big.status, JSON.stringify(big.body)).toBe(400);
    } finally {
      await t.close();
    }
  });

  it('two harnesses in one process share nothing: clocks, data, tokens, counted queries, deliveries', async () => {
    const one = await createTestApi();
    const two = await createTestApi({ now: '2031-01-01T00:00:00.000Z' });
    try {
      await one.advance('3d');
      expect(two.clock.now()).toBe(Date.parse('2031-01-01T00:00:00.000Z'));
      expect(one.clock.now()).toBe(Date.parse(DEFAULT_START) + 3 * DAY);
      expect((await two.as(one.a.owner).get('/members')).status).toBe(401);
      await one.as(one.a.owner).post('/webhooks', { url: 'https://receiver.example.com/one', events: ['project.created'] });
      await two.as(two.a.owner).post('/webhooks', { url: 'https://receiver.example.com/two', events: ['project.created'] });
      const counted = await one.countQueries(async () => {
        await two.as(two.a.owner).post('/projects', { name: 'Two' });
      });
      expect(counted).toEqual([]);
      await one.runJobs();
      await two.runJobs();
      expect(one.deliveries).toEqual([]);
      expect(two.deliveries.map((d) => [d.url, d.body.payload.project.name, d.at])).toEqual([['https://receiver.example.com/two', 'Two', two.clock.now()]]);
      expect((await one.as(one.a.owner).get('/projects')).body.data).toEqual([]);
      await one.close();
      // The other one works on after the first is closed.
      expect((await two.as(two.a.owner).get('/projects')).body.data.map((p: { name: string }) => p.name)).toEqual(['Two']);
    } finally {
      await one.close().catch(() => undefined);
      await two.close();
    }
  });

  it('no delivery path touches the network: no socket, DNS look-up or fetch while hooks fire, retry and are tested (SQLite)', async () => {
    const opened: string[] = [];
    const connect = net.Socket.prototype.connect;
    const lookup = dns.lookup;
    const fetch = globalThis.fetch;
    net.Socket.prototype.connect = function (this: net.Socket, ...args: unknown[]) {
      opened.push(`connect ${JSON.stringify(args[0])}`);
      return connect.apply(this, args as never);
    } as typeof connect;
    (dns as { lookup: unknown }).lookup = (...args: unknown[]) => {
      opened.push(`lookup ${String(args[0])}`);
      return (lookup as (...a: unknown[]) => unknown)(...args);
    };
    globalThis.fetch = ((input: unknown) => {
      opened.push(`fetch ${String(input)}`);
      return fetch(input as never);
    }) as typeof fetch;
    let answer = 500;
    const t = await createTestApi({ webhookReceiver: () => answer });
    try {
      const owner = t.as(t.a.owner);
      const hook = (await owner.post('/webhooks', { url: 'https://hooks.example.com/in', events: ['project.*'] })).body;
      await owner.post('/projects', { name: 'Quiet' });
      await t.runJobs();
      answer = 200;
      await t.advance('1s');
      await t.runJobs();
      expect((await owner.post(`/webhooks/${hook.id}/test`)).status).toBe(200);
      expect(t.deliveries.map((d) => d.status)).toEqual([500, 200, 200]);
    } finally {
      await t.close();
      net.Socket.prototype.connect = connect;
      (dns as { lookup: unknown }).lookup = lookup;
      globalThis.fetch = fetch;
    }
    expect(opened).toEqual([]);
  });

  it('now, onResponse, seed: false, rate limits on request', async () => {
    const seen: string[] = [];
    const t = await createTestApi({ now: '2030-01-02T03:04:05.000Z', seed: false, rateLimits: true, onResponse: (m, url, r) => void seen.push(`${m} ${url} ${r.status}`) });
    try {
      expect(t.clock.now()).toBe(Date.parse('2030-01-02T03:04:05.000Z'));
      expect(() => t.a).toThrow(/seed: false/);
      const ws = await t.workspace({ members: [] });
      expect(ws.name).toBe('Workspace 1');
      const r = await t.as(ws.owner).get('/members', { query: { limit: 1 } });
      expect(r.status).toBe(200);
      // The limiter is on: its headers are on the answer.
      expect(Object.keys(r.headers).some((h) => h.startsWith('x-ratelimit') || h === 'ratelimit' || h === 'ratelimit-policy')).toBe(true);
      expect(seen).toEqual(['GET /api/v3/members?limit=1 200']);
    } finally {
      await t.close();
    }
    const off = await createTestApi();
    try {
      const r = await off.as(off.a.owner).get('/members');
      expect(Object.keys(r.headers).some((h) => h.startsWith('x-ratelimit') || h === 'ratelimit' || h === 'ratelimit-policy')).toBe(false);
    } finally {
      await off.close();
    }
  });

  it('POST /webhooks/{id}/test is captured (and answers 503 with webhookTestRoute: false)', async () => {
    const t = await createTestApi();
    const off = await createTestApi({ webhookTestRoute: false });
    try {
      const h = (await t.as(t.a.owner).post('/webhooks', { url: 'https://receiver.example.com/t', events: ['task.*'] })).body;
      const r = await t.as(t.a.owner).post(`/webhooks/${h.id}/test`);
      expect(r.status, JSON.stringify(r.body)).toBeLessThan(300);
      expect(t.deliveries).toHaveLength(1);
      expect(t.deliveries[0]!.url).toBe('https://receiver.example.com/t');
      const h2 = (await off.as(off.a.owner).post('/webhooks', { url: 'https://receiver.example.com/t', events: ['task.*'] })).body;
      expect((await off.as(off.a.owner).post(`/webhooks/${h2.id}/test`)).status).toBe(503);
    } finally {
      await t.close();
      await off.close();
    }
  });

  it('paths follow the API\'s basePath, given as options or by a function of the clock and store', async () => {
    for (const api of [{ basePath: '/v3' }, () => ({ basePath: '/v3/' })]) {
      const urls: string[] = [];
      const t = await createTestApi({ api, onResponse: (_m, url) => void urls.push(url) });
      try {
        expect(t.basePath).toBe('/v3');
        expect((await t.as(t.a.owner).get('/members')).status).toBe(200);
        expect(urls).toEqual(['/v3/members']);
      } finally {
        await t.close();
      }
    }
  });

  it('an unreadable now is refused before any store is opened (no API on a NaN clock)', async () => {
    let opened = 0;
    const store: TestStoreFactory = async () => {
      opened++;
      throw new Error('not reached');
    };
    for (const now of ['next tuesday', Number.NaN, new Date('nope')]) {
      await expect(createTestApi({ now, store })).rejects.toThrow(/now must be a time/);
    }
    expect(opened).toBe(0);
    const t = await createTestApi({ now: new Date('2027-05-06T07:08:09.000Z'), seed: false });
    expect(t.clock.now()).toBe(Date.parse('2027-05-06T07:08:09.000Z'));
    await t.close();
  });

  it('a misspelt option is refused with a did-you-mean, before any store is opened', async () => {
    let opened = 0;
    const store: TestStoreFactory = async () => {
      opened++;
      throw new Error('not reached');
    };
    await expect(createTestApi({ store, webhookReciever: () => 500 } as never)).rejects.toThrow(/createTestApi options\.webhookReciever is not an option \(did you mean options\.webhookReceiver\?\)/);
    await expect(createTestApi({ store, rateLimit: true } as never)).rejects.toThrow(/did you mean options\.rateLimits\?/);
    await expect(createTestApi('memory' as never)).rejects.toThrow(/createTestApi takes an options object/);
    expect(opened).toBe(0);
  });

  it('after close(), requests and runJobs say the test API is closed (no 500 from a destroyed driver); close() again is a no-op', async () => {
    const errors: unknown[] = [];
    const t = await createTestApi({ onError: (e) => void errors.push(e) });
    const owner = t.as(t.a.owner);
    await t.close();
    await t.close();
    await expect(owner.get('/members')).rejects.toThrow(/GET \/members after t\.close\(\)/);
    await expect(t.runJobs()).rejects.toThrow(/runJobs\(\) after t\.close\(\)/);
    await expect(t.fetchLink('GET', '/api/v3/blobs/x')).rejects.toThrow(/after t\.close\(\)/);
    expect(errors).toEqual([]);
  });

  it('parseDuration reads ms and unit text and refuses the rest', () => {
    expect(parseDuration(1500)).toBe(1500);
    expect(parseDuration('2h')).toBe(7_200_000);
    expect(parseDuration('1h30m')).toBe(5_400_000);
    expect(parseDuration('31d')).toBe(31 * DAY);
    expect(parseDuration('250ms')).toBe(250);
    expect(() => parseDuration('2 hours')).toThrow(/cannot read the duration/);
    expect(() => parseDuration('')).toThrow(/cannot read the duration/);
    expect(() => parseDuration(-1)).toThrow(RangeError);
  });
});
