import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { harness, type Harness, type Reply, type StoreFactory } from '../kit';

/**
 * Issue "Hardening": the work a request causes is bounded by the rules, not by
 * what the client sends; bad input never reaches a 500 and never writes half a
 * change; and the spec's permission and event rules hold exactly.
 */

const JSON_CT = { 'content-type': 'application/json' };
/** No error answer may be larger than this (issue target). */
const ANSWER_MAX = 64 * 1024;

function size(r: Reply): number {
  return r.body === undefined ? 0 : Buffer.byteLength(JSON.stringify(r.body));
}

function expectProblem(r: Reply, status: number, code: string): void {
  expect({ status: r.status, code: r.body?.code }, JSON.stringify(r.body).slice(0, 2000)).toEqual({ status, code });
  expect(size(r)).toBeLessThan(ANSWER_MAX);
}

/** A JSON array of `n` copies of a JSON value, as raw text. */
function arrayOf(n: number, item: string): string {
  return `[${new Array(n).fill(item).join(',')}]`;
}

export function hardeningInputSuite(factory: StoreFactory): void {
  describe(`[${factory.name}] v3 Errors: validation_failed stays small whatever the body holds (amplification)`, () => {
    let h: Harness;
    beforeAll(async () => {
      h = await harness(factory);
    });
    afterAll(() => h.close());

    it('a million invalid scopes in POST /personal-access-tokens: one small error, no token', async () => {
      const count = async () => (await h.get('/personal-access-tokens', { token: h.a.client.token })).body.data.length;
      const before = await count();
      const raw = `{"name":"x","scopes":${arrayOf(1_000_000, '"x"')}}`;
      const r = await h.req('POST', '/personal-access-tokens', { raw, headers: JSON_CT, token: h.a.client.token });
      expectProblem(r, 400, 'validation_failed');
      expect(r.body.errors).toHaveLength(1);
      expect(r.body.errors[0]).toMatchObject({ field: 'scopes', code: 'too_big' });
      expect(await count()).toBe(before);
    });

    it('more scopes than the catalog has is refused before any element is read', async () => {
      const raw = `{"name":"x","scopes":${arrayOf(900, '"nope"')}}`;
      const r = await h.req('POST', '/personal-access-tokens', { raw, headers: JSON_CT });
      expectProblem(r, 400, 'validation_failed');
      expect(r.body.errors).toEqual([expect.objectContaining({ field: 'scopes', code: 'too_big' })]);
    });

    it('errors[] holds at most 50 entries and counts the rest in errorsOmitted', async () => {
      const body: Record<string, number> = {};
      for (let i = 0; i < 900; i++) body[`k${i}`] = 1;
      const r = await h.post('/portfolios', { name: 'ok', ...body });
      expectProblem(r, 400, 'validation_failed');
      expect(r.body.errors).toHaveLength(50);
      expect(r.body.errorsOmitted).toBe(850);
      expect(r.body.errors[0]).toMatchObject({ field: 'k0', code: 'unrecognized_key' });
    });

    it('a JSON null create body is not an object: 400, nothing written; no body at all creates with the defaults', async () => {
      const r = await h.req('POST', '/presence-statuses', { raw: 'null', headers: JSON_CT });
      expectProblem(r, 400, 'validation_failed');
      expect(r.body.errors[0]).toMatchObject({ field: '', code: 'invalid_type' });
      expect((await h.get('/presence-statuses')).body.data).toEqual([]);
      const empty = await h.req('POST', '/presence-statuses', {});
      expect(empty.status, JSON.stringify(empty.body)).toBe(201);
    });

    it('an object with more than 1000 keys is refused without walking them', async () => {
      const keys = Array.from({ length: 358_000 }, (_, i) => `"k${i}":1`).join(',');
      const r = await h.req('POST', '/tasks', { raw: `{${keys}}`, headers: JSON_CT });
      expectProblem(r, 400, 'validation_failed');
      expect(r.body.errors).toEqual([expect.objectContaining({ field: '', code: 'too_many_keys' })]);
    });

    it('a body holding more than 100,000 values is refused', async () => {
      const inner = arrayOf(500, '1');
      const r = await h.req('POST', '/projects', { raw: `{"name":"x","customFields":${arrayOf(300, inner)}}`, headers: JSON_CT });
      expectProblem(r, 400, 'validation_failed');
      expect(r.body.errors[0].code).toBe('too_many_values');
    });

    it('a long unknown key is echoed cut short', async () => {
      const r = await h.post('/labels', { name: 'l', ['k'.repeat(1_000_000)]: 1 });
      expectProblem(r, 400, 'validation_failed');
      expect(size(r)).toBeLessThan(4096);
    });
  });

  describe(`[${factory.name}] v3 Errors: deep JSON is refused before a full parse (validation_failed)`, () => {
    let h: Harness;
    beforeAll(async () => {
      h = await harness(factory);
    });
    afterAll(() => h.close());

    it('4 MB of brackets nested 2,000,000 deep', async () => {
      const raw = `${'['.repeat(2_000_000)}${']'.repeat(2_000_000)}`;
      const r = await h.req('POST', '/tasks', { raw, headers: JSON_CT });
      expectProblem(r, 400, 'validation_failed');
      expect(r.body.errors[0].code).toBe('too_deep');
    });

    it('33 levels are refused, 32 are not refused for depth (small and large bodies alike)', async () => {
      const nest = (d: number, pad = '') => `{"name":"x","description":"${pad}","customFields":${'['.repeat(d - 1)}${']'.repeat(d - 1)}}`;
      for (const pad of ['', 'p'.repeat(5000)]) {
        const deep = await h.req('POST', '/portfolios', { raw: nest(33, pad), headers: JSON_CT });
        expectProblem(deep, 400, 'validation_failed');
        expect(deep.body.errors[0].code, pad.length ? 'scanned' : 'small').toBe('too_deep');
        const ok = await h.req('POST', '/portfolios', { raw: nest(32, pad), headers: JSON_CT });
        expect(ok.status).toBe(400);
        expect(ok.body.errors[0].code).not.toBe('too_deep');
      }
    });
  });

  describe(`[${factory.name}] v3 Errors: ill-formed Unicode is refused with validation_failed naming the field`, () => {
    let h: Harness;
    let projectId: string;
    beforeAll(async () => {
      h = await harness(factory);
      projectId = (await h.project()).id;
    });
    afterAll(() => h.close());

    const lone = '"\\ud800"';
    const creates: Array<[string, (name: string) => string, string]> = [
      ['/labels', (n) => `{"name":${n}}`, 'name'],
      ['/roles', (n) => `{"name":${n}}`, 'name'],
      ['/portfolios', (n) => `{"name":${n}}`, 'name'],
      ['/projects', (n) => `{"name":${n}}`, 'name'],
      ['/tasks', (n) => `{"name":"t","projectId":"PID","description":${n}}`, 'description'],
      ['/statuses', (n) => `{"name":${n},"projectId":"PID"}`, 'name'],
      ['/lists', (n) => `{"name":${n},"projectId":"PID"}`, 'name'],
      ['/webhooks', (n) => `{"name":${n},"url":"https://hooks.invalid/x"}`, 'name'],
      ['/projects', (n) => `{"name":"cf","customFields":[{"customFieldId":"abc","value":${n}}]}`, 'customFields[0].value'],
    ];

    for (const [path, body, field] of creates) {
      it(`POST ${path}: a lone surrogate in ${field}`, async () => {
        const before = await h.outbox();
        const r = await h.req('POST', path, { raw: body(lone).replace('PID', projectId), headers: JSON_CT });
        expectProblem(r, 400, 'validation_failed');
        expect(r.body.errors[0]).toMatchObject({ field, code: 'ill_formed_unicode' });
        expect(await h.outbox()).toHaveLength(before.length);
      });
    }

    it('a lone low surrogate, and one in an object key, are refused too', async () => {
      const low = await h.req('POST', '/labels', { raw: '{"name":"a\\udc00b"}', headers: JSON_CT });
      expect(low.body.errors[0]).toMatchObject({ field: 'name', code: 'ill_formed_unicode' });
      const key = await h.req('POST', '/labels', { raw: '{"name":"n","\\ud83d":1}', headers: JSON_CT });
      expectProblem(key, 400, 'validation_failed');
      expect(key.body.errors[0].code).toBe('ill_formed_unicode');
    });

    it('a well-formed pair (an emoji) is stored and read back unchanged', async () => {
      const r = await h.req('POST', '/labels', { raw: '{"name":"ok \\ud83d\\ude00"}', headers: JSON_CT });
      expect(r.status).toBe(201);
      expect(r.body.name).toBe('ok \u{1F600}');
      expect((await h.get(`/labels/${r.body.id}`)).body.name).toBe('ok \u{1F600}');
    });

    it('bytes that are not UTF-8 are refused, not replaced', async () => {
      const raw = Buffer.concat([Buffer.from('{"name":"a'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"}')]);
      const res = await h.api.handle({
        method: 'POST', url: '/api/v3/labels', headers: { ...JSON_CT, authorization: `Bearer ${h.a.owner.token}` }, body: raw,
      });
      expect(res.status).toBe(400);
      expect(JSON.parse(res.body as string).errors[0].code).toBe('invalid_utf8');
    });

    it('NUL in a string is still refused, naming the field', async () => {
      const r = await h.req('POST', '/labels', { raw: '{"name":"a\\u0000b"}', headers: JSON_CT });
      expectProblem(r, 400, 'validation_failed');
      expect(r.body.errors[0]).toMatchObject({ field: 'name', code: 'nul_character' });
    });
  });

  describe(`[${factory.name}] v3 Conventions: a malformed path id is answered exactly like an unknown one`, () => {
    let h: Harness;
    let hookId: string;
    beforeAll(async () => {
      // Test deliveries need a sender; this one answers without connecting anywhere.
      h = await harness(factory, { api: () => ({ webhookSender: async () => ({ ok: true, status: 200, durationMs: 1, error: null }) }) });
      hookId = (await h.post('/webhooks', { url: 'https://hooks.invalid/x' })).body.id;
    });
    afterAll(() => h.close());

    const shape = (r: Reply) => ({ status: r.status, code: r.body?.code, keys: Object.keys(r.body ?? {}).sort() });
    const bad = ['%00', 'a%00b', 'bad-id', 'x'.repeat(65), '%ED%A0%80', '%C3%A9'];

    const routes: Array<[string, (id: string) => string, unknown?]> = [
      ['GET', (id) => `/personal-access-tokens/${id}`],
      ['PATCH', (id) => `/personal-access-tokens/${id}`, { name: 'n' }],
      ['DELETE', (id) => `/personal-access-tokens/${id}`],
      ['POST', (id) => `/webhooks/${id}/rotate-secret`],
      ['POST', (id) => `/webhooks/${id}/test`],
      ['GET', (id) => `/webhooks/${id}/deliveries`],
      ['GET', (id) => `/tasks/${id}`],
      ['PATCH', (id) => `/projects/${id}`, { name: 'n' }],
      ['DELETE', (id) => `/portfolios/${id}`],
      ['POST', (id) => `/projects/${id}/restore`],
      ['POST', (id) => `/tasks/${id}/assignees`, { ids: ['x'] }],
      ['GET', (id) => `/actors/${id}`],
    ];

    for (const [method, path, body] of routes) {
      it(`${method} ${path('{id}')}`, async () => {
        const unknown = await h.req(method, path('zz0000000000'), { body });
        expect(unknown.status).toBe(404);
        for (const id of bad) {
          const r = await h.req(method, path(id), { body });
          expect(shape(r), `${method} ${path(id)}`).toEqual(shape(unknown));
        }
      });
    }

    it('with a token lacking the scope, a malformed id is refused like an unknown one (403 first)', async () => {
      const { token } = await h.api.admin.issueToken(h.a.owner.id, { scopes: ['tasks:read'] });
      const unknown = await h.req('PATCH', '/personal-access-tokens/zz0000000000', { token, body: { name: 'x' } });
      const malformed = await h.req('PATCH', '/personal-access-tokens/%00', { token, body: { name: 'x' } });
      expect(unknown.status).toBe(403);
      expect(shape(malformed)).toEqual(shape(unknown));
    });

    it('a real webhook id still works on the same routes', async () => {
      expect((await h.post(`/webhooks/${hookId}/rotate-secret`)).status).toBe(200);
    });

    it('Standard operations rule 13: test and rotate-secret take no body; one with keys is refused and changes nothing', async () => {
      const before = (await h.post(`/webhooks/${hookId}/rotate-secret`, {})).body.secret;
      expect(before).toMatch(/^whsec_/);
      for (const path of [`/webhooks/${hookId}/rotate-secret`, `/webhooks/${hookId}/test`]) {
        const r = await h.post(path, { secret: 'mine', notAField: 1 });
        expectProblem(r, 400, 'validation_failed');
        expect(r.body.errors.map((e: any) => e.field).sort()).toEqual(['notAField', 'secret']);
        expectProblem(await h.req('POST', path, { raw: '[1]', headers: JSON_CT }), 400, 'validation_failed');
      }
      const again = await h.post(`/webhooks/${hookId}/rotate-secret`);
      expect(again.status).toBe(200);
      expect(again.body.secret).not.toBe(before);
    });
  });

  describe(`[${factory.name}] v3 Standard operations: the query is parsed at the edge, before any transaction`, () => {
    let h: Harness;
    let projectId: string;
    beforeAll(async () => {
      h = await harness(factory);
      projectId = (await h.project()).id;
    });
    afterAll(() => h.close());

    it('a write with a bad query touches no storage beyond authentication (no idempotency claim, no insert)', async () => {
      for (const q of ['expand=nope', 'fields[tasks]=nope', 'bogus=1']) {
        const sqls = await h.countQueries(async () => {
          const r = await h.post(`/tasks?${q}`, { name: 't', projectId }, { headers: { 'idempotency-key': `edge-${q}` } });
          expect(r.status, q).toBe(400);
        });
        expect(sqls.filter((s) => /idempotency_keys|insert into "tasks"|insert into "outbox"/i.test(s)), q).toEqual([]);
      }
    });
  });

  describe(`[${factory.name}] v3 Authentication rule 1: exactly one Authorization header`, () => {
    let h: Harness;
    beforeAll(async () => {
      h = await harness(factory);
    });
    afterAll(() => h.close());

    it('two Authorization headers are refused with 401, never resolved by using the first', async () => {
      for (const pair of [[h.a.owner.token, h.b.owner.token], [h.a.owner.token, h.a.owner.token], [h.a.owner.token, 'nope']]) {
        const res = await h.api.handle({
          method: 'GET', url: '/api/v3/projects', remoteAddress: '127.0.0.1',
          headers: { authorization: pair.map((t) => `Bearer ${t}`) },
        });
        expect(res.status).toBe(401);
        expect(JSON.parse(res.body as string).code).toBe('unauthorized');
        expect(res.headers['WWW-Authenticate'] ?? res.headers['www-authenticate']).toBe('Bearer');
      }
      const one = await h.api.handle({ method: 'GET', url: '/api/v3/projects', headers: { authorization: [`Bearer ${h.a.owner.token}`] } });
      expect(one.status).toBe(200);
    });
  });

  describe(`[${factory.name}] v3 Standard operations rule 7: filter values and in-lists are bounded (invalid_query_param)`, () => {
    let h: Harness;
    beforeAll(async () => {
      h = await harness(factory);
      await h.project({ name: 'Bounded' });
    });
    afterAll(() => h.close());

    for (const op of ['contains', 'startsWith', 'eq']) {
      it(`name[${op}] over 1024 characters (LIKE patterns past SQLite's limit included)`, async () => {
        for (const v of ['%'.repeat(1500), 'x'.repeat(1025), 'é'.repeat(1025)]) {
          const r = await h.get(`/projects?name[${op}]=${encodeURIComponent(v)}`);
          expectProblem(r, 400, 'invalid_query_param');
          expect(r.body.name).toBe(`name[${op}]`);
          expect(r.body.allowed).toBeTruthy();
        }
        const edge = await h.get(`/projects?name[${op}]=${encodeURIComponent('%_\\'.repeat(341))}`);
        expect(edge.status).toBe(200);
      });
    }

    it('an in-list over 200 values, or with an overlong value', async () => {
      const many = Array.from({ length: 201 }, (_, i) => `id${i}`).join(',');
      const r = await h.get(`/tasks?projectId[in]=${many}`);
      expectProblem(r, 400, 'invalid_query_param');
      expect(r.body.name).toBe('projectId[in]');
      const long = await h.get(`/tasks?projectId[in]=a,${'b'.repeat(2000)}`);
      expectProblem(long, 400, 'invalid_query_param');
      expect((await h.get(`/tasks?projectId[in]=${many.split(',').slice(0, 200).join(',')}`)).status).toBe(200);
    });

    it('a query string past 16 KiB is refused as a whole (a LIKE pattern past SQLite\'s 50,000-byte limit never reaches it)', async () => {
      for (const q of [`expand=${'a'.repeat(20_000)}`, `name[contains]=${'%25'.repeat(30_000)}`, `name[startsWith]=${'x'.repeat(60_000)}`]) {
        const r = await h.get(`/projects?${q}`);
        expectProblem(r, 400, 'invalid_query_param');
      }
    });
  });

  describe(`[${factory.name}] v3 Events "Body envelope": a removal payload is the resource as it now is`, () => {
    let h: Harness;
    beforeAll(async () => {
      h = await harness(factory);
    });
    afterAll(() => h.close());

    const cases: Array<[string, string, () => Promise<string>]> = [
      ['portfolio', '/portfolios', async () => (await h.post('/portfolios', { name: 'Doomed' })).body.id],
      ['project', '/projects', async () => (await h.project()).id],
      ['webhook', '/webhooks', async () => (await h.post('/webhooks', { url: 'https://hooks.invalid/d' })).body.id],
    ];
    for (const [name, path, make] of cases) {
      it(`${name}.removed carries purgeAt and deletedById as a read of the trashed row shows them`, async () => {
        const id = await make();
        expect((await h.del(`${path}/${id}`)).status).toBe(204);
        const trashed = (await h.get(`${path}?purgeAt[notNull]=true&limit=200`)).body.data.find((x: any) => x.id === id);
        expect(trashed.purgeAt).not.toBeNull();
        expect(trashed.deletedById).toBe(h.a.owner.id);
        const ev = (await h.outbox()).filter((e) => e.type === `${name}.removed` && e.aggregateId === id);
        expect(ev).toHaveLength(1);
        expect(ev[0].payload[name]).toEqual(trashed);
      });
    }

    it('a hard-deleted resource (task) carries its last state', async () => {
      const p = await h.project();
      const t = await h.task(p.id, { name: 'Gone' });
      await h.del(`/tasks/${t.id}`);
      const ev = (await h.outbox()).filter((e) => e.type === 'task.removed' && e.aggregateId === t.id);
      expect(ev[0].payload.task).toMatchObject({ id: t.id, name: 'Gone' });
    });
  });

  describe(`[${factory.name}] v3 Limits "bulk write / sub-resource batch: 150 items"`, () => {
    let h: Harness;
    let p: any;
    let t: any;
    let list: any;
    let status: any;
    let portfolio: any;
    beforeAll(async () => {
      h = await harness(factory);
      p = await h.project();
      t = await h.task(p.id);
      list = (await h.post('/lists', { name: 'L', projectId: p.id })).body;
      status = (await h.post('/statuses', { name: 'S', projectId: p.id })).body;
      portfolio = (await h.post('/portfolios', { name: 'Pf' })).body;
    });
    afterAll(() => h.close());

    const ids = (n: number) => Array.from({ length: n }, (_, i) => `m${String(i).padStart(8, '0')}`);

    it('every replace-the-set array over 150 answers bulk_too_large, before its elements are read', async () => {
      const targets: Array<[string, string, string]> = [
        ['PATCH', `/portfolios/${portfolio.id}`, 'members'],
        ['PATCH', `/projects/${p.id}`, 'members'],
        ['PATCH', `/tasks/${t.id}`, 'assignees'],
        ['PATCH', `/tasks/${t.id}`, 'labels'],
        ['PATCH', `/tasks/${t.id}`, 'subscribers'],
        ['PATCH', `/lists/${list.id}`, 'assignees'],
        ['PATCH', `/lists/${list.id}`, 'hiddenFor'],
        ['PATCH', `/statuses/${status.id}`, 'assignees'],
        ['PATCH', `/statuses/${status.id}`, 'hiddenFor'],
        ['POST', '/portfolios', 'members'],
        ['POST', '/tasks', 'assignees'],
      ];
      for (const [method, path, field] of targets) {
        const base = method === 'POST' ? { name: 'x', ...(path === '/tasks' ? { projectId: p.id } : {}) } : {};
        for (const [n, item] of [[151, null], [5000, null], [2000, 42]] as Array<[number, number | null]>) {
          const body = { ...base, [field]: item === null ? ids(n) : new Array(n).fill(item) };
          const r = await h.req(method, path, { body });
          expectProblem(r, 400, 'bulk_too_large');
          expect(r.body, `${method} ${path} ${field} ${n}`).toMatchObject({ field, max: 150, received: n });
        }
      }
    });

    it('150 is still accepted as far as the limit goes (unknown ids are then 404 m2m_target_not_found)', async () => {
      const r = await h.patch(`/tasks/${t.id}`, { assignees: ids(150) });
      expectProblem(r, 404, 'm2m_target_not_found');
    });

    it('sub-resource ids over the endpoint maximum answer batch_too_large (max, received)', async () => {
      for (const n of [151, 5000]) {
        const r = await h.post(`/tasks/${t.id}/assignees`, { ids: ids(n) });
        expectProblem(r, 400, 'batch_too_large');
        expect(r.body).toMatchObject({ max: 150, received: n });
        const del = await h.req('DELETE', `/portfolios/${portfolio.id}/members`, { body: { ids: new Array(n).fill(7) } });
        expectProblem(del, 400, 'batch_too_large');
      }
    });

    it('Standard operations rule 13: a sub-resource body with another key is refused (validated exactly)', async () => {
      const r = await h.post(`/tasks/${t.id}/assignees`, { ids: [h.a.regular.id], notAField: 1 });
      expectProblem(r, 400, 'validation_failed');
      expect(r.body.errors).toEqual([expect.objectContaining({ field: 'notAField', code: 'unrecognized_key' })]);
      expect((await h.get(`/tasks/${t.id}`)).body.assignees).toEqual([]);
      const arr = await h.req('POST', `/tasks/${t.id}/assignees`, { body: [h.a.regular.id] });
      expectProblem(arr, 400, 'validation_failed');
      const ok = await h.post(`/tasks/${t.id}/assignees`, { ids: [h.a.regular.id] });
      expect(ok.status).toBe(200);
      expect(ok.body.assignees).toEqual([h.a.regular.id]);
    });
  });
}
