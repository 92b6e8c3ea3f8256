import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { createMemoryBlobStore, eventCatalog, type EventCatalog, type UrlFetcher, type WebhookSender } from '@pmapi/core';
import { harness, type Harness, type Reply, type StoreFactory } from '../kit';

/**
 * Issue 14 "Done when": the whole event catalog, walked. Spec "Events" →
 * "Event names" (lifecycle, membership and operation families) and "Delivery
 * request" (what a subscribed webhook is handed).
 *
 * One test per store starts from the catalog the API itself publishes
 * (`eventCatalog(api.registry)`, the list webhook registration validates
 * against), provokes every name through the public API (api.handle, plus
 * api.admin and api.jobs where the event is the system's), and asserts that
 * the names produced are exactly the catalog, less the names no resource can
 * emit by design (below). Provocations are a table, name → small function,
 * so a name without one, or one that did not produce its name, is named in
 * the failure.
 */

const DAY = 24 * 60 * 60 * 1000;
/** Past the 30-day trash retention (spec "States and transitions"). */
const PAST_RETENTION = 31 * DAY;

interface Walk {
  h: Harness;
  /** A project of workspace A whose members are its owner and its regular member. */
  p: any;
}

type Provoke = (w: Walk) => Promise<unknown>;

/** The reply's body when its status is `status`; otherwise an error naming the request's answer. */
function must(r: Reply, status: number, what: string): any {
  if (r.status !== status) throw new Error(`${what}: expected ${status}, got ${r.status} ${JSON.stringify(r.body)?.slice(0, 400)}`);
  return r.body;
}

const post = async (w: Walk, path: string, body?: unknown, token?: string, status = 201) => must(await w.h.post(path, body, { token }), status, `POST ${path}`);
const patch = async (w: Walk, path: string, body: unknown, token?: string) => must(await w.h.patch(path, body, { token }), 200, `PATCH ${path}`);
const del = async (w: Walk, path: string, body?: unknown, token?: string) => must(await w.h.del(path, { token, ...(body === undefined ? {} : { body }) }), body === undefined ? 204 : 200, `DELETE ${path}`);

// ---- fixtures: each provocation makes the records it needs --------------------------------------

let seq = 0;
/** A fresh suffix for names that must be unique (projects and folders within a portfolio, labels, roles). */
const uniq = () => `${++seq}`;

const task = (w: Walk, body: Record<string, unknown> = {}) => post(w, '/tasks', { name: 'Walk task', projectId: w.p.id, ...body });
const label = (w: Walk) => post(w, '/labels', { name: `Walk label ${uniq()}` });
const goal = (w: Walk) => post(w, '/goals', { name: 'Walk goal' });
const list = (w: Walk, body: Record<string, unknown> = {}) => post(w, '/lists', { name: 'Walk list', projectId: w.p.id, ...body });
const status = (w: Walk, body: Record<string, unknown> = {}) => post(w, '/statuses', { name: 'Walk column', projectId: w.p.id, ...body });
const chat = (w: Walk) => post(w, '/chats', { name: 'Walk chat', memberIds: [w.h.a.regular.id] });
const document = (w: Walk) => post(w, '/documents', { title: 'Walk doc', projectId: w.p.id, body: 'first' });
const checkInRequest = (w: Walk, body: Record<string, unknown> = {}) =>
  post(w, '/check-in-requests', { question: 'How is it going?', projectId: w.p.id, startAt: new Date(w.h.clock.now() + DAY).toISOString(), ...body });
const checkIn = (w: Walk, body: Record<string, unknown> = {}) => post(w, '/check-ins', { text: 'All good', projectId: w.p.id, ...body });
const reportChart = (w: Walk, body: Record<string, unknown> = {}) => post(w, '/report-charts', { name: 'Walk chart', type: 'burnup', ...body });
const message = (w: Walk, body: Record<string, unknown>) => post(w, '/messages', { text: 'Walk message', ...body });
async function file(w: Walk): Promise<any> {
  return must(await w.h.upload('walk bytes', { name: 'walk.txt', projectId: w.p.id }), 201, 'upload');
}
async function purgeTrash(w: Walk): Promise<void> {
  w.h.clock.advance(PAST_RETENTION);
  await w.h.api.jobs.purge();
}

/**
 * The lifecycle events of one resource (spec: created, updated, removed
 * follow create, update and delete; restored follows restore; force_deleted
 * the purge of a trashed row). `trash`: the resource is soft-deleting, so it
 * also has restored and force_deleted.
 */
function lifecycle(resource: string, o: {
  path: string;
  make: (w: Walk) => Promise<any>;
  change: (w: Walk, rec: any) => Record<string, unknown>;
  /** Who writes the record after creating it (default a.owner). */
  token?: (rec: any) => string;
  trash?: boolean;
}): Record<string, Provoke> {
  const tok = (rec: any) => o.token?.(rec);
  const trashed = async (w: Walk) => {
    const rec = await o.make(w);
    await del(w, `${o.path}/${rec.id}`, undefined, tok(rec));
    return rec;
  };
  const entries: Record<string, Provoke> = {
    [`${resource}.created`]: (w) => o.make(w),
    [`${resource}.updated`]: async (w) => {
      const rec = await o.make(w);
      await patch(w, `${o.path}/${rec.id}`, o.change(w, rec), tok(rec));
    },
    [`${resource}.removed`]: trashed,
  };
  if (o.trash) {
    entries[`${resource}.restored`] = async (w) => {
      const rec = await trashed(w);
      await post(w, `${o.path}/${rec.id}/restore`, undefined, tok(rec), 200);
    };
    entries[`${resource}.force_deleted`] = async (w) => {
      await trashed(w);
      await purgeTrash(w);
    };
  }
  return entries;
}

/** Event name → how to provoke it. */
const PROVOKE: Record<string, Provoke> = {
  // ---- lifecycle (spec "Lifecycle resources") ----
  ...lifecycle('annotation', {
    path: '/annotations',
    make: async (w) => post(w, '/annotations', { type: 'image', fileId: (await file(w)).id, position: { shape: 'POINT', x: 1, y: 2 } }),
    change: () => ({ position: { shape: 'POINT', x: 3, y: 4 } }),
  }),
  ...lifecycle('chat', { path: '/chats', make: chat, change: () => ({ description: 'About the walk' }) }),
  ...lifecycle('checkIn', { path: '/check-ins', make: (w) => checkIn(w), change: () => ({ health: 'atRisk' }) }),
  ...lifecycle('checkInRequest', { path: '/check-in-requests', make: (w) => checkInRequest(w), change: () => ({ paused: true }) }),
  ...lifecycle('checklist', { path: '/checklists', make: async (w) => post(w, '/checklists', { name: 'Walk checklist', taskId: (await task(w)).id }), change: () => ({ name: 'Renamed' }) }),
  ...lifecycle('checklistItem', {
    path: '/checklist-items',
    make: async (w) => post(w, '/checklist-items', { name: 'Walk item', checklistId: (await post(w, '/checklists', { name: 'Walk checklist', taskId: (await task(w)).id })).id }),
    change: () => ({ completed: true }),
  }),
  ...lifecycle('document', { path: '/documents', make: document, change: () => ({ title: 'Renamed doc' }), trash: true }),
  ...lifecycle('favorite', {
    path: '/favorites',
    make: async (w) => post(w, '/favorites', { targetType: 'task', targetId: (await task(w)).id }),
    change: () => ({ order: 3 }),
  }),
  ...lifecycle('favoriteFolder', { path: '/favorite-folders', make: (w) => post(w, '/favorite-folders', { name: 'Walk folder' }), change: () => ({ name: 'Renamed' }) }),
  ...lifecycle('file', { path: '/files', make: file, change: () => ({ name: 'renamed.txt' }), trash: true }),
  ...lifecycle('form', {
    path: '/forms',
    make: (w) => post(w, '/forms', { meta: { title: 'Walk form' }, fields: [{ type: 'shortText', title: 'Name' }], projectId: w.p.id }),
    change: () => ({ isShared: true }),
    trash: true,
  }),
  ...lifecycle('goal', { path: '/goals', make: goal, change: () => ({ currentValue: 5 }) }),
  ...lifecycle('goalGroup', { path: '/goal-groups', make: (w) => post(w, '/goal-groups', { name: 'Walk group' }), change: () => ({ name: 'Renamed' }) }),
  ...lifecycle('label', { path: '/labels', make: label, change: () => ({ name: `Renamed ${uniq()}` }) }),
  ...lifecycle('list', { path: '/lists', make: (w) => list(w), change: () => ({ name: 'Renamed' }) }),
  // A member is made by the embedding application (api.admin), managed over /members.
  ...lifecycle('member', { path: '/members', make: (w) => w.h.api.admin.addMember(w.h.a.id, { name: 'Walk member' }), change: () => ({ role: 'client' }), trash: true }),
  ...lifecycle('message', { path: '/messages', make: async (w) => message(w, { chatId: (await chat(w)).id }), change: () => ({ text: 'Edited' }), trash: true }),
  ...lifecycle('portfolio', { path: '/portfolios', make: (w) => post(w, '/portfolios', { name: 'Walk portfolio' }), change: () => ({ name: 'Renamed' }), trash: true }),
  ...lifecycle('project', { path: '/projects', make: (w) => w.h.project({ name: `Walk project ${uniq()}` }), change: () => ({ name: `Renamed ${uniq()}` }), trash: true }),
  ...lifecycle('projectDashboard', { path: '/project-dashboards', make: (w) => post(w, '/project-dashboards', { name: 'Walk board', projectId: w.p.id }), change: () => ({ name: 'Renamed' }) }),
  ...lifecycle('projectFolder', { path: '/project-folders', make: (w) => post(w, '/project-folders', { name: `Walk folder ${uniq()}` }), change: () => ({ name: `Renamed ${uniq()}` }) }),
  ...lifecycle('recurringRule', {
    path: '/recurring-rules',
    make: (w) => post(w, '/recurring-rules', { name: 'Every day', projectId: w.p.id, frequency: 'daily' }),
    change: () => ({ timeOfDay: '07:30' }),
  }),
  ...lifecycle('reminder', {
    path: '/reminders',
    make: async (w) => post(w, '/reminders', { taskId: (await task(w)).id, date: new Date(w.h.clock.now() + 10 * 60_000).toISOString() }),
    change: (w) => ({ date: new Date(w.h.clock.now() + 20 * 60_000).toISOString() }),
  }),
  ...lifecycle('reportChart', { path: '/report-charts', make: (w) => reportChart(w), change: () => ({ name: 'Renamed' }) }),
  ...lifecycle('role', { path: '/roles', make: (w) => post(w, '/roles', { name: `Walk role ${uniq()}`, permissions: ['tasks:read'] }), change: () => ({ initialScreen: 'board' }) }),
  ...lifecycle('status', { path: '/statuses', make: (w) => status(w), change: () => ({ name: 'Renamed' }) }),
  ...lifecycle('task', { path: '/tasks', make: (w) => task(w), change: () => ({ name: 'Renamed' }) }),
  ...lifecycle('taskHandoff', {
    path: '/task-handoffs',
    make: async (w) => post(w, '/task-handoffs', { taskId: (await task(w, { assignees: [w.h.a.owner.id] })).id, toMemberId: w.h.a.regular.id }),
    change: () => ({ note: 'Over to you' }),
  }),
  // A presence status is personal, one a member: each provocation has a member of its own write theirs.
  ...lifecycle('presenceStatus', {
    path: '/presence-statuses',
    make: async (w) => {
      const m = await w.h.api.admin.addMember(w.h.a.id, { name: `Walker ${uniq()}` });
      const { token } = await w.h.api.admin.issueToken(m.id, { scopes: ['read', 'write', 'delete'] });
      return { ...(await post(w, '/presence-statuses', { text: 'Walking' }, token)), token };
    },
    change: () => ({ availability: 'busy' }),
    token: (rec) => rec.token,
  }),
  ...lifecycle('timeEntry', {
    path: '/time-entries',
    make: async (w) => post(w, '/time-entries', { taskId: (await task(w)).id, startAt: '2026-02-01T09:00:00.000Z', endAt: '2026-02-01T10:00:00.000Z' }),
    change: () => ({ billable: true }),
  }),
  ...lifecycle('webhook', { path: '/webhooks', make: (w) => post(w, '/webhooks', { url: 'https://hooks.example.com/walk', events: ['task.created'] }), change: () => ({ name: 'Renamed' }), trash: true }),

  // ---- membership (spec "Membership relations", plus the two pairs docs/not-shown.md "Webhooks" adds) ----
  'checkIn.assignees.added': (w) => checkIn(w, { assignees: [w.h.a.regular.id] }),
  'checkIn.assignees.removed': async (w) => patch(w, `/check-ins/${(await checkIn(w, { assignees: [w.h.a.regular.id] })).id}`, { assignees: [] }),
  'checkIn.subscribers.added': async (w) => post(w, `/check-ins/${(await checkIn(w)).id}/subscribers`, { ids: [w.h.a.regular.id] }, undefined, 200),
  'checkIn.subscribers.removed': async (w) => del(w, `/check-ins/${(await checkIn(w, { subscribers: [w.h.a.regular.id] })).id}/subscribers`, { ids: [w.h.a.regular.id] }),
  'checkInRequest.assignees.added': async (w) => post(w, `/check-in-requests/${(await checkInRequest(w)).id}/assignees`, { ids: [w.h.a.regular.id] }, undefined, 200),
  'checkInRequest.assignees.removed': async (w) => del(w, `/check-in-requests/${(await checkInRequest(w, { assignees: [w.h.a.regular.id] })).id}/assignees`, { ids: [w.h.a.regular.id] }),
  'file.labels.added': async (w) => post(w, `/files/${(await file(w)).id}/labels`, { ids: [(await label(w)).id] }, undefined, 200),
  'file.labels.removed': async (w) => {
    const f = await file(w);
    const l = await label(w);
    await post(w, `/files/${f.id}/labels`, { ids: [l.id] }, undefined, 200);
    await del(w, `/files/${f.id}/labels`, { ids: [l.id] });
  },
  'file.subscribers.added': async (w) => patch(w, `/files/${(await file(w)).id}`, { subscribers: [w.h.a.regular.id] }),
  'file.subscribers.removed': async (w) => {
    const f = await file(w);
    await post(w, `/files/${f.id}/subscribers`, { ids: [w.h.a.regular.id] }, undefined, 200);
    await patch(w, `/files/${f.id}`, { subscribers: [] });
  },
  'list.assignees.added': (w) => list(w, { assignees: [w.h.a.regular.id] }),
  'list.assignees.removed': async (w) => del(w, `/lists/${(await list(w, { assignees: [w.h.a.regular.id] })).id}/assignees`, { ids: [w.h.a.regular.id] }),
  'list.goals.added': async (w) => post(w, `/lists/${(await list(w)).id}/goals`, { ids: [(await goal(w)).id] }, undefined, 200),
  'list.goals.removed': async (w) => patch(w, `/lists/${(await list(w, { goals: [(await goal(w)).id] })).id}`, { goals: [] }),
  'list.hiddenFor.added': (w) => list(w, { hiddenFor: [w.h.a.roleIds.client] }),
  'list.hiddenFor.removed': async (w) => patch(w, `/lists/${(await list(w, { hiddenFor: [w.h.a.roleIds.client] })).id}`, { hiddenFor: [] }),
  'message.files.added': async (w) => message(w, { chatId: (await chat(w)).id, files: [(await file(w)).id] }),
  'message.files.removed': async (w) => patch(w, `/messages/${(await message(w, { chatId: (await chat(w)).id, files: [(await file(w)).id] })).id}`, { files: [] }),
  'portfolio.members.added': (w) => post(w, '/portfolios', { name: 'Walk roster', members: [w.h.a.regular.id] }),
  'portfolio.members.removed': async (w) => patch(w, `/portfolios/${(await post(w, '/portfolios', { name: 'Walk roster', members: [w.h.a.regular.id] })).id}`, { members: [] }),
  'project.members.added': (w) => w.h.project({ name: `Walk roster ${uniq()}`, members: [w.h.a.owner.id, w.h.a.regular.id] }),
  'project.members.removed': async (w) => patch(w, `/projects/${(await w.h.project({ name: `Walk roster ${uniq()}`, members: [w.h.a.owner.id, w.h.a.regular.id] })).id}`, { members: [w.h.a.owner.id] }),
  'reportChart.projects.added': (w) => reportChart(w, { projects: [w.p.id] }),
  'reportChart.projects.removed': async (w) => del(w, `/report-charts/${(await reportChart(w, { projects: [w.p.id] })).id}/projects`, { ids: [w.p.id] }),
  'status.assignees.added': (w) => status(w, { assignees: [w.h.a.regular.id] }),
  'status.assignees.removed': async (w) => patch(w, `/statuses/${(await status(w, { assignees: [w.h.a.regular.id] })).id}`, { assignees: [] }),
  'status.hiddenFor.added': async (w) => post(w, `/statuses/${(await status(w)).id}/hidden-for`, { ids: [w.h.a.roleIds.client] }, undefined, 200),
  'status.hiddenFor.removed': async (w) => patch(w, `/statuses/${(await status(w, { hiddenFor: [w.h.a.roleIds.client] })).id}`, { hiddenFor: [] }),
  'task.assignees.added': (w) => task(w, { assignees: [w.h.a.regular.id] }),
  'task.assignees.removed': async (w) => del(w, `/tasks/${(await task(w, { assignees: [w.h.a.regular.id] })).id}/assignees`, { ids: [w.h.a.regular.id] }),
  'task.connectedTasks.added': async (w) => post(w, `/tasks/${(await task(w)).id}/connected-tasks`, { ids: [(await task(w)).id] }, undefined, 200),
  'task.connectedTasks.removed': async (w) => patch(w, `/tasks/${(await task(w, { connectedTasks: [(await task(w)).id] })).id}`, { connectedTasks: [] }),
  'task.hiddenFor.added': (w) => task(w, { hiddenFor: [w.h.a.roleIds.client] }),
  'task.hiddenFor.removed': async (w) => del(w, `/tasks/${(await task(w, { hiddenFor: [w.h.a.roleIds.client] })).id}/hidden-for`, { ids: [w.h.a.roleIds.client] }),
  'task.labels.added': async (w) => task(w, { labels: [(await label(w)).id] }),
  'task.labels.removed': async (w) => patch(w, `/tasks/${(await task(w, { labels: [(await label(w)).id] })).id}`, { labels: [] }),
  'task.subscribers.added': async (w) => post(w, `/tasks/${(await task(w)).id}/subscribers`, { ids: [w.h.a.regular.id] }, undefined, 200),
  'task.subscribers.removed': async (w) => patch(w, `/tasks/${(await task(w, { subscribers: [w.h.a.regular.id] })).id}`, { subscribers: [] }),

  // ---- operations (spec "Operation events": each emitted by the operation of the same name) ----
  'document.append': async (w) => post(w, `/documents/${(await document(w)).id}/append`, { text: ' more' }, undefined, 200),
  'document.editText': async (w) => post(w, `/documents/${(await document(w)).id}/edit-text`, { oldText: 'first', newText: 'second' }, undefined, 200),
  'file.createFromContent': (w) => post(w, '/files/from-content', { name: 'content.txt', content: 'hello', projectId: w.p.id }),
  'file.createUploadUrl': (w) => post(w, '/files/upload-url', { size: 5 }, undefined, 200),
  'file.uploadFromUrl': (w) => post(w, '/files/from-url', { url: 'https://files.example.com/walk/fetched.txt', projectId: w.p.id }),
  'project.addMember': async (w) => post(w, `/projects/${(await w.h.project({ name: `Walk add ${uniq()}` })).id}/add-member`, { memberId: w.h.a.regular.id }, undefined, 200),
  'project.removeMember': async (w) => post(w, `/projects/${(await w.h.project({ name: `Walk remove ${uniq()}`, members: [w.h.a.owner.id, w.h.a.regular.id] })).id}/remove-member`, { memberId: w.h.a.regular.id }, undefined, 200),
  'project.transfer': async (w) => post(w, `/projects/${(await w.h.project({ name: `Walk transfer ${uniq()}`, members: [w.h.a.owner.id, w.h.a.regular.id] })).id}/transfer`, { ownerId: w.h.a.regular.id }, undefined, 200),
  'task.attachDocument': async (w) => post(w, `/tasks/${(await task(w)).id}/attach-document`, { documentId: (await document(w)).id }, undefined, 200),
  'task.detachDocument': async (w) => {
    const t = await task(w);
    const d = await document(w);
    await post(w, `/tasks/${t.id}/attach-document`, { documentId: d.id }, undefined, 200);
    await post(w, `/tasks/${t.id}/detach-document`, { documentId: d.id }, undefined, 200);
  },
  'task.createTree': (w) => post(w, '/tasks/tree', { name: 'Walk root', projectId: w.p.id, subtasks: [{ name: 'Walk leaf' }] }),
  'webhook.rotateSecret': async (w) => post(w, `/webhooks/${(await post(w, '/webhooks', { url: 'https://hooks.example.com/walk' })).id}/rotate-secret`, undefined, undefined, 200),
  'webhook.test': async (w) => post(w, `/webhooks/${(await post(w, '/webhooks', { url: 'https://hooks.example.com/walk', events: ['task.*'] })).id}/test`, undefined, undefined, 200),
};

/**
 * Catalog names no request can produce, by design: the lifecycle list gives
 * every listed resource all five actions, but the States table destroys the
 * "other resources" (not soft-deleting) on DELETE, so they have no trash to
 * restore from or purge (docs/not-shown.md "Hard-deleted resources emit no
 * restored or force_deleted"). Derived from the declarations: a resource
 * that becomes soft-deleting drops out of this list and needs provocations.
 */
function unreachableByDesign(h: Harness, catalog: EventCatalog): Set<string> {
  const out = new Set<string>();
  for (const res of h.api.registry.all()) {
    if (res.softDelete) continue;
    for (const action of ['restored', 'force_deleted']) if (catalog.has(`${res.name}.${action}`)) out.add(`${res.name}.${action}`);
  }
  return out;
}

/** Event type → how many the outbox holds (no bodies read). */
async function countsByType(h: Harness): Promise<Map<string, number>> {
  const rows = await h.store.db.selectFrom('outbox').select(['type']).select((eb) => eb.fn.countAll().as('n')).groupBy('type').execute();
  return new Map(rows.map((r) => [String(r.type), Number(r.n)]));
}

export function eventWalkSuite(factory: StoreFactory): void {
  describe(`[${factory.name}] v3 Events: the whole catalog, walked (Event names; issue 14 "Done when")`, () => {
    let h: Harness;
    const tested: string[] = [];
    // A webhook test delivery and an upload from URL need their ports: both answer in-process, no network.
    const sender: WebhookSender = async (req) => {
      tested.push(req.headers['X-Webhook-Event'] ?? '');
      return { ok: true, status: 204, durationMs: 1, error: null };
    };
    const fetcher: UrlFetcher = { fetch: async () => ({ bytes: new TextEncoder().encode('fetched bytes'), contentType: 'text/plain' }) };
    beforeAll(async () => {
      h = await harness(factory, { api: () => ({ webhookSender: sender, files: { store: createMemoryBlobStore(), fetcher } }) });
    });
    afterAll(() => h.close());

    it('every catalog name is produced by a request, and nothing outside the catalog is (outbox and a `*` webhook\'s deliveries agree)', async () => {
      const catalog = eventCatalog(h.api.registry);
      const never = unreachableByDesign(h, catalog);
      // A webhook subscribed to every event: each event of workspace A from its registration on is queued for it once.
      // (The harness's setup events share the clock's start: step past them.)
      h.clock.advance(1);
      const registeredAt = h.clock.now();
      const collector = must(await h.post('/webhooks', { url: 'https://hooks.example.com/collector', events: ['*'] }), 201, 'collector webhook');
      const p = await h.project({ name: 'Walk base', members: [h.a.owner.id, h.a.regular.id] });
      const w: Walk = { h, p };

      const problems: string[] = [];
      for (const name of catalog.all) {
        if (never.has(name)) continue;
        const provoke = PROVOKE[name];
        if (!provoke) {
          problems.push(`${name}: no provocation in the table (a catalog name the walk does not know how to produce)`);
          continue;
        }
        const before = (await countsByType(h)).get(name) ?? 0;
        try {
          await provoke(w);
        } catch (e) {
          problems.push(`${name}: the provocation failed: ${(e as Error).message}`);
          continue;
        }
        const after = (await countsByType(h)).get(name) ?? 0;
        if (after <= before) problems.push(`${name}: the provocation ran but produced no ${name}`);
      }
      for (const name of Object.keys(PROVOKE)) {
        if (!catalog.has(name)) problems.push(`${name}: provoked by the table but not a catalog name`);
        if (never.has(name)) problems.push(`${name}: provoked by the table but its resource is not soft-deleting (no trash to restore from or purge)`);
      }
      expect(problems, problems.join('\n')).toEqual([]);

      // Set equality over everything the outbox carries (setup events included): the catalog less the unreachable names.
      const produced = [...(await countsByType(h)).keys()].sort();
      const expected = catalog.all.filter((n) => !never.has(n));
      expect(produced.filter((n) => !catalog.has(n)), 'names produced outside the catalog').toEqual([]);
      expect(produced.filter((n) => never.has(n)), 'names produced though no resource can emit them by design').toEqual([]);
      expect(expected.filter((n) => !produced.includes(n)), 'catalog names never produced').toEqual([]);
      expect(produced).toEqual(expected);

      // What a subscribed webhook is handed is the same: one queued delivery per event of workspace A since it was registered (its own webhook.created included).
      const jobs = await h.store.db.selectFrom('webhook_jobs').select(['event_id', 'event_type']).where('webhook_id', '=', collector.id).execute();
      const since = await h.store.db.selectFrom('outbox').select(['id', 'type']).where('team_id', '=', h.a.id)
        .where('created_at', '>=', h.store.dialect.encode('timestamp', registeredAt) as any).execute();
      expect(jobs.map((j) => String(j.event_id)).sort()).toEqual(since.map((e) => String(e.id)).sort());
      expect([...new Set(jobs.map((j) => String(j.event_type)))].sort()).toEqual(expected);
      // The test delivery went through the configured sender (webhook.test is the operation event, task.test the delivery name).
      expect(tested).toEqual(['task.test']);
    }, 60_000);
  });
}
