import { createHash } from 'node:crypto';
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { nameUnnamedTokens } from '@pmapi/core/sql';
import { harness, type Harness, type Reply, type StoreFactory } from '../kit';

const HOUR = 60 * 60 * 1000;
const DAY = 24 * HOUR;
const PAT_RE = /^svc_user_([0-9A-Za-z]{12})_([0-9A-Za-z]{40})$/;
const P = '/personal-access-tokens';

function ok(r: Reply, status = 200): any {
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  return r.body;
}

function problem(r: Reply, status: number, code: string): any {
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  expect(r.body.code).toBe(code);
  expect(r.body.type).toBe(code);
  expect(r.body.instance).toMatch(/^\/api\/v3\/personal-access-tokens|^\/api\/v3\//);
  return r.body;
}

/** The fields a validation problem body names. */
function fieldsOf(body: any): string[] {
  return (body.errors ?? []).map((e: { field: string }) => e.field);
}

async function create(h: Harness, body: Record<string, unknown>, token?: string): Promise<any> {
  return ok(await h.post(P, { name: 'T', scopes: ['read'], ...body }, { token }), 201);
}

/** Every id of the caller's token list, walking all pages. */
async function listIds(h: Harness, token: string, limit = 200): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  for (let i = 0; i < 100; i++) {
    const r: Reply = await h.get(`${P}?limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { token });
    const b = ok(r);
    ids.push(...b.data.map((t: { id: string }) => t.id));
    if (!b.hasMore) {
      expect(b.nextCursor).toBeNull();
      return ids;
    }
    cursor = b.nextCursor;
  }
  throw new Error('too many pages');
}

/** Every value of every row of every table, as one string per table. */
async function dumpDatabase(h: Harness): Promise<Map<string, string>> {
  const db = h.api.store.db;
  const out = new Map<string, string>();
  // Postgres harnesses each work in a schema of their own: dump only this one.
  const schema = h.api.store.dialect.name === 'postgres'
    ? ((await db.selectNoFrom((eb) => eb.fn<string>('current_schema', []).as('s')).executeTakeFirstOrThrow()).s as string)
    : undefined;
  for (const t of await db.introspection.getTables()) {
    if (schema !== undefined && t.schema !== schema) continue;
    const rows = await (schema === undefined ? db : db.withSchema(schema)).selectFrom(t.name).selectAll().execute();
    out.set(t.name, JSON.stringify(rows, (_k, v) => (typeof v === 'bigint' ? v.toString() : v instanceof Uint8Array ? Buffer.from(v).toString('utf8') : v)));
  }
  return out;
}

export function personalAccessTokensSuite(factory: StoreFactory): void {
  describe(`[${factory.name}] v3 Authentication rule 7: personal access tokens — lifecycle, secret shown once, hashed storage`, () => {
    let h: Harness;
    beforeAll(async () => {
      h = await harness(factory);
    });
    afterAll(() => h.close());

    it('create → use → read → update → revoke (DELETE) → 401 invalid_token at once', async () => {
      const expiresAt = new Date(h.clock.now() + 30 * DAY).toISOString();
      const c = await create(h, { name: '  CI deploy  ', scopes: ['tasks:read', 'projects:read'], expiresAt });
      expect(c.token).toMatch(PAT_RE);
      expect(c).toMatchObject({
        name: 'CI deploy', scopes: ['tasks:read', 'projects:read'], status: 'active', memberId: h.a.owner.id,
        expiresAt, lastUsedAt: null, revokedAt: null, createdAt: new Date(h.clock.now()).toISOString(),
      });
      expect(c.prefix).toBe(PAT_RE.exec(c.token)![1]);
      expect(c.id).toMatch(/^[0-9A-Za-z_!]+$/);

      // The token authenticates as its owner.
      expect((await h.get('/tasks', { token: c.token })).status).toBe(200);

      const got = ok(await h.get(`${P}/${c.id}`));
      const { token: _secret, ...withoutSecret } = c;
      expect(got).toEqual({ ...withoutSecret, lastUsedAt: new Date(h.clock.now()).toISOString() });

      const renamed = ok(await h.patch(`${P}/${c.id}`, { name: 'CI deploy (prod)' }));
      expect(renamed.name).toBe('CI deploy (prod)');
      expect(renamed.scopes).toEqual(['tasks:read', 'projects:read']);
      expect(renamed.token).toBeUndefined();

      const del = await h.del(`${P}/${c.id}`);
      expect(del.status).toBe(204);
      expect(del.body).toBeUndefined();
      const refused = problem(await h.get('/tasks', { token: c.token }), 401, 'invalid_token');
      expect(refused.status).toBe(401);

      const after = ok(await h.get(`${P}/${c.id}`));
      expect(after.status).toBe('revoked');
      expect(after.revokedAt).toBe(new Date(h.clock.now()).toISOString());
      // Revoking again is a no-op that keeps the first instant.
      h.clock.advance(1000);
      expect((await h.del(`${P}/${c.id}`)).status).toBe(204);
      expect(ok(await h.get(`${P}/${c.id}`)).revokedAt).toBe(after.revokedAt);
      // A revoked token can no longer change.
      problem(await h.patch(`${P}/${c.id}`, { name: 'Back' }), 409, 'conflict');
    });

    it('the secret is in the create response only: never in get, list or update, nor in an Idempotency-Key replay', async () => {
      const headers = { 'idempotency-key': 'pat-once-1' };
      const first = await h.post(P, { name: 'Once', scopes: ['read'] }, { headers });
      const c = ok(first, 201);
      const secret = PAT_RE.exec(c.token)![2]!;
      const replay = await h.post(P, { name: 'Once', scopes: ['read'] }, { headers });
      expect(replay.status).toBe(201);
      expect(replay.headers['idempotency-replayed']).toBe('true');
      expect(replay.body.id).toBe(c.id);
      expect(replay.body.token).toBeUndefined();
      const mine = await listIds(h, h.a.owner.token);
      expect(mine.filter((id) => id === c.id)).toHaveLength(1);
      for (const r of [await h.get(`${P}/${c.id}`), await h.get(`${P}?limit=200`), await h.patch(`${P}/${c.id}`, { name: 'Once more' })]) {
        expect(r.status).toBe(200);
        expect(JSON.stringify(r.body)).not.toContain(secret);
        expect(JSON.stringify(r.body)).not.toContain('"token"');
      }
    });

    it('only a SHA-256 digest is stored: no column of any table holds the secret', async () => {
      const c = await create(h, { name: 'Stored', scopes: ['read'] }, undefined);
      const viaKey = ok(await h.post(P, { name: 'Stored 2', scopes: ['read'] }, { headers: { 'idempotency-key': 'pat-stored' } }), 201);
      expect((await h.get('/tasks', { token: c.token })).status).toBe(200);
      const dump = await dumpDatabase(h);
      expect(dump.has('access_tokens')).toBe(true);
      for (const t of [c.token, viaKey.token]) {
        const secret = PAT_RE.exec(t)![2]!;
        for (const [table, text] of dump) {
          expect(text.includes(secret), `${table} holds a token secret`).toBe(false);
          expect(text.includes(t), `${table} holds a token`).toBe(false);
        }
      }
      const row = await h.api.store.db.selectFrom('access_tokens').selectAll().where('id', '=', c.id).executeTakeFirstOrThrow();
      expect(row.hash).toBe(createHash('sha256').update(c.token).digest('hex'));
      expect(row.prefix).toBe(c.prefix);
    });

    it('writes emit no webhook events', async () => {
      const before = (await h.outbox()).length;
      const c = await create(h, { name: 'Quiet', scopes: ['read'] });
      ok(await h.patch(`${P}/${c.id}`, { name: 'Quieter', scopes: ['tasks:read'] }));
      expect((await h.del(`${P}/${c.id}`)).status).toBe(204);
      expect((await h.outbox()).length).toBe(before);
    });

    it('lastUsedAt is recorded on authentication at most once a minute', async () => {
      const c = await create(h, { name: 'Used', scopes: ['read'] });
      expect(c.lastUsedAt).toBeNull();
      const t0 = h.clock.now();
      expect((await h.get('/tasks', { token: c.token })).status).toBe(200);
      expect(ok(await h.get(`${P}/${c.id}`)).lastUsedAt).toBe(new Date(t0).toISOString());
      h.clock.advance(59_000);
      expect((await h.get('/tasks', { token: c.token })).status).toBe(200);
      expect(ok(await h.get(`${P}/${c.id}`)).lastUsedAt).toBe(new Date(t0).toISOString());
      h.clock.advance(1_000);
      expect((await h.get('/tasks', { token: c.token })).status).toBe(200);
      expect(ok(await h.get(`${P}/${c.id}`)).lastUsedAt).toBe(new Date(t0 + 60_000).toISOString());
    });

    it('lists page by keyset over the caller\'s own tokens (newest first), with includeTotal', async () => {
      const m = await h.api.admin.addMember(h.a.id, { name: 'Pager', role: 'regular' });
      const { token } = await h.api.admin.issueToken(m.id, { scopes: ['read', 'write', 'delete'] });
      const made: string[] = [];
      for (let i = 0; i < 5; i++) {
        made.push((await create(h, { name: `Page ${i}` }, token)).id);
        if (i % 2 === 0) h.clock.advance(1);
      }
      const first = ok(await h.get(`${P}?limit=2&includeTotal=true`, { token }));
      expect(first).toMatchObject({ limit: 2, hasMore: true, total: 6 });
      expect(first.nextCursor).toBeTypeOf('string');
      const all = await listIds(h, token, 2);
      expect(all).toHaveLength(6);
      expect(new Set(all).size).toBe(6);
      for (const id of made) expect(all).toContain(id);
      const times = (ok(await h.get(`${P}?limit=200`, { token })).data as { createdAt: string }[]).map((t) => t.createdAt);
      expect([...times].sort().reverse()).toEqual(times);
      const asc = ok(await h.get(`${P}?limit=200&sort=createdAt`, { token })).data.map((t: { id: string }) => t.id);
      expect(asc).toEqual([...all].reverse());
      // Cursors are the caller's own and bound to their sort.
      problem(await h.get(`${P}?cursor=${encodeURIComponent(first.nextCursor)}`), 400, 'cursor_invalid');
      problem(await h.get(`${P}?cursor=not-a-cursor`, { token }), 400, 'cursor_invalid');
      problem(await h.get(`${P}?cursor=${encodeURIComponent(first.nextCursor)}&sort=createdAt`, { token }), 400, 'cursor_sort_mismatch');
      const bad = problem(await h.get(`${P}?sort=name`, { token }), 400, 'sort_field_invalid');
      expect(bad).toMatchObject({ field: 'name', resource: 'personal-access-tokens' });
      problem(await h.get(`${P}?offset=2`, { token }), 400, 'pagination_param_unknown');
      problem(await h.get(`${P}?status=active`, { token }), 400, 'invalid_query_param');
      expect(ok(await h.get(`${P}?limit=500`, { token })).limit).toBe(200);
      // One pagination for every list (issue "One declaration, one pipeline"): the same names, the same signed cursors.
      for (const name of ['page_token', 'pageToken', 'starting_after']) {
        problem(await h.get(`${P}?${name}=x`, { token }), 400, 'pagination_param_unknown');
        problem(await h.get(`/tasks?${name}=x`, { token }), 400, 'pagination_param_unknown');
      }
      const [body, sig] = (first.nextCursor as string).split('.');
      const forged = JSON.parse(Buffer.from(body!, 'base64url').toString('utf8'));
      forged.b[0] = 0;
      problem(await h.get(`${P}?cursor=${Buffer.from(JSON.stringify(forged)).toString('base64url')}.${sig}`, { token }), 400, 'cursor_invalid');
      // A cursor another list issued (two tasks, one per page) is refused here.
      const project = await h.project();
      await h.task(project.id);
      await h.task(project.id);
      const tasks = ok(await h.get(`/tasks?projectId=${project.id}&limit=1`));
      expect(tasks.nextCursor).toBeTypeOf('string');
      problem(await h.get(`${P}?cursor=${encodeURIComponent(tasks.nextCursor)}`, { token }), 400, 'cursor_invalid');
      h.clock.advance(25 * 60 * 60 * 1000);
      problem(await h.get(`${P}?cursor=${encodeURIComponent(first.nextCursor)}`, { token }), 400, 'cursor_invalid');
    });

    it('the routes need the personal-access-tokens scope (403 permission_denied naming it)', async () => {
      const { token } = await h.api.admin.issueToken(h.a.owner.id, { scopes: ['tasks:read', 'tasks:write', 'tasks:delete'] });
      const c = await create(h, { name: 'Target' });
      for (const [r, scope] of [
        [await h.get(P, { token }), 'personal-access-tokens:read'],
        [await h.get(`${P}/${c.id}`, { token }), 'personal-access-tokens:read'],
        [await h.post(P, { name: 'X', scopes: ['tasks:read'] }, { token }), 'personal-access-tokens:write'],
        [await h.patch(`${P}/${c.id}`, { name: 'X' }, { token }), 'personal-access-tokens:write'],
        [await h.del(`${P}/${c.id}`, { token }), 'personal-access-tokens:delete'],
      ] as const) {
        expect(problem(r, 403, 'permission_denied').missingPermissions).toEqual([scope]);
      }
      expect(ok(await h.get(`${P}/${c.id}`)).status).toBe('active');
      // personal-access-tokens:write implies :read.
      const w = await h.api.admin.issueToken(h.a.owner.id, { scopes: ['personal-access-tokens:write'] });
      ok(await h.get(`${P}/${c.id}`, { token: w.token }));
    });

    // docs/not-shown.md "Contract and harness (issue 17)": every token has a name, as the declaration and the document say.
    it('api.admin.issueToken names a token issued without a name "API token", checks a given name as the API does, and migration 0030 names old unnamed tokens', async () => {
      const plain = await h.api.admin.issueToken(h.a.owner.id, { scopes: ['read'] });
      expect(ok(await h.get(`${P}/${plain.id}`)).name).toBe('API token');
      const named = await h.api.admin.issueToken(h.a.owner.id, { scopes: ['read'], name: '  Deploy bot  ' });
      expect(ok(await h.get(`${P}/${named.id}`)).name).toBe('Deploy bot');
      const before = (await listIds(h, h.a.owner.token)).length;
      for (const name of ['', '   ', 'x'.repeat(101), 42 as unknown as string]) {
        await expect(h.api.admin.issueToken(h.a.owner.id, { scopes: ['read'], name })).rejects.toThrow(/token's name must be a string of 1-100 characters/);
      }
      await expect(h.api.admin.createAgent({ teamId: h.a.id, name: 'Bot', scopes: ['read'], tokenName: ' ' })).rejects.toThrow(/tokenName must be/);
      expect((await listIds(h, h.a.owner.token)).length).toBe(before);
      expect((await h.get('/members?type[eq]=agent')).body.data.map((m: { name: string }) => m.name)).not.toContain('Bot');
      // A token stored without a name (before issueToken gave one) is named by the migration; OAuth rows are not touched.
      await h.api.store.db.updateTable('access_tokens').set({ name: null }).where('id', '=', plain.id).execute();
      expect(await nameUnnamedTokens(h.api.store.db)).toBe(1);
      expect(ok(await h.get(`${P}/${plain.id}`)).name).toBe('API token');
      expect(await nameUnnamedTokens(h.api.store.db)).toBe(0);
    });
  });

  describe(`[${factory.name}] v3 Authentication rule 7: personal access token bodies (validation_failed, empty_update)`, () => {
    let h: Harness;
    beforeAll(async () => {
      h = await harness(factory);
    });
    afterAll(() => h.close());

    it('create validates name, scopes and expiresAt', async () => {
      const before = await listIds(h, h.a.owner.token);
      const cases: [Record<string, unknown>, string][] = [
        [{ scopes: ['read'] }, 'name'],
        [{ name: '   ', scopes: ['read'] }, 'name'],
        [{ name: 'x'.repeat(101), scopes: ['read'] }, 'name'],
        [{ name: 42, scopes: ['read'] }, 'name'],
        [{ name: 'N' }, 'scopes'],
        [{ name: 'N', scopes: [] }, 'scopes'],
        [{ name: 'N', scopes: 'read' }, 'scopes'],
        [{ name: 'N', scopes: ['read', 'widgets:read'] }, 'scopes[1]'],
        [{ name: 'N', scopes: ['tasks:admin'] }, 'scopes[0]'],
        [{ name: 'N', scopes: ['admin'] }, 'scopes[0]'],
        [{ name: 'N', scopes: [7] }, 'scopes[0]'],
        [{ name: 'N', scopes: ['read'], expiresAt: 'tomorrow' }, 'expiresAt'],
        [{ name: 'N', scopes: ['read'], expiresAt: new Date(h.clock.now()).toISOString() }, 'expiresAt'],
        [{ name: 'N', scopes: ['read'], expiresAt: new Date(h.clock.now() - 1).toISOString() }, 'expiresAt'],
        [{ name: 'N', scopes: ['read'], owner: 'me' }, 'owner'],
      ];
      for (const [body, field] of cases) {
        const r = await h.post(P, body);
        problem(r, 400, 'validation_failed');
        expect(fieldsOf(r.body), JSON.stringify(body)).toContain(field);
      }
      problem(await h.post(P, ['read']), 400, 'validation_failed');
      expect(await listIds(h, h.a.owner.token)).toEqual(before);
    });

    it('accepts a 100-character name, the macros, every resource scope, no expiry or a future one', async () => {
      expect((await create(h, { name: 'x'.repeat(100) })).name).toHaveLength(100);
      // Every declared resource, the tokens themselves included.
      const resources = [...h.api.registry.byPath.keys()];
      expect(resources).toContain('personal-access-tokens');
      const all = resources.flatMap((r) => [`${r}:read`, `${r}:write`, `${r}:delete`]);
      const c = await create(h, { scopes: ['read', 'write', 'delete', ...all, 'read'] });
      expect(c.scopes).toEqual(['read', 'write', 'delete', ...all]);
      expect(c.expiresAt).toBeNull();
      const at = new Date(h.clock.now() + 1).toISOString();
      expect((await create(h, { expiresAt: at })).expiresAt).toBe(at);
      expect((await create(h, { expiresAt: '2030-01-01T00:00:00+02:00' })).expiresAt).toBe('2029-12-31T22:00:00.000Z');
      expect((await create(h, { expiresAt: null })).expiresAt).toBeNull();
    });

    it('an update with no field is 400 empty_update; unknown fields and bad values are validation_failed', async () => {
      const c = await create(h, { name: 'Patchy' });
      problem(await h.patch(`${P}/${c.id}`, {}), 400, 'empty_update');
      problem(await h.req('PATCH', `${P}/${c.id}`), 400, 'empty_update');
      // Server-assigned fields are ignored like on every resource (spec "Standard operations" rule 1), so nothing is left to change.
      problem(await h.patch(`${P}/${c.id}`, { revokedAt: null }), 400, 'empty_update');
      expect(fieldsOf(problem(await h.patch(`${P}/${c.id}`, { revokedAt: null, bogus: 1 }), 400, 'validation_failed'))).toEqual(['bogus']);
      expect(fieldsOf(problem(await h.patch(`${P}/${c.id}`, { name: '' }), 400, 'validation_failed'))).toContain('name');
      expect(fieldsOf(problem(await h.patch(`${P}/${c.id}`, { scopes: [] }), 400, 'validation_failed'))).toContain('scopes');
      expect(fieldsOf(problem(await h.patch(`${P}/${c.id}`, { scopes: ['nope:read'] }), 400, 'validation_failed'))).toContain('scopes[0]');
      expect(ok(await h.get(`${P}/${c.id}`))).toMatchObject({ name: 'Patchy', scopes: ['read'] });
      problem(await h.patch(`${P}/zzzzzzzzzzzz`, { name: 'X' }), 404, 'resource_not_found');
      problem(await h.del(`${P}/zzzzzzzzzzzz`), 404, 'resource_not_found');
      problem(await h.get(`${P}/not%20an%20id`), 404, 'resource_not_found');
    });
  });

  describe(`[${factory.name}] v3 Authentication rule 7 and Limits: 20 active personal access tokens per user (pat_cap_reached)`, () => {
    let h: Harness;
    beforeAll(async () => {
      h = await harness(factory);
    });
    afterAll(() => h.close());

    it('the 20th active token is created, the 21st refused; a revoked or expired one frees a slot; tokens of every membership count', async () => {
      // The owner already holds one active token (issued by api.admin): it counts.
      const ids: string[] = [];
      for (let i = 2; i <= 20; i++) ids.push((await create(h, { name: `Cap ${i}` })).id);
      const refused = problem(await h.post(P, { name: 'Cap 21', scopes: ['read'] }), 400, 'pat_cap_reached');
      expect(refused).toMatchObject({ max: 20, active: 20 });
      expect(await listIds(h, h.a.owner.token)).toHaveLength(20);

      // Revoking frees a slot, once.
      expect((await h.del(`${P}/${ids[0]}`)).status).toBe(204);
      const soon = await create(h, { name: 'Expiring', expiresAt: new Date(h.clock.now() + HOUR).toISOString() });
      problem(await h.post(P, { name: 'Cap 21', scopes: ['read'] }), 400, 'pat_cap_reached');

      // Expiry frees a slot.
      h.clock.advance(HOUR);
      problem(await h.get('/tasks', { token: soon.token }), 401, 'token_expired');
      const after = await create(h, { name: 'After expiry' });
      problem(await h.post(P, { name: 'Cap 21', scopes: ['read'] }), 400, 'pat_cap_reached');

      // The same person in workspace B: their tokens there count too (per user, not per membership).
      const bMember = await h.api.admin.addMember(h.b.id, { name: 'Alpha Owner', role: 'regular', userId: await userIdOf(h, h.a.owner.id) });
      const bTok = await h.api.admin.issueToken(bMember.id, { scopes: ['read', 'write', 'delete'] });
      expect(problem(await h.post(P, { name: 'In B', scopes: ['read'] }, { token: bTok.token }), 400, 'pat_cap_reached').active).toBe(21);
      // Other users are unaffected.
      await create(h, { name: 'Regular 1' }, h.a.regular.token);
      // Revoking two in A lets the B membership create one.
      expect((await h.del(`${P}/${after.id}`)).status).toBe(204);
      expect((await h.del(`${P}/${ids[1]}`)).status).toBe(204);
      const inB = await create(h, { name: 'In B' }, bTok.token);
      expect(inB.memberId).toBe(bMember.id);
      problem(await h.post(P, { name: 'Cap again', scopes: ['read'] }), 400, 'pat_cap_reached');
    });

    it('concurrent creations cannot overshoot the cap', async () => {
      const token = h.a.regular.token;
      const active = (ok(await h.get(`${P}?limit=200`, { token })).data as { status: string }[]).filter((t) => t.status === 'active').length;
      for (let i = active; i < 18; i++) await create(h, { name: `Fill ${i}` }, token);
      const replies = await Promise.all(Array.from({ length: 6 }, (_, i) => h.post(P, { name: `Race ${i}`, scopes: ['read'] }, { token })));
      expect(replies.filter((r) => r.status === 201)).toHaveLength(2);
      for (const r of replies.filter((x) => x.status !== 201)) problem(r, 400, 'pat_cap_reached');
      const after = (ok(await h.get(`${P}?limit=200`, { token })).data as { status: string }[]).filter((t) => t.status === 'active');
      expect(after).toHaveLength(20);
    });
  });

  describe(`[${factory.name}] v3 Authentication rule 7: update cannot broaden scope or shorten expiry`, () => {
    let h: Harness;
    beforeAll(async () => {
      h = await harness(factory);
    });
    afterAll(() => h.close());

    it('narrowing is allowed and takes effect; adding a scope is 400 cannot_broaden_scope', async () => {
      const c = await create(h, { name: 'Narrow', scopes: ['tasks:write', 'projects:read'] });
      expect((await h.get('/projects', { token: c.token })).status).toBe(200);
      const narrowed = ok(await h.patch(`${P}/${c.id}`, { scopes: ['tasks:read'] }));
      expect(narrowed.scopes).toEqual(['tasks:read']);
      expect((await h.get('/tasks', { token: c.token })).status).toBe(200);
      expect(problem(await h.get('/projects', { token: c.token }), 403, 'permission_denied').missingPermissions).toEqual(['projects:read']);
      const b1 = problem(await h.patch(`${P}/${c.id}`, { scopes: ['tasks:read', 'tasks:write'] }), 400, 'cannot_broaden_scope');
      expect(b1.addedScopes).toEqual(['tasks:write']);
      problem(await h.patch(`${P}/${c.id}`, { scopes: ['projects:read'] }), 400, 'cannot_broaden_scope');
      expect(ok(await h.get(`${P}/${c.id}`)).scopes).toEqual(['tasks:read']);
    });

    it('macros: write covers every resource write and read, but not delete; resource scopes never cover a macro', async () => {
      const c = await create(h, { name: 'Macro', scopes: ['write'] });
      problem(await h.patch(`${P}/${c.id}`, { scopes: ['write', 'delete'] }), 400, 'cannot_broaden_scope');
      problem(await h.patch(`${P}/${c.id}`, { scopes: ['tasks:delete'] }), 400, 'cannot_broaden_scope');
      ok(await h.patch(`${P}/${c.id}`, { scopes: ['read', 'tasks:write', 'projects:write'] }));
      problem(await h.patch(`${P}/${c.id}`, { scopes: ['write'] }), 400, 'cannot_broaden_scope');
      ok(await h.patch(`${P}/${c.id}`, { scopes: ['tasks:write'] }));
      problem(await h.patch(`${P}/${c.id}`, { scopes: ['read'] }), 400, 'cannot_broaden_scope');
      const r = await create(h, { name: 'All reads', scopes: [...h.api.registry.byPath.keys()].map((x) => `${x}:read`) });
      problem(await h.patch(`${P}/${r.id}`, { scopes: ['read'] }), 400, 'cannot_broaden_scope');
    });

    it('expiry: later or unchanged is fine, earlier is 400 cannot_shorten_expiry, as is giving a never-expiring token an expiry', async () => {
      const t0 = h.clock.now();
      const at = new Date(t0 + DAY).toISOString();
      const c = await create(h, { name: 'Expiry', expiresAt: at });
      const shorter = problem(await h.patch(`${P}/${c.id}`, { expiresAt: new Date(t0 + DAY - 1).toISOString() }), 400, 'cannot_shorten_expiry');
      expect(shorter.currentExpiresAt).toBe(at);
      expect(ok(await h.patch(`${P}/${c.id}`, { expiresAt: at })).expiresAt).toBe(at);
      const later = new Date(t0 + 2 * DAY).toISOString();
      expect(ok(await h.patch(`${P}/${c.id}`, { expiresAt: later })).expiresAt).toBe(later);
      // The extension is real: the token outlives its first expiry.
      h.clock.advance(DAY + 1);
      expect((await h.get('/tasks', { token: c.token })).status).toBe(200);
      expect(ok(await h.patch(`${P}/${c.id}`, { expiresAt: null })).expiresAt).toBeNull();
      const never = problem(await h.patch(`${P}/${c.id}`, { expiresAt: new Date(h.clock.now() + 100 * DAY).toISOString() }), 400, 'cannot_shorten_expiry');
      expect(never.currentExpiresAt).toBeNull();
      expect(ok(await h.get(`${P}/${c.id}`)).expiresAt).toBeNull();
      // A failed field leaves the others unchanged (one request, one outcome).
      problem(await h.patch(`${P}/${c.id}`, { name: 'Renamed', expiresAt: new Date(h.clock.now() + DAY).toISOString() }), 400, 'cannot_shorten_expiry');
      expect(ok(await h.get(`${P}/${c.id}`)).name).toBe('Expiry');
    });

    it('an expired token answers 401 token_expired and can no longer change (409 conflict)', async () => {
      const c = await create(h, { name: 'Short', expiresAt: new Date(h.clock.now() + HOUR).toISOString() });
      h.clock.advance(HOUR - 1);
      expect((await h.get('/tasks', { token: c.token })).status).toBe(200);
      h.clock.advance(1);
      problem(await h.get('/tasks', { token: c.token }), 401, 'token_expired');
      expect(ok(await h.get(`${P}/${c.id}`)).status).toBe('expired');
      problem(await h.patch(`${P}/${c.id}`, { expiresAt: new Date(h.clock.now() + DAY).toISOString() }), 409, 'conflict');
      problem(await h.get('/tasks', { token: c.token }), 401, 'token_expired');
      expect((await h.del(`${P}/${c.id}`)).status).toBe(204);
      problem(await h.get('/tasks', { token: c.token }), 401, 'invalid_token');
    });
  });

  describe(`[${factory.name}] v3 Authentication rules 5 and 7: a token's reach follows its scopes and its owner's role`, () => {
    let h: Harness;
    beforeAll(async () => {
      h = await harness(factory);
    });
    afterAll(() => h.close());

    it('a created token works as a bearer token with exactly its scopes', async () => {
      const projectId = (await h.project({ name: 'Reach' })).id;
      const c = await create(h, { name: 'Reader', scopes: ['tasks:read'] });
      expect((await h.get('/tasks', { token: c.token })).status).toBe(200);
      expect(problem(await h.get('/projects', { token: c.token }), 403, 'permission_denied').missingPermissions).toEqual(['projects:read']);
      expect(problem(await h.post('/tasks', { name: 'No', projectId }, { token: c.token }), 403, 'permission_denied').missingPermissions).toEqual(['tasks:write']);
      expect(problem(await h.get(P, { token: c.token }), 403, 'permission_denied').missingPermissions).toEqual(['personal-access-tokens:read']);
      const w = await create(h, { name: 'Writer', scopes: ['tasks:write', 'projects:read'] });
      ok(await h.post('/tasks', { name: 'Yes', projectId }, { token: w.token }), 201);
    });

    it("breadth follows the role: a client's token with `write` still cannot POST /projects (403 permission_denied)", async () => {
      const c = await create(h, { name: 'Client writer', scopes: ['write'] }, h.a.client.token);
      expect(c.memberId).toBe(h.a.client.id);
      expect((await h.get('/tasks', { token: c.token })).status).toBe(200);
      const r = problem(await h.post('/projects', { name: 'By client' }, { token: c.token }), 403, 'permission_denied');
      expect(r.missingPermissions).toEqual(['projects:write']);
    });

    it('scopes that do not intersect the role permissions are 400 cannot_create_empty_token', async () => {
      // The client role deletes nothing but its own messages (messages:delete).
      for (const scopes of [['statuses:delete', 'roles:write'], ['projects:delete', 'portfolios:delete'], ['tasks:delete', 'documents:delete']]) {
        problem(await h.post(P, { name: 'Empty', scopes }, { token: h.a.client.token }), 400, 'cannot_create_empty_token');
      }
      expect(await listIds(h, h.a.client.token)).not.toHaveLength(0);
      const before = await listIds(h, h.a.client.token);
      problem(await h.post(P, { name: 'Empty', scopes: ['roles:read', 'projects:delete'] }, { token: h.a.client.token }), 400, 'cannot_create_empty_token');
      expect(await listIds(h, h.a.client.token)).toEqual(before);
      // One intersecting scope is enough; write brings its read along.
      await create(h, { name: 'Some', scopes: ['tasks:read', 'roles:write'] }, h.a.client.token);
      await create(h, { name: 'Via read', scopes: ['projects:write'] }, h.a.client.token);
      // The token scopes are no role permission: a token that could only manage tokens is empty too.
      problem(await h.post(P, { name: 'Self', scopes: ['personal-access-tokens:write'] }, { token: h.a.client.token }), 400, 'cannot_create_empty_token');
      await create(h, { name: 'Self and tasks', scopes: ['personal-access-tokens:write', 'tasks:read'] }, h.a.client.token);
      // The owner may ask for anything.
      await create(h, { name: 'Owner', scopes: ['delete'] });
      // Narrowing to nothing the role permits is refused as well.
      const some = await create(h, { name: 'Narrowing', scopes: ['tasks:read', 'roles:read'] }, h.a.client.token);
      problem(await h.patch(`${P}/${some.id}`, { scopes: ['roles:read'] }, { token: h.a.client.token }), 400, 'cannot_create_empty_token');
    });

    it('a token cannot mint a token that may do more than itself (403 permission_denied)', async () => {
      const { token } = await h.api.admin.issueToken(h.a.owner.id, { scopes: ['personal-access-tokens:write', 'tasks:read'] });
      const r = problem(await h.post(P, { name: 'Escalate', scopes: ['tasks:write', 'write'] }, { token }), 403, 'permission_denied');
      expect(r.missingPermissions).toEqual(['tasks:write', 'write']);
      const ok1 = await create(h, { name: 'Same', scopes: ['tasks:read', 'personal-access-tokens:read'] }, token);
      expect(ok1.scopes).toEqual(['tasks:read', 'personal-access-tokens:read']);
    });

    it("a deactivated owner's created tokens answer 401 token_owner_inactive", async () => {
      const m = await h.api.admin.addMember(h.a.id, { name: 'Leaver', role: 'regular' });
      const { token } = await h.api.admin.issueToken(m.id, { scopes: ['read', 'write', 'delete'] });
      const c = await create(h, { name: 'Leaver PAT' }, token);
      expect((await h.get('/tasks', { token: c.token })).status).toBe(200);
      await h.api.admin.setMemberActive(m.id, false);
      problem(await h.get('/tasks', { token: c.token }), 401, 'token_owner_inactive');
      problem(await h.get(P, { token: c.token }), 401, 'token_owner_inactive');
      await h.api.admin.setMemberActive(m.id, true);
      expect((await h.get('/tasks', { token: c.token })).status).toBe(200);
    });
  });

  describe(`[${factory.name}] v3 Authentication rule 3: a member sees and changes only their own tokens`, () => {
    let h: Harness;
    beforeAll(async () => {
      h = await harness(factory);
    });
    afterAll(() => h.close());

    it("another member's or another workspace's token is 404 resource_not_found for every route", async () => {
      const regular = await create(h, { name: 'Regular own' }, h.a.regular.token);
      const mine = await create(h, { name: 'Owner own' });
      const other = await create(h, { name: 'B own' }, h.b.owner.token);
      for (const [caller, id] of [[h.a.owner.token, regular.id], [h.a.regular.token, mine.id], [h.b.owner.token, mine.id], [h.a.owner.token, other.id]] as const) {
        problem(await h.get(`${P}/${id}`, { token: caller }), 404, 'resource_not_found');
        problem(await h.patch(`${P}/${id}`, { name: 'Hijack' }, { token: caller }), 404, 'resource_not_found');
        problem(await h.del(`${P}/${id}`, { token: caller }), 404, 'resource_not_found');
      }
      // Untouched, and still working.
      for (const [c, token] of [[regular, h.a.regular.token], [mine, h.a.owner.token], [other, h.b.owner.token]] as const) {
        expect(ok(await h.get(`${P}/${c.id}`, { token }))).toMatchObject({ name: c.name, status: 'active' });
        expect((await h.get('/tasks', { token: c.token })).status).toBe(200);
      }
      // Lists hold only the caller's own tokens (those made through v3 and by api.admin).
      const ownerList = await listIds(h, h.a.owner.token);
      expect(ownerList).toContain(mine.id);
      expect(ownerList).not.toContain(regular.id);
      expect(ownerList).not.toContain(other.id);
      expect(await listIds(h, h.a.regular.token)).toHaveLength(2);
      const bList = await listIds(h, h.b.owner.token);
      expect(bList).toContain(other.id);
      expect(bList).toHaveLength(2);
      for (const t of ok(await h.get(`${P}?limit=200`)).data) expect(t.memberId).toBe(h.a.owner.id);
    });
  });
}

async function userIdOf(h: Harness, memberId: string): Promise<string> {
  const row = await h.api.store.db.selectFrom('members').select('user_id').where('id', '=', memberId).executeTakeFirstOrThrow();
  return row.user_id as string;
}
