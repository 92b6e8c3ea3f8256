import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { createHash } from 'node:crypto';
import { connect, type AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import {
  createMemoryBlobStore, createPmapi, createRateLimiter, defineResource, errorCodes, f, type BlobStore, type Clock, type HttpRequest, type Pmapi,
} from '@pmapi/core';
import { createNodeServer } from '@pmapi/http-node';
import { harness, type Harness, type Reply, type StoreFactory } from '../kit';
import { copyProjects } from './shared';

/**
 * Issue 14 "Done when": the whole error registry, walked. Spec "Errors" (the
 * code table) and docs/not-shown.md "Errors and transport" (the codes we
 * added where the spec leaves them unnamed).
 *
 * One test per store walks every code of `errorCodes` (packages/core
 * src/errors/codes.ts, the registry every problem body takes its status and
 * title from) and shows each is answered to at least one real request: a
 * table code → request, each answer checked for its status (the registry's),
 * `code` and `type`. The table and the registry must hold the same codes, so
 * a code added without a provoking request fails here, by name.
 *
 * Most requests go through api.handle as the harness does. Codes that need a
 * different configuration of the same library get it: a second API over the
 * same store (rate limits on; a declared resource without its table; a
 * relation declared unsupported), the API behind the node:http front end on
 * 127.0.0.1 (body limit and deadline), a blob store that fails (the
 * last-resort 500), a clock that jumps during a search (the search deadline).
 * OAuth errors (RFC 6749 codes) are another registry, walked by the OAuth suite.
 */

const DAY = 24 * 60 * 60 * 1000;
const ALL = ['read', 'write', 'delete'];

interface ErrWalk {
  h: Harness;
  /** A project of workspace A (owner and regular member) and a task in it. */
  p: any;
  q: any;
  t: any;
  /** Extra configurations of the same library (see the file comment). */
  limited: Pmapi;
  gadgets: Pmapi;
  http: { port: number };
  /** Switches of the harness API's injected ports. */
  ports: { failBlobWrites: boolean; slowClock: boolean };
  reported: unknown[];
}

interface Case {
  /** The request that provokes the code; returns the answer. */
  provoke: (w: ErrWalk) => Promise<Reply>;
}

/** Status and body of an answer of an API other than the harness's. */
async function call(api: Pmapi, token: string | null, method: string, path: string, body?: unknown): Promise<Reply> {
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  const req: HttpRequest = { method, url: `/api/v3${path}`, headers, remoteAddress: '127.0.0.1' };
  if (body !== undefined) {
    headers['content-type'] = 'application/json';
    req.body = JSON.stringify(body);
  }
  const res = await api.handle(req);
  return { status: res.status, headers: res.headers, body: res.body === undefined ? undefined : JSON.parse(typeof res.body === 'string' ? res.body : new TextDecoder().decode(res.body)) };
}

/**
 * One HTTP/1.1 exchange over a raw socket to 127.0.0.1 (fetch would hide a
 * body that never finishes): writes `head` and `body`, keeps the socket open,
 * and resolves with the answer once it is complete (or the socket closes).
 */
function rawExchange(port: number, head: string, body: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let raw = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no complete answer from 127.0.0.1:${port}; got ${JSON.stringify(raw.slice(0, 200))}`));
    }, 5000);
    const finish = () => {
      const end = raw.indexOf('\r\n\r\n');
      if (end < 0) return false;
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(raw.slice(0, end))?.[1] ?? NaN);
      const text = raw.slice(end + 4);
      if (!(Buffer.byteLength(text) >= length)) return false;
      clearTimeout(timer);
      socket.destroy();
      const headers = Object.fromEntries(raw.slice(0, end).split('\r\n').slice(1).map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(raw)?.[1] ?? 0), headers, body: JSON.parse(text) });
      return true;
    };
    socket.on('data', (d) => {
      raw += d.toString('latin1');
      finish();
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      if (!finish()) {
        clearTimeout(timer);
        reject(new Error(`connection closed without a complete answer: ${JSON.stringify(raw.slice(0, 200))}`));
      }
    });
    socket.once('connect', () => socket.write(`${head}\r\n\r\n${body}`));
  });
}

/** The Idempotency-Key fingerprint as the library computes it (services/idempotency.ts): method, URL, body with sorted keys. */
function fingerprint(method: string, url: string, body: Record<string, unknown>): string {
  const canonical = `{${Object.keys(body).sort().map((k) => `${JSON.stringify(k)}:${JSON.stringify(body[k])}`).join(',')}}`;
  return createHash('sha256').update(`${method} ${url}\n${canonical}`).digest('hex');
}

function must(r: Reply, status: number, what: string): any {
  if (r.status !== status) throw new Error(`${what}: expected ${status}, got ${r.status} ${JSON.stringify(r.body)?.slice(0, 300)}`);
  return r.body;
}

let seq = 0;
const uniq = () => `${++seq}`;

async function statusesOf(w: ErrWalk, projectId: string): Promise<any[]> {
  return must(await w.h.get(`/statuses?projectId[eq]=${projectId}`), 200, 'statuses').data;
}

async function newToken(w: ErrWalk, o: { role?: string; expiresAt?: number } = {}): Promise<{ id: string; token: string }> {
  const m = await w.h.api.admin.addMember(w.h.a.id, { name: `Error walker ${uniq()}`, role: o.role ?? 'regular' });
  const { token } = await w.h.api.admin.issueToken(m.id, { scopes: ALL, ...(o.expiresAt === undefined ? {} : { expiresAt: o.expiresAt }) });
  return { id: m.id, token };
}

/** A root task of `p` in a list of `p` (what a cross-project move starts from). */
async function listedTask(w: ErrWalk): Promise<{ task: any; list: any }> {
  const list = must(await w.h.post('/lists', { name: `Walk list ${uniq()}`, projectId: w.p.id }), 201, 'list');
  return { task: await w.h.task(w.p.id, { name: 'Moving', listId: list.id }), list };
}

const many = (n: number) => Array.from({ length: n }, (_, i) => `walk${String(i).padStart(8, '0')}`);
const e = encodeURIComponent;

/** Code → a request that is answered with it. */
const PROVOKE: Record<string, Case> = {
  // ---- 400 ----
  validation_failed: { provoke: (w) => w.h.post('/tasks', { name: '', projectId: w.p.id }) },
  cursor_invalid: { provoke: (w) => w.h.get(`/tasks?projectId=${w.p.id}&cursor=notacursor`) },
  cursor_sort_mismatch: {
    provoke: async (w) => {
      const page = must(await w.h.get(`/tasks?projectId=${w.p.id}&sort=name&limit=1`), 200, 'first page');
      if (!page.nextCursor) throw new Error('the walk project needs two tasks for a cursor');
      return w.h.get(`/tasks?projectId=${w.p.id}&sort=-name&cursor=${e(page.nextCursor)}`);
    },
  },
  pagination_param_unknown: { provoke: (w) => w.h.get('/tasks?offset=2') },
  sort_field_invalid: { provoke: (w) => w.h.get(`/tasks?projectId=${w.p.id}&sort=bogus`) },
  resource_unknown: { provoke: (w) => w.h.get('/gizmos') },
  // A resource declared without its migration (the embedding application's mistake): see the gadgets API.
  resource_misconfigured: { provoke: (w) => call(w.gadgets, w.h.a.owner.token, 'GET', '/gadgets') },
  search_query_missing: { provoke: (w) => w.h.get('/roles/search') },
  search_query_too_short: { provoke: (w) => w.h.get('/roles/search?q=ab') },
  search_query_too_long: { provoke: (w) => w.h.get(`/roles/search?q=${'a'.repeat(201)}`) },
  search_query_invalid: { provoke: (w) => w.h.get(`/roles/search?q=${e('https://example.com')}`) },
  search_timed_out: {
    provoke: async (w) => {
      // The API's clock jumps 2 s at every reading: the search passes its 1 s deadline between statements.
      w.ports.slowClock = true;
      try {
        return await w.h.get('/roles/search?q=manager');
      } finally {
        w.ports.slowClock = false;
      }
    },
  },
  identity_rejected: {
    provoke: async (w) => {
      const bot = await w.h.api.admin.createAgent({ teamId: w.h.a.id, name: `Walk bot ${uniq()}`, role: 'manager', scopes: ALL });
      return w.h.post('/personal-access-tokens', { name: 'mine', scopes: ['read'] }, { token: bot.token });
    },
  },
  empty_update: { provoke: (w) => w.h.patch(`/tasks/${w.t.id}`, {}) },
  project_not_specified: { provoke: (w) => w.h.post('/tasks', { name: 'Nowhere' }) },
  accessible_project_ids_exceeded: {
    provoke: async (w) => {
      // Workspace B's owner opens 1,001 projects (copied straight into the store: through the API it would take long).
      const pb = await w.h.project({ name: 'Beta many' }, w.h.b.owner.token);
      await copyProjects(w.h, pb.id, 1000, 'errwalk');
      return w.h.get('/tasks', { token: w.h.b.owner.token });
    },
  },
  milestone_dependency_wrong_project: {
    provoke: async (w) => {
      const foreign = must(await w.h.post('/lists', { name: 'Foreign', projectId: w.q.id }), 201, 'list');
      return w.h.post('/lists', { name: 'Dependent', projectId: w.p.id, dependencyId: foreign.id });
    },
  },
  milestone_hiddenfor_roles_not_in_team: { provoke: (w) => w.h.post('/lists', { name: 'Cross', projectId: w.p.id, hiddenFor: [w.h.b.roleIds.client] }) },
  favorite_folder_invalid: { provoke: (w) => w.h.post('/favorites', { targetType: 'task', targetId: w.t.id, favoriteFolderId: 'nosuchfolder0000' }) },
  expand_too_deep: { provoke: (w) => w.h.get('/tasks?expand=project.portfolio.owner.roleRecord.createdByActor') },
  expand_cycle_detected: { provoke: (w) => w.h.get('/tasks?expand=status.tasks') },
  expand_unknown_relation: { provoke: (w) => w.h.get(`/tasks/${w.t.id}?expand=bogus`) },
  expand_budget_exceeded: {
    provoke: async (w) => {
      // Every path ends in a hop to the same 100 members: 21 such hops pass the 2,000-row budget of one request.
      const h = w.h;
      const ms: string[] = [];
      for (let i = 0; i < 100; i++) ms.push((await h.api.admin.addMember(h.a.id, { name: `Fan ${i}`, role: 'regular' })).id);
      const pf = must(await h.post('/portfolios', { name: 'Budget portfolio', members: ms }), 201, 'portfolio');
      const p = await h.project({ name: 'Budget', portfolioId: pf.id, members: ms });
      const status = must(await h.get(`/projects/${p.id}`), 200, 'project').defaultStatusId;
      must(await h.patch(`/statuses/${status}`, { assignees: ms }), 200, 'status');
      const list = must(await h.post('/lists', { name: 'Budget list', projectId: p.id, statusId: status, assignees: ms }), 201, 'list');
      const parent = await h.task(p.id, { name: 'Parent', listId: list.id, assignees: ms, subscribers: ms });
      await h.task(p.id, { name: 'Child', listId: list.id, parentTaskId: parent.id, dependencyId: parent.id, assignees: ms, subscribers: ms });
      const paths = [
        'assignees', 'subscribers', 'project.members', 'project.portfolio.members', 'status.assignees', 'status.project.members', 'status.project.portfolio.members',
        'list.assignees', 'list.project.members', 'list.project.portfolio.members', 'list.status.assignees', 'list.status.project.members',
        'parentTask.assignees', 'parentTask.subscribers', 'parentTask.project.members', 'parentTask.project.portfolio.members', 'parentTask.status.assignees',
        'parentTask.list.assignees', 'dependency.assignees', 'dependency.subscribers', 'dependency.project.members',
      ];
      return h.get(`/tasks?parentTaskId[eq]=${parent.id}&limit=1&fields[members]=name&expand=${paths.join(',')}`);
    },
  },
  invalid_field_selector: { provoke: (w) => w.h.get('/tasks?fields[tasks]=bogus') },
  invalid_query_param: { provoke: (w) => w.h.get(`/tasks?projectId=${w.p.id}&includeTotal=maybe`) },
  move_target_milestone_mismatch: {
    provoke: async (w) => {
      const { task, list } = await listedTask(w);
      return w.h.patch(`/tasks/${task.id}`, { projectId: w.q.id, listId: list.id });
    },
  },
  move_target_taskgroup_mismatch: { provoke: (w) => w.h.patch(`/tasks/${w.t.id}`, { projectId: w.q.id, statusId: w.p.defaultStatusId }) },
  move_target_no_default_milestone: {
    provoke: async (w) => {
      const { task } = await listedTask(w);
      const dst = await w.h.project({ name: `No open list ${uniq()}` });
      const l = must(await w.h.post('/lists', { name: 'Archived', projectId: dst.id }), 201, 'list');
      must(await w.h.patch(`/lists/${l.id}`, { archived: true }), 200, 'archive list');
      return w.h.patch(`/tasks/${task.id}`, { projectId: dst.id });
    },
  },
  move_target_no_default_taskgroup: {
    provoke: async (w) => {
      const { task } = await listedTask(w);
      const dst = await w.h.project({ name: `No open status ${uniq()}` });
      must(await w.h.post('/lists', { name: 'L', projectId: dst.id }), 201, 'list');
      for (const s of await statusesOf(w, dst.id)) must(await w.h.patch(`/statuses/${s.id}`, { archived: true }), 200, 'archive status');
      return w.h.patch(`/tasks/${task.id}`, { projectId: dst.id });
    },
  },
  task_no_default_status: {
    provoke: async (w) => {
      const dst = await w.h.project({ name: `All archived ${uniq()}` });
      for (const s of await statusesOf(w, dst.id)) must(await w.h.patch(`/statuses/${s.id}`, { archived: true }), 200, 'archive status');
      return w.h.post('/tasks', { name: 'Nowhere', projectId: dst.id });
    },
  },
  move_subtask_must_move_with_parent: {
    provoke: async (w) => {
      const child = await w.h.task(w.p.id, { name: 'Sub', parentTaskId: w.t.id });
      return w.h.patch(`/tasks/${child.id}`, { projectId: w.q.id });
    },
  },
  task_subtask_chain_too_deep: {
    provoke: (w) => {
      // 1 root + 9 branches of 1 + 21 leaves + 2 leaves = 201 nodes, one over the 200 a tree may hold.
      const leaves = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `leaf ${i}` }));
      const branches = Array.from({ length: 9 }, (_, i) => ({ name: `branch ${i}`, subtasks: leaves(21) }));
      return w.h.post('/tasks/tree', { name: 'Too big', projectId: w.p.id, subtasks: [...branches, ...leaves(2)] });
    },
  },
  task_dependency_incomplete: {
    provoke: async (w) => {
      const dep = await w.h.task(w.p.id, { name: 'First' });
      const t = await w.h.task(w.p.id, { name: 'Second', dependencyId: dep.id });
      return w.h.patch(`/tasks/${t.id}`, { completed: true });
    },
  },
  bulk_too_large: { provoke: (w) => w.h.patch(`/tasks/${w.t.id}`, { connectedTasks: many(151) }) },
  batch_empty: { provoke: (w) => w.h.post(`/tasks/${w.t.id}/subscribers`, { ids: [] }) },
  batch_too_large: { provoke: (w) => w.h.post(`/tasks/${w.t.id}/connected-tasks`, { ids: many(151) }) },
  m2m_relation_unknown: { provoke: (w) => w.h.post(`/tasks/${w.t.id}/watchers`, { ids: [w.h.a.regular.id] }) },
  pat_cap_reached: {
    provoke: async (w) => {
      // A person with one token (from api.admin) makes 19 more: the 21st active one is refused.
      const me = await newToken(w);
      for (let i = 2; i <= 20; i++) must(await w.h.post('/personal-access-tokens', { name: `Cap ${i}`, scopes: ['read'] }, { token: me.token }), 201, `token ${i}`);
      return w.h.post('/personal-access-tokens', { name: 'Cap 21', scopes: ['read'] }, { token: me.token });
    },
  },
  cannot_broaden_scope: {
    provoke: async (w) => {
      const pat = must(await w.h.post('/personal-access-tokens', { name: 'Narrow', scopes: ['tasks:read'] }), 201, 'token');
      return w.h.patch(`/personal-access-tokens/${pat.id}`, { scopes: ['tasks:read', 'tasks:write'] });
    },
  },
  cannot_shorten_expiry: {
    provoke: async (w) => {
      const pat = must(await w.h.post('/personal-access-tokens', { name: 'Expiring', scopes: ['read'], expiresAt: new Date(w.h.clock.now() + DAY).toISOString() }), 201, 'token');
      return w.h.patch(`/personal-access-tokens/${pat.id}`, { expiresAt: new Date(w.h.clock.now() + DAY / 2).toISOString() });
    },
  },
  // The client role deletes no statuses and writes no roles.
  cannot_create_empty_token: { provoke: (w) => w.h.post('/personal-access-tokens', { name: 'Empty', scopes: ['statuses:delete', 'roles:write'] }, { token: w.h.a.client.token }) },

  // ---- 401 ----
  unauthorized: { provoke: (w) => w.h.get('/tasks', { token: null }) },
  invalid_token: { provoke: (w) => w.h.get('/tasks', { token: 'svc_user_thisTokenWasNeverIssued0000000000' }) },
  token_expired: {
    provoke: async (w) => {
      const { token } = await newToken(w, { expiresAt: w.h.clock.now() + 1000 });
      w.h.clock.advance(2000);
      return w.h.get('/tasks', { token });
    },
  },
  token_owner_inactive: {
    provoke: async (w) => {
      const m = await newToken(w);
      must(await w.h.patch(`/members/${m.id}`, { active: false }), 200, 'deactivate');
      return w.h.get('/tasks', { token: m.token });
    },
  },

  // ---- 403 ----
  permission_denied: { provoke: (w) => w.h.post('/projects', { name: 'By a client' }, { token: w.h.a.client.token }) },
  project_access_denied: {
    provoke: async (w) => {
      const closed = await w.h.project({ name: `Closed ${uniq()}` });
      return w.h.get(`/projects/${closed.id}`, { token: w.h.a.regular.token });
    },
  },
  default_label_locked: {
    provoke: async (w) => {
      const bug = must(await w.h.get('/labels?name[eq]=Bug'), 200, 'labels').data[0];
      return w.h.patch(`/labels/${bug.id}`, { name: 'Defect' });
    },
  },
  default_role_locked: { provoke: (w) => w.h.patch(`/roles/${w.h.a.roleIds.regular}`, { name: 'Renamed regular' }) },
  permission_exceeds_caller_grant: {
    provoke: async (w) => {
      // A role that may manage roles but holds no viewAllProjects cannot grant it.
      const admin = must(await w.h.post('/roles', { name: `Role admin ${uniq()}`, permissions: ['manageRoles', 'roles:read', 'roles:write', 'tasks:read'] }), 201, 'role');
      const m = await w.h.api.admin.addMember(w.h.a.id, { name: `Role admin ${uniq()}`, role: admin.name });
      const { token } = await w.h.api.admin.issueToken(m.id, { scopes: ALL });
      return w.h.post('/roles', { name: `Too much ${uniq()}`, permissions: ['tasks:read', 'viewAllProjects'] }, { token });
    },
  },

  // ---- 404 ----
  resource_not_found: { provoke: (w) => w.h.get('/tasks/Missing1234') },
  m2m_target_not_found: { provoke: (w) => w.h.post(`/tasks/${w.t.id}/assignees`, { ids: [w.h.b.owner.id] }) },
  route_not_found: { provoke: (w) => w.h.get('/tasks/x/y/z/w') },

  // ---- 405, 408, 409, 413, 415, 422, 429 ----
  method_not_allowed: { provoke: (w) => w.h.req('PUT', `/tasks/${w.t.id}`, { body: { name: 'put' } }) },
  // The node:http front end's body deadline (200 ms here): a body that never finishes.
  request_timeout: {
    provoke: (w) => rawExchange(w.http.port, `POST /api/v3/projects HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${w.h.a.owner.token}\r\nContent-Type: application/json\r\nContent-Length: 100`, '{'),
  },
  conflict: { provoke: (w) => w.h.post('/projects', { name: w.p.name }) },
  stale_write: { provoke: (w) => w.h.patch(`/tasks/${w.t.id}`, { name: 'x', expectedUpdatedAt: '2000-01-01T00:00:00.000Z' }) },
  idempotency_key_in_progress: {
    provoke: async (w) => {
      // A claim without a response (a request holding the key that never finished, e.g. a crashed
      // process): written as the library writes its claims, then the same request is sent again.
      const body = { name: `Held ${uniq()}` };
      const key = `walk-held-${uniq()}`;
      const d = w.h.store.dialect;
      await w.h.store.db.insertInto('idempotency_keys').values({
        scope: `${w.h.a.id}:${w.h.a.owner.id}`, key, fingerprint: fingerprint('POST', '/api/v3/labels', body), status: null, response: null, created_at: d.encode('timestamp', w.h.clock.now()),
      }).execute();
      return w.h.post('/labels', body, { headers: { 'idempotency-key': key } });
    },
  },
  // The node:http front end's body limit (1 KiB here).
  payload_too_large: {
    provoke: (w) => {
      const body = JSON.stringify({ name: 'x'.repeat(2000) });
      return rawExchange(w.http.port, `POST /api/v3/projects HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${w.h.a.owner.token}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}`, body);
    },
  },
  unsupported_media_type: { provoke: (w) => w.h.req('POST', '/projects', { raw: 'name=x', headers: { 'content-type': 'text/plain' } }) },
  idempotency_key_reused: {
    provoke: async (w) => {
      const key = { headers: { 'idempotency-key': `walk-reused-${uniq()}` } };
      must(await w.h.post('/tasks', { name: 'Body A', projectId: w.p.id }, key), 201, 'first');
      return w.h.post('/tasks', { name: 'Body B', projectId: w.p.id }, key);
    },
  },
  // Rate limits on (GET: 2 a minute per token): see the limited API.
  rate_limited: {
    provoke: async (w) => {
      for (let i = 0; i < 2; i++) must(await call(w.limited, w.h.a.owner.token, 'GET', '/labels'), 200, `GET ${i + 1}`);
      return call(w.limited, w.h.a.owner.token, 'GET', '/labels');
    },
  },

  // ---- 5xx ----
  // The last resort: a port that fails unexpectedly (the blob store refusing a write) while bytes are uploaded.
  internal_error: {
    provoke: async (w) => {
      const slot = must(await w.h.post('/files/upload-url', { size: 3 }), 200, 'upload url');
      w.ports.failBlobWrites = true;
      try {
        const res = await w.h.fetchLink('PUT', slot.url, new Uint8Array([1, 2, 3]));
        return { status: res.status, headers: res.headers, body: JSON.parse(String(res.body)) };
      } finally {
        w.ports.failBlobWrites = false;
      }
    },
  },
  // A relation the resource declares but does not support yet (the registry has none of its own): see the gadgets API.
  m2m_not_supported: { provoke: (w) => call(w.gadgets, w.h.a.owner.token, 'POST', '/gadgets/abcdefgh/parts', { ids: [w.t.id] }) },
  // No webhook sender is configured on this API: a test delivery cannot be made.
  service_unavailable: {
    provoke: async (w) => {
      const hook = must(await w.h.post('/webhooks', { url: 'https://hooks.example.com/walk' }), 201, 'webhook');
      return w.h.post(`/webhooks/${hook.id}/test`);
    },
  },

  // ---- signed blob links (403) ----
  // An upload link used to read.
  link_invalid: {
    provoke: async (w) => {
      const slot = must(await w.h.post('/files/upload-url', { size: 3 }), 200, 'upload url');
      const res = await w.h.fetchLink('GET', slot.url);
      return { status: res.status, headers: res.headers, body: JSON.parse(String(res.body)) };
    },
  },
  // An upload link used after its 15 minutes.
  link_expired: {
    provoke: async (w) => {
      const slot = must(await w.h.post('/files/upload-url', { size: 3 }), 200, 'upload url');
      w.h.clock.advance(20 * 60_000);
      const res = await w.h.fetchLink('PUT', slot.url, new Uint8Array([1, 2, 3]));
      return { status: res.status, headers: res.headers, body: JSON.parse(String(res.body)) };
    },
  },
};

/** Codes whose request changes what later requests see: walked last, in this order. */
const LAST = ['accessible_project_ids_exceeded'];

export function errorWalkSuite(factory: StoreFactory): void {
  describe(`[${factory.name}] v3 Errors: every registered code, walked (Errors; issue 14 "Done when")`, () => {
    let w: ErrWalk;
    let server: Server;
    beforeAll(async () => {
      const ports = { failBlobWrites: false, slowClock: false };
      const reported: unknown[] = [];
      const blobs = createMemoryBlobStore();
      const failing: BlobStore = {
        kind: blobs.kind,
        put: async (key, bytes) => {
          if (ports.failBlobWrites) throw new Error('the blob store failed (provoked by the error walk)');
          return blobs.put(key, bytes);
        },
        get: (key) => blobs.get(key),
        size: (key) => blobs.size(key),
        delete: (key) => blobs.delete(key),
      };
      const h = await harness(factory, {
        api: (clock) => {
          let jump = 0;
          const jumpy: Clock = { now: () => (ports.slowClock ? clock.now() + (jump += 2000) : clock.now()) };
          return { clock: jumpy, searchTimeoutMs: 1000, files: { store: failing }, onError: (err) => reported.push(err) };
        },
      });
      // Rate limits on, small (the harness API has them off): GET twice a minute per token.
      const limited = await createPmapi({
        store: h.store, clock: h.clock,
        rateLimiter: createRateLimiter({ store: 'memory', limits: { GET: [{ limit: 2, windowMs: 60_000, keyBy: 'token' }, { limit: 2, windowMs: 60_000, keyBy: 'token' }] } }),
      });
      // A resource the application declares but never migrated (no table), with a relation it does not support yet.
      const gadget = defineResource({
        name: 'gadget', path: 'gadgets', fields: { name: f.string({ max: 50 }) }, filters: { name: { ops: ['eq'] } }, defaultSort: 'createdAt',
        relations: { parts: { target: 'task', supported: false } },
      });
      const gadgets = await createPmapi({ store: h.store, clock: h.clock, rateLimiter: false, resources: [gadget], onError: (err) => reported.push(err) });
      // The harness API behind the node:http front end, with a small body limit and a short body deadline.
      server = createNodeServer(h.api, { bodyLimit: 1024, bodyTimeoutMs: 200 });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const p = await h.project({ name: 'Error walk', members: [h.a.owner.id, h.a.regular.id] });
      const q = await h.project({ name: 'Error walk target', members: [h.a.owner.id, h.a.regular.id] });
      const t = await h.task(p.id, { name: 'Walk task' });
      await h.task(p.id, { name: 'Another walk task' });
      w = { h, p: { ...p, defaultStatusId: must(await h.get(`/projects/${p.id}`), 200, 'project').defaultStatusId }, q, t, limited, gadgets, http: { port: (server.address() as AddressInfo).port }, ports, reported };
    });
    afterAll(async () => {
      server?.closeAllConnections();
      await new Promise((resolve) => server?.close(resolve));
      // The extra APIs share the harness's store: closing the harness closes it once.
      await w?.h.close();
    });

    it('each code of the error registry is answered to a real request, with the registry\'s status, as code and type; the table and the registry hold the same codes', async () => {
      const registered = Object.keys(errorCodes).sort();
      const problems: string[] = [];
      const order = [...registered.filter((c) => !LAST.includes(c)), ...LAST.filter((c) => registered.includes(c))];
      for (const code of order) {
        const c = PROVOKE[code];
        if (!c) {
          problems.push(`${code}: no request in the table provokes it`);
          continue;
        }
        const status = errorCodes[code as keyof typeof errorCodes].status;
        let r: Reply;
        try {
          r = await c.provoke(w);
        } catch (err) {
          problems.push(`${code}: the request could not be made: ${(err as Error).message}`);
          continue;
        }
        if (r.status !== status || r.body?.code !== code || r.body?.type !== code) {
          problems.push(`${code}: expected ${status} ${code}, got ${r.status} ${JSON.stringify(r.body)?.slice(0, 300)}`);
          continue;
        }
        // Every problem body is RFC 7807 with the spec's fields (spec "Errors").
        const missing = ['type', 'title', 'status', 'detail', 'instance', 'code', 'requestId', 'docsUrl'].filter((k) => !(k in r.body));
        if (missing.length || r.body.status !== status || r.body.title !== errorCodes[code as keyof typeof errorCodes].title) {
          problems.push(`${code}: the problem body lacks ${missing.join(', ') || 'its registry status or title'}: ${JSON.stringify(r.body).slice(0, 300)}`);
        }
      }
      for (const code of Object.keys(PROVOKE)) if (!registered.includes(code)) problems.push(`${code}: in the table but not in the error registry`);
      expect(problems, problems.join('\n')).toEqual([]);
      expect(Object.keys(PROVOKE).sort()).toEqual(registered);
      // The last-resort answers were reported to the operator (onError).
      expect(w.reported.length).toBeGreaterThanOrEqual(2);
    }, 60_000);
  });
}
