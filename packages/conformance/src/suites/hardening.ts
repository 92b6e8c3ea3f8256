import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { builtinResources } from '@pmapi/core';
import { harness, type Harness, type StoreFactory } from '../kit';

/** Bad input never reaches a 500; scopes hold through expand; review findings stay fixed. */
export function hardeningSuite(factory: StoreFactory): void {
  describe(`[${factory.name}] v3 Errors: inherited JavaScript names are plain unknown names`, () => {
    let h: Harness;
    let taskId: string;
    beforeAll(async () => {
      h = await harness(factory);
      const p = await h.project();
      taskId = (await h.task(p.id)).id;
    });
    afterAll(() => h.close());

    for (const name of ['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf']) {
      it(`'${name}' as a filter, a list parameter, an expand hop, a field selector and a relation`, async () => {
        expect((await h.get(`/tasks?${name}[eq]=x`)).body.code).toBe('invalid_query_param');
        expect((await h.get(`/tasks?${name}=x`)).body.code).toBe('invalid_query_param');
        expect((await h.get(`/tasks?expand=${name}`)).body.code).toBe('expand_unknown_relation');
        expect((await h.get(`/tasks?expand=project.${name}`)).body.code).toBe('expand_unknown_relation');
        expect((await h.get(`/tasks?fields[tasks]=${name}`)).body.code).toBe('invalid_field_selector');
        expect((await h.get(`/tasks?fields[${name}]=name`)).body.code).toBe('invalid_field_selector');
        expect((await h.post(`/tasks/${taskId}/${name}`, { ids: ['x'] })).body.code).toBe('m2m_relation_unknown');
        expect((await h.get(`/tasks?sort=${name}`)).body.code).toBe('sort_field_invalid');
        expect((await h.get(`/${name}`)).body.code).toBe('resource_unknown');
      });
    }

    it('a deeply nested body is a 400, with or without an Idempotency-Key', async () => {
      const deep = `${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`;
      for (const headers of [{}, { 'idempotency-key': 'deep-1' }] as Record<string, string>[]) {
        const r = await h.req('POST', '/tasks', { raw: deep, headers: { 'content-type': 'application/json', ...headers } });
        expect(r.status).toBe(400);
        expect(r.body.code).toBe('validation_failed');
        expect(r.body.errors[0].code).toBe('too_deep');
      }
    });
  });

  describe(`[${factory.name}] v3 Authentication rule 4: expand needs the target's read scope`, () => {
    let h: Harness;
    let taskId: string;
    beforeAll(async () => {
      h = await harness(factory);
      const p = await h.project();
      taskId = (await h.task(p.id, { assignees: [h.a.regular.id] })).id;
    });
    afterAll(() => h.close());

    it('tasks:read alone cannot read members or projects through expand', async () => {
      const { token } = await h.api.admin.issueToken(h.a.owner.id, { scopes: ['tasks:read'] });
      const list = await h.get('/tasks?expand=assignees', { token });
      expect(list.status).toBe(403);
      expect(list.body.code).toBe('permission_denied');
      expect(list.body.missingPermissions).toEqual(['members:read']);
      const one = await h.get(`/tasks/${taskId}?expand=project.portfolio.owner`, { token });
      expect(one.status).toBe(403);
      expect(one.body.missingPermissions.sort()).toEqual(['members:read', 'portfolios:read', 'projects:read']);
      expect((await h.get(`/tasks/${taskId}`, { token })).status).toBe(200);
    });

    it('with the target scopes the same expand works', async () => {
      const { token } = await h.api.admin.issueToken(h.a.owner.id, { scopes: ['tasks:read', 'members:read'] });
      const r = await h.get(`/tasks/${taskId}?expand=assignees`, { token });
      expect(r.status).toBe(200);
      expect(r.body.assignees[0].id).toBe(h.a.regular.id);
    });

    it('a write answer with expand needs the target scope as well, and the write is rolled back', async () => {
      const { token } = await h.api.admin.issueToken(h.a.owner.id, { scopes: ['tasks:write'] });
      const before = (await h.get(`/tasks/${taskId}`)).body;
      const r = await h.patch(`/tasks/${taskId}?expand=assignees`, { name: 'renamed' }, { token });
      expect(r.status).toBe(403);
      expect((await h.get(`/tasks/${taskId}`)).body.name).toBe(before.name);
    });
  });

  describe(`[${factory.name}] v3 resources: review regressions`, () => {
    let h: Harness;
    beforeAll(async () => {
      h = await harness(factory);
    });
    afterAll(() => h.close());

    it('image and embed URLs must be http(s) (no javascript: or data: URLs)', async () => {
      for (const icon of ['javascript:alert(1)', 'data:text/html,<script>1</script>', 'ftp://x/y.png']) {
        const r = await h.post('/portfolios', { name: `P ${icon.length}`, icon });
        expect(r.status, icon).toBe(400);
        expect(r.body.errors[0].field).toBe('icon');
      }
      expect((await h.post('/portfolios', { name: 'Iconic', icon: 'https://cdn.test/a.png' })).status).toBe(201);
      const p = await h.project();
      expect((await h.post('/tasks', { name: 't', projectId: p.id, embedUrl: 'javascript:void(0)' })).status).toBe(400);
    });

    it('a project read with GET can be sent back in a PATCH (same modules, defaultStatusId ignored)', async () => {
      const p = await h.project();
      const got = (await h.get(`/projects/${p.id}`)).body;
      const r = await h.patch(`/projects/${p.id}`, { ...got, description: 'changed' });
      expect(r.status).toBe(200);
      expect(r.body.description).toBe('changed');
      const other = await h.patch(`/projects/${p.id}`, { modules: ['tasks'] });
      expect(other.body.errors[0].code).toBe('immutable');
    });

    it('fields[projects] can select defaultStatusId, and leaving it out drops it', async () => {
      const p = await h.project();
      const only = await h.get(`/projects/${p.id}?fields[projects]=defaultStatusId`);
      expect(Object.keys(only.body).sort()).toEqual(['defaultStatusId', 'id']);
      const without = await h.get(`/projects/${p.id}?fields[projects]=name`);
      expect(without.body).not.toHaveProperty('defaultStatusId');
    });

    it('defaultStatusId finds the first active status even behind many archived ones', async () => {
      const p = await h.project();
      const first = (await h.get(`/projects/${p.id}`)).body.defaultStatusId;
      for (let i = 0; i < 55; i++) await h.post('/statuses', { name: `old ${i}`, projectId: p.id, order: i, archived: true });
      await h.patch(`/statuses/${first}`, { archived: true });
      const live = await h.post('/statuses', { name: 'Live', projectId: p.id, order: 1000 });
      expect((await h.get(`/projects/${p.id}`)).body.defaultStatusId).toBe(live.body.id);
    });

    it('sub-route ids that cannot be ids are reported missing (404 m2m_target_not_found)', async () => {
      const p = await h.project();
      const t = await h.task(p.id);
      const r = await h.post(`/tasks/${t.id}/assignees`, { ids: ['no such id', h.a.regular.id] });
      expect(r.status).toBe(404);
      expect(r.body.code).toBe('m2m_target_not_found');
      expect(r.body.missing).toEqual(['no such id']);
    });

    it('a project cannot be restored into a trashed portfolio (409 conflict)', async () => {
      const pf = (await h.post('/portfolios', { name: 'Temp' })).body;
      const p = await h.project({ portfolioId: pf.id });
      expect((await h.del(`/projects/${p.id}`)).status).toBe(204);
      expect((await h.del(`/portfolios/${pf.id}`)).status).toBe(204);
      const r = await h.post(`/projects/${p.id}/restore`);
      expect(r.status).toBe(409);
      expect(r.body.code).toBe('conflict');
      expect((await h.post(`/portfolios/${pf.id}/restore`)).status).toBe(200);
      expect((await h.post(`/projects/${p.id}/restore`)).status).toBe(200);
    });

    it('lists carry goals: an empty set is accepted, unknown goal ids answer 404 m2m_target_not_found', async () => {
      const p = await h.project();
      const ok = await h.post('/lists', { name: 'L', projectId: p.id, goals: [] });
      expect(ok.status).toBe(201);
      expect(ok.body.goals).toEqual([]);
      const no = await h.post('/lists', { name: 'L2', projectId: p.id, goals: ['g1'] });
      expect(no.status).toBe(404);
      expect(no.body.code).toBe('m2m_target_not_found');
      expect(no.body.missing).toEqual(['g1']);
    });
  });

  describe(`[${factory.name}] v3 Standard operations rule 7: every declared filter and operator runs`, () => {
    let h: Harness;
    beforeAll(async () => {
      h = await harness(factory);
      const p = await h.project();
      await h.task(p.id);
    });
    afterAll(() => h.close());

    const sample: Record<string, string> = {
      text: 'abc', number: '1', integer: '1', boolean: 'true', timestamp: '2026-01-01T00:00:00.000Z', json: 'abc',
    };
    for (const res of builtinResources) {
      if (!res.operations.list) continue;
      it(`${res.path}: each filter with each allowed operator answers 200`, async () => {
        for (const [name, f] of Object.entries(res.filters)) {
          const kind = f.relation || f.links || f.derive ? 'text' : res.fields[f.field ?? name]!.kind;
          // A calendar-date field (f.date) takes only dates YYYY-MM-DD.
          const one = !(f.relation || f.links || f.derive) && res.fields[f.field ?? name]!.calendarDate ? '2026-01-01' : sample[kind]!;
          for (const op of f.ops) {
            const v = op === 'null' || op === 'notNull' ? 'true' : op === 'in' ? `${one},${one}` : one;
            const r = await h.get(`/${res.path}?${name}[${op}]=${encodeURIComponent(v)}`);
            expect(r.status, `${res.path}?${name}[${op}] → ${JSON.stringify(r.body)}`).toBe(200);
            expect(Array.isArray(r.body.data)).toBe(true);
          }
        }
      });
    }
  });
}
