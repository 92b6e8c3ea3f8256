import { describe, it, expect, beforeAll } from 'vitest';
import type { Harness, StoreFactory } from '../../kit';
import { copyProjects, harnessPerDescribe } from '../shared';
import { expectOk as ok, expectProblem as problem } from './helpers';

/**
 * The activity feed ("Other resources": fields not shown; decisions in
 * docs/not-shown.md "Activity feed"): GET /activity, a read-only, paged,
 * filterable view of the outbox webhooks are fed from, newest first, scoped
 * to what the caller may see.
 */

const at = (ms: number) => new Date(ms).toISOString();

/** Every item of the feed for this query, walking the cursor (asserting each page). */
async function walk(h: Harness, query: string, token?: string): Promise<any[]> {
  const out: any[] = [];
  let cursor: string | null = null;
  for (let i = 0; i < 100; i++) {
    const sep = query ? '&' : '';
    const r: any = ok(await h.get(`/activity?${query}${sep}limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { token }));
    out.push(...r.data);
    if (!r.hasMore) return out;
    cursor = r.nextCursor;
  }
  throw new Error('endless feed');
}

export function activitySuite(factory: StoreFactory): void {
  describe(`[${factory.name}] v3 Activity feed: GET /activity, the outbox newest first, paged by the signed cursor`, () => {
    const H = harnessPerDescribe(factory);
    let p: any;
    beforeAll(async () => {
      p = await H().project({ name: 'Activity P' });
      for (let i = 0; i < 5; i++) {
        H().clock.advance(1000);
        await H().task(p.id, { name: `Task ${i}` });
      }
    });

    it('items are the webhook envelopes of the workspace\'s events, newest first; another workspace never appears', async () => {
      const outbox = (await H().outbox()).filter((e) => e.teamId === H().a.id);
      const feed = await walk(H(), '');
      expect(feed.map((e) => e.eventId).sort()).toEqual(outbox.map((e) => e.eventId).sort());
      const stamps = feed.map((e) => e.timestamp);
      expect([...stamps].sort().reverse()).toEqual(stamps);
      const created = feed.find((e) => e.type === 'task.created' && e.payload.task.name === 'Task 4');
      expect(created).toEqual(outbox.find((e) => e.eventId === created.eventId));
      expect(created).toMatchObject({ aggregateType: 'task', teamId: H().a.id, projectId: p.id, triggeredBy: { source: 'human', teamMemberId: H().a.owner.id } });
      await H().project({ name: 'B activity' }, H().b.owner.token);
      const bFeed = await walk(H(), '', H().b.owner.token);
      expect(bFeed.length).toBeGreaterThan(0);
      expect(bFeed.every((e) => e.teamId === H().b.id)).toBe(true);
      expect((await walk(H(), '')).some((e) => e.teamId === H().b.id)).toBe(false);
    });

    it('limit pages (1-200, larger clamped), hasMore and nextCursor walk every item once; includeTotal counts them', async () => {
      const all = await walk(H(), '');
      const seen: string[] = [];
      let cursor: string | null = null;
      for (;;) {
        const r: any = ok(await H().get(`/activity?limit=2&includeTotal=true${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`));
        expect(r.limit).toBe(2);
        expect(r.total).toBe(all.length);
        expect(r.data.length).toBeLessThanOrEqual(2);
        seen.push(...r.data.map((e: any) => e.eventId));
        if (!r.hasMore) {
          expect(r.nextCursor).toBeNull();
          break;
        }
        cursor = r.nextCursor;
      }
      expect(seen).toEqual(all.map((e) => e.eventId));
      expect(ok(await H().get('/activity?limit=500')).limit).toBe(200);
      expect('total' in ok(await H().get('/activity?limit=1'))).toBe(false);
      problem(await H().get('/activity?limit=0'), 400, 'invalid_query_param');
    });

    it('the cursor is bound to the filters and the endpoint; sort and foreign paging parameters are refused', async () => {
      const r = ok(await H().get('/activity?limit=1&type[eq]=task.created'));
      expect(r.hasMore).toBe(true);
      problem(await H().get(`/activity?limit=1&type[eq]=project.created&cursor=${encodeURIComponent(r.nextCursor)}`), 400, 'cursor_invalid');
      problem(await H().get(`/activity?cursor=garbage`), 400, 'cursor_invalid');
      const list = ok(await H().get('/tasks?limit=1'));
      problem(await H().get(`/activity?cursor=${encodeURIComponent(list.nextCursor)}`), 400, 'cursor_invalid');
      problem(await H().get('/activity?sort=-timestamp'), 400, 'invalid_query_param');
      problem(await H().get('/activity?offset=10'), 400, 'pagination_param_unknown');
      problem(await H().get('/activity?colour[eq]=red'), 400, 'invalid_query_param');
    });
  });

  describe(`[${factory.name}] v3 Activity feed: filters (type, aggregateType, aggregateId, projectId, triggeredById, createdAt)`, () => {
    const H = harnessPerDescribe(factory);
    let p: any;
    let q: any;
    let t: any;
    let t0: number;
    beforeAll(async () => {
      p = await H().project({ name: 'Filter P', members: [H().a.owner.id, H().a.regular.id] });
      q = await H().project({ name: 'Filter Q' });
      H().clock.advance(60_000);
      t0 = H().clock.now();
      t = await H().task(p.id, { name: 'Filtered' }, H().a.regular.token);
      H().clock.advance(60_000);
      await H().patch(`/tasks/${t.id}`, { name: 'Filtered 2' });
      await H().post('/labels', { name: 'Workspace label' });
    });

    it('type[eq|in] and aggregateType[eq|in] select events by name and resource', async () => {
      const created = await walk(H(), 'type[eq]=task.created');
      expect(created.map((e) => e.aggregateId)).toEqual([t.id]);
      const two = await walk(H(), 'type[in]=task.created,task.updated');
      expect(new Set(two.map((e) => e.type))).toEqual(new Set(['task.created', 'task.updated']));
      const labels = await walk(H(), 'aggregateType[eq]=label');
      expect(labels.length).toBeGreaterThan(0);
      expect(labels.every((e) => e.aggregateType === 'label')).toBe(true);
      problem(await H().get('/activity?aggregateType[eq]=spaceship'), 400, 'invalid_query_param');
    });

    it('aggregateId, projectId[eq|in|null|notNull] and triggeredById narrow the feed', async () => {
      const ofTask = await walk(H(), `aggregateId[eq]=${t.id}`);
      expect(ofTask.map((e) => e.type).sort()).toEqual(['task.created', 'task.updated']);
      const ofQ = await walk(H(), `projectId[eq]=${q.id}`);
      expect(ofQ.length).toBeGreaterThan(0);
      expect(ofQ.every((e) => e.projectId === q.id)).toBe(true);
      const both = await walk(H(), `projectId[in]=${p.id},${q.id}`);
      expect(new Set(both.map((e) => e.projectId))).toEqual(new Set([p.id, q.id]));
      const none = await walk(H(), 'projectId[null]=true');
      expect(none.length).toBeGreaterThan(0);
      expect(none.every((e) => e.projectId === null)).toBe(true);
      const some = await walk(H(), 'projectId[notNull]=true');
      expect(some.every((e) => e.projectId !== null)).toBe(true);
      const byRegular = await walk(H(), `triggeredById[eq]=${H().a.regular.id}`);
      expect(byRegular.map((e) => e.type)).toEqual(['task.created']);
    });

    it('createdAt[gt|gte|lt|lte] bounds the event timestamp; a malformed timestamp is 400 invalid_query_param', async () => {
      const since = await walk(H(), `createdAt[gte]=${encodeURIComponent(at(t0))}`);
      expect(since.map((e) => e.type).sort()).toEqual(['label.created', 'task.created', 'task.updated']);
      const after = await walk(H(), `createdAt[gt]=${encodeURIComponent(at(t0))}`);
      expect(after.map((e) => e.type).sort()).toEqual(['label.created', 'task.updated']);
      const before = await walk(H(), `createdAt[lt]=${encodeURIComponent(at(t0))}`);
      expect(before.some((e) => e.aggregateId === t.id)).toBe(false);
      const upTo = await walk(H(), `createdAt[lte]=${encodeURIComponent(at(t0))}`);
      expect(upTo.filter((e) => e.aggregateId === t.id).map((e) => e.type)).toEqual(['task.created']);
      problem(await H().get('/activity?createdAt[gt]=yesterday'), 400, 'invalid_query_param');
    });
  });

  describe(`[${factory.name}] v3 Activity feed: scoped to what the caller may see`, () => {
    const H = harnessPerDescribe(factory);

    it('events of projects the caller cannot open are not shown (a guest outside the project)', async () => {
      const closed = await H().project({ name: 'Closed' });
      const shared = await H().project({ name: 'Shared', members: [H().a.owner.id, H().a.client.id] });
      const ct = await H().task(closed.id);
      const st = await H().task(shared.id);
      const feed = await walk(H(), '', H().a.client.token);
      expect(feed.some((e) => e.projectId === closed.id || e.aggregateId === ct.id)).toBe(false);
      expect(feed.some((e) => e.aggregateId === st.id)).toBe(true);
      // Naming the closed project is refused, as for lists restricted by projectId.
      problem(await H().get(`/activity?projectId[eq]=${closed.id}`, { token: H().a.client.token }), 403, 'project_access_denied');
      problem(await H().get(`/activity?projectId[in]=${shared.id},${closed.id}`, { token: H().a.client.token }), 403, 'project_access_denied');
      expect(ok(await H().get(`/activity?projectId[eq]=${shared.id}`, { token: H().a.client.token })).data.length).toBeGreaterThan(0);
      // Adding the guest opens the project's history to them.
      await H().patch(`/projects/${closed.id}`, { members: [H().a.owner.id, H().a.client.id] });
      expect((await walk(H(), '', H().a.client.token)).some((e) => e.aggregateId === ct.id)).toBe(true);
    });

    it("another member's private records never show: a private document, a reminder, a chat the caller is not in", async () => {
      const p = await H().project({ name: 'Private stuff', accessType: 'workspace' });
      const t = await H().task(p.id);
      const doc = ok(await H().post('/documents', { title: 'Secret', projectId: p.id, body: 'x', accessType: 'private' }), 201);
      const rem = ok(await H().post('/reminders', { taskId: t.id, date: at(H().clock.now() + 86_400_000) }), 201);
      const chat = ok(await H().post('/chats', { name: 'Owner and client', memberIds: [H().a.client.id] }), 201);
      const regular = await walk(H(), '', H().a.regular.token);
      for (const id of [doc.id, rem.id, chat.id]) expect(regular.some((e) => e.aggregateId === id), id).toBe(false);
      // The task itself is visible to the regular member (workspace project).
      expect(regular.some((e) => e.aggregateId === t.id)).toBe(true);
      const owner = await walk(H(), '');
      for (const id of [doc.id, rem.id, chat.id]) expect(owner.some((e) => e.aggregateId === id), id).toBe(true);
      // The chat's member sees the chat's events.
      expect((await walk(H(), '', H().a.client.token)).some((e) => e.aggregateId === chat.id)).toBe(true);
    });

    it('only resources the token and the role may read: a token scoped to tasks:read sees task events alone; no resource scope, nothing', async () => {
      const p = await H().project({ name: 'Scoped' });
      await H().task(p.id);
      await H().post('/labels', { name: 'Scoped label' });
      const { token } = await H().api.admin.issueToken(H().a.owner.id, { scopes: ['activity:read', 'tasks:read'] });
      const feed = await walk(H(), '', token);
      expect(feed.length).toBeGreaterThan(0);
      expect(new Set(feed.map((e) => e.aggregateType))).toEqual(new Set(['task']));
      const bare = (await H().api.admin.issueToken(H().a.owner.id, { scopes: ['activity:read'] })).token;
      expect(ok(await H().get('/activity?includeTotal=true', { token: bare }))).toMatchObject({ data: [], total: 0, hasMore: false });
      const none = (await H().api.admin.issueToken(H().a.owner.id, { scopes: ['tasks:read'] })).token;
      problem(await H().get('/activity', { token: none }), 403, 'permission_denied');
    });

    it('a role without read permission on a resource does not see its events (guests and report charts)', async () => {
      const chart = ok(await H().post('/report-charts', { name: 'Burn', type: 'burndown', projects: [] }), 201);
      expect((await walk(H(), '')).some((e) => e.aggregateId === chart.id)).toBe(true);
      expect((await walk(H(), '', H().a.regular.token)).some((e) => e.aggregateId === chart.id)).toBe(true);
      const guest = await walk(H(), '', H().a.client.token);
      expect(guest.length).toBeGreaterThan(0);
      expect(guest.some((e) => e.aggregateType === 'reportChart')).toBe(false);
    });

    it("another member's time entries show only to those whose role reads every entry (viewTimeReports)", async () => {
      const p = await H().project({ name: 'Timed', accessType: 'workspace' });
      const t = await H().task(p.id);
      const start = H().clock.now() - 3_600_000;
      const entry = ok(await H().post('/time-entries', { taskId: t.id, startAt: at(start), endAt: at(start + 1_800_000) }), 201);
      expect((await walk(H(), '')).some((e) => e.aggregateId === entry.id)).toBe(true);
      expect((await walk(H(), '', H().a.regular.token)).some((e) => e.aggregateId === entry.id)).toBe(false);
    });
  });
  describe(`[${factory.name}] v3 Activity feed: more than 1,000 projects (Errors accessible_project_ids_exceeded; a projectId filter is the bound)`, () => {
    const H = harnessPerDescribe(factory);
    let some: any;
    let task: any;
    beforeAll(async () => {
      some = await H().project({ name: 'Feed template', accessType: 'workspace' });
      task = await H().task(some.id, { name: 'In the feed' });
      // 1,000 more open projects.
      await copyProjects(H(), some.id, 1000, 'feedbulk');
    });

    it('without projectId the feed is a workspace-wide list: 400 accessible_project_ids_exceeded; with projectId[eq] or [in] it answers', async () => {
      for (const token of [H().a.owner.token, H().a.regular.token]) {
        problem(await H().get('/activity', { token }), 400, 'accessible_project_ids_exceeded');
        const one = ok(await H().get(`/activity?projectId[eq]=${some.id}`, { token }));
        expect(one.data.some((e: any) => e.aggregateId === task.id && e.type === 'task.created')).toBe(true);
        expect(ok(await H().get(`/activity?projectId[in]=${some.id},feedbulk000001`, { token })).data.length).toBeGreaterThan(0);
      }
    });
  });
}
