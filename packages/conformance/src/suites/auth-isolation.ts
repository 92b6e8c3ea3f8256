import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { harness, type Harness, type Reply, type StoreFactory } from '../kit';

const HOUR = 60 * 60 * 1000;

/** A header of a reply, whatever the case of its name. */
function header(r: Reply, name: string): string | undefined {
  const k = Object.keys(r.headers).find((x) => x.toLowerCase() === name.toLowerCase());
  return k === undefined ? undefined : r.headers[k];
}

/** A problem body without its per-request id. */
function sansRequestId(body: Record<string, unknown>): Record<string, unknown> {
  const { requestId, ...rest } = body;
  expect(requestId).toBeTypeOf('string');
  return rest;
}

/** Every id of a list endpoint (one page of up to 200). */
async function idsOf(h: Harness, path: string, token: string): Promise<string[]> {
  const sep = path.includes('?') ? '&' : '?';
  const r = await h.get(`${path}${sep}limit=200`, { token });
  expect(r.status, `${path}: ${JSON.stringify(r.body)}`).toBe(200);
  expect(r.body.hasMore).toBe(false);
  return r.body.data.map((x: { id: string }) => x.id);
}

function expect401(r: Reply, code: string, instance = '/api/v3/tasks'): void {
  expect(r.status).toBe(401);
  expect(r.body.code).toBe(code);
  expect(r.body.type).toBe(code);
  expect(r.body.status).toBe(401);
  expect(r.body.instance).toBe(instance);
  expect(r.body.docsUrl).toMatch(new RegExp(`/errors/${code}$`));
  expect(header(r, 'content-type')).toMatch(/^application\/json/);
  expect(header(r, 'www-authenticate'), 'a 401 carries WWW-Authenticate').toMatch(/^Bearer\b/);
}

function expect403(r: Reply, missing: string[]): void {
  expect(r.status, JSON.stringify(r.body)).toBe(403);
  expect(r.body.code).toBe('permission_denied');
  expect(r.body.missingPermissions).toEqual(missing);
}

function expect404(r: Reply, code = 'resource_not_found'): void {
  expect(r.status, JSON.stringify(r.body)).toBe(404);
  expect(r.body.code).toBe(code);
}

export function authIsolationSuite(factory: StoreFactory): void {
  describe(`[${factory.name}] v3 Authentication rules 1, 4 and 6: credentials and 401 codes`, () => {
    let h: Harness;
    const unknownToken = `svc_user_${'Q'.repeat(12)}_${'z'.repeat(40)}`;
    beforeAll(async () => {
      h = await harness(factory);
    });
    afterAll(() => h.close());

    it('accepts a valid bearer token', async () => {
      const r = await h.get('/tasks');
      expect(r.status).toBe(200);
      expect(Array.isArray(r.body.data)).toBe(true);
    });

    it('no Authorization header: 401 unauthorized with WWW-Authenticate', async () => {
      const r = await h.get('/tasks', { token: null });
      expect401(r, 'unauthorized');
    });

    it('a non-Bearer scheme is 401 unauthorized, even carrying a valid token', async () => {
      const basic = await h.get('/tasks', { token: null, headers: { authorization: `Basic ${Buffer.from(`x:${h.a.owner.token}`).toString('base64')}` } });
      expect401(basic, 'unauthorized');
      const bare = await h.get('/tasks', { token: null, headers: { authorization: h.a.owner.token } });
      expect401(bare, 'unauthorized');
      const token = await h.get('/tasks', { token: null, headers: { authorization: `Token ${h.a.owner.token}` } });
      expect401(token, 'unauthorized');
    });

    it('rule 1: a token in a query parameter or a cookie is not accepted', async () => {
      const q = await h.get(`/tasks?access_token=${encodeURIComponent(h.a.owner.token)}`, { token: null });
      expect401(q, 'unauthorized');
      const cookie = await h.get('/tasks', { token: null, headers: { cookie: `access_token=${h.a.owner.token}; token=${h.a.owner.token}` } });
      expect401(cookie, 'unauthorized');
      const apiKey = await h.get('/tasks', { token: null, headers: { 'x-api-key': h.a.owner.token } });
      expect401(apiKey, 'unauthorized');
    });

    it('an unknown token (well-formed or garbage) is 401 invalid_token', async () => {
      const r = await h.get('/tasks', { token: unknownToken });
      expect401(r, 'invalid_token');
      const garbage = await h.get('/tasks', { token: 'not-a-token' });
      expect401(garbage, 'invalid_token');
      expect(sansRequestId(garbage.body)).toEqual(sansRequestId(r.body));
    });

    it('rule 6: a valid token truncated (by one character, by half) gives the same body as an unknown token', async () => {
      const tok = h.a.owner.token;
      const unknown = await h.get('/tasks', { token: unknownToken });
      const byOne = await h.get('/tasks', { token: tok.slice(0, -1) });
      const byHalf = await h.get('/tasks', { token: tok.slice(0, Math.floor(tok.length / 2)) });
      const extended = await h.get('/tasks', { token: `${tok}x` });
      for (const r of [byOne, byHalf, extended]) {
        expect401(r, 'invalid_token');
        expect(sansRequestId(r.body)).toEqual(sansRequestId(unknown.body));
        expect(header(r, 'www-authenticate')).toBe(header(unknown, 'www-authenticate'));
      }
      expect(byOne.body.requestId).not.toBe(byHalf.body.requestId);
    });

    it('a revoked token is 401 invalid_token with the unknown-token body', async () => {
      const t = await h.api.admin.issueToken(h.a.regular.id, { scopes: ['read', 'write', 'delete'] });
      expect((await h.get('/tasks', { token: t.token })).status).toBe(200);
      await h.api.admin.revokeToken(t.id);
      const r = await h.get('/tasks', { token: t.token });
      expect401(r, 'invalid_token');
      const unknown = await h.get('/tasks', { token: unknownToken });
      expect(sansRequestId(r.body)).toEqual(sansRequestId(unknown.body));
      // Other tokens of the same member keep working.
      expect((await h.get('/tasks', { token: h.a.regular.token })).status).toBe(200);
    });

    it('an expired token is 401 token_expired', async () => {
      const t = await h.api.admin.issueToken(h.a.regular.id, { scopes: ['read'], expiresAt: h.clock.now() + HOUR });
      h.clock.advance(HOUR - 1);
      expect((await h.get('/tasks', { token: t.token })).status).toBe(200);
      h.clock.advance(2);
      const r = await h.get('/tasks', { token: t.token });
      expect401(r, 'token_expired');
      // Tokens without expiry are unaffected by the clock.
      expect((await h.get('/tasks')).status).toBe(200);
    });

    it("a deactivated member's token is 401 token_owner_inactive, and works again once reactivated", async () => {
      const m = await h.api.admin.addMember(h.a.id, { name: 'Temp Worker', role: 'regular' });
      const t = await h.api.admin.issueToken(m.id, { scopes: ['read'] });
      expect((await h.get('/tasks', { token: t.token })).status).toBe(200);
      await h.api.admin.setMemberActive(m.id, false);
      const r = await h.get('/tasks', { token: t.token });
      expect401(r, 'token_owner_inactive');
      await h.api.admin.setMemberActive(m.id, true);
      expect((await h.get('/tasks', { token: t.token })).status).toBe(200);
    });

    it('a rejected credential writes nothing', async () => {
      const before = await idsOf(h, '/projects', h.a.owner.token);
      const events = (await h.outbox()).length;
      const r = await h.post('/projects', { name: 'Sneaky' }, { token: unknownToken });
      expect401(r, 'invalid_token', '/api/v3/projects');
      const none = await h.post('/projects', { name: 'Sneaky' }, { token: null });
      expect401(none, 'unauthorized', '/api/v3/projects');
      expect(await idsOf(h, '/projects', h.a.owner.token)).toEqual(before);
      expect((await h.outbox()).length).toBe(events);
    });

    it('authentication comes before routing: unknown paths answer 401 without a credential', async () => {
      const r = await h.get('/no-such-resource', { token: null });
      expect401(r, 'unauthorized', '/api/v3/no-such-resource');
    });
  });

  describe(`[${factory.name}] v3 Authentication rule 4: scopes (403 permission_denied)`, () => {
    let h: Harness;
    let projectId: string;
    let taskId: string;
    const tok = async (scopes: string[]) => (await h.api.admin.issueToken(h.a.owner.id, { scopes })).token;
    beforeAll(async () => {
      h = await harness(factory);
      projectId = (await h.project({ name: 'Scoped' })).id;
      taskId = (await h.task(projectId, { name: 'Scoped task' })).id;
    });
    afterAll(() => h.close());

    it('tasks:read reads tasks but cannot write, delete or read other resources', async () => {
      const t = await tok(['tasks:read']);
      const list = await h.get('/tasks', { token: t });
      expect(list.status).toBe(200);
      expect(list.body.data.map((x: { id: string }) => x.id)).toContain(taskId);
      expect((await h.get(`/tasks/${taskId}`, { token: t })).status).toBe(200);
      const before = await idsOf(h, '/tasks', h.a.owner.token);
      expect403(await h.post('/tasks', { name: 'Nope', projectId }, { token: t }), ['tasks:write']);
      expect(await idsOf(h, '/tasks', h.a.owner.token)).toEqual(before);
      expect403(await h.patch(`/tasks/${taskId}`, { name: 'Nope' }, { token: t }), ['tasks:write']);
      expect((await h.get(`/tasks/${taskId}`)).body.name).toBe('Scoped task');
      expect403(await h.del(`/tasks/${taskId}`, { token: t }), ['tasks:delete']);
      expect((await h.get(`/tasks/${taskId}`)).status).toBe(200);
      expect403(await h.get('/projects', { token: t }), ['projects:read']);
      expect403(await h.get(`/projects/${projectId}`, { token: t }), ['projects:read']);
    });

    it('the 403 body is a full problem body', async () => {
      const r = await h.post('/tasks', { name: 'Nope', projectId }, { token: await tok(['tasks:read']) });
      expect(r.body).toMatchObject({ type: 'permission_denied', status: 403, instance: '/api/v3/tasks', code: 'permission_denied' });
      expect(r.body.requestId).toBeTypeOf('string');
    });

    it('tasks:write implies tasks:read but not tasks:delete', async () => {
      const t = await tok(['tasks:write']);
      expect((await h.get('/tasks', { token: t })).status).toBe(200);
      expect((await h.get(`/tasks/${taskId}`, { token: t })).status).toBe(200);
      const created = await h.post('/tasks', { name: 'By writer', projectId }, { token: t });
      expect(created.status).toBe(201);
      const patched = await h.patch(`/tasks/${created.body.id}`, { name: 'By writer 2' }, { token: t });
      expect(patched.status).toBe(200);
      expect(patched.body.name).toBe('By writer 2');
      expect403(await h.del(`/tasks/${created.body.id}`, { token: t }), ['tasks:delete']);
      expect((await h.get(`/tasks/${created.body.id}`)).status).toBe(200);
      // A scope on one resource does not reach another.
      expect403(await h.post('/projects', { name: 'Via tasks scope' }, { token: t }), ['projects:write']);
    });

    it('the read macro allows GET on every resource but no write', async () => {
      const t = await tok(['read']);
      for (const p of ['/tasks', '/projects', '/portfolios', '/members', '/labels', '/statuses', '/lists', '/roles']) {
        const r = await h.get(p, { token: t });
        expect(r.status, `${p}: ${JSON.stringify(r.body)}`).toBe(200);
      }
      expect((await h.get(`/projects/${projectId}`, { token: t })).status).toBe(200);
      expect((await h.get(`/members/${h.a.owner.id}`, { token: t })).status).toBe(200);
      expect403(await h.post('/projects', { name: 'Read only' }, { token: t }), ['projects:write']);
      expect403(await h.post('/tasks', { name: 'Read only', projectId }, { token: t }), ['tasks:write']);
      expect403(await h.post('/labels', { name: 'Read only' }, { token: t }), ['labels:write']);
      expect403(await h.patch(`/projects/${projectId}`, { description: 'x' }, { token: t }), ['projects:write']);
      expect403(await h.del(`/tasks/${taskId}`, { token: t }), ['tasks:delete']);
    });

    it('the write macro allows POST, PATCH and GET but not DELETE', async () => {
      const t = await tok(['write']);
      const p = await h.post('/projects', { name: 'Written' }, { token: t });
      expect(p.status).toBe(201);
      expect((await h.get(`/projects/${p.body.id}`, { token: t })).status).toBe(200);
      expect((await h.patch(`/projects/${p.body.id}`, { description: 'ok' }, { token: t })).status).toBe(200);
      const task = await h.post('/tasks', { name: 'Written task', projectId: p.body.id }, { token: t });
      expect(task.status).toBe(201);
      expect403(await h.del(`/projects/${p.body.id}`, { token: t }), ['projects:delete']);
      expect403(await h.del(`/tasks/${task.body.id}`, { token: t }), ['tasks:delete']);
      expect((await h.get(`/projects/${p.body.id}`)).status).toBe(200);
      expect((await h.get(`/tasks/${task.body.id}`)).status).toBe(200);
    });

    it('delete (macro or tasks:delete) allows DELETE; delete alone does not imply read', async () => {
      const victim1 = await h.task(projectId, { name: 'Victim 1' });
      const victim2 = await h.task(projectId, { name: 'Victim 2' });
      const narrow = await tok(['tasks:delete']);
      const r1 = await h.del(`/tasks/${victim1.id}`, { token: narrow });
      expect(r1.status).toBe(204);
      expect((await h.get(`/tasks/${victim1.id}`)).status).toBe(404);
      expect403(await h.get('/tasks', { token: narrow }), ['tasks:read']);
      expect403(await h.del(`/projects/${projectId}`, { token: narrow }), ['projects:delete']);
      const macro = await tok(['delete']);
      expect((await h.del(`/tasks/${victim2.id}`, { token: macro })).status).toBe(204);
      expect403(await h.get(`/tasks/${taskId}`, { token: macro }), ['tasks:read']);
      expect403(await h.post('/tasks', { name: 'x', projectId }, { token: macro }), ['tasks:write']);
    });

    it('restore needs the delete scope', async () => {
      const p = await h.project({ name: 'To restore' });
      expect((await h.del(`/projects/${p.id}`)).status).toBe(204);
      const writer = await tok(['write']);
      expect403(await h.post(`/projects/${p.id}/restore`, undefined, { token: writer }), ['projects:delete']);
      expect((await h.get(`/projects/${p.id}`)).status).toBe(404);
      const readerWriter = await tok(['projects:read', 'projects:write']);
      expect403(await h.post(`/projects/${p.id}/restore`, undefined, { token: readerWriter }), ['projects:delete']);
      const deleter = await tok(['projects:delete']);
      const r = await h.post(`/projects/${p.id}/restore`, undefined, { token: deleter });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.id).toBe(p.id);
      expect((await h.get(`/projects/${p.id}`)).status).toBe(200);
    });

    it('sub-resource routes need the write scope', async () => {
      const ids = [h.a.regular.id];
      for (const scopes of [['tasks:read'], ['tasks:delete'], ['read', 'delete']]) {
        const t = await tok(scopes);
        expect403(await h.post(`/tasks/${taskId}/assignees`, { ids }, { token: t }), ['tasks:write']);
        expect403(await h.del(`/tasks/${taskId}/assignees`, { token: t, body: { ids } }), ['tasks:write']);
      }
      expect((await h.get(`/tasks/${taskId}`)).body.assignees).toEqual([]);
      const w = await tok(['tasks:write']);
      const added = await h.post(`/tasks/${taskId}/assignees`, { ids }, { token: w });
      expect(added.status, JSON.stringify(added.body)).toBe(200);
      expect(added.body.assignees).toEqual(ids);
      const removed = await h.del(`/tasks/${taskId}/assignees`, { token: w, body: { ids } });
      expect(removed.status).toBe(200);
      expect(removed.body.assignees).toEqual([]);
    });
  });

  describe(`[${factory.name}] v3 Authentication rule 3 and Errors 404: workspace isolation`, () => {
    let h: Harness;
    let tokB: string;
    const A = {} as {
      project: any; trashed: any; portfolio: any; trashedPortfolio: any; task: any; sub: any; statusId: string; labelId: string; actorId: string;
    };
    const B = {} as { project: any; task: any; labelId: string; statusId: string };
    let aIds: Set<string>;
    let snapshot: Record<string, unknown>;

    /** No A id appears anywhere in a body B received. */
    function noALeak(body: unknown): void {
      const text = JSON.stringify(body);
      for (const id of aIds) expect(text.includes(id), `A id ${id} leaked to B: ${text.slice(0, 300)}`).toBe(false);
    }

    beforeAll(async () => {
      h = await harness(factory);
      tokB = h.b.owner.token;
      A.project = await h.project({ name: 'Alpha secret' });
      A.trashed = await h.project({ name: 'Alpha trashed' });
      expect((await h.del(`/projects/${A.trashed.id}`)).status).toBe(204);
      A.portfolio = (await h.post('/portfolios', { name: 'Alpha portfolio' })).body;
      A.trashedPortfolio = (await h.post('/portfolios', { name: 'Alpha trashed portfolio' })).body;
      expect((await h.del(`/portfolios/${A.trashedPortfolio.id}`)).status).toBe(204);
      A.statusId = (await h.get(`/projects/${A.project.id}`)).body.defaultStatusId;
      A.labelId = (await h.post('/labels', { name: 'Alpha label' })).body.id;
      A.task = await h.task(A.project.id, { name: 'Alpha task', assignees: [h.a.regular.id], labels: [A.labelId] });
      A.sub = await h.task(A.project.id, { name: 'Alpha subtask', parentTaskId: A.task.id });
      A.actorId = A.project.createdByActorId;
      expect(A.actorId).toBeTypeOf('string');

      B.project = await h.project({ name: 'Beta project' }, tokB);
      B.statusId = (await h.get(`/projects/${B.project.id}`, { token: tokB })).body.defaultStatusId;
      B.labelId = (await h.post('/labels', { name: 'Beta label' }, { token: tokB })).body.id;
      B.task = await h.task(B.project.id, { name: 'Beta task', assignees: [h.b.owner.id], labels: [B.labelId] }, tokB);

      const tokA = h.a.owner.token;
      aIds = new Set<string>([
        h.a.id, h.a.generalPortfolioId, ...Object.values(h.a.roleIds), h.a.owner.id, h.a.regular.id, h.a.client.id,
        A.project.id, A.trashed.id, A.portfolio.id, A.trashedPortfolio.id, A.statusId, A.labelId, A.task.id, A.sub.id, A.actorId,
        ...(await idsOf(h, '/labels', tokA)), ...(await idsOf(h, '/statuses', tokA)), ...(await idsOf(h, '/members', tokA)),
      ]);
      snapshot = {
        project: (await h.get(`/projects/${A.project.id}`)).body,
        trashed: (await h.get('/projects?purgeAt[notNull]=true')).body.data,
        portfolio: (await h.get(`/portfolios/${A.portfolio.id}`)).body,
        task: (await h.get(`/tasks/${A.task.id}`)).body,
        sub: (await h.get(`/tasks/${A.sub.id}`)).body,
        status: (await h.get(`/statuses/${A.statusId}`)).body,
        label: (await h.get(`/labels/${A.labelId}`)).body,
        tasks: (await h.get('/tasks?limit=200')).body.data,
      };
    });
    afterAll(() => h.close());

    it("GET, PATCH and DELETE of A's tasks, projects and portfolios from B are 404 resource_not_found", async () => {
      const targets: [string, string, Record<string, unknown>][] = [
        ['tasks', A.task.id, { name: 'Pwned' }],
        ['tasks', A.sub.id, { name: 'Pwned' }],
        ['projects', A.project.id, { name: 'Pwned' }],
        ['portfolios', A.portfolio.id, { name: 'Pwned' }],
        ['portfolios', h.a.generalPortfolioId, { name: 'Pwned' }],
        ['statuses', A.statusId, { name: 'Pwned' }],
        ['labels', A.labelId, { color: '#000000' }],
      ];
      for (const [path, id, body] of targets) {
        const get = await h.get(`/${path}/${id}`, { token: tokB });
        expect404(get);
        const patch = await h.patch(`/${path}/${id}`, body, { token: tokB });
        expect404(patch);
        const del = await h.del(`/${path}/${id}`, { token: tokB });
        expect404(del);
        // Indistinguishable from an id that does not exist at all.
        const ghost = await h.get(`/${path}/Ghost0000${path.length}`, { token: tokB });
        expect404(ghost);
        expect(Object.keys(get.body).sort()).toEqual(Object.keys(ghost.body).sort());
        noALeak({ ...get.body, id: undefined, detail: undefined, instance: undefined });
      }
    });

    it("A's members and actors are 404 from B, and PATCH/DELETE on them answer as for a missing id", async () => {
      for (const id of [h.a.owner.id, h.a.regular.id, h.a.client.id]) {
        expect404(await h.get(`/members/${id}`, { token: tokB }));
        for (const method of ['PATCH', 'DELETE']) {
          const real = await h.req(method, `/members/${id}`, { token: tokB, body: method === 'PATCH' ? { name: 'x' } : undefined });
          const ghost = await h.req(method, '/members/Ghost00001', { token: tokB, body: method === 'PATCH' ? { name: 'x' } : undefined });
          expect(real.status).not.toBeLessThan(400);
          expect(real.status).toBe(ghost.status);
          expect(real.body.code).toBe(ghost.body.code);
        }
      }
      expect((await h.get(`/members/${h.b.owner.id}`, { token: tokB })).status).toBe(200);
      expect404(await h.get(`/actors/${A.actorId}`, { token: tokB }));
      expect((await h.get(`/actors/${A.actorId}`)).status).toBe(200);
      expect((await h.get(`/actors/${B.project.createdByActorId}`, { token: tokB })).status).toBe(200);
    });

    it("restore of A's trashed (or live) project or portfolio from B is 404", async () => {
      expect404(await h.post(`/projects/${A.trashed.id}/restore`, undefined, { token: tokB }));
      expect404(await h.post(`/projects/${A.project.id}/restore`, undefined, { token: tokB }));
      expect404(await h.post(`/portfolios/${A.trashedPortfolio.id}/restore`, undefined, { token: tokB }));
      expect404(await h.post(`/portfolios/${A.portfolio.id}/restore`, undefined, { token: tokB }));
      expect((await h.get(`/projects/${A.trashed.id}`)).status).toBe(404);
      expect((await h.get(`/portfolios/${A.trashedPortfolio.id}`)).status).toBe(404);
    });

    it("sub-routes: A's member ids on B's task are 404 m2m_target_not_found; B's ids on A's task are 404 resource_not_found", async () => {
      const add = await h.post(`/tasks/${B.task.id}/assignees`, { ids: [h.a.regular.id] }, { token: tokB });
      expect404(add, 'm2m_target_not_found');
      expect(add.body.missing).toEqual([h.a.regular.id]);
      const mixed = await h.post(`/tasks/${B.task.id}/subscribers`, { ids: [h.b.owner.id, h.a.owner.id] }, { token: tokB });
      expect404(mixed, 'm2m_target_not_found');
      expect(mixed.body.missing).toEqual([h.a.owner.id]);
      const label = await h.post(`/tasks/${B.task.id}/labels`, { ids: [A.labelId] }, { token: tokB });
      expect404(label, 'm2m_target_not_found');
      expect(label.body.missing).toEqual([A.labelId]);
      const del = await h.del(`/tasks/${B.task.id}/assignees`, { token: tokB, body: { ids: [h.a.regular.id] } });
      expect404(del, 'm2m_target_not_found');
      const bTask = (await h.get(`/tasks/${B.task.id}`, { token: tokB })).body;
      expect(bTask.assignees).toEqual([h.b.owner.id]);
      expect(bTask.subscribers).toEqual([]);
      expect(bTask.labels).toEqual([B.labelId]);
      expect404(await h.post(`/tasks/${A.task.id}/assignees`, { ids: [h.b.owner.id] }, { token: tokB }));
      expect404(await h.del(`/tasks/${A.task.id}/assignees`, { token: tokB, body: { ids: [h.a.regular.id] } }));
      expect404(await h.post(`/projects/${A.project.id}/members`, { ids: [h.b.owner.id] }, { token: tokB }));
    });

    it("create and update bodies naming A's ids from B are 404", async () => {
      const inA = await h.post('/tasks', { name: 'Into A', projectId: A.project.id }, { token: tokB });
      expect404(inA);
      expect(inA.body.field).toBe('projectId');
      const status = await h.post('/tasks', { name: 'A status', projectId: B.project.id, statusId: A.statusId }, { token: tokB });
      expect404(status);
      expect(status.body.field).toBe('statusId');
      const parent = await h.post('/tasks', { name: 'A parent', projectId: B.project.id, parentTaskId: A.task.id }, { token: tokB });
      expect404(parent);
      expect(parent.body.field).toBe('parentTaskId');
      const dep = await h.post('/tasks', { name: 'A dep', projectId: B.project.id, dependencyId: A.task.id }, { token: tokB });
      expect404(dep);
      expect(dep.body.field).toBe('dependencyId');
      const assignees = await h.post('/tasks', { name: 'A people', projectId: B.project.id, assignees: [h.a.owner.id] }, { token: tokB });
      expect404(assignees, 'm2m_target_not_found');
      expect(assignees.body.missing).toEqual([h.a.owner.id]);
      const portfolio = await h.post('/projects', { name: 'In A portfolio', portfolioId: A.portfolio.id }, { token: tokB });
      expect404(portfolio);
      expect(portfolio.body.field).toBe('portfolioId');
      const statusCol = await h.post('/statuses', { name: 'Col', projectId: A.project.id }, { token: tokB });
      expect404(statusCol);
      const moved = await h.patch(`/tasks/${B.task.id}`, { projectId: A.project.id }, { token: tokB });
      expect404(moved);
      expect(moved.body.field).toBe('projectId');
      const patchStatus = await h.patch(`/tasks/${B.task.id}`, { statusId: A.statusId }, { token: tokB });
      expect404(patchStatus);
      const patchLabels = await h.patch(`/tasks/${B.task.id}`, { labels: [A.labelId] }, { token: tokB });
      expect404(patchLabels, 'm2m_target_not_found');
      const bTask = (await h.get(`/tasks/${B.task.id}`, { token: tokB })).body;
      expect(bTask.projectId).toBe(B.project.id);
      expect(bTask.statusId).toBe(B.statusId);
      expect(bTask.labels).toEqual([B.labelId]);
      expect((await h.get('/tasks?limit=200', { token: tokB })).body.data.map((t: { id: string }) => t.id)).toEqual([B.task.id]);
    });

    it("B's lists never contain A's rows", async () => {
      const own: Record<string, string> = {
        '/tasks': B.task.id, '/projects': B.project.id, '/members': h.b.owner.id, '/labels': B.labelId, '/statuses': B.statusId,
        '/portfolios': h.b.generalPortfolioId, '/roles': h.b.roleIds.owner,
      };
      for (const [path, mine] of Object.entries(own)) {
        const r = await h.get(`${path}?limit=200&includeTotal=true`, { token: tokB });
        expect(r.status, path).toBe(200);
        const ids = r.body.data.map((x: { id: string }) => x.id);
        expect(ids, path).toContain(mine);
        expect(r.body.total).toBe(ids.length);
        noALeak(r.body);
      }
      const trashed = await h.get('/projects?purgeAt[notNull]=true', { token: tokB });
      expect(trashed.status).toBe(200);
      expect(trashed.body.data).toEqual([]);
      const members = await idsOf(h, '/members', tokB);
      expect(members.sort()).toEqual([h.b.owner.id, h.b.regular.id, h.b.client.id].sort());
    });

    it('filters naming A ids from B return empty pages', async () => {
      const queries = [
        `/tasks?projectId[eq]=${A.project.id}`,
        `/tasks?projectId=${A.project.id}`,
        `/tasks?projectId[in]=${A.project.id},${B.project.id}&includeTotal=true`,
        `/tasks?assigneeId[eq]=${h.a.regular.id}`,
        `/tasks?labelId[in]=${A.labelId}`,
        `/tasks?parentTaskId[eq]=${A.task.id}`,
        `/tasks?statusId[eq]=${A.statusId}`,
        `/statuses?projectId[eq]=${A.project.id}`,
        `/projects?portfolioId[eq]=${A.portfolio.id}`,
        `/projects?portfolioId[eq]=${h.a.generalPortfolioId}&purgeAt[notNull]=true`,
        '/members?name[eq]=Alpha%20Owner',
        '/projects?name[contains]=alpha',
        '/labels?name[startsWith]=Alpha',
      ];
      for (const q of queries) {
        const r = await h.get(q, { token: tokB });
        expect(r.status, `${q}: ${JSON.stringify(r.body)}`).toBe(200);
        if (q.includes('[in]=') && q.includes(B.project.id)) {
          expect(r.body.data.map((x: { id: string }) => x.id), q).toEqual([B.task.id]);
          expect(r.body.total).toBe(1);
        } else {
          expect(r.body.data, q).toEqual([]);
        }
        noALeak(r.body);
      }
      // The same filters from A do find A's rows (so the empty pages above are not vacuous).
      expect((await h.get(`/tasks?projectId[eq]=${A.project.id}`)).body.data.length).toBe(2);
      expect((await h.get(`/tasks?assigneeId[eq]=${h.a.regular.id}`)).body.data.map((x: { id: string }) => x.id)).toEqual([A.task.id]);
    });

    it('expand from B never shows A data', async () => {
      const expand = 'project,status,assignees,labels,subscribers,createdBy,createdByActor,updatedByActor,subtasks,parentTask,dependency,list';
      const one = await h.get(`/tasks/${B.task.id}?expand=${expand}`, { token: tokB });
      expect(one.status, JSON.stringify(one.body)).toBe(200);
      expect(one.body.project.id).toBe(B.project.id);
      expect(one.body.status.id).toBe(B.statusId);
      expect(one.body.assignees.map((m: { id: string }) => m.id)).toEqual([h.b.owner.id]);
      expect(one.body.labels.map((l: { id: string }) => l.id)).toEqual([B.labelId]);
      noALeak(one.body);
      const list = await h.get(`/tasks?expand=${expand}`, { token: tokB });
      expect(list.status).toBe(200);
      noALeak(list.body);
      const projects = await h.get('/projects?expand=portfolio,members,owner,createdByActor,statuses', { token: tokB });
      expect(projects.status, JSON.stringify(projects.body)).toBe(200);
      expect(projects.body.data[0].portfolio.id).toBe(h.b.generalPortfolioId);
      noALeak(projects.body);
      const members = await h.get('/members?expand=roleRecord', { token: tokB });
      expect(members.status).toBe(200);
      expect(new Set(members.body.data.map((m: { roleRecord: { id: string } }) => m.roleRecord.id))).toEqual(
        new Set([h.b.roleIds.owner, h.b.roleIds.regular, h.b.roleIds.client]),
      );
      noALeak(members.body);
    });

    it('the isolation is symmetric: A cannot reach B either', async () => {
      expect404(await h.get(`/tasks/${B.task.id}`));
      expect404(await h.get(`/projects/${B.project.id}`));
      expect404(await h.get(`/members/${h.b.owner.id}`));
      const add = await h.post(`/tasks/${A.task.id}/assignees`, { ids: [h.b.owner.id] });
      expect404(add, 'm2m_target_not_found');
      expect(add.body.missing).toEqual([h.b.owner.id]);
    });

    it("A's data is unchanged after B's attempts, and B's attempts recorded no A events", async () => {
      expect((await h.get(`/projects/${A.project.id}`)).body).toEqual(snapshot.project);
      expect((await h.get('/projects?purgeAt[notNull]=true')).body.data).toEqual(snapshot.trashed);
      expect((await h.get(`/portfolios/${A.portfolio.id}`)).body).toEqual(snapshot.portfolio);
      expect((await h.get(`/tasks/${A.task.id}`)).body).toEqual(snapshot.task);
      expect((await h.get(`/tasks/${A.sub.id}`)).body).toEqual(snapshot.sub);
      expect((await h.get(`/statuses/${A.statusId}`)).body).toEqual(snapshot.status);
      expect((await h.get(`/labels/${A.labelId}`)).body).toEqual(snapshot.label);
      expect((await h.get('/tasks?limit=200')).body.data).toEqual(snapshot.tasks);
      expect((await h.get(`/portfolios/${h.a.generalPortfolioId}`)).status).toBe(200);
      const events = await h.outbox();
      for (const e of events.filter((x) => x.teamId === h.b.id)) noALeak(e);
      for (const e of events.filter((x) => aIds.has(x.aggregateId))) expect(e.teamId).toBe(h.a.id);
    });
  });
}
