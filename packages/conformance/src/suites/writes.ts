import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import fc from 'fast-check';
import { builtinResources } from '@pmapi/core';
import { harness, type Harness, type Reply, type StoreFactory } from '../kit';

/** ISO 8601, UTC, millisecond precision (spec "Conventions for all v3 resources"). */
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const ID = /^[0-9A-Za-z_!]+$/;
const TEN_MINUTES = 10 * 60 * 1000;

/** A response header, looked up case-insensitively. */
function hdr(r: Reply, name: string): string | undefined {
  const k = Object.keys(r.headers).find((x) => x.toLowerCase() === name.toLowerCase());
  return k === undefined ? undefined : r.headers[k];
}

/** Status and code of a problem response (with the body in the failure message). */
function expectProblem(r: Reply, status: number, code: string): void {
  expect({ status: r.status, code: r.body?.code }, JSON.stringify(r.body)).toEqual({ status, code });
}

/** Every field of the spec's problem-body table, right for this response. */
function expectProblemShape(r: Reply, instance: string): void {
  const b = r.body;
  expect(hdr(r, 'content-type') ?? '').toMatch(/^application\/json\b/);
  expect(b).toBeTypeOf('object');
  expect(b.code).toBeTypeOf('string');
  expect(b.code).toMatch(/^[a-z0-9_]+$/);
  expect(b.type).toBe(b.code);
  expect(b.title).toBeTypeOf('string');
  expect(b.title.length).toBeGreaterThan(0);
  expect(b.status).toBe(r.status);
  expect(Number.isInteger(b.status)).toBe(true);
  expect(b.detail).toBeTypeOf('string');
  expect(b.detail.length).toBeGreaterThan(0);
  expect(b.instance).toBe(instance);
  expect(b.requestId).toBeTypeOf('string');
  expect(b.requestId.length).toBeGreaterThan(0);
  expect(hdr(r, 'x-request-id')).toBe(b.requestId);
  // Default docsBaseUrl: the API's own reference pages, a path from the mount (issue 17).
  expect(b.docsUrl).toBe(`/api/v3/errors/${b.code}`);
}

function expectFieldErrors(r: Reply): Array<{ field: string; code: string; message: string }> {
  expect(Array.isArray(r.body.errors), JSON.stringify(r.body)).toBe(true);
  expect(r.body.errors.length).toBeGreaterThan(0);
  for (const e of r.body.errors) {
    expect(e.field).toBeTypeOf('string');
    expect(e.code).toBeTypeOf('string');
    expect(e.code.length).toBeGreaterThan(0);
    expect(e.message).toBeTypeOf('string');
    expect(e.message.length).toBeGreaterThan(0);
  }
  return r.body.errors;
}

const without = (o: Record<string, unknown>, keys: string[]) => Object.fromEntries(Object.entries(o).filter(([k]) => !keys.includes(k)));
const STAMP_KEYS = ['updatedAt', 'updatedByActorId', 'updatedByActorType'];

export function writesSuite(factory: StoreFactory): void {
  // ---------------------------------------------------------------------------
  describe(`[${factory.name}] v3 Errors: the problem body`, () => {
    let h: Harness;
    let projectId: string;
    beforeAll(async () => {
      h = await harness(factory);
      projectId = (await h.project({ name: 'Errors' })).id;
    });
    afterAll(() => h.close());

    it('every error response carries type, title, status, detail, instance, code, requestId and docsUrl, as application/json', async () => {
      const task = await h.task(projectId);
      const list = (await h.post('/lists', { name: 'L', projectId })).body;
      await h.post('/tasks', { name: 'k', projectId }, { headers: { 'idempotency-key': 'shape-key' } });
      const cases: Array<[string, () => Promise<Reply>, number, string]> = [
        ['/api/v3/tasks/Missing1234', () => h.get('/tasks/Missing1234?expand=project'), 404, 'resource_not_found'],
        ['/api/v3/tasks', () => h.post('/tasks', { name: '', projectId }), 400, 'validation_failed'],
        ['/api/v3/tasks', () => h.get('/tasks', { token: null }), 401, 'unauthorized'],
        [`/api/v3/tasks/${task.id}`, () => h.req('PUT', `/tasks/${task.id}`, { body: {} }), 405, 'method_not_allowed'],
        ['/api/v3/projects', () => h.req('POST', '/projects', { raw: 'name=x', headers: { 'content-type': 'text/plain' } }), 415, 'unsupported_media_type'],
        ['/api/v3/nope', () => h.get('/nope'), 400, 'resource_unknown'],
        [`/api/v3/tasks/${task.id}`, () => h.patch(`/tasks/${task.id}`, { name: 'x', expectedUpdatedAt: '2000-01-01T00:00:00.000Z' }), 409, 'stale_write'],
        ['/api/v3/tasks', () => h.post('/tasks', { name: 'other', projectId }, { headers: { 'idempotency-key': 'shape-key' } }), 422, 'idempotency_key_reused'],
        [`/api/v3/lists/${list.id}/goals`, () => h.post(`/lists/${list.id}/goals`, { ids: ['g1'] }), 404, 'm2m_target_not_found'],
        [`/api/v3/tasks/${task.id}`, () => h.patch(`/tasks/${task.id}`, {}), 400, 'empty_update'],
      ];
      const seenIds = new Set<string>();
      for (const [instance, call, status, code] of cases) {
        const r = await call();
        expectProblem(r, status, code);
        expectProblemShape(r, instance);
        seenIds.add(r.body.requestId);
      }
      // Request ids identify requests: no two responses share one.
      expect(seenIds.size).toBe(cases.length);
    });

    it('validation errors carry errors[] of {field, code, message}', async () => {
      const r = await h.post('/tasks', { name: '', projectId, dueAt: 'tomorrow', storyPoints: 'many' });
      expectProblem(r, 400, 'validation_failed');
      expectProblemShape(r, '/api/v3/tasks');
      const errors = expectFieldErrors(r);
      const fields = errors.map((e) => e.field);
      expect(fields).toEqual(expect.arrayContaining(['name', 'dueAt', 'storyPoints']));
    });

    it('extra fields sit at the top level of the body', async () => {
      const ids = Array.from({ length: 151 }, (_, i) => `Id${i}`);
      const big = await h.post(`/portfolios/${h.a.generalPortfolioId}/members`, { ids });
      expectProblem(big, 400, 'batch_too_large');
      expectProblemShape(big, `/api/v3/portfolios/${h.a.generalPortfolioId}/members`);
      expect(big.body.max).toBe(150);
      expect(big.body.received).toBe(151);
      const missing = await h.post(`/portfolios/${h.a.generalPortfolioId}/members`, { ids: ['NoSuchMember1'] });
      expectProblem(missing, 404, 'm2m_target_not_found');
      expect(missing.body.missing).toEqual(['NoSuchMember1']);
      const bad = await h.post('/tasks', { name: 'x', projectId, nope: 1 });
      expect(Array.isArray(bad.body.errors)).toBe(true);
      for (const r of [big, missing, bad]) {
        for (const nested of ['extras', 'extensions', 'data', 'details', 'meta']) expect(r.body[nested]).toBeUndefined();
      }
    });
  });

  // ---------------------------------------------------------------------------
  describe(`[${factory.name}] v3 Standard operations rule 1: server-assigned fields in create bodies`, () => {
    let h: Harness;
    beforeAll(async () => {
      h = await harness(factory);
    });
    afterAll(() => h.close());

    it('ignores id, timestamps, actor fields, niceId and secondaryColor sent when creating a project', async () => {
      const fake = '00000000-0000-4000-8000-000000000000';
      const r = await h.post('/projects', {
        name: 'Rule One', color: '#ff0000',
        id: 'MyOwnId1', createdAt: '2000-01-01T00:00:00.000Z', updatedAt: '2000-01-01T00:00:00.000Z',
        niceId: 'ZZZ', secondaryColor: '#000000', createdByActorId: fake, updatedByActorId: fake,
        createdByActorType: 'agent', updatedByActorType: 'agent', ownerId: h.a.regular.id,
        purgeAt: '2030-01-01T00:00:00.000Z', deletedById: h.a.regular.id, discussionChatId: 'Chat1',
      });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      const p = r.body;
      expect(p.id).not.toBe('MyOwnId1');
      expect(p.createdAt).toBe('2026-03-01T09:00:00.000Z');
      expect(p.updatedAt).toBe('2026-03-01T09:00:00.000Z');
      expect(p.niceId).toBe('RO');
      expect(p.secondaryColor).toBe('#ffcccc');
      expect(p.createdByActorId).not.toBe(fake);
      expect(p.updatedByActorId).not.toBe(fake);
      expect(p.createdByActorType).toBe('human');
      expect(p.ownerId).not.toBe(h.a.regular.id);
      expect(p.purgeAt).toBeNull();
      expect(p.deletedById).toBeNull();
      expect(p.discussionChatId).not.toBe('Chat1');
      expectProblem(await h.get('/projects/MyOwnId1'), 404, 'resource_not_found');
      const got = await h.get(`/projects/${p.id}`);
      expect(got.body.secondaryColor).toBe('#ffcccc');
      expect(got.body.niceId).toBe('RO');
    });

    it('ignores isGeneral, secondaryColor and ownerId sent when creating a portfolio', async () => {
      const r = await h.post('/portfolios', {
        name: 'Side', color: '#0000ff', isGeneral: true, secondaryColor: '#123456', ownerId: h.a.regular.id,
      });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      expect(r.body.isGeneral).toBe(false);
      expect(r.body.secondaryColor).toBe('#ccccff');
      expect(r.body.ownerId).toBe(h.a.owner.id);
      const generals = await h.get('/portfolios?isGeneral[eq]=true');
      expect(generals.body.data.map((x: any) => x.id)).toEqual([h.a.generalPortfolioId]);
    });

    it('ignores niceId, createdById, completedAt and archivedAt sent when creating a task (recurringRuleId is settable: suites/resources/recurring-rules.ts)', async () => {
      const p = await h.project({ name: 'Task Rule One' });
      const r = await h.post('/tasks', {
        name: 'T', projectId: p.id, niceId: '999', createdById: h.a.regular.id, completedAt: '2020-01-01T00:00:00.000Z',
        completedById: h.a.regular.id, archivedAt: '2020-01-01T00:00:00.000Z', archivedById: h.a.regular.id,
      });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      expect(r.body.niceId).toBe('1');
      expect(r.body.createdById).toBe(h.a.owner.id);
      expect(r.body.completed).toBe(false);
      expect(r.body.completedAt).toBeNull();
      expect(r.body.completedById).toBeNull();
      expect(r.body.archivedAt).toBeNull();
      expect(r.body.archivedById).toBeNull();
      expect(r.body.recurringRuleId).toBeNull();
    });

    it('refuses unknown keys with validation_failed naming each key, and creates nothing', async () => {
      const p = await h.project({ name: 'Unknown Keys' });
      const r = await h.post('/tasks', { name: 'T', projectId: p.id, bogusField: 1, colour: '#fff' });
      expectProblem(r, 400, 'validation_failed');
      const errors = expectFieldErrors(r);
      const named = errors.filter((e) => e.code === 'unrecognized_key').map((e) => e.field).sort();
      expect(named).toEqual(['bogusField', 'colour']);
      const listed = await h.get(`/tasks?projectId=${p.id}`);
      expect(listed.body.data).toHaveLength(0);
      // Keys that collide with JavaScript object internals are unknown keys like any other.
      const proto = await h.req('POST', '/tasks', {
        raw: JSON.stringify({ name: 'T', projectId: p.id }).replace(/}$/, ',"__proto__":{"x":1},"constructor":1,"toString":"x"}'),
        headers: { 'content-type': 'application/json' },
      });
      expectProblem(proto, 400, 'validation_failed');
      expect(expectFieldErrors(proto).map((e) => e.field).sort()).toEqual(['__proto__', 'constructor', 'toString']);
      expect((await h.get(`/tasks?projectId=${p.id}`)).body.data).toHaveLength(0);
    });

    it('refuses unknown keys in an update body and applies none of the body', async () => {
      const p = await h.project({ name: 'Unknown Patch' });
      const t = await h.task(p.id, { name: 'Before' });
      const r = await h.patch(`/tasks/${t.id}`, { name: 'After', nope: true });
      expectProblem(r, 400, 'validation_failed');
      expect(expectFieldErrors(r).some((e) => e.field === 'nope' && e.code === 'unrecognized_key')).toBe(true);
      const got = await h.get(`/tasks/${t.id}`);
      expect(got.body.name).toBe('Before');
      expect(got.body.updatedAt).toBe(t.updatedAt);
    });
  });

  // ---------------------------------------------------------------------------
  describe(`[${factory.name}] v3 Standard operations rule 2: partial updates and empty_update`, () => {
    let h: Harness;
    let projectId: string;
    beforeAll(async () => {
      h = await harness(factory);
      projectId = (await h.project({ name: 'Rule Two' })).id;
    });
    afterAll(() => h.close());

    it('PATCH with {} or with no body is 400 empty_update and changes nothing', async () => {
      const t = await h.task(projectId);
      expectProblem(await h.patch(`/tasks/${t.id}`, {}), 400, 'empty_update');
      expectProblem(await h.req('PATCH', `/tasks/${t.id}`), 400, 'empty_update');
      expectProblem(await h.patch(`/projects/${projectId}`, {}), 400, 'empty_update');
      const got = await h.get(`/tasks/${t.id}`);
      expect(got.body.updatedAt).toBe(t.updatedAt);
    });

    it('PATCH holding only read-only fields (or only expectedUpdatedAt) is 400 empty_update', async () => {
      const t = await h.task(projectId);
      const r = await h.patch(`/tasks/${t.id}`, { id: 'Other1', createdAt: t.createdAt, niceId: '77', createdByActorId: t.createdByActorId, completedAt: null });
      expectProblem(r, 400, 'empty_update');
      expectProblem(await h.patch(`/tasks/${t.id}`, { expectedUpdatedAt: t.updatedAt }), 400, 'empty_update');
      const portfolio = await h.patch(`/portfolios/${h.a.generalPortfolioId}`, { isGeneral: false, secondaryColor: '#000000' });
      expectProblem(portfolio, 400, 'empty_update');
      const got = await h.get(`/tasks/${t.id}`);
      expect(got.body.niceId).toBe(t.niceId);
      expect(got.body.updatedAt).toBe(t.updatedAt);
      expect((await h.get(`/portfolios/${h.a.generalPortfolioId}`)).body.isGeneral).toBe(true);
    });

    it('PATCH changes only the fields sent', async () => {
      const labels = (await h.get('/labels')).body.data;
      const t = await h.task(projectId, {
        name: 'Keep me', description: 'desc', dueAt: '2026-04-01T10:00:00.000Z', storyPoints: 3,
        assignees: [h.a.regular.id], labels: [labels[0].id], subscribers: [h.a.client.id],
      });
      const before = (await h.get(`/tasks/${t.id}`)).body;
      const r = await h.patch(`/tasks/${t.id}`, { description: 'changed' });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.description).toBe('changed');
      const after = (await h.get(`/tasks/${t.id}`)).body;
      expect(without(after, [...STAMP_KEYS, 'description'])).toEqual(without(before, [...STAMP_KEYS, 'description']));
      expect(after.assignees).toEqual([h.a.regular.id]);
      expect(after.dueAt).toBe('2026-04-01T10:00:00.000Z');
    });

    it('read-only fields in an update body are ignored, so a client can send back what it read', async () => {
      const t = await h.task(projectId, { name: 'Round trip' });
      const read = (await h.get(`/tasks/${t.id}`)).body;
      const r = await h.patch(`/tasks/${t.id}`, { ...read, name: 'Round trip 2' });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.name).toBe('Round trip 2');
      expect(without(r.body, [...STAMP_KEYS, 'name'])).toEqual(without(read, [...STAMP_KEYS, 'name']));
    });
  });

  // ---------------------------------------------------------------------------
  describe(`[${factory.name}] v3 Conventions for all v3 resources: common fields, timestamps, ids, actors`, () => {
    let h: Harness;
    beforeAll(async () => {
      h = await harness(factory);
    });
    afterAll(() => h.close());

    it('created resources carry the common read-only fields in the right formats', async () => {
      const now = new Date(h.clock.now()).toISOString();
      const project = await h.project({ name: 'Common' });
      const created = [
        project,
        (await h.post('/portfolios', { name: 'Common PF' })).body,
        await h.task(project.id),
        (await h.post('/lists', { name: 'Common list', projectId: project.id })).body,
        (await h.post('/statuses', { name: 'Common status', projectId: project.id })).body,
        (await h.post('/labels', { name: 'Common label' })).body,
      ];
      const actorIds = new Set<string>();
      for (const rec of created) {
        expect(rec.id, JSON.stringify(rec)).toMatch(ID);
        expect(rec.createdAt).toMatch(ISO_MS);
        expect(rec.updatedAt).toMatch(ISO_MS);
        expect(rec.createdAt).toBe(now);
        expect(rec.updatedAt).toBe(rec.createdAt);
        expect(rec.createdByActorId).toMatch(UUID);
        expect(rec.updatedByActorId).toBe(rec.createdByActorId);
        expect(rec.createdByActorType).toBe('human');
        expect(rec.updatedByActorType).toBe('human');
        actorIds.add(rec.createdByActorId);
      }
      // The same member gets the same actor across writes.
      expect(actorIds.size).toBe(1);
      const [actorId] = [...actorIds];
      expect(actorId).not.toBe(h.a.owner.id);
      const actor = await h.get(`/actors/${actorId}`);
      expect(actor.status, JSON.stringify(actor.body)).toBe(200);
      expect(actor.body.id).toBe(actorId);
      expect(actor.body.type).toBe('human');
      expect(actor.body.memberId).toBe(h.a.owner.id);
      expect(actor.body.displayName).toBe('Alpha Owner');
      expect(actor.body.agentId).toBeNull();
      expect(actor.body.tombstonedAt).toBeNull();
    });

    it('timestamps sent in requests are served back as UTC with milliseconds', async () => {
      const p = await h.project({ name: 'Stamps' });
      const t = await h.task(p.id, { dueAt: '2026-04-01T08:00:00Z', startAt: '2026-03-30T08:00:00.250Z' });
      expect(t.dueAt).toBe('2026-04-01T08:00:00.000Z');
      expect(t.startAt).toBe('2026-03-30T08:00:00.250Z');
    });

    it('another member writes as its own human actor; updatedByActorId follows the last writer', async () => {
      const p = await h.project({ name: 'Two Writers', accessType: 'workspace' });
      const t = await h.task(p.id);
      const r = await h.patch(`/tasks/${t.id}`, { name: 'Edited by regular' }, { token: h.a.regular.token });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.createdByActorId).toBe(t.createdByActorId);
      expect(r.body.updatedByActorId).toMatch(UUID);
      expect(r.body.updatedByActorId).not.toBe(t.createdByActorId);
      expect(r.body.updatedByActorType).toBe('human');
      const actor = await h.get(`/actors/${r.body.updatedByActorId}`);
      expect(actor.body.memberId).toBe(h.a.regular.id);
      expect(actor.body.type).toBe('human');
      const again = await h.task(p.id, { name: 'Second by regular' }, h.a.regular.token);
      expect(again.createdByActorId).toBe(r.body.updatedByActorId);
    });

    it('updatedAt strictly increases across PATCHes at the same clock instant, and expectedUpdatedAt still works', async () => {
      const p = await h.project({ name: 'Same Instant' });
      const t = await h.task(p.id);
      const r1 = await h.patch(`/tasks/${t.id}`, { name: 'one' });
      const r2 = await h.patch(`/tasks/${t.id}`, { name: 'two' });
      expect(r1.status).toBe(200);
      expect(r2.status).toBe(200);
      for (const r of [r1, r2]) expect(r.body.updatedAt).toMatch(ISO_MS);
      const c = Date.parse(t.updatedAt);
      const u1 = Date.parse(r1.body.updatedAt);
      const u2 = Date.parse(r2.body.updatedAt);
      expect(u1).toBeGreaterThan(c);
      expect(u2).toBeGreaterThan(u1);
      expect(r2.body.createdAt).toBe(t.createdAt);
      expectProblem(await h.patch(`/tasks/${t.id}`, { name: 'stale', expectedUpdatedAt: r1.body.updatedAt }), 409, 'stale_write');
      const ok = await h.patch(`/tasks/${t.id}`, { name: 'three', expectedUpdatedAt: r2.body.updatedAt });
      expect(ok.status, JSON.stringify(ok.body)).toBe(200);
      expect(Date.parse(ok.body.updatedAt)).toBeGreaterThan(u2);
      expect((await h.get(`/tasks/${t.id}`)).body.updatedAt).toBe(ok.body.updatedAt);
    });
  });

  // ---------------------------------------------------------------------------
  describe(`[${factory.name}] v3 Standard operations rule 10: expectedUpdatedAt`, () => {
    let h: Harness;
    let projectId: string;
    beforeAll(async () => {
      h = await harness(factory);
      projectId = (await h.project({ name: 'Rule Ten' })).id;
    });
    afterAll(() => h.close());

    it('expectedUpdatedAt equal to the current updatedAt is accepted', async () => {
      const t = await h.task(projectId);
      const r = await h.patch(`/tasks/${t.id}`, { name: 'Fresh', expectedUpdatedAt: t.updatedAt });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.name).toBe('Fresh');
      h.clock.advance(1000);
      const pr = await h.patch(`/projects/${projectId}`, { description: 'x', expectedUpdatedAt: (await h.get(`/projects/${projectId}`)).body.updatedAt });
      expect(pr.status, JSON.stringify(pr.body)).toBe(200);
    });

    it('a stale expectedUpdatedAt is 409 stale_write and nothing changes', async () => {
      const t = await h.task(projectId, { name: 'Original' });
      h.clock.advance(1000);
      const other = await h.patch(`/tasks/${t.id}`, { description: 'someone else' });
      expect(other.status).toBe(200);
      const r = await h.patch(`/tasks/${t.id}`, { name: 'Mine', expectedUpdatedAt: t.updatedAt });
      expectProblem(r, 409, 'stale_write');
      const got = await h.get(`/tasks/${t.id}`);
      expect(got.body.name).toBe('Original');
      expect(got.body.updatedAt).toBe(other.body.updatedAt);
    });

    it('concurrent PATCHes with the same expectedUpdatedAt: exactly one wins, the others get stale_write', async () => {
      const t = await h.task(projectId, { name: 'Race' });
      const rs = await Promise.all(
        Array.from({ length: 10 }, (_, i) => h.patch(`/tasks/${t.id}`, { name: `Racer ${i}`, expectedUpdatedAt: t.updatedAt })),
      );
      const ok = rs.filter((r) => r.status === 200);
      expect(ok).toHaveLength(1);
      for (const r of rs.filter((x) => x.status !== 200)) expectProblem(r, 409, 'stale_write');
      const got = await h.get(`/tasks/${t.id}`);
      expect(got.body.name).toBe(ok[0]!.body.name);
      const events = (await h.outbox()).filter((e) => e.type === 'task.updated' && e.aggregateId === t.id);
      expect(events).toHaveLength(1);
    });

    it('without expectedUpdatedAt the last writer wins', async () => {
      const t = await h.task(projectId, { name: 'LWW' });
      const a = await h.patch(`/tasks/${t.id}`, { name: 'first' });
      const b = await h.patch(`/tasks/${t.id}`, { name: 'second' });
      expect([a.status, b.status]).toEqual([200, 200]);
      expect((await h.get(`/tasks/${t.id}`)).body.name).toBe('second');
      const rs = await Promise.all(Array.from({ length: 10 }, (_, i) => h.patch(`/tasks/${t.id}`, { name: `W${i}` })));
      expect(rs.map((r) => r.status)).toEqual(Array(10).fill(200));
      const final = (await h.get(`/tasks/${t.id}`)).body;
      const latest = rs.reduce((m, r) => (Date.parse(r.body.updatedAt) > Date.parse(m.body.updatedAt) ? r : m));
      expect(final.name).toBe(latest.body.name);
      expect(final.updatedAt).toBe(latest.body.updatedAt);
    });

    it('a row changed behind the engine\'s back while an update runs: 409 stale_write, nothing committed, no event', async () => {
      // A label whose beforeUpdate hook (a declaration's own code) writes its row straight through the transaction,
      // past the repository: the update that follows must not match it. Where the update is held to leave with the
      // commit (Postgres), its statement fails for want of a row and takes the transaction with it.
      const label = builtinResources.find((r) => r.name === 'label')!;
      const sneaky = {
        ...label,
        hooks: {
          ...label.hooks,
          async beforeUpdate(ctx: any, current: any, patch: any) {
            await label.hooks?.beforeUpdate?.(ctx, current, patch);
            await ctx.db.updateTable(label.table).set({ updated_at: ctx.repo.dialect.encode('timestamp', current.updatedAt + 5) }).where('id', '=', current.id).execute();
          },
        },
      } as typeof label;
      const hs = await harness(factory, { api: () => ({ resources: [sneaky] }) });
      try {
        const made = await hs.post('/labels', { name: 'Behind' });
        expect(made.status, JSON.stringify(made.body)).toBe(201);
        const events = (await hs.outbox()).length;
        hs.clock.advance(1000);
        const r = await hs.patch(`/labels/${made.body.id}`, { name: 'Renamed' });
        expectProblem(r, 409, 'stale_write');
        const got = await hs.get(`/labels/${made.body.id}`);
        expect(got.body.name).toBe('Behind');
        expect(got.body.updatedAt).toBe(made.body.updatedAt);
        expect((await hs.outbox()).length).toBe(events);
      } finally {
        await hs.close();
      }
    });

    it('an expectedUpdatedAt that is not a timestamp is 400 validation_failed', async () => {
      const t = await h.task(projectId, { name: 'Bad expected' });
      for (const bad of ['yesterday', 12345, '', null]) {
        const r = await h.patch(`/tasks/${t.id}`, { name: 'x', expectedUpdatedAt: bad });
        expectProblem(r, 400, 'validation_failed');
        expect(expectFieldErrors(r).map((e) => e.field)).toContain('expectedUpdatedAt');
      }
      expect((await h.get(`/tasks/${t.id}`)).body.name).toBe('Bad expected');
    });
  });

  // ---------------------------------------------------------------------------
  describe(`[${factory.name}] v3 Standard operations rule 11: Idempotency-Key`, () => {
    let h: Harness;
    let projectId: string;
    const key = (k: string) => ({ headers: { 'idempotency-key': k } });
    const createdEvents = async (id: string) => (await h.outbox()).filter((e) => e.type === 'task.created' && e.aggregateId === id);
    const tasksNamed = async (name: string) => (await h.get(`/tasks?projectId=${projectId}&name[eq]=${encodeURIComponent(name)}`)).body.data;
    beforeAll(async () => {
      h = await harness(factory);
      projectId = (await h.project({ name: 'Rule Eleven', accessType: 'workspace' })).id;
    });
    afterAll(() => h.close());

    it('a retry with the same key replays the first response, creates one row and one event', async () => {
      const body = { name: 'Idem once', projectId };
      const first = await h.post('/tasks', body, key('k-once'));
      expect(first.status, JSON.stringify(first.body)).toBe(201);
      expect(hdr(first, 'idempotency-replayed')).toBeUndefined();
      h.clock.advance(60_000);
      const second = await h.post('/tasks', body, key('k-once'));
      expect(second.status).toBe(201);
      expect(second.body).toEqual(first.body);
      expect(hdr(second, 'idempotency-replayed')).toBe('true');
      expect(await tasksNamed('Idem once')).toHaveLength(1);
      expect(await createdEvents(first.body.id)).toHaveLength(1);
      // Key order in the body does not matter.
      const reordered = await h.post('/tasks', { projectId, name: 'Idem once' }, key('k-once'));
      expect(reordered.status).toBe(201);
      expect(reordered.body.id).toBe(first.body.id);
    });

    it('the same key with a different body is 422 idempotency_key_reused', async () => {
      const first = await h.post('/tasks', { name: 'Idem body A', projectId }, key('k-reuse'));
      expect(first.status).toBe(201);
      const r = await h.post('/tasks', { name: 'Idem body B', projectId }, key('k-reuse'));
      expectProblem(r, 422, 'idempotency_key_reused');
      expect(await tasksNamed('Idem body B')).toHaveLength(0);
    });

    it('a key is remembered for 10 minutes, then the request executes again', async () => {
      const body = { name: 'Idem ttl', projectId };
      const first = await h.post('/tasks', body, key('k-ttl'));
      expect(first.status).toBe(201);
      h.clock.advance(TEN_MINUTES - 1);
      const within = await h.post('/tasks', body, key('k-ttl'));
      expect(within.body.id).toBe(first.body.id);
      expect(hdr(within, 'idempotency-replayed')).toBe('true');
      h.clock.advance(2);
      const after = await h.post('/tasks', body, key('k-ttl'));
      expect(after.status, JSON.stringify(after.body)).toBe(201);
      expect(after.body.id).not.toBe(first.body.id);
      expect(hdr(after, 'idempotency-replayed')).toBeUndefined();
      expect(await tasksNamed('Idem ttl')).toHaveLength(2);
    });

    it('a key of 250 characters is accepted; 251 characters (or invisible characters) is 400 validation_failed', async () => {
      const ok = await h.post('/tasks', { name: 'Idem 250', projectId }, key('k'.repeat(250)));
      expect(ok.status, JSON.stringify(ok.body)).toBe(201);
      const replay = await h.post('/tasks', { name: 'Idem 250', projectId }, key('k'.repeat(250)));
      expect(replay.body.id).toBe(ok.body.id);
      const long = await h.post('/tasks', { name: 'Idem 251', projectId }, key('k'.repeat(251)));
      expectProblem(long, 400, 'validation_failed');
      const spaced = await h.post('/tasks', { name: 'Idem 251', projectId }, key('has space'));
      expectProblem(spaced, 400, 'validation_failed');
      expect(await tasksNamed('Idem 251')).toHaveLength(0);
    });

    it('10 concurrent POSTs with one key create exactly one resource and all answer with its id', async () => {
      const body = { name: 'Idem race', projectId };
      const rs = await Promise.all(Array.from({ length: 10 }, () => h.post('/tasks', body, key('k-race'))));
      for (const r of rs) expect(r.status, JSON.stringify(r.body)).toBe(201);
      const ids = new Set(rs.map((r) => r.body.id));
      expect(ids.size).toBe(1);
      expect(rs.filter((r) => hdr(r, 'idempotency-replayed') === 'true')).toHaveLength(9);
      expect(await tasksNamed('Idem race')).toHaveLength(1);
      expect(await createdEvents([...ids][0]!)).toHaveLength(1);
    });

    it('a failed request does not poison its key: a retry with a fixed body runs', async () => {
      const bad = await h.post('/tasks', { name: '', projectId }, key('k-fail'));
      expectProblem(bad, 400, 'validation_failed');
      const fixed = await h.post('/tasks', { name: 'Idem fixed', projectId }, key('k-fail'));
      expect(fixed.status, JSON.stringify(fixed.body)).toBe(201);
      expect(hdr(fixed, 'idempotency-replayed')).toBeUndefined();
      const replay = await h.post('/tasks', { name: 'Idem fixed', projectId }, key('k-fail'));
      expect(replay.body.id).toBe(fixed.body.id);
      expect(hdr(replay, 'idempotency-replayed')).toBe('true');
    });

    it('works on PATCH: the replay returns the first response without running again', async () => {
      const t = await h.task(projectId, { name: 'Idem patch' });
      const first = await h.patch(`/tasks/${t.id}`, { name: 'Patched A' }, key('k-patch'));
      expect(first.status).toBe(200);
      const other = await h.patch(`/tasks/${t.id}`, { name: 'Patched B' });
      expect(other.status).toBe(200);
      const replay = await h.patch(`/tasks/${t.id}`, { name: 'Patched A' }, key('k-patch'));
      expect(replay.status).toBe(200);
      expect(replay.body).toEqual(first.body);
      expect(hdr(replay, 'idempotency-replayed')).toBe('true');
      expect((await h.get(`/tasks/${t.id}`)).body.name).toBe('Patched B');
      const updates = (await h.outbox()).filter((e) => e.type === 'task.updated' && e.aggregateId === t.id);
      expect(updates).toHaveLength(2);
    });

    it('works on DELETE: the replay answers 204 again instead of 404', async () => {
      const t = await h.task(projectId, { name: 'Idem delete' });
      const first = await h.del(`/tasks/${t.id}`, key('k-del'));
      expect(first.status).toBe(204);
      const replay = await h.del(`/tasks/${t.id}`, key('k-del'));
      expect(replay.status).toBe(204);
      expect(replay.body).toBeUndefined();
      expect(hdr(replay, 'idempotency-replayed')).toBe('true');
      expectProblem(await h.del(`/tasks/${t.id}`), 404, 'resource_not_found');
      const removed = (await h.outbox()).filter((e) => e.type === 'task.removed' && e.aggregateId === t.id);
      expect(removed).toHaveLength(1);
    });

    it('keys are per member: the same key from two members runs twice; two tokens of one member share keys', async () => {
      const body = { name: 'Idem members', projectId };
      const owner = await h.post('/tasks', body, key('k-member'));
      const regular = await h.post('/tasks', body, { ...key('k-member'), token: h.a.regular.token });
      expect([owner.status, regular.status]).toEqual([201, 201]);
      expect(regular.body.id).not.toBe(owner.body.id);
      expect(hdr(regular, 'idempotency-replayed')).toBeUndefined();
      const second = await h.api.admin.issueToken(h.a.owner.id, { scopes: ['read', 'write', 'delete'] });
      const sameMember = await h.post('/tasks', body, { ...key('k-member'), token: second.token });
      expect(sameMember.body.id).toBe(owner.body.id);
      expect(hdr(sameMember, 'idempotency-replayed')).toBe('true');
      expect(await tasksNamed('Idem members')).toHaveLength(2);
    });
  });

  // ---------------------------------------------------------------------------
  describe(`[${factory.name}] v3 Standard operations rule 12: sub-resource routes`, () => {
    let h: Harness;
    let projectId: string;
    let labelIds: string[];
    beforeAll(async () => {
      h = await harness(factory);
      projectId = (await h.project({ name: 'Rule Twelve' })).id;
      labelIds = (await h.get('/labels')).body.data.map((l: any) => l.id);
    });
    afterAll(() => h.close());

    it('POST and DELETE /tasks/{id}/assignees, /labels and /subscribers add and remove', async () => {
      const t = await h.task(projectId);
      const cases: Array<[string, string[]]> = [
        ['assignees', [h.a.regular.id, h.a.client.id]],
        ['labels', labelIds.slice(0, 2)],
        ['subscribers', [h.a.owner.id, h.a.regular.id]],
      ];
      let last = t.updatedAt;
      for (const [rel, ids] of cases) {
        const add = await h.post(`/tasks/${t.id}/${rel}`, { ids });
        expect(add.status, JSON.stringify(add.body)).toBe(200);
        expect(add.body.id).toBe(t.id);
        expect([...add.body[rel]].sort()).toEqual([...ids].sort());
        expect(Date.parse(add.body.updatedAt)).toBeGreaterThan(Date.parse(last));
        last = add.body.updatedAt;
        const del = await h.req('DELETE', `/tasks/${t.id}/${rel}`, { body: { ids: [ids[0]] } });
        expect(del.status, JSON.stringify(del.body)).toBe(200);
        expect(del.body[rel]).toEqual([ids[1]]);
        expect((await h.get(`/tasks/${t.id}`)).body[rel]).toEqual([ids[1]]);
      }
    });

    it('POST and DELETE /portfolios/{id}/members add and remove', async () => {
      const pf = (await h.post('/portfolios', { name: 'Members PF' })).body;
      const add = await h.post(`/portfolios/${pf.id}/members`, { ids: [h.a.regular.id, h.a.client.id] });
      expect(add.status, JSON.stringify(add.body)).toBe(200);
      expect(add.body.members).toEqual(expect.arrayContaining([h.a.regular.id, h.a.client.id]));
      const del = await h.req('DELETE', `/portfolios/${pf.id}/members`, { body: { ids: [h.a.client.id] } });
      expect(del.status).toBe(200);
      expect(del.body.members).toContain(h.a.regular.id);
      expect(del.body.members).not.toContain(h.a.client.id);
      expect((await h.get(`/portfolios/${pf.id}`)).body.members).not.toContain(h.a.client.id);
    });

    it('missing or empty ids is 400 batch_empty', async () => {
      const t = await h.task(projectId);
      const pf = h.a.generalPortfolioId;
      for (const [path, method] of [[`/tasks/${t.id}/assignees`, 'POST'], [`/tasks/${t.id}/labels`, 'DELETE'], [`/portfolios/${pf}/members`, 'POST']] as const) {
        expectProblem(await h.req(method, path), 400, 'batch_empty');
        expectProblem(await h.req(method, path, { body: {} }), 400, 'batch_empty');
        expectProblem(await h.req(method, path, { body: { ids: [] } }), 400, 'batch_empty');
      }
    });

    it('151 ids is 400 batch_too_large with max 150 and received 151; 150 ids pass the size check', async () => {
      const t = await h.task(projectId);
      const ids = Array.from({ length: 151 }, (_, i) => `Nobody${i}`);
      const r = await h.post(`/tasks/${t.id}/subscribers`, { ids });
      expectProblem(r, 400, 'batch_too_large');
      expect(r.body.max).toBe(150);
      expect(r.body.received).toBe(151);
      const portfolio = await h.req('DELETE', `/portfolios/${h.a.generalPortfolioId}/members`, { body: { ids } });
      expectProblem(portfolio, 400, 'batch_too_large');
      const at = await h.post(`/tasks/${t.id}/subscribers`, { ids: ids.slice(0, 150) });
      expectProblem(at, 404, 'm2m_target_not_found');
      expect(at.body.missing).toHaveLength(150);
    });

    it('an unknown relation segment is 400 m2m_relation_unknown', async () => {
      const t = await h.task(projectId);
      expectProblem(await h.post(`/tasks/${t.id}/watchers`, { ids: [h.a.regular.id] }), 400, 'm2m_relation_unknown');
      expectProblem(await h.post(`/portfolios/${h.a.generalPortfolioId}/owners`, { ids: [h.a.regular.id] }), 400, 'm2m_relation_unknown');
    });

    it('an id that is missing or in another workspace rejects the whole request with 404 m2m_target_not_found naming exactly those ids', async () => {
      const t = await h.task(projectId);
      const r = await h.post(`/tasks/${t.id}/assignees`, { ids: [h.a.regular.id, 'NoSuchMember9', h.b.owner.id] });
      expectProblem(r, 404, 'm2m_target_not_found');
      expect([...r.body.missing].sort()).toEqual(['NoSuchMember9', h.b.owner.id].sort());
      const got = (await h.get(`/tasks/${t.id}`)).body;
      expect(got.assignees).toEqual([]);
      expect(got.updatedAt).toBe(t.updatedAt);
      const labels = await h.post(`/tasks/${t.id}/labels`, { ids: [labelIds[0], 'NoSuchLabel1'] });
      expectProblem(labels, 404, 'm2m_target_not_found');
      expect(labels.body.missing).toEqual(['NoSuchLabel1']);
      expect((await h.get(`/tasks/${t.id}`)).body.labels).toEqual([]);
      // Removal too: nothing is removed when one id is unknown.
      await h.post(`/tasks/${t.id}/subscribers`, { ids: [h.a.regular.id] });
      const rm = await h.req('DELETE', `/tasks/${t.id}/subscribers`, { body: { ids: [h.a.regular.id, 'NoSuchMember8'] } });
      expectProblem(rm, 404, 'm2m_target_not_found');
      expect(rm.body.missing).toEqual(['NoSuchMember8']);
      expect((await h.get(`/tasks/${t.id}`)).body.subscribers).toEqual([h.a.regular.id]);
      const pf = await h.post(`/portfolios/${h.a.generalPortfolioId}/members`, { ids: [h.a.client.id, h.b.regular.id] });
      expectProblem(pf, 404, 'm2m_target_not_found');
      expect(pf.body.missing).toEqual([h.b.regular.id]);
      expect((await h.get(`/portfolios/${h.a.generalPortfolioId}`)).body.members).not.toContain(h.a.client.id);
    });

    it('a sub-route on a parent that does not exist is 404 resource_not_found', async () => {
      expectProblem(await h.post('/tasks/NoSuchTask1/assignees', { ids: [h.a.regular.id] }), 404, 'resource_not_found');
    });

    it('/lists/{id}/goals is supported now that goals exist: an unknown goal id is 404 m2m_target_not_found, not 501', async () => {
      const list = (await h.post('/lists', { name: 'Goals list', projectId })).body;
      const add = await h.post(`/lists/${list.id}/goals`, { ids: ['Goal1'] });
      expectProblem(add, 404, 'm2m_target_not_found');
      expect(add.body.missing).toEqual(['Goal1']);
      const remove = await h.req('DELETE', `/lists/${list.id}/goals`, { body: { ids: ['Goal1'] } });
      expectProblem(remove, 404, 'm2m_target_not_found');
      expect(remove.body.missing).toEqual(['Goal1']);
    });

    it('POST /lists/{id}/hidden-for adds and POST /lists/{id}/hidden-for/remove removes', async () => {
      const list = (await h.post('/lists', { name: 'Hidden list', projectId })).body;
      const roles = [h.a.roleIds.client, h.a.roleIds.regular];
      const add = await h.post(`/lists/${list.id}/hidden-for`, { ids: roles });
      expect(add.status, JSON.stringify(add.body)).toBe(200);
      expect([...add.body.hiddenFor].sort()).toEqual([...roles].sort());
      const rm = await h.post(`/lists/${list.id}/hidden-for/remove`, { ids: [h.a.roleIds.client] });
      expect(rm.status, JSON.stringify(rm.body)).toBe(200);
      expect(rm.body.hiddenFor).toEqual([h.a.roleIds.regular]);
      expect((await h.get(`/lists/${list.id}`)).body.hiddenFor).toEqual([h.a.roleIds.regular]);
    });
  });

  // ---------------------------------------------------------------------------
  describe(`[${factory.name}] v3 Standard operations rule 13: retired spellings`, () => {
    let h: Harness;
    let projectId: string;
    let defaultStatusId: string;
    beforeAll(async () => {
      h = await harness(factory);
      projectId = (await h.project({ name: 'Rule Thirteen' })).id;
      defaultStatusId = (await h.get(`/projects/${projectId}`)).body.defaultStatusId;
    });
    afterAll(() => h.close());

    it('GET /task-groups and /milestones work and carry Deprecation: true and a Link to the replacement, without Sunset', async () => {
      const list = (await h.post('/lists', { name: 'Retired list', projectId })).body;
      for (const [old, current, id] of [['task-groups', 'statuses', defaultStatusId], ['milestones', 'lists', list.id]] as const) {
        const r = await h.get(`/${old}?projectId=${projectId}`);
        expect(r.status, JSON.stringify(r.body)).toBe(200);
        expect(r.body.data.map((x: any) => x.id)).toContain(id);
        expect(hdr(r, 'deprecation')).toBe('true');
        expect(hdr(r, 'link')).toContain(`</api/v3/${current}>`);
        expect(hdr(r, 'sunset')).toBeUndefined();
        const one = await h.get(`/${old}/${id}`);
        expect(one.status).toBe(200);
        expect(one.body.id).toBe(id);
        expect(hdr(one, 'deprecation')).toBe('true');
        expect(hdr(one, 'sunset')).toBeUndefined();
        const now = await h.get(`/${current}?projectId=${projectId}`);
        expect(now.status).toBe(200);
        expect(hdr(now, 'deprecation')).toBeUndefined();
        expect(hdr(now, 'link')).toBeUndefined();
        expect(hdr(now, 'sunset')).toBeUndefined();
      }
    });

    it('writes through a retired route work and are deprecated too', async () => {
      const r = await h.post('/milestones', { name: 'Via old route', projectId });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      expect(hdr(r, 'deprecation')).toBe('true');
      expect((await h.get(`/lists/${r.body.id}`)).body.name).toBe('Via old route');
    });

    it('task body fields milestoneId and taskGroupId are applied to listId and statusId', async () => {
      const list = (await h.post('/lists', { name: 'Target list', projectId })).body;
      const list2 = (await h.post('/lists', { name: 'Target list 2', projectId })).body;
      const status = (await h.post('/statuses', { name: 'Doing', projectId })).body;
      const r = await h.post('/tasks', { name: 'Old names', projectId, milestoneId: list.id, taskGroupId: status.id });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      expect(r.body.listId).toBe(list.id);
      expect(r.body.statusId).toBe(status.id);
      expect(r.body).not.toHaveProperty('milestoneId');
      expect(r.body).not.toHaveProperty('taskGroupId');
      const p = await h.patch(`/tasks/${r.body.id}`, { milestoneId: list2.id, taskGroupId: defaultStatusId });
      expect(p.status, JSON.stringify(p.body)).toBe(200);
      expect(p.body.listId).toBe(list2.id);
      expect(p.body.statusId).toBe(defaultStatusId);
      const got = (await h.get(`/tasks/${r.body.id}`)).body;
      expect([got.listId, got.statusId]).toEqual([list2.id, defaultStatusId]);
    });
  });

  // ---------------------------------------------------------------------------
  describe(`[${factory.name}] v3 Errors and transport (docs/not-shown.md)`, () => {
    let h: Harness;
    let projectId: string;
    beforeAll(async () => {
      h = await harness(factory);
      projectId = (await h.project({ name: 'Transport' })).id;
    });
    afterAll(() => h.close());

    it('malformed JSON is 400 validation_failed with errors[0].code invalid_json', async () => {
      for (const raw of ['{"name":', '{name: "x"}', "{'a':1}", '[1,2', 'undefined']) {
        const r = await h.req('POST', '/tasks', { raw, headers: { 'content-type': 'application/json' } });
        expectProblem(r, 400, 'validation_failed');
        expect(expectFieldErrors(r)[0]!.code).toBe('invalid_json');
      }
      const patch = await h.req('PATCH', `/projects/${projectId}`, { raw: '{"name": "x"', headers: { 'content-type': 'application/json' } });
      expectProblem(patch, 400, 'validation_failed');
      expect(patch.body.errors[0].code).toBe('invalid_json');
    });

    it('a body that is JSON but not an object is 400 validation_failed', async () => {
      for (const body of [[1, 2], 'text', 42]) {
        const r = await h.post('/tasks', body);
        expectProblem(r, 400, 'validation_failed');
        expectFieldErrors(r);
      }
    });

    it('a body sent as text/plain (or form-encoded) is 415 unsupported_media_type; application/json variants are accepted', async () => {
      const body = JSON.stringify({ name: 'Media', projectId });
      for (const ct of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
        const r = await h.req('POST', '/tasks', { raw: body, headers: { 'content-type': ct } });
        expectProblem(r, 415, 'unsupported_media_type');
      }
      expect((await h.get(`/tasks?projectId=${projectId}&name[eq]=Media`)).body.data).toHaveLength(0);
      const charset = await h.req('POST', '/tasks', { raw: body, headers: { 'content-type': 'application/json; charset=utf-8' } });
      expect(charset.status, JSON.stringify(charset.body)).toBe(201);
      const merge = await h.req('PATCH', `/tasks/${charset.body.id}`, { raw: '{"name":"Merged"}', headers: { 'content-type': 'application/merge-patch+json' } });
      expect(merge.status, JSON.stringify(merge.body)).toBe(200);
      expect(merge.body.name).toBe('Merged');
    });

    it('an unknown resource is 400 resource_unknown', async () => {
      expectProblem(await h.get('/nope'), 400, 'resource_unknown');
      expectProblem(await h.post('/nope', { a: 1 }), 400, 'resource_unknown');
      expectProblem(await h.get('/nope/abc'), 400, 'resource_unknown');
    });

    it('an unknown route is 404 route_not_found', async () => {
      expectProblem(await h.get('/tasks/x/y/z/w'), 404, 'route_not_found');
      expectProblem(await h.post('/tasks/x/y/z', { ids: ['a'] }), 404, 'route_not_found');
      expectProblem(await h.get('/'), 404, 'route_not_found');
    });

    it('a wrong method is 405 method_not_allowed with an Allow header', async () => {
      const put = await h.req('PUT', '/tasks/x', { body: { name: 'x' } });
      expectProblem(put, 405, 'method_not_allowed');
      const allow = (hdr(put, 'allow') ?? '').split(',').map((s) => s.trim()).sort();
      expect(allow).toEqual(['DELETE', 'GET', 'PATCH']);
      const del = await h.del('/tasks');
      expectProblem(del, 405, 'method_not_allowed');
      expect((hdr(del, 'allow') ?? '').split(',').map((s) => s.trim()).sort()).toEqual(['GET', 'POST']);
      const actors = await h.post('/actors', {});
      expectProblem(actors, 405, 'method_not_allowed');
      expect(hdr(actors, 'allow')).toBeDefined();
    });

    it('an id with characters ids never hold is 404 resource_not_found', async () => {
      for (const bad of ['bad-id', 'a.b', 'x%20y', '%C3%A9t%C3%A9', 'a%2Fb', "o'neil"]) {
        expectProblem(await h.get(`/tasks/${bad}`), 404, 'resource_not_found');
      }
      expectProblem(await h.patch('/tasks/bad-id', { name: 'x' }), 404, 'resource_not_found');
      expectProblem(await h.del('/projects/bad$id'), 404, 'resource_not_found');
    });

    it('random JSON bodies for POST /tasks never produce a 5xx', async () => {
      await fc.assert(
        fc.asyncProperty(fc.jsonValue(), async (v) => {
          const r = await h.req('POST', '/tasks', { raw: JSON.stringify(v), headers: { 'content-type': 'application/json' } });
          expect(r.status, JSON.stringify([v, r.body])).toBeLessThan(500);
          if (r.status >= 400) expect(r.body.code).toBeTypeOf('string');
        }),
        { numRuns: 150 },
      );
    });

    it('random raw strings as POST /tasks bodies never produce a 5xx', async () => {
      await fc.assert(
        fc.asyncProperty(fc.string({ maxLength: 200 }), fc.constantFrom('application/json', 'text/plain', 'application/vnd.x+json', ''), async (raw, ct) => {
          const r = await h.req('POST', '/tasks', { raw, headers: ct ? { 'content-type': ct } : {} });
          expect(r.status, JSON.stringify([raw, ct, r.body])).toBeLessThan(500);
        }),
        { numRuns: 150 },
      );
    });

    it('task bodies with known field names and random values never produce a 5xx', async () => {
      const names = ['name', 'projectId', 'description', 'archived', 'completed', 'listId', 'statusId', 'parentTaskId', 'dependencyId',
        'startAt', 'dueAt', 'remindAt', 'storyPoints', 'estimate', 'order', 'orderList', 'banner', 'embedUrl', 'customFields',
        'assignees', 'labels', 'subscribers', 'milestoneId', 'taskGroupId', 'niceId', 'expectedUpdatedAt'];
      const t = await h.task(projectId, { name: 'Fuzz target' });
      const value = fc.oneof(fc.jsonValue(), fc.constant(projectId), fc.constant(t.id), fc.constant('2026-03-01T09:00:00.000Z'), fc.array(fc.constant(h.a.regular.id)));
      await fc.assert(
        fc.asyncProperty(fc.dictionary(fc.constantFrom(...names), value, { maxKeys: 6 }), fc.boolean(), async (body, patch) => {
          const r = patch ? await h.patch(`/tasks/${t.id}`, body) : await h.post('/tasks', { name: 'Fuzz', projectId, ...body });
          expect(r.status, JSON.stringify([patch, body, r.body])).toBeLessThan(500);
        }),
        { numRuns: 150 },
      );
    });

    it('random query strings for GET /tasks never produce a 5xx', async () => {
      const names = ['projectId', 'scope', 'sort', 'cursor', 'limit', 'includeTotal', 'expand', 'fields[tasks]', 'name[eq]', 'name[contains]',
        'niceId[in]', 'completed[eq]', 'dueAt[gt]', 'createdAt[lte]', 'labelId[in]', 'offset', 'page', 'q', 'archived[null]'];
      const key = fc.oneof(fc.constantFrom(...names), fc.string({ maxLength: 20 }));
      const val = fc.oneof(fc.string({ maxLength: 30 }), fc.constantFrom(projectId, 'true', 'false', '-name', 'name:desc', '0', '201', '-1', 'project,status', 'project.portfolio', '2026-03-01T09:00:00.000Z'));
      const pair = fc.tuple(key, val, fc.boolean()).map(([k, v, enc]) => (enc ? `${encodeURIComponent(k)}=${encodeURIComponent(v)}` : `${k}=${v}`));
      await fc.assert(
        fc.asyncProperty(fc.array(pair, { maxLength: 5 }), async (pairs) => {
          const r = await h.get(`/tasks?${pairs.join('&')}`);
          expect(r.status, JSON.stringify([pairs, r.body])).toBeLessThan(500);
          if (r.status >= 400) expect(r.body.code).toBeTypeOf('string');
        }),
        { numRuns: 150 },
      );
    });
  });
}
