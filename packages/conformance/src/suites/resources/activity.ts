import { describe, it, expect, beforeAll } from 'vitest';
import { ACTIVITY_COUNT_BUDGET, ACTIVITY_SCAN_BUDGET, narrowOwnerReadAudiences } from '@pmapi/core/sql';
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

/** The types of the feed's events of one record as `token` sees them, sorted (events of one instant have no order of their own). */
async function eventsOf(h: Harness, aggregateId: string, token?: string): Promise<string[]> {
  return (await walk(h, `aggregateId[eq]=${aggregateId}`, token)).map((e) => e.type).sort();
}

/**
 * `count` copies of the outbox rows `sourceIds` (taken in turn), written
 * straight to the store one millisecond apart from `startMs` on, each with
 * its own id (`prefix` plus a number) and already dispatched: through the
 * API this many events would take long.
 */
async function copyEvents(h: Harness, sourceIds: string[], count: number, startMs: number, prefix: string): Promise<void> {
  const d = h.store.dialect;
  const src = await h.store.db.selectFrom('outbox').selectAll().where('id', 'in', sourceIds).execute();
  expect(src.length).toBe(sourceIds.length);
  const rows = Array.from({ length: count }, (_, i) => {
    const row = src[i % src.length]!;
    const id = `${prefix}${String(i).padStart(6, '0')}`;
    const t = startMs + i;
    const body = { ...(d.decode('json', row.body) as Record<string, unknown>), eventId: id, timestamp: at(t) };
    return { ...row, id, body: d.encode('json', body), created_at: d.encode('timestamp', t), dispatched_at: d.encode('timestamp', t) };
  });
  for (let i = 0; i < rows.length; i += 500) await h.store.db.insertInto('outbox').values(rows.slice(i, i + 500)).execute();
}

/** The text of the CTE `name` of a statement (its parentheses balanced), or undefined. */
function cteOf(statement: string, name: string): string | undefined {
  const start = statement.indexOf(`"${name}" as (`);
  if (start < 0) return undefined;
  let depth = 0;
  for (let i = statement.indexOf('(', start); i < statement.length; i++) {
    if (statement[i] === '(') depth++;
    else if (statement[i] === ')' && --depth === 0) return statement.slice(start, i + 1);
  }
  return undefined;
}

/** A member of workspace A holding a new custom role with these permissions, with a token of every scope. */
async function memberWithRole(h: Harness, name: string, permissions: string[]): Promise<{ id: string; token: string; roleId: string }> {
  const role = ok(await h.post('/roles', { name, permissions }), 201);
  const m = await h.api.admin.addMember(h.a.id, { name: `${name} member`, role: name });
  const tok = await h.api.admin.issueToken(m.id, { scopes: ['read', 'write', 'delete'] });
  return { id: m.id, token: tok.token, roleId: role.id };
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
      // Counted within the budget: no totalCapped.
      expect('totalCapped' in ok(await H().get('/activity?limit=1&includeTotal=true'))).toBe(false);
      problem(await H().get('/activity?limit=0'), 400, 'invalid_query_param');
    });

    it('a page reads the envelopes of the events it shows alone: the examined window and the count hold no body', async () => {
      // A window holds up to ACTIVITY_SCAN_BUDGET rows; carrying their envelopes made every page copy thousands of
      // bodies (docs/not-shown.md "Activity feed"). Asserted on the SQL, never by timing.
      let page: any;
      const statements = (await H().countQueries(async () => { page = ok(await H().get('/activity?limit=2&includeTotal=true')); }))
        .filter((q) => /"outbox"/.test(q));
      expect(page.data).toHaveLength(2);
      expect(page.data[0]).toMatchObject({ eventId: expect.any(String), payload: expect.any(Object) });
      expect(statements).toHaveLength(2);
      const [read, count] = statements as [string, string];
      const window = cteOf(read, 'w');
      expect(window).toBeDefined();
      expect(window).not.toMatch(/"body"/);
      // The envelopes come from the outbox joined by id to the (at most limit + 1) shown rows.
      expect(read.replace(window!, '')).toMatch(/join "outbox" as "o" on "o"\."id" = "a"\."id"/);
      expect(read.replace(window!, '')).toMatch(/"o"\."body"/);
      expect(cteOf(count, 'w')).toBeDefined();
      expect(count).not.toMatch(/"body"/);
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

    it('createdAt takes the timestamps every list filter takes (a date alone, minutes, offsets, fractions), and refuses the same', async () => {
      // Spec "Filtering": one timestamp syntax for every filter; /tasks createdAt is the yardstick.
      const all = (await walk(H(), '')).map((e) => e.eventId);
      const accepted = ['2020-01-01', '2020-01-01T00:00Z', '2020-01-01T00:00:00+01:00', '2020-01-01T00:00:00.123456Z', '2020-01-01T00:00:00-0500'];
      for (const v of accepted) {
        expect((await H().get(`/tasks?createdAt[gt]=${encodeURIComponent(v)}`)).status).toBe(200);
        expect((await walk(H(), `createdAt[gt]=${encodeURIComponent(v)}`)).map((e) => e.eventId)).toEqual(all);
        expect(await walk(H(), `createdAt[lt]=${encodeURIComponent(v)}`)).toEqual([]);
      }
      // A date alone is that day's UTC midnight: the day after the last event holds none of them, the day of t0 some.
      const day = (ms: number) => at(ms).slice(0, 10);
      expect(await walk(H(), `createdAt[gte]=${day(H().clock.now() + 86_400_000)}`)).toEqual([]);
      expect((await walk(H(), `createdAt[lt]=${day(t0 + 86_400_000)}`)).some((e) => e.aggregateId === t.id)).toBe(true);
      for (const v of ['yesterday', '2020-01-01T00:00:00', '2020-13-45', '2020-01-01T25:00Z', '1577836800000']) {
        problem(await H().get(`/tasks?createdAt[gt]=${encodeURIComponent(v)}`), 400, 'invalid_query_param');
        problem(await H().get(`/activity?createdAt[gt]=${encodeURIComponent(v)}`), 400, 'invalid_query_param');
      }
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

  // Spec "Standard operations" rules 3-5 (limit, includeTotal, the envelope and its cursor); decisions in
  // docs/not-shown.md "Activity feed" (the scan budget, the bounded total).
  describe(`[${factory.name}] v3 Activity feed: a page examines at most the scan budget of events; includeTotal counts within its own budget`, () => {
    const H = harnessPerDescribe(factory);
    /** More hidden events than either budget, all newer than the visible ones. */
    const HIDDEN = ACTIVITY_COUNT_BUDGET + 100;
    let visible: string[];
    let fixtureStart: number;
    const regular = () => H().a.regular.token;
    beforeAll(async () => {
      const open = await H().project({ name: 'Open to all', accessType: 'workspace' });
      for (let i = 0; i < 3; i++) {
        H().clock.advance(1000);
        await H().task(open.id, { name: `Visible ${i}` }, H().a.regular.token);
      }
      // What the regular member may not see: the owner's private document, a task of a project they cannot open.
      const closed = await H().project({ name: 'Closed to the regular member' });
      const ct = await H().task(closed.id, { name: 'Behind the roster' });
      const doc = ok(await H().post('/documents', { title: 'Owner only', projectId: open.id, body: 'x', accessType: 'private' }), 201);
      visible = (await walk(H(), '', regular())).map((e) => e.eventId);
      expect(visible.length).toBeGreaterThan(3);
      const outbox = await H().outbox();
      const sources = [
        outbox.find((e) => e.type === 'document.created' && e.aggregateId === doc.id).eventId,
        outbox.find((e) => e.type === 'task.created' && e.aggregateId === ct.id).eventId,
      ];
      for (const id of sources) expect(visible).not.toContain(id);
      fixtureStart = H().clock.now() + 1000;
      await copyEvents(H(), sources, HIDDEN, fixtureStart, 'zzhidden');
      H().clock.advance(HIDDEN + 60_000);
    }, 120_000);

    it('hidden events ahead of the visible ones give short (empty) pages with hasMore; following nextCursor reaches the visible ones, each once, in order', async () => {
      // The cost is observable without timing: a page that ran out of budget answers empty, in one statement on the outbox.
      let first: any;
      const statements = await H().countQueries(async () => { first = ok(await H().get('/activity?limit=50', { token: regular() })); });
      expect(first).toMatchObject({ data: [], hasMore: true });
      expect(typeof first.nextCursor).toBe('string');
      expect(statements.filter((q) => /\boutbox\b/.test(q))).toHaveLength(1);
      const seen: string[] = [];
      let cursor: string | null = first.nextCursor;
      let pages = 1;
      let empty = 1;
      while (cursor) {
        const r: any = ok(await H().get(`/activity?limit=50&cursor=${encodeURIComponent(cursor)}`, { token: regular() }));
        pages++;
        if (r.data.length === 0) empty++;
        seen.push(...r.data.map((e: any) => e.eventId));
        expect(r.hasMore).toBe(r.nextCursor !== null);
        cursor = r.nextCursor;
        expect(pages).toBeLessThan(100);
      }
      // Each page examines at most ACTIVITY_SCAN_BUDGET rows: the hidden ones take at least that many empty pages.
      expect(empty).toBeGreaterThanOrEqual(Math.floor(HIDDEN / ACTIVITY_SCAN_BUDGET));
      expect(seen).toEqual(visible);
    });

    it('the same query shows the owner their own hidden-to-others events: full pages', async () => {
      const r = ok(await H().get('/activity?limit=50'));
      expect(r.data).toHaveLength(50);
      expect(r.hasMore).toBe(true);
      expect(r.data.every((e: any) => e.eventId.startsWith('zzhidden'))).toBe(true);
    });

    it('the cursor of a short page is still signed and bound: another member, other filters or an edited cursor are cursor_invalid', async () => {
      const first = ok(await H().get('/activity?limit=10', { token: regular() }));
      expect(first.data).toEqual([]);
      const c = first.nextCursor as string;
      expect(ok(await H().get(`/activity?limit=10&cursor=${encodeURIComponent(c)}`, { token: regular() })).data).toEqual([]);
      problem(await H().get(`/activity?limit=10&cursor=${encodeURIComponent(c)}`), 400, 'cursor_invalid');
      problem(await H().get(`/activity?limit=10&type[eq]=task.created&cursor=${encodeURIComponent(c)}`, { token: regular() }), 400, 'cursor_invalid');
      const [body, sig] = c.split('.');
      const payload = JSON.parse(Buffer.from(body!, 'base64url').toString('utf8'));
      payload.b[0] = fixtureStart;
      const edited = `${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${sig}`;
      problem(await H().get(`/activity?limit=10&cursor=${encodeURIComponent(edited)}`, { token: regular() }), 400, 'cursor_invalid');
    });

    it('createdAt bounds narrow what a page examines: bounded before the hidden events, pages are full', async () => {
      const r = ok(await H().get(`/activity?limit=2&createdAt[lt]=${encodeURIComponent(at(fixtureStart))}`, { token: regular() }));
      expect(r.data.map((e: any) => e.eventId)).toEqual(visible.slice(0, 2));
      expect(r.hasMore).toBe(true);
    });

    it('includeTotal counts within ACTIVITY_COUNT_BUDGET events: past them total is a lower bound and totalCapped is true', async () => {
      const capped = ok(await H().get('/activity?limit=1&includeTotal=true', { token: regular() }));
      expect(capped).toMatchObject({ total: 0, totalCapped: true, hasMore: true });
      const mine = ok(await H().get('/activity?limit=1&includeTotal=true'));
      expect(mine.totalCapped).toBe(true);
      expect(mine.total).toBeGreaterThanOrEqual(ACTIVITY_COUNT_BUDGET);
      // Within the budget the count is exact and says nothing more.
      const bounded = ok(await H().get(`/activity?limit=1&includeTotal=true&createdAt[lt]=${encodeURIComponent(at(fixtureStart))}`, { token: regular() }));
      expect(bounded.total).toBe(visible.length);
      expect('totalCapped' in bounded).toBe(false);
    });
  });

  // docs/not-shown.md "Activity feed" (audiences kept current); spec "Project Dashboard" (isShared), "Authentication" rule 5 (viewTimeReports).
  describe(`[${factory.name}] v3 Activity feed: who sees an event follows the record and the role now, not when it was written`, () => {
    const H = harnessPerDescribe(factory);

    it('a dashboard turned private takes its past events from the members who lost it; shared again, all of them show again', async () => {
      const p = await H().project({ name: 'Boards', accessType: 'workspace' });
      const dash = ok(await H().post('/project-dashboards', { name: 'Team board', projectId: p.id }), 201);
      const other = ok(await H().post('/project-dashboards', { name: 'Other board', projectId: p.id }), 201);
      ok(await H().patch(`/project-dashboards/${dash.id}`, { name: 'Team board 2' }));
      expect(await eventsOf(H(), dash.id, H().a.regular.token)).toEqual(['projectDashboard.created', 'projectDashboard.updated']);
      ok(await H().patch(`/project-dashboards/${dash.id}`, { isShared: false }));
      expect(await eventsOf(H(), dash.id, H().a.regular.token)).toEqual([]);
      ok(await H().patch(`/project-dashboards/${dash.id}`, { name: 'Mine now' }));
      expect(await eventsOf(H(), dash.id, H().a.regular.token)).toEqual([]);
      expect(await eventsOf(H(), dash.id)).toHaveLength(4);
      // Another record's events are left as they were.
      expect(await eventsOf(H(), other.id, H().a.regular.token)).toEqual(['projectDashboard.created']);
      ok(await H().patch(`/project-dashboards/${dash.id}`, { isShared: true }));
      expect(await eventsOf(H(), dash.id, H().a.regular.token)).toEqual(['projectDashboard.created', 'projectDashboard.updated', 'projectDashboard.updated', 'projectDashboard.updated', 'projectDashboard.updated']);
    });

    it('a dashboard made private shows nothing to others until it is shared', async () => {
      const p = await H().project({ name: 'Boards 2', accessType: 'workspace' });
      const dash = ok(await H().post('/project-dashboards', { name: 'Draft', projectId: p.id, isShared: false }, { token: H().a.regular.token }), 201);
      expect(await eventsOf(H(), dash.id)).toEqual([]);
      expect(await eventsOf(H(), dash.id, H().a.regular.token)).toEqual(['projectDashboard.created']);
      ok(await H().patch(`/project-dashboards/${dash.id}`, { isShared: true }, { token: H().a.regular.token }));
      expect(await eventsOf(H(), dash.id)).toEqual(['projectDashboard.created', 'projectDashboard.updated']);
    });

    it("time-entry events follow viewTimeReports when the feed is read: a role that gains it sees other members' entries, one that loses it stops", async () => {
      const base = ['time-entries:read', 'time-entries:write', 'tasks:read', 'projects:read'];
      const tk = await memberWithRole(H(), 'Feed timekeeper', base);
      const p = await H().project({ name: 'Timed', members: [H().a.owner.id, tk.id] });
      const closed = await H().project({ name: 'Timed elsewhere' });
      const t = await H().task(p.id);
      const ct = await H().task(closed.id);
      const start = H().clock.now() - 7_200_000;
      const span = (i: number) => ({ startAt: at(start + i * 1_000_000), endAt: at(start + i * 1_000_000 + 600_000) });
      const ownerEntry = ok(await H().post('/time-entries', { taskId: t.id, ...span(0) }), 201);
      const elsewhere = ok(await H().post('/time-entries', { taskId: ct.id, ...span(1) }), 201);
      const own = ok(await H().post('/time-entries', { taskId: t.id, ...span(2) }, { token: tk.token }), 201);
      expect(await eventsOf(H(), own.id, tk.token)).toEqual(['timeEntry.created']);
      expect(await eventsOf(H(), ownerEntry.id, tk.token)).toEqual([]);
      ok(await H().patch(`/roles/${tk.roleId}`, { permissions: [...base, 'viewTimeReports'] }));
      // Written before the role changed, shown now; a project the member cannot open stays closed.
      expect(await eventsOf(H(), ownerEntry.id, tk.token)).toEqual(['timeEntry.created']);
      expect(await eventsOf(H(), elsewhere.id, tk.token)).toEqual([]);
      // Written while the role holds it, hidden again once it does not.
      const during = ok(await H().post('/time-entries', { taskId: t.id, ...span(3) }), 201);
      expect(await eventsOf(H(), during.id, tk.token)).toEqual(['timeEntry.created']);
      ok(await H().patch(`/roles/${tk.roleId}`, { permissions: base }));
      expect(await eventsOf(H(), ownerEntry.id, tk.token)).toEqual([]);
      expect(await eventsOf(H(), during.id, tk.token)).toEqual([]);
      expect(await eventsOf(H(), own.id, tk.token)).toEqual(['timeEntry.created']);
      // The owner reads every entry of every project.
      for (const id of [ownerEntry.id, elsewhere.id, own.id]) expect(await eventsOf(H(), id)).toEqual(['timeEntry.created']);
    });

    it('migration 0024: time-entry events stored with the audience of their writing (everyone holding viewTimeReports then) name their member alone', async () => {
      const p = await H().project({ name: 'Timed before', accessType: 'workspace' });
      const t = await H().task(p.id);
      const start = H().clock.now() - 3_600_000;
      const entry = ok(await H().post('/time-entries', { taskId: t.id, startAt: at(start), endAt: at(start + 600_000) }), 201);
      // As events were stored before: the regular member held viewTimeReports when it was written.
      await H().store.db.updateTable('outbox').set({ audience: `,${H().a.owner.id},${H().a.regular.id},` }).where('aggregate_id', '=', entry.id).execute();
      expect(await eventsOf(H(), entry.id, H().a.regular.token)).toEqual(['timeEntry.created']);
      await narrowOwnerReadAudiences(H().store.db, H().store.dialect);
      expect(await eventsOf(H(), entry.id, H().a.regular.token)).toEqual([]);
      expect(await eventsOf(H(), entry.id)).toEqual(['timeEntry.created']);
    });
  });

  // docs/not-shown.md "Activity feed" ("What a caller sees"): each kind of event a caller may not see, absent; its author sees it.
  describe(`[${factory.name}] v3 Activity feed: every kind of hidden event is absent, and visible to whoever may see it`, () => {
    const H = harnessPerDescribe(factory);
    const made: Record<string, string> = {};
    let p: any;
    beforeAll(async () => {
      const reg = { token: H().a.regular.token };
      p = await H().project({ name: 'Shared ground', accessType: 'workspace' });
      const t = await H().task(p.id, { name: 'Common task' });
      made.task = t.id;
      made.document = ok(await H().post('/documents', { title: 'Regular only', projectId: p.id, body: 'x', accessType: 'private' }, reg), 201).id;
      made.dashboard = ok(await H().post('/project-dashboards', { name: 'Regular board', projectId: p.id, isShared: false }, reg), 201).id;
      made.reminder = ok(await H().post('/reminders', { taskId: t.id, date: at(H().clock.now() + 86_400_000) }, reg), 201).id;
      made.chat = ok(await H().post('/chats', { name: 'Regular and client', memberIds: [H().a.client.id] }, reg), 201).id;
      made.message = ok(await H().post('/messages', { chatId: made.chat, text: 'Between us' }, reg), 201).id;
      made.favorite = ok(await H().post('/favorites', { targetType: 'task', targetId: t.id }, reg), 201).id;
      made.favoriteFolder = ok(await H().post('/favorite-folders', { name: 'Sidebar' }, reg), 201).id;
      const start = H().clock.now() - 3_600_000;
      made.regularEntry = ok(await H().post('/time-entries', { taskId: t.id, startAt: at(start), endAt: at(start + 600_000) }, reg), 201).id;
      made.ownerEntry = ok(await H().post('/time-entries', { taskId: t.id, startAt: at(start), endAt: at(start + 600_000) }), 201).id;
      const closed = await H().project({ name: 'Owner only' });
      made.closedProject = closed.id;
      made.closedTask = (await H().task(closed.id, { name: 'Behind the roster' })).id;
      const bp = await H().project({ name: 'Beta ground' }, H().b.owner.token);
      made.otherWorkspace = bp.id;
    });

    const ids = (feed: any[]) => new Set(feed.map((e) => e.aggregateId));

    for (const kind of ['document', 'dashboard', 'reminder', 'chat', 'message', 'favorite', 'favoriteFolder'] as const) {
      it(`another member's ${kind === 'document' ? 'private document' : kind === 'dashboard' ? 'private dashboard' : kind === 'message' ? 'message in a chat the caller is not in' : kind === 'chat' ? 'chat the caller is not in' : kind} is absent; its author sees it`, async () => {
        expect(ids(await walk(H(), '')).has(made[kind]!)).toBe(false);
        expect(ids(await walk(H(), '', H().a.regular.token)).has(made[kind]!)).toBe(true);
      });
    }

    it("a chat's events show to its members (the client), not to anyone else", async () => {
      const client = ids(await walk(H(), '', H().a.client.token));
      expect(client.has(made.chat!) && client.has(made.message!)).toBe(true);
      expect(client.has(made.document!)).toBe(false);
    });

    it("time entries of another member are absent without viewTimeReports; the member sees their own; the owner (viewTimeReports) both", async () => {
      const regular = ids(await walk(H(), '', H().a.regular.token));
      expect(regular.has(made.ownerEntry!)).toBe(false);
      expect(regular.has(made.regularEntry!)).toBe(true);
      const owner = ids(await walk(H(), ''));
      expect(owner.has(made.ownerEntry!) && owner.has(made.regularEntry!)).toBe(true);
    });

    it('a project the caller cannot open, and everything in it, is absent; the owner sees it', async () => {
      const regular = ids(await walk(H(), '', H().a.regular.token));
      expect(regular.has(made.closedProject!) || regular.has(made.closedTask!)).toBe(false);
      expect(regular.has(made.task!)).toBe(true);
      const owner = ids(await walk(H(), ''));
      expect(owner.has(made.closedProject!) && owner.has(made.closedTask!)).toBe(true);
    });

    it("another workspace's events are absent; its own members see them", async () => {
      expect(ids(await walk(H(), '')).has(made.otherWorkspace!)).toBe(false);
      expect(ids(await walk(H(), '', H().a.regular.token)).has(made.otherWorkspace!)).toBe(false);
      expect(ids(await walk(H(), '', H().b.owner.token)).has(made.otherWorkspace!)).toBe(true);
    });

    it("resources whose read scope the token lacks are absent, the caller's own included; a token with the scope shows them", async () => {
      const narrow = (await H().api.admin.issueToken(H().a.regular.id, { scopes: ['activity:read', 'tasks:read'] })).token;
      const seen = await walk(H(), '', narrow);
      expect(new Set(seen.map((e) => e.aggregateType))).toEqual(new Set(['task']));
      for (const kind of ['document', 'dashboard', 'reminder', 'chat', 'message', 'favorite', 'favoriteFolder', 'regularEntry'] as const) expect(ids(seen).has(made[kind]!), kind).toBe(false);
      const docs = (await H().api.admin.issueToken(H().a.regular.id, { scopes: ['activity:read', 'documents:read'] })).token;
      const withDocs = await walk(H(), '', docs);
      expect(ids(withDocs).has(made.document!)).toBe(true);
      expect(new Set(withDocs.map((e) => e.aggregateType))).toEqual(new Set(['document']));
    });
  });
}
