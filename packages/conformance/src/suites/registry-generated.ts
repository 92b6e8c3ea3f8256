import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { builtinResources, Registry, type FilterDef, type FilterOp, type Resource, type StorageKind } from '@pmapi/core';
import { harness, type Harness, type Reply, type StoreFactory } from '../kit';
import { bothPaths, rowsTwin } from './shared';
import { uncachedShapes } from '@pmapi/core/sql';

/**
 * Spec "Standard operations" (rules 3-7 and 12), "Soft delete" and the 405 rule,
 * generated from the resource registry (issue 10 part 5): every declared filter
 * and operator, every sort field both ways, every expand, every relation
 * sub-route, delete/restore and every undeclared standard operation, for every
 * resource. A resource added later is covered as soon as it has a fixture
 * below; a resource without one fails here ("add a fixture for X").
 */

const e = encodeURIComponent;
const ALL_OPS: readonly FilterOp[] = ['eq', 'in', 'contains', 'startsWith', 'gt', 'gte', 'lt', 'lte', 'null', 'notNull'];
const RANGE_OPS = new Set<FilterOp>(['gt', 'gte', 'lt', 'lte']);
/** Distinct names whose byte order (Beta < alpha < gamma) differs from case-insensitive order. */
const NAMES = ['alpha', 'Beta', 'gamma'];
const nameOf = (i: number) => NAMES[i] ?? `extra ${i}`;
const DAY = 24 * 60 * 60 * 1000;
const T0 = Date.parse('2026-04-01T00:00:00.000Z');
const at = (ms: number) => new Date(ms).toISOString();
/** Most pages a sort walk may take before it counts as endless. */
const MAX_PAGES = 50;

// ---------------------------------------------------------------------------
// Fixtures: how to get records of each resource.

/** The records a resource's describe works on, built lazily in one harness. */
interface World {
  h: Harness;
  /** A project for project-scoped fixtures; owner, regular and client are members. */
  home(): Promise<any>;
  /** At least three records of a resource (created through its fixture on first use), as GET returns them. */
  records(name: string): Promise<any[]>;
  /** One more record of a resource, created through its fixture (for the write checks). */
  fresh(name: string): Promise<any>;
}

type Fixture =
  /** The create body of the i-th record; `prev` holds the records of this resource created so far. */
  | {
    create: (w: World, i: number, prev: any[]) => Promise<Record<string, unknown>>;
    /** The token the i-th record is created with (default a.owner's): a resource of one record per member (presence statuses). */
    as?: (w: World, i: number) => Promise<string>;
  }
  /** Resources the API cannot create: ids of existing records. */
  | {
    existing: (w: World) => Promise<string[]>;
    /** A new record made another way (the admin API), for the checks that need one of their own (delete, restore). */
    make?: (w: World) => Promise<string>;
  };

const FIXTURES: Record<string, Fixture> = {
  actor: {
    // An actor per member that wrote something: the owner (the home project), the regular and the client (a task each).
    async existing(w) {
      const p = await w.home();
      const byRegular = await w.h.task(p.id, { name: 'by regular' }, w.h.a.regular.token);
      const byClient = await w.h.task(p.id, { name: 'by client' }, w.h.a.client.token);
      return [p.createdByActorId, byRegular.createdByActorId, byClient.createdByActorId];
    },
  },
  member: {
    existing: async (w) => [w.h.a.owner.id, w.h.a.regular.id, w.h.a.client.id],
    // Members are added by the embedding application; removing and restoring one needs a member of its own.
    make: async (w) => (await w.h.api.admin.addMember(w.h.a.id, { name: 'Made member', role: 'regular' })).id,
  },
  role: {
    create: async (_w, i) => ({ name: nameOf(i), initialScreen: i === 1 ? null : `screen-${i}` }),
  },
  label: {
    create: async (_w, i) => ({ name: nameOf(i), color: i === 2 ? null : `#${['aa0000', '00bb00', '0000cc'][i % 3]}` }),
  },
  portfolio: {
    create: async (w, i) => ({ name: nameOf(i), order: [20, 10, 30][i] ?? 40 + i, members: [w.h.a.owner.id] }),
  },
  project: {
    async create(w, i) {
      const portfolios = await w.records('portfolio');
      return {
        name: nameOf(i),
        portfolioId: i === 1 ? w.h.a.generalPortfolioId : portfolios[i % portfolios.length].id,
        accessType: (['limited', 'public', 'workspace'] as const)[i % 3],
        order: [20, 10, 30][i] ?? 40 + i,
        members: [w.h.a.owner.id, w.h.a.regular.id],
        ...(i === 0 ? { customFields: [{ customFieldId: (await w.records('customField'))[0].id, value: 'project value' }] } : {}),
      };
    },
  },
  status: {
    async create(w, i) {
      const p = await w.home();
      return {
        name: nameOf(i), projectId: p.id, order: [250, 150, 350][i] ?? 400 + i, archived: i === 2,
        assignees: [w.h.a.regular.id], hiddenFor: i === 0 ? [w.h.a.roleIds.client] : [],
      };
    },
  },
  list: {
    async create(w, i, prev) {
      const p = await w.home();
      const body: Record<string, unknown> = { name: nameOf(i), projectId: p.id, order: [20, 10, 30][i] ?? 40 + i, assignees: [w.h.a.owner.id] };
      if (i === 0) body.statusId = p.defaultStatusId ?? (await w.h.get(`/projects/${p.id}`)).body.defaultStatusId;
      if (i >= 1) body.dependencyId = prev[0].id;
      if (i === 1) body.recurringRuleId = (await w.records('recurringRule'))[0].id;
      if (i === 2) Object.assign(body, { isMilestone: true, start: at(T0), end: at(T0 + 3 * DAY), archived: true });
      if (i === 0) body.customFields = [{ customFieldId: (await w.records('customField'))[2].id, value: '12.5' }];
      return body;
    },
  },
  task: {
    async create(w, i, prev) {
      const p = await w.home();
      const labels = await w.records('label');
      const lists = await w.records('list');
      const body: Record<string, unknown> = {
        name: nameOf(i),
        projectId: p.id,
        order: [3, 1, 2][i] ?? 10 + i,
        orderList: i === 1 ? null : i * 10,
        dueAt: i === 2 ? null : at(T0 + (2 - i) * DAY),
        startAt: i === 0 ? null : at(T0 - i * DAY),
        listId: i === 1 ? null : lists[i % lists.length].id,
        labels: [labels[i % labels.length].id],
        assignees: [[w.h.a.owner.id, w.h.a.regular.id][i % 2]],
        subscribers: [w.h.a.regular.id],
      };
      // completed first, so the second may depend on it; the third is an archived subtask
      if (i === 0) body.completed = true;
      if (i === 1) body.dependencyId = prev[0].id;
      if (i === 2) Object.assign(body, { parentTaskId: prev[0].id, archived: true });
      if (i < 2) body.recurringRuleId = (await w.records('recurringRule'))[i].id;
      // The first holds custom field values (a workspace-wide field and one of the home project).
      if (i === 0) {
        const fields = await w.records('customField');
        body.customFields = [{ customFieldId: fields[1].id, value: fields[1].options[0].id }, { customFieldId: fields[0].id, value: 'first' }];
      }
      return body;
    },
  },
  customField: {
    async create(w, i) {
      const p = await w.home();
      // A workspace-wide text field, a dropdown of the home project, a workspace-wide number field.
      return [
        { name: nameOf(i), type: 'text' },
        { name: nameOf(i), type: 'dropdown', projectId: p.id, options: [{ label: 'Yes', color: '#00aa00' }, { label: 'No' }], description: 'Pick one' },
        { name: nameOf(i), type: 'number', description: null },
      ][i % 3]!;
    },
  },
  webhook: {
    create: async (_w, i) => ({ name: i === 2 ? null : nameOf(i), url: 'https://hooks.invalid/x', active: i !== 1, events: [] }),
  },
  recurringRule: {
    async create(w, i) {
      const p = await w.home();
      // A daily rule, a weekly one with a status and a description, a paused monthly one (nextRunAt null) that ends after 5.
      if (i === 1) {
        const statuses = await w.records('status');
        return { name: nameOf(i), projectId: p.id, frequency: 'weekly', daysOfWeek: ['thu', 'mon'], statusId: statuses[0].id, description: 'The second rule' };
      }
      if (i === 2) return { name: nameOf(i), projectId: p.id, frequency: 'monthly', dayOfMonth: 15, active: false, count: 5 };
      return { name: nameOf(i), projectId: p.id, frequency: 'daily', timeOfDay: '08:00', interval: 1 + i };
    },
  },
  checklist: {
    async create(w, i) {
      const tasks = await w.records('task');
      return { name: nameOf(i), taskId: tasks[i % 2].id, ...(i === 1 ? {} : { order: [2.5, 0, 1.25][i] }) };
    },
  },
  checklistItem: {
    async create(w, i) {
      const lists = await w.records('checklist');
      return { name: nameOf(i), checklistId: lists[i % 2].id, completed: i === 2, ...(i === 0 ? {} : { order: [0, 0.5, -1][i] }) };
    },
  },
  documentFolder: {
    async create(w, i, prev) {
      const p = await w.home();
      return { name: nameOf(i), projectId: p.id, ...(i === 2 ? { parentId: prev[0].id } : { order: [2, 1][i] }) };
    },
  },
  document: {
    async create(w, i) {
      const p = await w.home();
      const folders = await w.records('documentFolder');
      // The third is private (the owner's alone): the other roles' reads must answer 404 on both read paths.
      return { title: nameOf(i), projectId: p.id, body: `# ${nameOf(i)}\n\nText ${i}.`, folderId: i === 1 ? null : folders[i % 2].id, ...(i === 2 ? { accessType: 'private' } : {}) };
    },
  },
  chat: {
    async create(w, i) {
      const members = [[w.h.a.regular.id, w.h.a.client.id], [w.h.a.regular.id], []][i % 3];
      return { name: nameOf(i), memberIds: members, ...(i === 1 ? { description: 'The second chat' } : {}) };
    },
  },
  file: {
    // The spec's flow: an upload URL, the bytes PUT to it, then the file registered with its uploadKey.
    async create(w, i) {
      const p = await w.home();
      const tasks = await w.records('task');
      const bytes = new TextEncoder().encode(`bytes of file ${i}`);
      const slot = await w.h.post('/files/upload-url', { size: bytes.byteLength });
      const put = await w.h.fetchLink('PUT', slot.body.url, bytes);
      if (put.status !== 200) throw new Error(`fixture file #${i}: PUT → ${put.status}`);
      return { name: `${nameOf(i)}.txt`, size: bytes.byteLength, uploadKey: slot.body.uploadKey, ...(i === 1 ? { taskId: tasks[0].id } : { projectId: p.id }) };
    },
  },
  annotation: {
    async create(w, i) {
      const files = await w.records('file');
      return {
        type: i === 1 ? 'video' : 'image', fileId: files[i % 2].id,
        position: [{}, { shape: 'POINT', x: 10, y: 20 }, { shape: 'RECTANGLE', x: 5, y: 5, width: 50, height: 40 }][i % 3],
        ...(i === 1 ? { videoTimeSeconds: 12.5 } : {}),
      };
    },
  },
  message: {
    async create(w, i) {
      const tasks = await w.records('task');
      const chats = await w.records('chat');
      const docs = await w.records('document');
      const place = [{ taskId: tasks[0].id }, { chatId: chats[0].id }, { documentId: docs[0].id }][i % 3];
      return { text: `${nameOf(i)} says hello to <@${w.h.a.regular.id}>`, ...place, ...(i === 1 ? { hideLinkPreview: true } : {}) };
    },
  },
  projectDashboard: {
    async create(w, i) {
      const p = await w.home();
      // The second is the default; the third is private (the owner's alone, so the other roles' reads answer 404).
      return {
        name: nameOf(i), projectId: p.id, isDefault: i === 1, isShared: i !== 2,
        widgets: i === 0 ? [] : [{ type: 'tasks', title: `Widget ${i}` }, { type: 'text', config: { text: 'hello' } }],
      };
    },
  },
  form: {
    async create(w, i) {
      const p = await w.home();
      // A plain form of the home project, a task automation into it, and a shared doc automation without a project.
      const statuses = await w.records('status');
      const lists = await w.records('list');
      const body: Record<string, unknown> = {
        meta: { title: nameOf(i), ...(i === 1 ? { description: 'The second form' } : {}) },
        fields: [{ type: 'shortText', title: 'Name' }, ...(i === 0 ? [] : [{ type: 'singleChoice', title: 'Pick', choices: [{ label: 'A' }, { label: 'B' }] }])],
        docAccessType: (['limited', 'public', 'private'] as const)[i % 3],
        multiSubmit: i === 2,
      };
      if (i === 0) body.projectId = p.id;
      if (i === 1) Object.assign(body, { projectId: p.id, automation: 'task', targetStatusId: statuses[0].id, targetListId: lists[0].id, afterSubmit: { heading: 'Thanks', body_text: 'Got it' } });
      if (i === 2) Object.assign(body, { automation: 'doc', isShared: true });
      return body;
    },
  },
  personalAccessToken: {
    create: async (w, i) => ({ name: nameOf(i), scopes: [['read'], ['tasks:read', 'projects:write'], ['write']][i % 3], expiresAt: i === 1 ? at(w.h.clock.now() + DAY) : null }),
  },
  checkInRequest: {
    async create(w, i) {
      const p = await w.home();
      // A weekly request with an end, a one-off (no end), a paused monthly one; start dates in an order unlike creation.
      return {
        question: nameOf(i), projectId: p.id, frequency: (['weekly', 'once', 'monthly'] as const)[i % 3], startAt: at(T0 + ([2, 1, 3][i] ?? 4 + i) * DAY),
        ...(i === 0 ? { endAt: at(T0 + 30 * DAY) } : {}), paused: i === 2, assignees: i === 1 ? [w.h.a.owner.id, w.h.a.regular.id] : [w.h.a.regular.id],
      };
    },
  },
  checkIn: {
    async create(w, i) {
      const p = await w.home();
      const requests = await w.records('checkInRequest');
      return {
        text: `${nameOf(i)} update`, projectId: p.id, ...(i === 1 ? {} : { health: i === 0 ? 'onTrack' : 'atRisk', checkInRequestId: requests[i % 2].id }),
        assignees: [[w.h.a.regular.id], [w.h.a.owner.id], []][i % 3], subscribers: i === 2 ? [] : [w.h.a.owner.id],
      };
    },
  },
  reportChart: {
    async create(w, i) {
      const p = await w.home();
      const projects = await w.records('project');
      return {
        name: nameOf(i), type: (['burndown', 'velocity', 'workload'] as const)[i % 3], projects: i === 2 ? [] : [p.id, ...(i === 1 ? [projects[0].id] : [])],
        ...(i === 1 ? {} : { startDate: `2026-04-${String(i + 1).padStart(2, '0')}`, endDate: `2026-05-${String(20 - i).padStart(2, '0')}` }), ...(i === 0 ? { options: { groupBy: 'assignee', cumulative: true } } : {}),
      };
    },
  },
  reminder: {
    // Personal: the owner's (the fixtures' caller) alone, so the other roles' reads answer 404 and their lists are empty.
    // Dates in an order unlike creation, at least 5 minutes ahead of the clock.
    async create(w, i) {
      const tasks = await w.records('task');
      return { taskId: tasks[i % 2].id, date: at(w.h.clock.now() + ([2, 1, 3][i] ?? 4 + i) * DAY), ...(i === 1 ? { type: 'custom' } : {}) };
    },
  },
  goalGroup: {
    create: async (_w, i) => ({ name: nameOf(i), order: [20, 10, 30][i] ?? 40 + i, ...(i === 2 ? {} : { color: ['#AA00BB', '#00cc11'][i] }), description: i === 1 ? 'About' : null }),
  },
  goal: {
    async create(w, i) {
      const groups = await w.records('goalGroup');
      return {
        name: nameOf(i), groupId: i === 1 ? null : groups[i % 2].id, ownerId: [w.h.a.owner.id, w.h.a.regular.id, null][i % 3],
        status: (['onTrack', 'achieved', 'atRisk'] as const)[i % 3], startValue: [0, 10, 5][i % 3], currentValue: [30, 50, 5][i % 3], targetValue: [100, 50, 0][i % 3],
        unit: i === 0 ? '%' : null, startDate: i === 0 ? '2026-01-01' : null, dueDate: ['2026-05-01', '2026-04-01', null][i % 3],
      };
    },
  },
  projectFolder: {
    // Two in the General portfolio (the default), one in another portfolio; orders unlike creation.
    async create(w, i) {
      const portfolios = await w.records('portfolio');
      return { name: nameOf(i), ...(i === 2 ? { portfolioId: portfolios[0].id } : {}), ...(i === 1 ? {} : { order: [2, 0, 1][i] }) };
    },
  },
  taskHandoff: {
    // The owner (the fixtures' caller) hands tasks of the home project to the regular member and the client (both members of it).
    async create(w, i) {
      const tasks = await w.records('task');
      return { taskId: tasks[i % 2].id, toMemberId: [w.h.a.regular.id, w.h.a.client.id][i % 2], ...(i === 1 ? {} : { note: `${nameOf(i)} over to you` }) };
    },
  },
  presenceStatus: {
    // One status per member: each record is a new regular member's own (everyone in the workspace reads them all).
    async as(w, i) {
      const m = await w.h.api.admin.addMember(w.h.a.id, { name: `Presence ${i}`, role: 'regular' });
      return (await w.h.api.admin.issueToken(m.id, { scopes: ['read', 'write', 'delete'] })).token;
    },
    create: async (w, i) => ({
      text: nameOf(i), availability: (['busy', 'available', 'doNotDisturb'] as const)[i % 3], ...(i === 1 ? {} : { emoji: ['🌴', '🤒', '📅'][i % 3] }),
      ...(i === 1 ? {} : { until: at(w.h.clock.now() + ([2, 1, 3][i] ?? 4 + i) * DAY) }),
    }),
  },
  timeEntry: {
    // The owner's (the fixtures' caller) entries: the regular and client roles lack viewTimeReports, so their reads answer 404 and their lists are empty.
    async create(w, i) {
      const tasks = await w.records('task');
      const start = T0 + ([2, 1, 3][i] ?? 4 + i) * DAY;
      return {
        taskId: tasks[i % 2].id, startAt: at(start), endAt: at(start + ([1, 2, 0.5][i] ?? 1) * 3600 * 1000),
        billable: i === 1, ...(i === 2 ? {} : { description: `${nameOf(i)} work` }),
      };
    },
  },
  favoriteFolder: {
    // Personal (the owner's, the fixtures' caller): the other roles' reads answer 404. Ranks unlike creation; the second appends.
    create: async (_w, i) => ({ name: nameOf(i), ...(i === 1 ? {} : { order: [2, 0, 1.5][i] ?? 10 + i }) }),
  },
  favorite: {
    // The owner's: the home project filed in a folder, then fresh tasks (one favorite per record), unfiled or filed.
    async create(w, i) {
      const p = await w.home();
      const folders = await w.records('favoriteFolder');
      if (i === 0) return { targetType: 'project', targetId: p.id, favoriteFolderId: folders[0].id };
      const t = await w.h.task(p.id, { name: `favorite target ${i}` });
      return { targetType: 'task', targetId: t.id, ...(i === 2 ? { favoriteFolderId: folders[1].id, order: 0.5 } : {}) };
    },
  },
};

function world(h: Harness): World {
  const made = new Map<string, Promise<any[]>>();
  const counters = new Map<string, number>();
  let home: Promise<any> | undefined;
  const resOf = (name: string): Resource => h.api.registry.get(name);
  const fixtureOf = (name: string): Fixture => {
    const fx = FIXTURES[name];
    if (!fx) throw new Error(`add a fixture for ${name} (resource /${resOf(name).path}) to FIXTURES in packages/conformance/src/suites/registry-generated.ts`);
    return fx;
  };
  async function createOne(name: string, prev: any[]): Promise<any> {
    const res = resOf(name);
    const fx = fixtureOf(name);
    if (!('create' in fx)) throw new Error(`the fixture for ${name} lists existing records only; this check needs a record it can create`);
    const i = counters.get(name) ?? 0;
    counters.set(name, i + 1);
    const body = await fx.create(w, i, prev);
    // distinct createdAt/updatedAt for every record
    h.clock.advance(1000);
    const r = await h.post(`/${res.path}`, body, fx.as ? { token: await fx.as(w, i) } : {});
    if (r.status !== 201) throw new Error(`fixture ${name} #${i}: POST /${res.path} ${JSON.stringify(body)} → ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  }
  async function getAll(res: Resource, ids: string[]): Promise<any[]> {
    const out: any[] = [];
    for (const id of ids) {
      const r = await h.get(`/${res.path}/${id}`);
      if (r.status !== 200) throw new Error(`fixture ${res.name}: GET /${res.path}/${id} → ${r.status} ${JSON.stringify(r.body)}`);
      out.push(r.body);
    }
    return out;
  }
  const w: World = {
    h,
    home() {
      home ??= (async () => {
        const p = await h.project({ name: 'Fixture home', members: [h.a.owner.id, h.a.regular.id, h.a.client.id] });
        return (await h.get(`/projects/${p.id}`)).body;
      })();
      return home;
    },
    records(name) {
      let p = made.get(name);
      if (!p) {
        p = (async () => {
          const res = resOf(name);
          const fx = fixtureOf(name);
          if ('existing' in fx) return getAll(res, await fx.existing(w));
          const created: any[] = [];
          for (let i = 0; i < 3; i++) created.push(await createOne(name, created));
          // as they read now (a later create may have touched an earlier one)
          return getAll(res, created.map((x) => x.id));
        })();
        made.set(name, p);
      }
      return p;
    },
    async fresh(name) {
      const prev = await w.records(name);
      const fx = fixtureOf(name);
      if ('make' in fx && fx.make) return (await h.get(`/${resOf(name).path}/${await fx.make(w)}`)).body;
      return createOne(name, prev);
    },
  };
  return w;
}


// ---------------------------------------------------------------------------
// The read fast path (issue 11).

/** List URLs that exercise every part of a page: paging, totals, each sort both ways, field selections, each expand. */
function listViews(res: Resource, recs: any[]): string[] {
  const base = `/${res.path}`;
  const views = [base, `${base}?limit=1`, `${base}?limit=2&includeTotal=true`, `${base}?limit=200`];
  for (const field of res.sortFields) views.push(`${base}?sort=${e(field)}&limit=2`, `${base}?sort=-${e(field)}&limit=2`);
  const shown = Object.keys(recs[0] ?? {});
  const relations = Object.keys(res.relationFields);
  const scalars = shown.filter((k) => !relations.includes(k));
  views.push(`${base}?fields[${res.path}]=id`);
  if (scalars.length > 2) views.push(`${base}?fields[${res.path}]=${e([scalars[scalars.length - 1], scalars[1]].join(','))}`);
  if (relations.length) views.push(`${base}?fields[${res.path}]=${e([relations[relations.length - 1]!, scalars[0] ?? 'id'].join(','))}`);
  for (const rel of Object.keys(res.expand)) views.push(`${base}?expand=${e(rel)}&limit=2`);
  return views;
}

/** The query strings a GET by id is compared under: none, a field selection with a relation, each expand. */
function getViews(res: Resource, recs: any[]): string[] {
  const views = ['', `?fields[${res.path}]=id`];
  const shown = Object.keys(recs[0] ?? {});
  const relations = Object.keys(res.relationFields);
  const scalars = shown.filter((k) => !relations.includes(k));
  if (relations.length) views.push(`?fields[${res.path}]=${e([relations[0]!, scalars[scalars.length - 1] ?? 'id'].join(','))}`);
  for (const rel of Object.keys(res.expand)) views.push(`?expand=${e(rel)}`);
  return views;
}

// ---------------------------------------------------------------------------
// Helpers.

function expectProblem(r: Reply, status: number, code: string): void {
  expect({ status: r.status, code: r.body?.code }, JSON.stringify(r.body)).toEqual({ status, code });
}

/** The response field a filter reads (the relation's body field for relation filters). */
function filterField(res: Resource, name: string, fd: FilterDef): string | undefined {
  if (fd.relation) return res.relations?.[fd.relation]?.field;
  return fd.field ?? name;
}

function filterKind(res: Resource, name: string, fd: FilterDef): StorageKind {
  if (fd.relation) return 'text';
  return res.fields[fd.field ?? name]?.kind ?? 'text';
}

/** The values a row holds for a filter: the ids of a relation, or the one scalar (null included); undefined if the row lacks the field. */
function rowValues(row: any, field: string | undefined, relation: boolean): unknown[] | undefined {
  if (!field || !(field in row)) return undefined;
  const v = row[field];
  if (relation) return Array.isArray(v) ? v : [];
  return [v];
}

function byteCompare(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/** Compare two non-null values of a kind as the stores do (text in byte order, false < true). */
function compare(kind: StorageKind, a: unknown, b: unknown): number {
  switch (kind) {
    case 'timestamp':
      return Date.parse(a as string) - Date.parse(b as string);
    case 'number':
    case 'integer':
      return (a as number) - (b as number);
    case 'boolean':
      return Number(a) - Number(b);
    default:
      return byteCompare(String(a), String(b));
  }
}

/** Sort order with nulls as the largest value (docs/not-shown.md "Null ordering"). */
function compareNullsLast(kind: StorageKind, a: unknown, b: unknown): number {
  if (a === null && b === null) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return compare(kind, a, b);
}

/** Does a row with these values satisfy `op` with `arg` (a value as records hold it; for `in` an array)? */
function holds(kind: StorageKind, vals: unknown[], op: FilterOp, arg: unknown): boolean {
  const lower = (s: unknown) => String(s).toLowerCase();
  switch (op) {
    case 'eq':
      return vals.some((v) => v !== null && compare(kind, v, arg) === 0);
    case 'in':
      return vals.some((v) => v !== null && (arg as unknown[]).some((a) => compare(kind, v, a) === 0));
    case 'contains':
      return vals.some((v) => typeof v === 'string' && lower(v).includes(lower(arg)));
    case 'startsWith':
      return vals.some((v) => typeof v === 'string' && lower(v).startsWith(lower(arg)));
    case 'gt':
      return vals.some((v) => v !== null && compare(kind, v, arg) > 0);
    case 'gte':
      return vals.some((v) => v !== null && compare(kind, v, arg) >= 0);
    case 'lt':
      return vals.some((v) => v !== null && compare(kind, v, arg) < 0);
    case 'lte':
      return vals.some((v) => v !== null && compare(kind, v, arg) <= 0);
    case 'null':
      return (vals[0] === null) === arg;
    case 'notNull':
      return (vals[0] !== null) === arg;
  }
}

/** A value of the kind that the filter accepts, for filters no record holds a value of. */
function placeholder(kind: StorageKind): unknown {
  switch (kind) {
    case 'boolean':
      return true;
    case 'number':
    case 'integer':
      return 1;
    case 'timestamp':
      return at(T0);
    default:
      return 'zz-no-such-value';
  }
}

const swapCase = (s: string) => [...s].map((c) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase())).join('');

/** One list request for a filter and its check: 200, every row satisfies it, and `rec` is in (or out of) the result. */
interface FilterCase {
  op: FilterOp;
  /** The query value as sent. */
  raw: string;
  /** The value as records hold it (array for `in`, boolean for null/notNull). */
  arg: unknown;
  contains?: string[];
  excludes?: string[];
}

function filterCases(res: Resource, name: string, fd: FilterDef, recs: any[]): FilterCase[] {
  const field = filterField(res, name, fd);
  const kind = filterKind(res, name, fd);
  const relation = !!fd.relation;
  // records with a usable value, and that value
  const usable: Array<{ rec: any; value: unknown }> = [];
  for (const rec of recs) {
    const vals = rowValues(rec, field, relation);
    const v = vals?.find((x) => x !== null && x !== undefined);
    if (v !== undefined) usable.push({ rec, value: v });
  }
  const first = usable[0];
  const str = (v: unknown) => String(v);
  const out: FilterCase[] = [];
  for (const op of fd.ops) {
    switch (op) {
      case 'eq': {
        if (kind === 'boolean') {
          for (const b of [true, false]) {
            const hit = usable.find((u) => u.value === b);
            out.push({ op, raw: String(b), arg: b, ...(hit ? { contains: [hit.rec.id] } : {}) });
          }
        } else if (first) out.push({ op, raw: str(first.value), arg: first.value, contains: [first.rec.id] });
        else out.push({ op, raw: str(placeholder(kind)), arg: placeholder(kind) });
        break;
      }
      case 'in': {
        const picks = usable.filter((u) => typeof u.value !== 'string' || (!u.value.includes(',') && u.value.trim() === u.value));
        const distinct = picks.filter((u, i) => picks.findIndex((x) => compare(kind, x.value, u.value) === 0) === i).slice(0, 2);
        if (distinct.length) out.push({ op, raw: distinct.map((u) => str(u.value)).join(','), arg: distinct.map((u) => u.value), contains: distinct.map((u) => u.rec.id) });
        else out.push({ op, raw: str(placeholder(kind)), arg: [placeholder(kind)] });
        break;
      }
      case 'contains':
      case 'startsWith': {
        const hit = usable.find((u) => typeof u.value === 'string' && u.value.length > 0);
        if (hit) {
          const v = hit.value as string;
          const part = op === 'startsWith' ? v.slice(0, Math.min(3, v.length)) : v.length >= 3 ? v.slice(1, -1) : v;
          // the case rule: case-insensitive on both sides
          out.push({ op, raw: swapCase(part), arg: swapCase(part), contains: [hit.rec.id] });
        } else out.push({ op, raw: 'zz', arg: 'zz' });
        break;
      }
      case 'gt':
      case 'gte':
      case 'lt':
      case 'lte': {
        if (first) {
          const inclusive = op === 'gte' || op === 'lte';
          out.push({ op, raw: str(first.value), arg: first.value, ...(inclusive ? { contains: [first.rec.id] } : { excludes: [first.rec.id] }) });
        } else out.push({ op, raw: str(placeholder(kind)), arg: placeholder(kind) });
        break;
      }
      case 'null':
      case 'notNull': {
        for (const b of [true, false]) {
          const isNull = (rec: any) => rowValues(rec, field, relation)?.[0] === null;
          const want = (rec: any) => (op === 'null' ? isNull(rec) === b : !isNull(rec) === b);
          const inside = recs.filter((r) => rowValues(r, field, relation) !== undefined && want(r)).map((r) => r.id);
          const outside = recs.filter((r) => rowValues(r, field, relation) !== undefined && !want(r)).map((r) => r.id);
          out.push({ op, raw: String(b), arg: b, contains: inside, excludes: outside });
        }
        break;
      }
    }
  }
  return out;
}

/** Follow nextCursor with limit=2 to the end; returns the rows in order. */
async function walk(h: Harness, base: string): Promise<any[]> {
  const rows: any[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const r = await h.get(`${base}&limit=2${cursor ? `&cursor=${e(cursor)}` : ''}`);
    expect(r.status, `${base} page ${page}: ${JSON.stringify(r.body)}`).toBe(200);
    rows.push(...r.body.data);
    if (!r.body.hasMore) {
      expect(r.body.nextCursor).toBeNull();
      return rows;
    }
    expect(r.body.data, `${base} page ${page}`).toHaveLength(2);
    cursor = r.body.nextCursor;
  }
  throw new Error(`${base}: the walk did not end within ${MAX_PAGES} pages`);
}

const STANDARD: Array<{ op: 'list' | 'create' | 'get' | 'update' | 'delete'; method: string; item: boolean }> = [
  { op: 'list', method: 'GET', item: false },
  { op: 'create', method: 'POST', item: false },
  { op: 'get', method: 'GET', item: true },
  { op: 'update', method: 'PATCH', item: true },
  { op: 'delete', method: 'DELETE', item: true },
];

// ---------------------------------------------------------------------------

export function registrySuite(factory: StoreFactory): void {
  // The registry the harness's API serves (createPmapi without extra resources): walked at collection time.
  const resources = new Registry(builtinResources).all();

  describe(`[${factory.name}] v3 Standard operations (generated from the registry): coverage`, () => {
    let h: Harness;
    beforeAll(async () => {
      h = await harness(factory);
    });
    afterAll(() => h?.close());

    it('the walked registry is the API registry, and every resource has a fixture', () => {
      expect(h.api.registry.all().map((r) => r.name).sort()).toEqual(resources.map((r) => r.name).sort());
      const missing = h.api.registry.all().filter((r) => !FIXTURES[r.name]).map((r) => `add a fixture for ${r.name} (/${r.path})`);
      const stale = Object.keys(FIXTURES).filter((n) => !h.api.registry.byName.has(n)).map((n) => `the fixture ${n} names no resource`);
      expect([...missing, ...stale]).toEqual([]);
    });
  });

  for (const res of resources) {
    describe(`[${factory.name}] v3 Standard operations (generated from the registry): ${res.path}`, () => {
      let h: Harness;
      let w: World;
      let recs: any[];
      beforeAll(async () => {
        h = await harness(factory);
        w = world(h);
        if (!FIXTURES[res.name]) throw new Error(`add a fixture for ${res.name} (/${res.path}) to FIXTURES in packages/conformance/src/suites/registry-generated.ts`);
        recs = await w.records(res.name);
        expect(recs.length).toBeGreaterThanOrEqual(1);
      });
      afterAll(() => h?.close());

      // -- rule 7: every filter and operator -------------------------------------------------
      if (res.operations.list) {
        for (const [name, fd] of Object.entries(res.filters)) {
          it(`filter ${name}[${fd.ops.join('|')}] answers 200 and its rows satisfy it`, async () => {
            const field = filterField(res, name, fd);
            const kind = filterKind(res, name, fd);
            for (const c of filterCases(res, name, fd, recs)) {
              const q = `/${res.path}?${name}[${c.op}]=${e(c.raw)}&limit=200`;
              const r = await h.get(q);
              expect(r.status, `${q}: ${JSON.stringify(r.body)}`).toBe(200);
              const ids = (r.body.data as any[]).map((x) => x.id as string);
              for (const id of c.contains ?? []) expect(ids, `${q} should contain ${id}`).toContain(id);
              for (const id of c.excludes ?? []) expect(ids, `${q} should not contain ${id}`).not.toContain(id);
              for (const row of r.body.data as any[]) {
                const vals = rowValues(row, field, !!fd.relation);
                if (vals === undefined) continue;
                expect(holds(kind, vals, c.op, c.arg), `${q}: row ${row.id} has ${field}=${JSON.stringify(row[field!])}`).toBe(true);
              }
            }
          });

          const undeclared = ALL_OPS.filter((op) => !fd.ops.includes(op));
          if (undeclared.length) {
            it(`filter ${name} refuses its undeclared operators (${undeclared.join(', ')}) with 400 invalid_query_param`, async () => {
              for (const op of undeclared) {
                const value = op === 'null' || op === 'notNull' ? 'true' : String(placeholder(filterKind(res, name, fd)));
                const r = await h.get(`/${res.path}?${name}[${op}]=${e(value)}`);
                expectProblem(r, 400, 'invalid_query_param');
                expect(r.body.name).toBe(`${name}[${op}]`);
              }
            });
          }
        }
      }

      // -- the read fast path: the same bytes as the rows path --------------------------------
      if (res.operations.list) {
        it('every list view answers the same bytes whether the database builds the JSON or the rows path does', async () => {
          const twin = await rowsTwin(h);
          const views = listViews(res, recs);
          let fast = 0;
          for (const as of [h.a.owner.token, h.a.regular.token, h.a.client.token]) {
            for (const url of views) {
              const r = await bothPaths(h, twin, url, as);
              if (r.tookFastPath) fast++;
              expect({ url, status: r.fast.status, body: r.fast.body }).toEqual({ url, status: r.rows.status, body: r.rows.body });
            }
          }
          // Every page statement ran from the statement cache (its values bound as predicted).
          expect(uncachedShapes().filter((k) => k.includes('|page:'))).toEqual([]);
          // Where the store builds JSON, the views without expand took that path (a resource whose hooks compute a field never does).
          if (h.store.dialect.jsonObject && !res.hooks?.present) expect(fast).toBeGreaterThan(0);
        });
      }

      if (res.operations.get) {
        it('GET /{id} answers the same bytes whether the database builds the JSON or the rows path does, for each role and view', async () => {
          const twin = await rowsTwin(h);
          const ids = [...recs.map((r: any) => r.id as string), 'nosuchid0000'];
          const views = getViews(res, recs);
          let fast = 0;
          for (const as of [h.a.owner.token, h.a.regular.token, h.a.client.token, h.b.owner.token]) {
            for (const id of ids) {
              for (const view of views) {
                const url = `/${res.path}/${id}${view}`;
                const r = await bothPaths(h, twin, url, as);
                if (r.tookFastPath) fast++;
                expect({ url, status: r.fast.status, body: r.fast.body }).toEqual({ url, status: r.rows.status, body: r.rows.body });
              }
            }
          }
          expect(uncachedShapes()).toEqual([]);
          if (h.store.dialect.jsonObject && !res.hooks?.present && !res.hooks?.decorateGet) expect(fast).toBeGreaterThan(0);
        });
      }

      // -- rule 6: every sort field, both ways, through cursors -------------------------------
      if (res.operations.list) {
        for (const field of res.sortFields) {
          for (const desc of [false, true]) {
            const sort = desc ? `-${field}` : field;
            it(`sort=${sort}: a limit=2 cursor walk is complete, without duplicates, in order`, async () => {
              const kind = res.fields[field]?.kind ?? 'text';
              const base = `/${res.path}?sort=${e(sort)}`;
              const rows = await walk(h, base);
              const ids = rows.map((x) => x.id as string);
              expect(new Set(ids).size, `${base}: duplicates in ${ids.join(',')}`).toBe(ids.length);
              for (const rec of recs) expect(ids, `${base}: ${res.name} ${rec.id} missing`).toContain(rec.id);
              // the same order as one big page
              const whole = await h.get(`${base}&limit=200`);
              expect(whole.status).toBe(200);
              expect(ids).toEqual((whole.body.data as any[]).map((x) => x.id));
              if (rows.every((row) => field in row)) {
                for (let i = 1; i < rows.length; i++) {
                  const [a, b] = [rows[i - 1][field], rows[i][field]];
                  const c = compareNullsLast(kind, a, b);
                  expect(desc ? c >= 0 : c <= 0, `${base}: ${JSON.stringify(a)} (${rows[i - 1].id}) before ${JSON.stringify(b)} (${rows[i].id})`).toBe(true);
                }
              }
            });
          }
        }
      }

      // -- rule 4: every expand on a single read ----------------------------------------------
      if (res.operations.get) {
        for (const [name, ex] of Object.entries(res.expand)) {
          it(`GET /${res.path}/{id}?expand=${name} answers 200 with ${name} (${ex.kind} → ${ex.target})`, async () => {
            // the record that has something to expand, where one has
            const rec = ex.kind === 'one' ? recs.find((x) => x[ex.field] != null) ?? recs[0] : recs[0];
            const r = await h.get(`/${res.path}/${rec.id}?expand=${e(name)}`);
            expect(r.status, JSON.stringify(r.body)).toBe(200);
            expect(r.body, `expand=${name}`).toHaveProperty(name);
            const v = r.body[name];
            if (ex.kind === 'one') {
              expect(v === null || (typeof v === 'object' && !Array.isArray(v)), `expand=${name}: ${JSON.stringify(v)}`).toBe(true);
              if (v !== null) expect(v.id).toBe(rec[ex.field]);
            } else {
              expect(Array.isArray(v), `expand=${name}: ${JSON.stringify(v)}`).toBe(true);
              // Records carry an id; computed entries (a chat's members) are plain objects.
              for (const item of v as any[]) expect(typeof item === 'object' && item !== null && (ex.kind === 'entries' || typeof item.id === 'string')).toBe(true);
              if (ex.kind === 'children') for (const item of v as any[]) if (ex.field in item) expect(item[ex.field]).toBe(rec.id);
              if (ex.kind === 'many') {
                const field = res.relations?.[ex.relation]?.field;
                const linked = field ? (rec[field] as string[] | undefined) : undefined;
                if (linked) expect((v as any[]).map((x) => x.id).sort()).toEqual([...linked].sort());
              }
            }
          });
        }
      }

      // -- rule 12: relation sub-routes -------------------------------------------------------
      for (const [seg, relName] of Object.entries(res.relationByPath)) {
        const rel = res.relations![relName]!;
        if (rel.supported) {
          it(`POST and DELETE /${res.path}/{id}/${seg} with {ids} answer 200`, async () => {
            const parent = await w.fresh(res.name);
            const targets = await w.records(rel.target);
            const target = targets.find((t) => t.id !== parent.id);
            if (!target) throw new Error(`no ${rel.target} record other than the parent to link through ${seg}`);
            const add = await h.post(`/${res.path}/${parent.id}/${seg}`, { ids: [target.id] });
            expect(add.status, JSON.stringify(add.body)).toBe(200);
            if (rel.field && rel.field in add.body) expect(add.body[rel.field]).toContain(target.id);
            const remove = await h.del(`/${res.path}/${parent.id}/${seg}`, { body: { ids: [target.id] } });
            expect(remove.status, JSON.stringify(remove.body)).toBe(200);
            if (rel.field && rel.field in remove.body) expect(remove.body[rel.field]).not.toContain(target.id);
          });
        } else {
          it(`POST and DELETE /${res.path}/{id}/${seg} answer 501 m2m_not_supported`, async () => {
            const parent = recs[0];
            expectProblem(await h.post(`/${res.path}/${parent.id}/${seg}`, { ids: ['abc123'] }), 501, 'm2m_not_supported');
            expectProblem(await h.del(`/${res.path}/${parent.id}/${seg}`, { body: { ids: ['abc123'] } }), 501, 'm2m_not_supported');
          });
        }
      }
      it(`an unknown sub-route segment (/${res.path}/{id}/no-such-relation) is 400 m2m_relation_unknown`, async () => {
        for (const r of [
          await h.post(`/${res.path}/${recs[0].id}/no-such-relation`, { ids: [recs[0].id] }),
          await h.del(`/${res.path}/${recs[0].id}/no-such-relation`, { body: { ids: [recs[0].id] } }),
        ]) {
          expectProblem(r, 400, 'm2m_relation_unknown');
          expect([...r.body.available].sort()).toEqual(Object.keys(res.relationByPath).sort());
        }
      });

      // -- delete, soft delete and restore ---------------------------------------------------
      if (res.operations.delete && res.softDelete) {
        it('DELETE trashes (204, then 404); purgeAt[notNull] lists it; POST /restore brings it back', async () => {
          const rec = await w.fresh(res.name);
          expect((await h.del(`/${res.path}/${rec.id}`)).status).toBe(204);
          expectProblem(await h.get(`/${res.path}/${rec.id}`), 404, 'resource_not_found');
          if (res.operations.list) {
            const live = await h.get(`/${res.path}?limit=200`);
            expect((live.body.data as any[]).map((x) => x.id)).not.toContain(rec.id);
            if (res.filters.purgeAt?.ops.includes('notNull')) {
              const trash = await h.get(`/${res.path}?purgeAt[notNull]=true&limit=200`);
              expect(trash.status).toBe(200);
              const row = (trash.body.data as any[]).find((x) => x.id === rec.id);
              expect(row, 'the trashed record is listed by purgeAt[notNull]=true').toBeDefined();
              expect(row.purgeAt).toBeTypeOf('string');
              // the other purgeAt operators, against the trashed row's own purgeAt
              const expected: Partial<Record<FilterOp, [string, boolean]>> = {
                null: ['false', true], gt: [row.purgeAt, false], gte: [row.purgeAt, true], lt: [row.purgeAt, false], lte: [row.purgeAt, true],
              };
              for (const op of res.filters.purgeAt.ops) {
                const [value, listed] = expected[op] ?? [];
                if (value === undefined) continue;
                const q = `/${res.path}?purgeAt[${op}]=${e(value)}&limit=200`;
                const r = await h.get(q);
                expect(r.status, `${q}: ${JSON.stringify(r.body)}`).toBe(200);
                const ids = (r.body.data as any[]).map((x) => x.id);
                if (listed) expect(ids, `${q} should list the trashed record`).toContain(rec.id);
                else expect(ids, `${q} should not list the trashed record`).not.toContain(rec.id);
              }
            }
          }
          const back = await h.post(`/${res.path}/${rec.id}/restore`);
          expect(back.status, JSON.stringify(back.body)).toBe(200);
          expect(back.body.id).toBe(rec.id);
          expect(back.body.purgeAt).toBeNull();
          expect((await h.get(`/${res.path}/${rec.id}`)).status).toBe(200);
        });
      }
      if (res.operations.delete && res.revokeField) {
        it(`DELETE revokes (204): ${res.revokeField} is set once and the record stays readable and listed`, async () => {
          const rec = await w.fresh(res.name);
          expect(rec[res.revokeField!]).toBeNull();
          expect((await h.del(`/${res.path}/${rec.id}`)).status).toBe(204);
          const after = await h.get(`/${res.path}/${rec.id}`);
          expect(after.status).toBe(200);
          expect(after.body[res.revokeField!]).toBe(at(h.clock.now()));
          h.clock.advance(1000);
          expect((await h.del(`/${res.path}/${rec.id}`)).status).toBe(204);
          expect((await h.get(`/${res.path}/${rec.id}`)).body[res.revokeField!]).toBe(after.body[res.revokeField!]);
          if (res.operations.list) expect((await h.get(`/${res.path}?limit=200`)).body.data.map((x: any) => x.id)).toContain(rec.id);
        });
      }
      if (res.operations.delete && !res.softDelete && !res.revokeField) {
        it('DELETE removes for good (204, then 404); /restore is refused with a 4xx', async () => {
          const rec = await w.fresh(res.name);
          expect((await h.del(`/${res.path}/${rec.id}`)).status).toBe(204);
          expectProblem(await h.get(`/${res.path}/${rec.id}`), 404, 'resource_not_found');
          // Without soft delete, `restore` is no route of its own: it is read as a relation segment.
          const r = await h.post(`/${res.path}/${rec.id}/restore`);
          expect(r.status, JSON.stringify(r.body)).toBeGreaterThanOrEqual(400);
          expect(r.status, JSON.stringify(r.body)).toBeLessThan(500);
          expectProblem(r, 400, 'm2m_relation_unknown');
        });
      }

      // -- 405 for every undeclared standard operation ---------------------------------------
      const missing = STANDARD.filter((s) => !res.operations[s.op]);
      if (missing.length) {
        it(`undeclared operations (${missing.map((m) => m.op).join(', ')}) answer 405 method_not_allowed with Allow`, async () => {
          for (const s of missing) {
            const path = s.item ? `/${res.path}/${recs[0].id}` : `/${res.path}`;
            const allowed = STANDARD.filter((x) => x.item === s.item && res.operations[x.op]).map((x) => x.method).sort();
            const r = await h.req(s.method, path, s.method === 'POST' || s.method === 'PATCH' ? { body: {} } : {});
            expectProblem(r, 405, 'method_not_allowed');
            expect(r.headers.allow, `${s.method} ${path}: Allow`).toBeTypeOf('string');
            expect(r.headers.allow!.split(',').map((x) => x.trim()).filter(Boolean).sort(), `${s.method} ${path}: Allow`).toEqual(allowed);
          }
        });
      }
    });
  }
}
