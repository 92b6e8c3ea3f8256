import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import fc from 'fast-check';
import { harness, type Harness, type StoreFactory } from '../kit';

/**
 * Issue "Hardening", done-when: a property test over every route of the
 * route table, with hostile paths, queries and bodies — lone surrogates, NUL
 * bytes, deep nesting, huge arrays, overlong filter values, bytes that are not
 * UTF-8 — sees no response ≥ 500, and no error answer over 64 KiB.
 */

const LONE = '\ud800';
const deep = (d: number) => `${'['.repeat(d)}${']'.repeat(d)}`;
const bigArray = (n: number, item: string) => `[${new Array(n).fill(item).join(',')}]`;

/** Raw bodies no generator would stumble on by chance. */
const HOSTILE_RAW: string[] = [
  deep(40),
  deep(200_000),
  `{"ids":${deep(50)}}`,
  `{"name":"x","members":${bigArray(200_000, '"m0000000001"')}}`,
  `{"ids":${bigArray(5_000, '"m0000000001"')}}`,
  `{"scopes":${bigArray(300_000, '"x"')},"name":"n"}`,
  `{${Array.from({ length: 5_000 }, (_, i) => `"k${i}":1`).join(',')}}`,
  '{"name":"\\ud800"}',
  '{"name":"\\udfff","\\ud800":1}',
  '{"ids":["\\ud800"]}',
  '{"name":"a\\u0000b"}',
  '{"\\u0000":1}',
  `{"name":"${'x'.repeat(1_000_000)}"}`,
  '{"customFields":[{"customFieldId":"\\ud800","value":"\\u0000"}]}',
  '{"events":["\\ud800.*"],"url":"https://[::7f00:1]/x"}',
  '{"url":"https://[::ffff:127.0.0.1]/x","events":["*"]}',
  '{"expectedUpdatedAt":"\\ud800"}',
  '[1,2',
  '{"a":1}}',
  '"\\ud800"',
];

/** Query values aimed at the list parser and the stores' LIKE and IN handling. */
const HOSTILE_QUERY: string[] = [
  `name[contains]=${'%25'.repeat(2000)}`,
  `name[startsWith]=${'_'.repeat(1100)}`,
  `name[eq]=${'x'.repeat(1025)}`,
  `name[contains]=${'\\'.repeat(1024)}`,
  `projectId[in]=${Array.from({ length: 250 }, (_, i) => `p${i}`).join(',')}`,
  `projectId[in]=${'a,'.repeat(199)}${'b'.repeat(1500)}`,
  'name[eq]=%00',
  'name[contains]=%ED%A0%80',
  'name[eq]=%F0%9F',
  `expand=${'project.'.repeat(400)}`,
  `fields[tasks]=${'name,'.repeat(2000)}`,
  `cursor=${'A'.repeat(8000)}`,
  `sort=${'-'.repeat(3000)}name`,
  'limit=99999999999999999999999',
  `createdAt[gt]=${'9'.repeat(500)}`,
  `q=${'ab'.repeat(3000)}`,
  `x=${'y'.repeat(20_000)}`,
];

export function fuzzRoutesSuite(factory: StoreFactory): void {
  describe(`[${factory.name}] v3 Errors: no input reaches a 500 on any route (property, hostile input)`, () => {
    let h: Harness;
    const realIds: Record<string, string> = {};
    beforeAll(async () => {
      // Test deliveries need a sender; this one answers without connecting anywhere.
      h = await harness(factory, { api: () => ({ webhookSender: async () => ({ ok: true, status: 200, durationMs: 1, error: null }) }) });
      const p = await h.project();
      const t = await h.task(p.id);
      realIds.projects = p.id;
      realIds.tasks = t.id;
      realIds.portfolios = (await h.post('/portfolios', { name: 'Fuzz' })).body.id;
      realIds.statuses = (await h.post('/statuses', { name: 'S', projectId: p.id })).body.id;
      realIds.lists = (await h.post('/lists', { name: 'L', projectId: p.id })).body.id;
      realIds.milestones = realIds.lists!;
      realIds.labels = (await h.post('/labels', { name: 'Lab' })).body.id;
      realIds.roles = (await h.post('/roles', { name: 'Fuzzers', permissions: ['tasks:read'] })).body.id;
      realIds.members = h.a.regular.id;
      realIds.actors = t.createdByActorId as string;
      realIds.webhooks = (await h.post('/webhooks', { url: 'https://hooks.invalid/fuzz' })).body.id;
      realIds['personal-access-tokens'] = (await h.post('/personal-access-tokens', { name: 'f', scopes: ['read'] })).body.id;
      for (const [k, v] of Object.entries(realIds)) if (typeof v !== 'string') throw new Error(`fuzz setup: no ${k} id`);
    });
    afterAll(() => h.close());

    it('every route of the table, with hostile ids, queries and bodies', async () => {
      const routes = h.api.routes();
      expect(routes.length).toBeGreaterThan(40);
      const route = fc.constantFrom(...routes);
      const id = fc.oneof(
        fc.constant('REAL'),
        fc.constantFrom('zz0000000000', '%00', 'a%00b', '%ED%A0%80', '%C0%AF', 'x'.repeat(300), 'a%2Fb', '%', '..', 'bad-id', 'ABC!_0'),
      );
      const value = fc.oneof(
        fc.jsonValue({ maxDepth: 3 }),
        fc.constantFrom(LONE, `a${LONE}b`, '\u0000', 'x'.repeat(5000), '', '2026-03-01T09:00:00.000Z', -1, 1e308, null),
        fc.array(fc.constantFrom('m0000000001', LONE, '\u0000', 7), { maxLength: 160 }),
      );
      const field = fc.oneof(
        fc.constantFrom('name', 'ids', 'projectId', 'members', 'assignees', 'labels', 'subscribers', 'hiddenFor', 'scopes', 'events', 'url',
          'permissions', 'customFields', 'expiresAt', 'expectedUpdatedAt', 'isMilestone', 'start', 'end', 'color', 'order', 'active', 'apiVersion'),
        fc.constantFrom(LONE, '\u0000', '__proto__', 'constructor', 'x'.repeat(300)),
      );
      const body = fc.oneof(
        { weight: 3, arbitrary: fc.dictionary(field, value, { maxKeys: 5 }).map((o) => JSON.stringify(o)) },
        { weight: 2, arbitrary: fc.constantFrom(...HOSTILE_RAW) },
        { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)) },
        { weight: 1, arbitrary: fc.constant(undefined) },
      );
      const query = fc.array(fc.oneof(fc.constantFrom(...HOSTILE_QUERY), fc.constantFrom('limit=5', 'expand=project', 'includeTotal=true')), { maxLength: 2 });
      const utf8Broken = fc.boolean();

      await fc.assert(
        fc.asyncProperty(route, id, body, query, utf8Broken, async (r, idChoice, raw, q, broken) => {
          const collection = r.path.split('/')[1]!;
          const idText = idChoice === 'REAL' ? realIds[collection] ?? 'zz0000000000' : idChoice;
          const url = `/api/v3${r.path.replace('{id}', idText)}${q.length ? `?${q.join('&')}` : ''}`;
          let bytes: Buffer | undefined = raw === undefined ? undefined : Buffer.from(raw);
          if (bytes && broken) bytes = Buffer.concat([bytes.subarray(0, 1), Buffer.from([0xed, 0xa0, 0x80, 0xff]), bytes.subarray(1)]);
          const res = await h.api.handle({
            method: r.method, url, body: bytes, remoteAddress: '127.0.0.1',
            headers: { authorization: `Bearer ${h.a.owner.token}`, 'content-type': 'application/json' },
          });
          const what = `${r.method} ${url.slice(0, 300)} ${raw?.slice(0, 300)}`;
          expect(res.status, `${what} → ${res.body?.slice(0, 500)}`).toBeLessThan(500);
          if (res.status >= 400) {
            expect(Buffer.byteLength(res.body ?? ''), what).toBeLessThan(64 * 1024);
            expect(JSON.parse(res.body as string).code, what).toBeTypeOf('string');
          }
        }),
        { numRuns: 400 },
      );
    });
  });
}
