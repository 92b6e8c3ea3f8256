import { describe, it, expect, beforeAll } from 'vitest';
import type { Harness, StoreFactory } from '../../kit';
import { during, harnessPerDescribe, ofType } from '../shared';
import { expectOk as ok, expectProblem as problem, expectInvalid as invalid, iso, sorted } from './helpers';

/**
 * Favorite folders (spec "Favorite Folder", "Conventions": member ids instead
 * of the actor fields, "Limits": name 30 characters, Standard operations rule
 * 9 and the Search row, "Errors": favorite_folder_invalid, "Events") and
 * favorites (fields not shown: docs/not-shown.md "Favorites and favorite
 * folders"): a member's personal sidebar, the bookmark's target rules, the
 * appended order, unfiling on folder delete and the cascade with a target
 * removed for good.
 */

const DAY = 24 * 3600 * 1000;
const ids = (rows: any[]): string[] => rows.map((r) => r.id);

async function listIds(h: Harness, path: string, token?: string): Promise<string[]> {
  return ids(ok(await h.get(path, { token })).data);
}

async function folder(h: Harness, body: Record<string, unknown> = {}, token?: string): Promise<any> {
  return ok(await h.post('/favorite-folders', { name: 'Folder', ...body }, { token }), 201);
}

async function favorite(h: Harness, body: Record<string, unknown>, token?: string): Promise<any> {
  return ok(await h.post('/favorites', body, { token }), 201);
}

/** Another member of workspace A with the given built-in role, and a full token. */
async function memberWith(h: Harness, role: string, name: string): Promise<{ id: string; token: string }> {
  const m = await h.api.admin.addMember(h.a.id, { name, role });
  const t = await h.api.admin.issueToken(m.id, { scopes: ['read', 'write', 'delete'] });
  return { id: m.id, token: t.token };
}

const ACTOR_FIELDS = ['createdByActorId', 'updatedByActorId', 'createdByActorType', 'updatedByActorType'];

export function favoritesSuite(factory: StoreFactory): void {

  describe(`[${factory.name}] v3 Favorite Folder: fields (name max 30, order appended when omitted) and Conventions (createdById and updatedById member ids instead of the actor fields)`, () => {
    const H = harnessPerDescribe(factory);

    it('POST /favorite-folders → 201: trimmed name, order 1 for the first, createdById and updatedById the caller\'s member id, no actor fields; GET answers the same', async () => {
      const h = H();
      const f = ok(await h.post('/favorite-folders', { name: '  Sprint  ' }, { token: h.a.regular.token }), 201);
      expect(f.name).toBe('Sprint');
      expect(f.order).toBe(1);
      expect(f.createdById).toBe(h.a.regular.id);
      expect(f.updatedById).toBe(h.a.regular.id);
      expect(f.createdAt).toBe(iso(h.clock.now()));
      expect(f.updatedAt).toBe(f.createdAt);
      for (const k of ACTOR_FIELDS) expect(f, k).not.toHaveProperty(k);
      expect(f).not.toHaveProperty('personal');
      expect(ok(await h.get(`/favorite-folders/${f.id}`, { token: h.a.regular.token }))).toEqual(f);
      const listed = ok(await h.get('/favorite-folders', { token: h.a.regular.token })).data.find((x: any) => x.id === f.id);
      expect(listed).toEqual(f);
    });

    it('PATCH changes name and order, bumps updatedAt and keeps updatedById the writing member; the actor fields never appear', async () => {
      const h = H();
      const f = await folder(h, { name: 'Before' });
      h.clock.advance(1000);
      const u = ok(await h.patch(`/favorite-folders/${f.id}`, { name: 'After', order: 42.5 }));
      expect(u).toMatchObject({ name: 'After', order: 42.5, createdById: h.a.owner.id, updatedById: h.a.owner.id, createdAt: f.createdAt });
      expect(Date.parse(u.updatedAt)).toBeGreaterThan(Date.parse(f.updatedAt));
      for (const k of ACTOR_FIELDS) expect(u, k).not.toHaveProperty(k);
    });

    it('createdById and updatedById are server-set: ignored in bodies (a PATCH holding only them is empty_update); fields[favorite-folders] may select them, not the actor fields', async () => {
      const h = H();
      const f = ok(await h.post('/favorite-folders', { name: 'Mine', createdById: h.a.regular.id, updatedById: h.a.regular.id }), 201);
      expect(f.createdById).toBe(h.a.owner.id);
      expect(f.updatedById).toBe(h.a.owner.id);
      problem(await h.patch(`/favorite-folders/${f.id}`, { createdById: h.a.regular.id, updatedById: h.a.regular.id }), 400, 'empty_update');
      expect(ok(await h.get(`/favorite-folders/${f.id}?fields[favorite-folders]=createdById,updatedById`))).toEqual({ id: f.id, createdById: h.a.owner.id, updatedById: h.a.owner.id });
      problem(await h.get(`/favorite-folders/${f.id}?fields[favorite-folders]=createdByActorId`), 400, 'invalid_field_selector');
    });

    it('name: 30 characters after trimming are accepted, 31 are refused (create and update); it is required and may not be blank', async () => {
      const h = H();
      const exact = 'n'.repeat(30);
      const f = await folder(h, { name: `  ${exact}  ` });
      expect(f.name).toBe(exact);
      invalid(await h.post('/favorite-folders', { name: 'n'.repeat(31) }), 'name');
      invalid(await h.patch(`/favorite-folders/${f.id}`, { name: 'm'.repeat(31) }), 'name');
      invalid(await h.post('/favorite-folders', {}), 'name');
      invalid(await h.post('/favorite-folders', { name: '   ' }), 'name');
      invalid(await h.post('/favorite-folders', { name: 7 }), 'name');
      invalid(await h.patch(`/favorite-folders/${f.id}`, { name: null }), 'name');
      invalid(await h.patch(`/favorite-folders/${f.id}`, { order: 'top' }), 'order');
      expect(ok(await h.get(`/favorite-folders/${f.id}`)).name).toBe(exact);
    });

    it('order omitted on create is appended after the caller\'s last folder; another member\'s folders do not count; a sent order is kept', async () => {
      const h = H();
      const client = h.a.client.token;
      const first = await folder(h, { name: 'C1' }, client);
      expect(first.order).toBe(1);
      const explicit = await folder(h, { name: 'C2', order: 7.5 }, client);
      expect(explicit.order).toBe(7.5);
      expect((await folder(h, { name: 'C3' }, client)).order).toBe(8.5);
      // The owner's many folders with high ranks do not move the client's end.
      await folder(h, { name: 'O high', order: 500 });
      expect((await folder(h, { name: 'C4' }, client)).order).toBe(9.5);
    });

    it('expand: createdBy and updatedBy are the members; the actor expands do not exist (400 expand_unknown_relation)', async () => {
      const h = H();
      const f = await folder(h, { name: 'Expand me' }, h.a.regular.token);
      const r = ok(await h.get(`/favorite-folders/${f.id}?expand=createdBy,updatedBy`, { token: h.a.regular.token }));
      expect(r.createdBy.id).toBe(h.a.regular.id);
      expect(r.updatedBy.id).toBe(h.a.regular.id);
      const bad = problem(await h.get(`/favorite-folders/${f.id}?expand=createdByActor`, { token: h.a.regular.token }), 400, 'expand_unknown_relation');
      expect(bad.available).toEqual(expect.arrayContaining(['createdBy', 'updatedBy']));
      expect(bad.available).not.toContain('createdByActor');
    });

    it('hard-deleted: DELETE → 204, then 404; a second DELETE → 404', async () => {
      const h = H();
      const f = await folder(h, { name: 'Gone' });
      ok(await h.del(`/favorite-folders/${f.id}`), 204);
      problem(await h.get(`/favorite-folders/${f.id}`), 404, 'resource_not_found');
      problem(await h.del(`/favorite-folders/${f.id}`), 404, 'resource_not_found');
      expect(await listIds(h, '/favorite-folders?limit=200')).not.toContain(f.id);
    });
  });

  describe(`[${factory.name}] v3 Favorite Folder: personal (a member's sidebar: only its member sees or changes it, whatever the other member's role)`, () => {
    const H = harnessPerDescribe(factory);
    let manager: { id: string; token: string };
    beforeAll(async () => {
      manager = await memberWith(H(), 'manager', 'Alpha Manager');
    });

    it('the regular member\'s folder: the workspace owner, a manager, the client and another workspace\'s owner get 404 on GET, PATCH and DELETE, never list or find it; it stays unchanged', async () => {
      const h = H();
      const f = await folder(h, { name: 'Private stuff' }, h.a.regular.token);
      for (const token of [h.a.owner.token, manager.token, h.a.client.token, h.b.owner.token]) {
        problem(await h.get(`/favorite-folders/${f.id}`, { token }), 404, 'resource_not_found');
        problem(await h.patch(`/favorite-folders/${f.id}`, { name: 'Hijack' }, { token }), 404, 'resource_not_found');
        problem(await h.del(`/favorite-folders/${f.id}`, { token }), 404, 'resource_not_found');
        expect(await listIds(h, '/favorite-folders?limit=200', token)).not.toContain(f.id);
        expect(await listIds(h, '/favorite-folders/search?q=private', token)).not.toContain(f.id);
      }
      expect(ok(await h.get(`/favorite-folders/${f.id}`, { token: h.a.regular.token }))).toEqual(f);
      expect(await listIds(h, '/favorite-folders/search?q=private', h.a.regular.token)).toEqual([f.id]);
    });

    it('each member\'s list holds exactly their own folders (guests keep a sidebar too)', async () => {
      const h = H();
      const mine = await folder(h, { name: 'Owner F' });
      const reg = await folder(h, { name: 'Regular F' }, h.a.regular.token);
      const cli = await folder(h, { name: 'Client F' }, h.a.client.token);
      const all = [mine.id, reg.id, cli.id];
      const own = async (token: string, id: string) => {
        const listed = await listIds(h, '/favorite-folders?limit=200', token);
        expect(listed).toContain(id);
        for (const other of all) if (other !== id) expect(listed).not.toContain(other);
      };
      await own(h.a.owner.token, mine.id);
      await own(h.a.regular.token, reg.id);
      await own(h.a.client.token, cli.id);
      ok(await h.del(`/favorite-folders/${cli.id}`, { token: h.a.client.token }), 204);
    });
  });

  describe(`[${factory.name}] v3 Favorite Folder: filters name[eq|contains|startsWith], createdAt[range]; default sort order`, () => {
    const H = harnessPerDescribe(factory);
    let a: any;
    let b: any;
    let c: any;
    beforeAll(async () => {
      const h = H();
      a = await folder(h, { name: 'Roadmap', order: 3 });
      h.clock.advance(DAY);
      b = await folder(h, { name: 'Reading', order: 1 });
      h.clock.advance(DAY);
      c = await folder(h, { name: 'Ops', order: 2 });
    });

    it('default sort is order ascending; sort=-order reverses it; sort=name is accepted', async () => {
      expect(await listIds(H(), '/favorite-folders')).toEqual([b.id, c.id, a.id]);
      expect(await listIds(H(), '/favorite-folders?sort=-order')).toEqual([a.id, c.id, b.id]);
      expect(await listIds(H(), '/favorite-folders?sort=name')).toEqual([c.id, b.id, a.id]);
    });

    it('name[eq], name[contains] and name[startsWith] (case-insensitive)', async () => {
      expect(await listIds(H(), '/favorite-folders?name[eq]=Ops')).toEqual([c.id]);
      expect(await listIds(H(), '/favorite-folders?name[contains]=EAD')).toEqual([b.id]);
      expect(await listIds(H(), '/favorite-folders?name[startsWith]=r')).toEqual([b.id, a.id]);
    });

    it('createdAt[gt|gte|lt|lte]', async () => {
      const e = encodeURIComponent;
      expect(await listIds(H(), `/favorite-folders?createdAt[gt]=${e(a.createdAt)}`)).toEqual([b.id, c.id]);
      expect(await listIds(H(), `/favorite-folders?createdAt[gte]=${e(b.createdAt)}`)).toEqual([b.id, c.id]);
      expect(await listIds(H(), `/favorite-folders?createdAt[lt]=${e(b.createdAt)}`)).toEqual([a.id]);
      expect(await listIds(H(), `/favorite-folders?createdAt[lte]=${e(b.createdAt)}`)).toEqual([b.id, a.id]);
    });

    it('filters and operators the spec does not list → 400 invalid_query_param', async () => {
      for (const q of ['order[eq]=1', 'name[in]=Ops', 'createdAt[eq]=2026-01-01T00:00:00.000Z', 'createdById[eq]=x', 'updatedAt[gt]=2026-01-01T00:00:00.000Z']) {
        problem(await H().get(`/favorite-folders?${q}`), 400, 'invalid_query_param');
      }
    });
  });

  describe(`[${factory.name}] v3 Standard operations: Search (GET /favorite-folders/search, rule 9 and the Search row)`, () => {
    const H = harnessPerDescribe(factory);
    const search = (qs: string, token?: string) => H().get(`/favorite-folders/search?${qs}`, { token });
    let exact: any;
    let prefix: any;
    let inner: any;
    beforeAll(async () => {
      const h = H();
      inner = await folder(h, { name: 'Big design work' });
      h.clock.advance(1000);
      prefix = await folder(h, { name: 'Design reviews' });
      h.clock.advance(1000);
      exact = await folder(h, { name: 'design' });
      await folder(h, { name: 'Unrelated' });
    });

    it('q missing → 400 search_query_missing', async () => {
      problem(await search(''), 400, 'search_query_missing');
      problem(await search('limit=5'), 400, 'search_query_missing');
    });

    it('q is trimmed, then under 3 characters → search_query_too_short, over 200 → search_query_too_long; 3 and 200 are accepted', async () => {
      problem(await search('q=de'), 400, 'search_query_too_short');
      problem(await search(`q=${encodeURIComponent('   de   ')}`), 400, 'search_query_too_short');
      problem(await search('q='), 400, 'search_query_too_short');
      problem(await search(`q=${'a'.repeat(201)}`), 400, 'search_query_too_long');
      expect(ok(await search(`q=${encodeURIComponent(`  ${'a'.repeat(200)}  `)}`)).data).toEqual([]);
      // '  des  ' is searched as 'des': a prefix of two names, inside the third.
      expect(sorted(ids(ok(await search(`q=${encodeURIComponent('  des  ')}`)).data))).toEqual(sorted([exact.id, prefix.id, inner.id]));
    });

    it('q holding a URL, script, HTML or e-mail address → 400 search_query_invalid with reason', async () => {
      const cases: Array<[string, string]> = [
        ['https://example.com/x', 'url'], ['see www.example.com', 'url'], ['<script>alert(1)</script>', 'script'],
        ['javascript:alert(1)', 'script'], ['<b>bold</b>', 'html'], ['mail me@example.com', 'email'],
      ];
      for (const [q, reason] of cases) {
        const r = problem(await search(`q=${encodeURIComponent(q)}`), 400, 'search_query_invalid');
        expect(r.reason, q).toBe(reason);
      }
      expect((await search(`q=${encodeURIComponent('R&D <3 plans')}`)).status).toBe(200);
    });

    it('ranked by relevance: exact name, then prefix, then anywhere (case-insensitive); a non-match is absent', async () => {
      expect(ids(ok(await search('q=design')).data)).toEqual([exact.id, prefix.id, inner.id]);
      expect(ids(ok(await search('q=DESIGN')).data)).toEqual([exact.id, prefix.id, inner.id]);
      expect(ok(await search('q=nothing-like-it')).data).toEqual([]);
    });

    it('same filters as the list (name, createdAt), includeTotal, expand and cursor pages; sort is refused', async () => {
      const e = encodeURIComponent;
      expect(ids(ok(await search('q=design&name[startsWith]=design')).data)).toEqual([exact.id, prefix.id]);
      expect(ok(await search(`q=design&createdAt[gt]=${e(prefix.createdAt)}`)).data.map((x: any) => x.id)).toEqual([exact.id]);
      const counted = ok(await search('q=design&includeTotal=true&limit=1'));
      expect(counted.total).toBe(3);
      expect(counted.hasMore).toBe(true);
      const next = ok(await search(`q=design&limit=1&cursor=${e(counted.nextCursor)}`));
      expect(ids(next.data)).toEqual([prefix.id]);
      problem(await search(`q=designs&limit=1&cursor=${e(counted.nextCursor)}`), 400, 'cursor_invalid');
      const expanded = ok(await search('q=design&expand=createdBy'));
      expect(expanded.data[0].createdBy.id).toBe(H().a.owner.id);
      problem(await search('q=design&sort=name'), 400, 'invalid_query_param');
      problem(await search('q=design&color[eq]=x'), 400, 'invalid_query_param');
    });

    it('pages are capped at 200: limit above 200 is clamped, and 205 matches need a second page', async () => {
      const h = H();
      for (let i = 0; i < 205; i++) await folder(h, { name: `bulk ${i}` }, h.a.client.token);
      const first = ok(await search('q=bulk&limit=1000&includeTotal=true', h.a.client.token));
      expect(first.limit).toBe(200);
      expect(first.data).toHaveLength(200);
      expect(first.total).toBe(205);
      expect(first.hasMore).toBe(true);
      const rest = ok(await search(`q=bulk&limit=1000&cursor=${encodeURIComponent(first.nextCursor)}`, h.a.client.token));
      expect(rest.data).toHaveLength(5);
      expect(rest.hasMore).toBe(false);
      expect(new Set([...ids(first.data), ...ids(rest.data)]).size).toBe(205);
    });

    it('needs favorite-folders:read: a token without it → 403 permission_denied', async () => {
      const h = H();
      const t = await h.api.admin.issueToken(h.a.regular.id, { scopes: ['tasks:read'] });
      problem(await search('q=design', t.token), 403, 'permission_denied');
      const scoped = await h.api.admin.issueToken(h.a.regular.id, { scopes: ['favorite-folders:read'] });
      expect((await search('q=design', scoped.token)).status).toBe(200);
    });
  });

  describe(`[${factory.name}] v3 Favorites (fields not shown): targetType and targetId (a record the caller can open), order, one favorite per record`, () => {
    const H = harnessPerDescribe(factory);
    let p: any;
    let task: any;
    beforeAll(async () => {
      p = await H().project({ name: 'Fav project', members: [H().a.regular.id, H().a.client.id] });
      task = await H().task(p.id, { name: 'Fav task' });
    });

    it('a row its own routes never serve is no target: a project\'s discussion chat (GET /chats/{id} → 404) → 404 resource_not_found naming targetId, for its members too', async () => {
      const h = H();
      const chatId = ok(await h.get(`/projects/${p.id}`)).discussionChatId;
      expect(chatId).toBeTypeOf('string');
      for (const token of [h.a.owner.token, h.a.regular.token]) {
        problem(await h.get(`/chats/${chatId}`, { token }), 404, 'resource_not_found');
        expect(problem(await h.post('/favorites', { targetType: 'chat', targetId: chatId }, { token }), 404, 'resource_not_found').field).toBe('targetId');
      }
      expect(ok(await h.get(`/favorites?targetId[eq]=${chatId}`)).data).toEqual([]);
    });

    it('POST /favorites → 201: targetType, targetId, favoriteFolderId null, order 1, createdById the caller, the actor fields; GET answers the same', async () => {
      const h = H();
      const fav = ok(await h.post('/favorites', { targetType: 'task', targetId: task.id }, { token: h.a.regular.token }), 201);
      expect(fav).toMatchObject({ targetType: 'task', targetId: task.id, favoriteFolderId: null, order: 1, createdById: h.a.regular.id });
      expect(fav.createdByActorId).toBeTypeOf('string');
      expect(fav.createdByActorType).toBe('human');
      expect(fav).not.toHaveProperty('personal');
      expect(ok(await h.get(`/favorites/${fav.id}`, { token: h.a.regular.token }))).toEqual(fav);
    });

    it('every target type the caller can open: portfolio, project, task, list, document, file, chat, projectDashboard, goal, reportChart', async () => {
      const h = H();
      const targets: Record<string, string> = {
        portfolio: ok(await h.post('/portfolios', { name: 'Fav PF' }), 201).id,
        project: p.id,
        task: (await h.task(p.id)).id,
        list: ok(await h.post('/lists', { name: 'Fav list', projectId: p.id }), 201).id,
        document: ok(await h.post('/documents', { title: 'Fav doc', projectId: p.id }), 201).id,
        file: ok(await h.upload('x', { name: 'f.txt', projectId: p.id }), 201).id,
        chat: ok(await h.post('/chats', { name: 'Fav chat', memberIds: [] }), 201).id,
        projectDashboard: ok(await h.post('/project-dashboards', { name: 'Fav dash', projectId: p.id }), 201).id,
        goal: ok(await h.post('/goals', { name: 'Fav goal' }), 201).id,
        reportChart: ok(await h.post('/report-charts', { name: 'Fav chart', type: 'burndown' }), 201).id,
      };
      for (const [targetType, targetId] of Object.entries(targets)) {
        const fav = await favorite(h, { targetType, targetId });
        expect(fav, targetType).toMatchObject({ targetType, targetId });
        expect(await listIds(h, `/favorites?targetType[eq]=${targetType}&limit=200`)).toContain(fav.id);
      }
    });

    it('targetType and targetId are required; an unknown targetType → 400 validation_failed on targetType; nothing is created', async () => {
      const h = H();
      const before = await listIds(h, '/favorites?limit=200');
      invalid(await h.post('/favorites', { targetId: task.id }), 'targetType');
      invalid(await h.post('/favorites', { targetType: 'task' }), 'targetId');
      invalid(await h.post('/favorites', { targetType: 'member', targetId: h.a.regular.id }), 'targetType');
      invalid(await h.post('/favorites', { targetType: 'webhook', targetId: task.id }), 'targetType');
      invalid(await h.post('/favorites', { targetType: 'task', targetId: 'not an id!' }), 'targetId');
      expect(await listIds(h, '/favorites?limit=200')).toEqual(before);
    });

    it('a target that does not exist, is another workspace\'s, or is in the trash → 404 resource_not_found naming targetId', async () => {
      const h = H();
      const r = problem(await h.post('/favorites', { targetType: 'task', targetId: 'nosuchtask000000' }), 404, 'resource_not_found');
      expect(r.field).toBe('targetId');
      // The id of a project used as a task: not a task.
      expect(problem(await h.post('/favorites', { targetType: 'task', targetId: p.id }), 404, 'resource_not_found').field).toBe('targetId');
      const pb = await h.project({ name: 'Beta' }, h.b.owner.token);
      expect(problem(await h.post('/favorites', { targetType: 'project', targetId: pb.id }), 404, 'resource_not_found').field).toBe('targetId');
      const trashed = await h.project({ name: 'Trashed' });
      ok(await h.del(`/projects/${trashed.id}`), 204);
      expect(problem(await h.post('/favorites', { targetType: 'project', targetId: trashed.id }), 404, 'resource_not_found').field).toBe('targetId');
    });

    it('a target the caller cannot open: a task of a limited project they are not in → 403 project_access_denied; another member\'s private document or a chat they are not in → 404', async () => {
      const h = H();
      const closed = await h.project({ name: 'Closed', accessType: 'limited', members: [] });
      const hidden = await h.task(closed.id);
      problem(await h.post('/favorites', { targetType: 'task', targetId: hidden.id }, { token: h.a.regular.token }), 403, 'project_access_denied');
      problem(await h.post('/favorites', { targetType: 'project', targetId: closed.id }, { token: h.a.regular.token }), 403, 'project_access_denied');
      const secret = ok(await h.post('/documents', { title: 'Secret', projectId: p.id, accessType: 'private' }), 201);
      problem(await h.post('/favorites', { targetType: 'document', targetId: secret.id }, { token: h.a.regular.token }), 404, 'resource_not_found');
      const chat = ok(await h.post('/chats', { name: 'Owners only', memberIds: [] }), 201);
      problem(await h.post('/favorites', { targetType: 'chat', targetId: chat.id }, { token: h.a.regular.token }), 404, 'resource_not_found');
      for (const id of [hidden.id, closed.id, secret.id, chat.id]) expect(await listIds(h, `/favorites?targetId[eq]=${id}`, h.a.regular.token)).toEqual([]);
    });

    it('one favorite per record and member: the same target again → 409 conflict; another member may favorite it', async () => {
      const h = H();
      const t = await h.task(p.id, { name: 'Popular' });
      const mine = await favorite(h, { targetType: 'task', targetId: t.id });
      const again = problem(await h.post('/favorites', { targetType: 'task', targetId: t.id }), 409, 'conflict');
      expect(again.favoriteId).toBe(mine.id);
      const theirs = await favorite(h, { targetType: 'task', targetId: t.id }, h.a.regular.token);
      expect(theirs.id).not.toBe(mine.id);
      expect(await listIds(h, `/favorites?targetId[eq]=${t.id}`)).toEqual([mine.id]);
    });

    it('targetType and targetId are fixed at creation: another value → 400 validation_failed (immutable); the same value is accepted', async () => {
      const h = H();
      const t1 = await h.task(p.id);
      const t2 = await h.task(p.id);
      const fav = await favorite(h, { targetType: 'task', targetId: t1.id });
      invalid(await h.patch(`/favorites/${fav.id}`, { targetId: t2.id }), 'targetId', 'immutable');
      invalid(await h.patch(`/favorites/${fav.id}`, { targetType: 'project' }), 'targetType', 'immutable');
      ok(await h.patch(`/favorites/${fav.id}`, { targetType: 'task', targetId: t1.id, order: 9 }));
      expect(ok(await h.get(`/favorites/${fav.id}`))).toMatchObject({ targetType: 'task', targetId: t1.id, order: 9 });
      problem(await h.patch(`/favorites/${fav.id}`, { createdById: h.a.regular.id }), 400, 'empty_update');
    });

    it('order: omitted on create appends after the last favorite of the same folder (or of the unfiled ones); moving to another folder without an order appends there', async () => {
      const h = H();
      const tok = h.a.client.token;
      const f1 = await folder(h, { name: 'Client A' }, tok);
      const f2 = await folder(h, { name: 'Client B' }, tok);
      const tasks = await Promise.all([0, 1, 2, 3].map(() => h.task(p.id, {}, tok)));
      const u1 = await favorite(h, { targetType: 'task', targetId: tasks[0].id }, tok);
      const a1 = await favorite(h, { targetType: 'task', targetId: tasks[1].id, favoriteFolderId: f1.id, order: 4 }, tok);
      const a2 = await favorite(h, { targetType: 'task', targetId: tasks[2].id, favoriteFolderId: f1.id }, tok);
      const u2 = await favorite(h, { targetType: 'task', targetId: tasks[3].id }, tok);
      expect([u1.order, a1.order, a2.order, u2.order]).toEqual([1, 4, 5, 2]);
      const moved = ok(await h.patch(`/favorites/${u2.id}`, { favoriteFolderId: f1.id }, { token: tok }));
      expect(moved).toMatchObject({ favoriteFolderId: f1.id, order: 6 });
      const placed = ok(await h.patch(`/favorites/${u1.id}`, { favoriteFolderId: f2.id, order: 0.25 }, { token: tok }));
      expect(placed).toMatchObject({ favoriteFolderId: f2.id, order: 0.25 });
      expect(await listIds(h, `/favorites?favoriteFolderId[eq]=${f1.id}`, tok)).toEqual([a1.id, a2.id, u2.id]);
      const unfiled = ok(await h.patch(`/favorites/${a1.id}`, { favoriteFolderId: null }, { token: tok }));
      expect(unfiled).toMatchObject({ favoriteFolderId: null, order: 1 });
    });

    it('filters targetType[eq|in], targetId[eq|in], favoriteFolderId[eq|in|null|notNull]; expand favoriteFolder', async () => {
      const h = H();
      const tok = h.a.regular.token;
      const f = await folder(h, { name: 'Reg folder' }, tok);
      const t = await h.task(p.id, {}, tok);
      const inFolder = await favorite(h, { targetType: 'task', targetId: t.id, favoriteFolderId: f.id }, tok);
      const proj = await favorite(h, { targetType: 'project', targetId: p.id }, tok);
      expect(await listIds(h, '/favorites?targetType[eq]=project', tok)).toEqual([proj.id]);
      expect(await listIds(h, `/favorites?targetType[in]=project,portfolio`, tok)).toEqual([proj.id]);
      expect(sorted(await listIds(h, `/favorites?targetId[in]=${t.id},${p.id}`, tok))).toEqual(sorted([inFolder.id, proj.id]));
      expect(await listIds(h, `/favorites?favoriteFolderId[eq]=${f.id}`, tok)).toEqual([inFolder.id]);
      expect(await listIds(h, `/favorites?favoriteFolderId[in]=${f.id}`, tok)).toEqual([inFolder.id]);
      expect(await listIds(h, '/favorites?favoriteFolderId[notNull]=true', tok)).toEqual([inFolder.id]);
      expect(await listIds(h, '/favorites?favoriteFolderId[null]=true', tok)).not.toContain(inFolder.id);
      expect(await listIds(h, '/favorites?favoriteFolderId[null]=true', tok)).toContain(proj.id);
      const ex = ok(await h.get(`/favorites/${inFolder.id}?expand=favoriteFolder`, { token: tok }));
      expect(ex.favoriteFolder).toMatchObject({ id: f.id, name: 'Reg folder' });
      const folderEx = ok(await h.get(`/favorite-folders/${f.id}?expand=favorites`, { token: tok }));
      expect(ids(folderEx.favorites)).toEqual([inFolder.id]);
      problem(await h.get('/favorites?order[eq]=1', { token: tok }), 400, 'invalid_query_param');
    });
  });

  describe(`[${factory.name}] v3 Errors: favorite_folder_invalid (400: favoriteFolderId not owned by the caller)`, () => {
    const H = harnessPerDescribe(factory);
    let p: any;
    beforeAll(async () => {
      p = await H().project({ name: 'FFI', members: [H().a.regular.id] });
    });

    it('create with another member\'s folder, a missing one or another workspace\'s → 400 favorite_folder_invalid; nothing is created', async () => {
      const h = H();
      const t = await h.task(p.id);
      const theirs = await folder(h, { name: 'Regular\'s' }, h.a.regular.token);
      const beta = await folder(h, { name: 'Beta\'s' }, h.b.owner.token);
      for (const id of [theirs.id, beta.id, 'nosuchfolder0000']) {
        const r = problem(await h.post('/favorites', { targetType: 'task', targetId: t.id, favoriteFolderId: id }), 400, 'favorite_folder_invalid');
        expect(r.field).toBe('favoriteFolderId');
      }
      expect(await listIds(h, `/favorites?targetId[eq]=${t.id}`)).toEqual([]);
      // The caller's own folder is accepted.
      const own = await folder(h, { name: 'Own' });
      expect((await favorite(h, { targetType: 'task', targetId: t.id, favoriteFolderId: own.id })).favoriteFolderId).toBe(own.id);
    });

    it('update to another member\'s folder → 400 favorite_folder_invalid; the favorite keeps its folder; null (unfiled) is accepted', async () => {
      const h = H();
      const t = await h.task(p.id);
      const own = await folder(h, { name: 'Mine' });
      const theirs = await folder(h, { name: 'Not mine' }, h.a.regular.token);
      const fav = await favorite(h, { targetType: 'task', targetId: t.id, favoriteFolderId: own.id });
      problem(await h.patch(`/favorites/${fav.id}`, { favoriteFolderId: theirs.id }), 400, 'favorite_folder_invalid');
      problem(await h.patch(`/favorites/${fav.id}`, { favoriteFolderId: theirs.id, order: 3 }), 400, 'favorite_folder_invalid');
      expect(ok(await h.get(`/favorites/${fav.id}`))).toMatchObject({ favoriteFolderId: own.id, order: fav.order });
      expect(ok(await h.patch(`/favorites/${fav.id}`, { favoriteFolderId: null })).favoriteFolderId).toBeNull();
    });

    it('a favoriteFolderId that is not an id string → 400 validation_failed on favoriteFolderId', async () => {
      const h = H();
      const t = await h.task(p.id);
      invalid(await h.post('/favorites', { targetType: 'task', targetId: t.id, favoriteFolderId: 12 }), 'favoriteFolderId');
      invalid(await h.post('/favorites', { targetType: 'task', targetId: t.id, favoriteFolderId: 'bad id!' }), 'favoriteFolderId');
    });
  });

  describe(`[${factory.name}] v3 Favorites: personal (only the member who made it sees or changes it, whatever the other member's role)`, () => {
    const H = harnessPerDescribe(factory);

    it('the regular member\'s favorite: the workspace owner, a manager, the client and another workspace\'s owner get 404 on GET, PATCH and DELETE and never list it; its member reads, changes and deletes it', async () => {
      const h = H();
      const manager = await memberWith(h, 'manager', 'Fav Manager');
      const p = await h.project({ name: 'Shared', accessType: 'workspace', members: [h.a.regular.id, h.a.client.id] });
      const fav = await favorite(h, { targetType: 'project', targetId: p.id }, h.a.regular.token);
      for (const token of [h.a.owner.token, manager.token, h.a.client.token, h.b.owner.token]) {
        problem(await h.get(`/favorites/${fav.id}`, { token }), 404, 'resource_not_found');
        problem(await h.patch(`/favorites/${fav.id}`, { order: 5 }, { token }), 404, 'resource_not_found');
        problem(await h.del(`/favorites/${fav.id}`, { token }), 404, 'resource_not_found');
        expect(await listIds(h, '/favorites?limit=200', token)).not.toContain(fav.id);
        expect(await listIds(h, `/favorites?targetId[eq]=${p.id}`, token)).not.toContain(fav.id);
      }
      expect(ok(await h.get(`/favorites/${fav.id}`, { token: h.a.regular.token }))).toEqual(fav);
      expect(ok(await h.patch(`/favorites/${fav.id}`, { order: 5 }, { token: h.a.regular.token })).order).toBe(5);
      ok(await h.del(`/favorites/${fav.id}`, { token: h.a.regular.token }), 204);
      problem(await h.get(`/favorites/${fav.id}`, { token: h.a.regular.token }), 404, 'resource_not_found');
    });

    it('favorite and favorite-folder events reach only webhooks their member registered', async () => {
      const h = H();
      const p = await h.project({ name: 'Hooks', members: [h.a.regular.id] });
      const hook = ok(await h.post('/webhooks', { url: 'https://hooks.invalid/f', events: ['favorite.*', 'favoriteFolder.*'] }), 201);
      const own = await during(h, async () => {
        const f = await folder(h, { name: 'Owner hooks' });
        await favorite(h, { targetType: 'project', targetId: p.id, favoriteFolderId: f.id });
        return f;
      });
      const other = await during(h, async () => {
        const f = await folder(h, { name: 'Regular hooks' }, h.a.regular.token);
        await favorite(h, { targetType: 'project', targetId: p.id, favoriteFolderId: f.id }, h.a.regular.token);
        return f;
      });
      const jobs = await h.store.db.selectFrom('webhook_jobs').selectAll().where('webhook_id', '=', hook.id).execute();
      const queued = new Set(jobs.map((j: any) => j.event_id as string));
      expect(sorted(own.events.filter((e) => queued.has(e.eventId)).map((e) => e.type))).toEqual(['favorite.created', 'favoriteFolder.created']);
      expect(other.events.filter((e) => queued.has(e.eventId))).toEqual([]);
      expect(sorted(other.events.map((e) => e.type))).toEqual(['favorite.created', 'favoriteFolder.created']);
    });
  });

  describe(`[${factory.name}] v3 Favorites and Favorite Folder: lifecycle events (Events), folder delete unfiles its favorites, a target removed for good takes its favorites`, () => {
    const H = harnessPerDescribe(factory);
    let p: any;
    beforeAll(async () => {
      p = await H().project({ name: 'Events', members: [H().a.regular.id] });
    });

    it('create, update and delete emit favoriteFolder.created|updated|removed and favorite.created|updated|removed carrying the record under its name, triggered by the member', async () => {
      const h = H();
      const t = await h.task(p.id);
      const { events, result } = await during(h, async () => {
        const f = await folder(h, { name: 'Evented' });
        ok(await h.patch(`/favorite-folders/${f.id}`, { name: 'Evented 2' }));
        const fav = await favorite(h, { targetType: 'task', targetId: t.id });
        ok(await h.patch(`/favorites/${fav.id}`, { order: 12 }));
        ok(await h.del(`/favorites/${fav.id}`), 204);
        ok(await h.del(`/favorite-folders/${f.id}`), 204);
        return { f, fav };
      });
      const { f, fav } = result;
      const created = ofType(events, 'favoriteFolder.created', f.id);
      expect(created).toHaveLength(1);
      expect(created[0].payload.favoriteFolder).toEqual(f);
      expect(created[0].aggregateType).toBe('favoriteFolder');
      expect(created[0].projectId).toBeNull();
      expect(created[0].triggeredBy).toEqual({ source: 'human', userId: expect.any(String), teamMemberId: h.a.owner.id });
      expect(ofType(events, 'favoriteFolder.updated', f.id)[0].payload.favoriteFolder.name).toBe('Evented 2');
      expect(ofType(events, 'favoriteFolder.removed', f.id)).toHaveLength(1);
      expect(ofType(events, 'favorite.created', fav.id)[0].payload.favorite).toEqual(fav);
      expect(ofType(events, 'favorite.updated', fav.id)[0].payload.favorite.order).toBe(12);
      expect(ofType(events, 'favorite.removed', fav.id)).toHaveLength(1);
    });

    it('deleting a folder leaves its favorites unfiled (favoriteFolderId null, each with favorite.updated), keeping their order; the other folder\'s stay', async () => {
      const h = H();
      const f = await folder(h, { name: 'Doomed' });
      const keep = await folder(h, { name: 'Kept' });
      const t1 = await h.task(p.id);
      const t2 = await h.task(p.id);
      const t3 = await h.task(p.id);
      const a = await favorite(h, { targetType: 'task', targetId: t1.id, favoriteFolderId: f.id });
      const b = await favorite(h, { targetType: 'task', targetId: t2.id, favoriteFolderId: f.id });
      const c = await favorite(h, { targetType: 'task', targetId: t3.id, favoriteFolderId: keep.id });
      const { events } = await during(h, async () => ok(await h.del(`/favorite-folders/${f.id}`), 204));
      for (const fav of [a, b]) {
        const now = ok(await h.get(`/favorites/${fav.id}`));
        expect(now).toMatchObject({ favoriteFolderId: null, order: fav.order });
        const upd = ofType(events, 'favorite.updated', fav.id);
        expect(upd).toHaveLength(1);
        expect(upd[0].payload.favorite.favoriteFolderId).toBeNull();
      }
      expect(ok(await h.get(`/favorites/${c.id}`)).favoriteFolderId).toBe(keep.id);
      expect(ofType(events, 'favoriteFolder.removed', f.id)).toHaveLength(1);
    });

    it('a task deleted (for good) takes every member\'s favorites of it and of its subtasks, each with favorite.removed; other favorites stay', async () => {
      const h = H();
      const parent = await h.task(p.id, { name: 'Parent' });
      const child = await h.task(p.id, { name: 'Child', parentTaskId: parent.id });
      const other = await h.task(p.id, { name: 'Other' });
      const mine = await favorite(h, { targetType: 'task', targetId: parent.id });
      const theirs = await favorite(h, { targetType: 'task', targetId: parent.id }, h.a.regular.token);
      const sub = await favorite(h, { targetType: 'task', targetId: child.id });
      const stays = await favorite(h, { targetType: 'task', targetId: other.id });
      const { events } = await during(h, async () => ok(await h.del(`/tasks/${parent.id}`), 204));
      problem(await h.get(`/favorites/${mine.id}`), 404, 'resource_not_found');
      problem(await h.get(`/favorites/${sub.id}`), 404, 'resource_not_found');
      problem(await h.get(`/favorites/${theirs.id}`, { token: h.a.regular.token }), 404, 'resource_not_found');
      for (const fav of [mine, theirs, sub]) expect(ofType(events, 'favorite.removed', fav.id), fav.id).toHaveLength(1);
      expect(ok(await h.get(`/favorites/${stays.id}`)).targetId).toBe(other.id);
    });

    it('a trashed project keeps its favorites (it can come back); purged after 30 days, the project\'s and its tasks\' favorites go (favorite.removed); a list deleted takes its favorites at once', async () => {
      const h = H();
      const doomed = await h.project({ name: 'Doomed project' });
      const t = await h.task(doomed.id);
      const list = ok(await h.post('/lists', { name: 'Doomed list', projectId: p.id }), 201);
      const favP = await favorite(h, { targetType: 'project', targetId: doomed.id });
      const favT = await favorite(h, { targetType: 'task', targetId: t.id });
      const favL = await favorite(h, { targetType: 'list', targetId: list.id });
      const listGone = await during(h, async () => ok(await h.del(`/lists/${list.id}`), 204));
      expect(ofType(listGone.events, 'favorite.removed', favL.id)).toHaveLength(1);
      problem(await h.get(`/favorites/${favL.id}`), 404, 'resource_not_found');
      ok(await h.del(`/projects/${doomed.id}`), 204);
      expect(ok(await h.get(`/favorites/${favP.id}`)).targetId).toBe(doomed.id);
      h.clock.advance(31 * DAY);
      const purged = await during(h, () => h.api.jobs.purge());
      for (const fav of [favP, favT]) {
        problem(await h.get(`/favorites/${fav.id}`), 404, 'resource_not_found');
        expect(ofType(purged.events, 'favorite.removed', fav.id), fav.targetType).toHaveLength(1);
      }
    });
  });

  describe(`[${factory.name}] v3 Favorites: a favorite never outlives its folder or its target (a create racing their removal waits for it)`, () => {
    const H = harnessPerDescribe(factory);

    /**
     * Another transaction locks the row as a removal does, the favorite is posted meanwhile, then that
     * transaction deletes the row and commits: the create either waited and was refused, or (without the
     * lock) went through first and now points at nothing. Stores without row locks (SQLite serialises
     * writers, so no such race) skip.
     */
    async function raceRemoval(h: Harness, table: string, id: string, post: () => Promise<any>): Promise<any> {
      let release!: () => void;
      const gate = new Promise<void>((r) => { release = r; });
      let locked!: () => void;
      const isLocked = new Promise<void>((r) => { locked = r; });
      const remover = h.store.transaction(async (trx) => {
        await trx.selectFrom(table).select('id').where('id', '=', id).forUpdate().execute();
        locked();
        await gate;
        await trx.deleteFrom(table).where('id', '=', id).execute();
      });
      await isLocked;
      const reply = post();
      // Long enough for an unlocked create to finish first.
      await new Promise((r) => setTimeout(r, 400));
      release();
      await remover;
      return reply;
    }

    it('a favorite filed in a folder being deleted: the create waits for the delete, then 400 favorite_folder_invalid; no favorite points at a missing folder', async (context) => {
      const h = H();
      if (!h.store.dialect.capabilities.forUpdate) context.skip();
      const p = await h.project({ name: 'Folder race' });
      const t = await h.task(p.id);
      const f = await folder(h, { name: 'Going' });
      const r = await raceRemoval(h, h.api.registry.get('favoriteFolder').table, f.id, () => h.post('/favorites', { targetType: 'task', targetId: t.id, favoriteFolderId: f.id }));
      expect(problem(r, 400, 'favorite_folder_invalid').field).toBe('favoriteFolderId');
      expect(ok(await h.get(`/favorites?favoriteFolderId[eq]=${f.id}`)).data).toEqual([]);
    });

    it('a favorite of a record being removed for good: the create waits for the removal, then 404 resource_not_found naming targetId; no favorite points at a missing record', async (context) => {
      const h = H();
      if (!h.store.dialect.capabilities.forUpdate) context.skip();
      const p = await h.project({ name: 'Target race' });
      const t = await h.task(p.id);
      const r = await raceRemoval(h, h.api.registry.get('task').table, t.id, () => h.post('/favorites', { targetType: 'task', targetId: t.id }));
      expect(problem(r, 404, 'resource_not_found').field).toBe('targetId');
      expect(ok(await h.get(`/favorites?targetId[eq]=${t.id}`)).data).toEqual([]);
    });
  });
}
