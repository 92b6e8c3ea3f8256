import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { LEGACY_ROUTES } from '@pmapi/core';
import { harness, type Harness, type Reply, type StoreFactory } from '../kit';
import { checkSchema, inferSchema, validate, type Schema } from '../golden/strict-schema';

/*
 * Golden tests of the frozen legacy v1.0 surface (issue 15 "Frozen"; second
 * document, "Legacy v1.0 endpoints", "Errors", "Versioning", and the tables of
 * "Legacy portfolio", "Legacy app", "Legacy label (tag)"; decisions in
 * docs/not-shown.md "Legacy v1.0 surface").
 *
 * For every legacy route, one success and one error are provoked and compared
 * with the route's golden file (golden/legacy/<route-slug>.json): status,
 * content type, the exact Deprecation / Sunset / Link values, and a strict
 * JSON Schema of the body (every key required, no extra keys). Any change
 * fails, naming the route and the differing path in the body.
 *
 * PMAPI_GOLDEN_RECORD=1 (re)writes the golden files from the live answers
 * (schemas inferred strictly from the bodies, plus the enums the spec gives:
 * see SPEC_RULES). Review a recording against the spec before committing it.
 */

const RECORD = process.env.PMAPI_GOLDEN_RECORD === '1';
const GOLDEN_DIR = fileURLToPath(new URL('../golden/legacy/', import.meta.url));
const VERSIONING_HEADERS = ['deprecation', 'sunset', 'link'] as const;

/** Who sends a request: a workspace-A member's macro token, or a PAT holding only `tasks:read`. */
type As = 'owner' | 'client' | 'fine-grained tasks:read';

/**
 * One provoked request. `path` and string values of `body` may name fixture
 * records: {subteam}, {label}, {defaultLabel}, {app}, {project}, {task},
 * {doc}, {owner}, {regular}, {missing} (an id nothing has); {fresh} is a
 * subteam or label made for this request alone (`fresh`), for the requests
 * that destroy their target.
 */
interface Request {
  method: string;
  path: string;
  as: As;
  body?: unknown;
  fresh?: 'subteam' | 'label';
}

interface RouteCase {
  route: string;
  success: Request;
  error: Request;
}

const req = (method: string, path: string, o: Partial<Omit<Request, 'method' | 'path'>> = {}): Request => ({ method, path, as: 'owner', ...o });

/**
 * Every legacy route (spec "Legacy v1.0 endpoints", plus the read endpoints
 * docs/not-shown.md adds), with the request of its success and of its error.
 * Kept by hand: it must equal the route table the pipeline serves.
 */
const ROUTES: RouteCase[] = [
  // Subteams (legacy portfolios).
  { route: 'GET /subteams', success: req('GET', '/subteams'), error: req('GET', '/subteams', { as: 'fine-grained tasks:read' }) },
  { route: 'POST /subteams', success: req('POST', '/subteams', { body: { name: 'Golden created', members: ['{owner}', '{regular}'] } }), error: req('POST', '/subteams', { body: { logo: '' } }) },
  { route: 'GET /subteams/{id}', success: req('GET', '/subteams/{subteam}'), error: req('GET', '/subteams/{missing}') },
  { route: 'PUT /subteams/{id}', success: req('PUT', '/subteams/{subteam}', { body: { name: 'Golden renamed' } }), error: req('PUT', '/subteams/{subteam}', { body: {} }) },
  { route: 'DELETE /subteams/{id}', success: req('DELETE', '/subteams/{fresh}', { fresh: 'subteam' }), error: req('DELETE', '/subteams/{missing}') },
  { route: 'PUT /subteams/{id}/members', success: req('PUT', '/subteams/{subteam}/members', { body: { members_ids: ['{owner}', '{regular}'] } }), error: req('PUT', '/subteams/{subteam}/members', { body: {} }) },
  { route: 'DELETE /subteams/{id}/members', success: req('DELETE', '/subteams/{subteam}/members', { body: { members_ids: ['{regular}'] } }), error: req('DELETE', '/subteams/{missing}/members', { body: { members_ids: ['{regular}'] } }) },
  { route: 'POST /subteams/{id}/leave', success: req('POST', '/subteams/{fresh}/leave', { fresh: 'subteam' }), error: req('POST', '/subteams/{subteam}/leave', { as: 'client' }) },
  // Apps (OAuth clients).
  { route: 'GET /apps', success: req('GET', '/apps?limit=10&offset=0'), error: req('GET', '/apps?limit=10') },
  { route: 'GET /apps/{id}', success: req('GET', '/apps/{app}'), error: req('GET', '/apps/{missing}') },
  // Labels.
  { route: 'GET /labels', success: req('GET', '/labels?type=1'), error: req('GET', '/labels?type=2') },
  { route: 'POST /labels', success: req('POST', '/labels', { body: { name: 'Golden label', color: '#336699', type: 0 } }), error: req('POST', '/labels', { body: { name: 'No type' } }) },
  { route: 'GET /labels/{id}', success: req('GET', '/labels/{label}'), error: req('GET', '/labels/{missing}') },
  { route: 'PUT /labels/{id}', success: req('PUT', '/labels/{label}', { body: { name: 'Golden label renamed' } }), error: req('PUT', '/labels/{defaultLabel}', { body: { name: 'Defect' } }) },
  { route: 'DELETE /labels/{id}', success: req('DELETE', '/labels/{fresh}', { fresh: 'label' }), error: req('DELETE', '/labels/{missing}') },
  // Read endpoints of the other covered segments.
  { route: 'GET /tasks', success: req('GET', '/tasks?project_id={project}'), error: req('GET', '/tasks?sort=name') },
  { route: 'GET /tasks/{id}', success: req('GET', '/tasks/{task}'), error: req('GET', '/tasks/{missing}') },
  { route: 'GET /projects', success: req('GET', '/projects'), error: req('GET', '/projects', { as: 'fine-grained tasks:read' }) },
  { route: 'GET /projects/{id}', success: req('GET', '/projects/{project}'), error: req('GET', '/projects/{missing}') },
  { route: 'GET /docs', success: req('GET', '/docs?project_id={project}'), error: req('GET', '/docs?limit=0') },
  { route: 'GET /docs/{id}', success: req('GET', '/docs/{doc}'), error: req('GET', '/docs/{missing}') },
  { route: 'GET /members', success: req('GET', '/members'), error: req('GET', '/members?offset=10001') },
  { route: 'GET /members/{id}', success: req('GET', '/members/{regular}'), error: req('GET', '/members/{missing}') },
];

/** The enum of spec "Legacy app" `scopes`, as the space-separated string docs/not-shown.md "App scopes" makes of it. */
const APP_SCOPE = '(file|label|doc|milestone|message|subtask|project|task_group)';

/**
 * What the spec states beyond the shape, added to an inferred schema: paths
 * are `$`, `.key` and `[]` (every item).
 */
const SPEC_RULES: Array<{ routes: RegExp; path: RegExp; rule: (status: number) => Schema; why: string }> = [
  { routes: /./, path: /^\$\.code$/, rule: (status) => ({ const: status }), why: 'spec "Errors": code mirrors the HTTP status' },
  { routes: /^\S+ \/labels/, path: /^\$(\.labels\[\])?\.type$/, rule: () => ({ enum: [0, 1] }), why: 'spec "Legacy label (tag)": type 0 or 1' },
  { routes: /^\S+ \/apps/, path: /^\$(\[\])?\.scopes$/, rule: () => ({ pattern: `^(${APP_SCOPE}( ${APP_SCOPE})*)?$` }), why: 'spec "Legacy app": the scopes enum' },
];

function withSpecRules(route: string, status: number, isError: boolean, s: Schema, path = '$'): Schema {
  const out: Schema = { ...s };
  for (const r of SPEC_RULES) if (r.routes.test(route) && r.path.test(path) && (isError || path !== '$.code')) Object.assign(out, r.rule(status));
  if (s.properties) out.properties = Object.fromEntries(Object.entries(s.properties).map(([k, v]) => [k, withSpecRules(route, status, isError, v, `${path}.${k}`)]));
  if (s.items) out.items = withSpecRules(route, status, isError, s.items, `${path}[]`);
  return out;
}

interface GoldenAnswer {
  request: Request;
  status: number;
  contentType: string;
  headers: Record<(typeof VERSIONING_HEADERS)[number], string>;
  schema: Schema;
}

interface Golden {
  route: string;
  success: GoldenAnswer;
  error: GoldenAnswer;
}

export const slugOf = (route: string) => route.toLowerCase().replace(/[{}]/g, '').replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');

interface Fixture {
  h: Harness;
  ids: Record<string, string>;
  tokens: Record<As, string>;
}

async function legacy(h: Harness, method: string, path: string, token: string, body?: unknown): Promise<Reply> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await h.api.handle({ method, url: `/api/v1.0${path}`, headers, body: body === undefined ? undefined : JSON.stringify(body), remoteAddress: '203.0.113.9' });
  return { status: res.status, headers: res.headers, body: res.body === undefined ? undefined : JSON.parse(typeof res.body === 'string' ? res.body : new TextDecoder().decode(res.body)) };
}

function fill<T>(v: T, ids: Record<string, string>): T {
  if (typeof v === 'string') return v.replace(/\{(\w+)\}/g, (m, k: string) => ids[k] ?? m) as T;
  if (Array.isArray(v)) return v.map((x) => fill(x, ids)) as T;
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, fill(x, ids)])) as T;
  return v;
}

async function created(r: Reply): Promise<string> {
  if (r.status !== 201) throw new Error(`fixture: create failed ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.id as string;
}

async function fixture(h: Harness): Promise<Fixture> {
  const owner = h.a.owner.token;
  const fine = (await h.api.admin.issueToken(h.a.owner.id, { scopes: ['tasks:read'] })).token;
  const ids: Record<string, string> = { owner: h.a.owner.id, regular: h.a.regular.id, missing: 'NoSuchRecord1' };
  ids.subteam = await created(await legacy(h, 'POST', '/subteams', owner, { name: 'Golden subteam', color: '#224466', members: [h.a.owner.id, h.a.regular.id, h.a.client.id] }));
  ids.label = await created(await legacy(h, 'POST', '/labels', owner, { name: 'Golden tag', color: '#abcdef', type: 1 }));
  const labels = (await legacy(h, 'GET', '/labels?type=0&limit=200', owner)).body.labels as Array<{ id: string; default: boolean }>;
  ids.defaultLabel = labels.find((l) => l.default)!.id;
  ids.app = (await h.api.admin.registerOAuthClient({ teamId: h.a.id, name: 'Golden app', type: 'public', redirectUris: ['https://golden.example/cb'] })).clientId;
  // Records with their optional fields set (and a plain second one), so the read schemas show types, not only nulls.
  const project = await h.project({ name: 'Golden project', description: 'Frozen answers', members: [h.a.regular.id] });
  ids.project = project.id;
  ids.task = (await h.task(project.id, {
    name: 'Golden task', description: 'Recorded', startAt: '2026-03-02T09:00:00.000Z', dueAt: '2026-03-05T17:00:00.000Z', storyPoints: 3,
    assignees: [h.a.regular.id], labels: [ids.label], subscribers: [h.a.owner.id],
  })).id;
  await h.task(project.id, { name: 'Second golden task' });
  const doc = await h.post('/documents', { title: 'Golden doc', projectId: project.id });
  if (doc.status !== 201) throw new Error(`fixture: document create failed ${doc.status} ${JSON.stringify(doc.body)}`);
  ids.doc = doc.body.id;
  await h.post('/documents', { title: 'Second golden doc', projectId: project.id });
  return { h, ids, tokens: { owner, client: h.a.client.token, 'fine-grained tasks:read': fine } };
}

async function provoke(f: Fixture, r: Request): Promise<Reply> {
  const ids = { ...f.ids };
  if (r.fresh === 'subteam') ids.fresh = await created(await legacy(f.h, 'POST', '/subteams', f.tokens.owner, { name: 'Golden fresh', members: [f.ids.owner] }));
  if (r.fresh === 'label') ids.fresh = await created(await legacy(f.h, 'POST', '/labels', f.tokens.owner, { name: `Golden fresh ${Object.keys(ids).length}-${Math.random().toString(36).slice(2, 6)}`, type: 0 }));
  return legacy(f.h, r.method, fill(r.path, ids), f.tokens[r.as], r.body === undefined ? undefined : fill(r.body, ids));
}

function answerOf(route: string, r: Request, reply: Reply, isError: boolean): GoldenAnswer {
  return {
    request: r,
    status: reply.status,
    contentType: reply.headers['content-type'] ?? '',
    headers: { deprecation: reply.headers.deprecation ?? '', sunset: reply.headers.sunset ?? '', link: reply.headers.link ?? '' },
    schema: withSpecRules(route, reply.status, isError, inferSchema(reply.body)),
  };
}

/** Every difference between a live answer and its golden record, each naming the route, the case and the path. */
function differences(route: string, which: 'success' | 'error', golden: GoldenAnswer, r: Request, reply: Reply): string[] {
  const at = `${route} (${which})`;
  const out: string[] = [];
  if (JSON.stringify(golden.request) !== JSON.stringify(r)) out.push(`${at}: the request differs from the recorded one (${JSON.stringify(golden.request)}); record again`);
  if (reply.status !== golden.status) out.push(`${at}: status ${reply.status}, golden ${golden.status} (body ${JSON.stringify(reply.body)})`);
  if ((reply.headers['content-type'] ?? '') !== golden.contentType) out.push(`${at}: content-type ${JSON.stringify(reply.headers['content-type'])}, golden ${JSON.stringify(golden.contentType)}`);
  for (const hd of VERSIONING_HEADERS) {
    if ((reply.headers[hd] ?? '') !== golden.headers[hd]) out.push(`${at}: header ${hd} ${JSON.stringify(reply.headers[hd])}, golden ${JSON.stringify(golden.headers[hd])}`);
  }
  for (const e of checkSchema(golden.schema)) out.push(`${at}: golden schema at ${e.path}: ${e.message}`);
  for (const e of validate(golden.schema, reply.body)) out.push(`${at}: body ${e.path} ${e.message}`);
  return out;
}

export function legacyGoldenSuite(factory: StoreFactory): void {
  describe(`[${factory.name}] Legacy v1.0 golden answers (frozen surface)`, () => {
    let f: Fixture;
    beforeAll(async () => {
      f = await fixture(await harness(factory));
    });
    afterAll(() => f?.h.close());

    it('the route list of these tests is the route table the legacy pipeline serves', () => {
      expect(ROUTES.map((r) => r.route)).toEqual([...LEGACY_ROUTES]);
      // Each case requests its own route (placeholders are ids; the query is not part of the route).
      for (const c of ROUTES) {
        for (const r of [c.success, c.error]) {
          const [method, path] = c.route.split(' ');
          expect(`${r.method} ${r.path.split('?')[0]!.replace(/\{\w+\}/g, '{id}')}`, JSON.stringify(r)).toBe(`${method} ${path}`);
        }
      }
    });

    it('every route has a golden file and every golden file a route', () => {
      if (RECORD) return;
      const files = existsSync(GOLDEN_DIR) ? readdirSync(GOLDEN_DIR).filter((n) => n.endsWith('.json')).sort() : [];
      expect(files).toEqual(ROUTES.map((r) => `${slugOf(r.route)}.json`).sort());
    });

    it('the strict validator rejects extra keys, missing keys, other types, values outside an enum, and malformed schemas', () => {
      const s = withSpecRules('GET /labels/{id}', 200, false, inferSchema({ id: 'Abc123', name: 'x', type: 1, tags: ['a'], at: '2026-03-01T09:00:00.000Z', nested: { ok: true } }));
      const good = { id: 'Zz9', name: 'y', type: 0, tags: [], at: '2027-01-01T00:00:00.000Z', nested: { ok: false } };
      expect(validate(s, good)).toEqual([]);
      expect(validate(s, { ...good, extra: 1 }).map((e) => e.path)).toEqual(['$.extra']);
      expect(validate(s, { ...good, nested: { ok: true, more: null } }).map((e) => e.path)).toEqual(['$.nested.more']);
      const { name: _n, ...noName } = good;
      expect(validate(s, noName).map((e) => e.path)).toEqual(['$.name']);
      expect(validate(s, { ...good, name: null }).map((e) => e.path)).toEqual(['$.name']);
      expect(validate(s, { ...good, type: 2 }).map((e) => e.path)).toEqual(['$.type']);
      expect(validate(s, { ...good, type: 1.5 }).map((e) => e.path)).toEqual(['$.type']);
      expect(validate(s, { ...good, tags: [1] }).map((e) => e.path)).toEqual(['$.tags[0]']);
      expect(validate(s, { ...good, at: 'yesterday' }).map((e) => e.path)).toEqual(['$.at']);
      expect(validate(s, { ...good, id: 'not an id' }).map((e) => e.path)).toEqual(['$.id']);
      expect(validate(s, [good]).map((e) => e.path)).toEqual(['$']);
      expect(checkSchema(s)).toEqual([]);
      expect(checkSchema({ type: 'object', properties: { a: { type: 'string' } }, required: ['a'] }).length).toBe(1);
      expect(checkSchema({ type: 'object', properties: { a: { type: 'string' } }, required: [], additionalProperties: false }).length).toBe(1);
      expect(checkSchema({ type: 'string', minLength: 1 } as Schema).length).toBe(1);
      expect(validate(withSpecRules('GET /x', 404, true, inferSchema({ message: 'm', code: 404 })), { message: 'm', code: 400 }).map((e) => e.path)).toEqual(['$.code']);
    });

    for (const c of ROUTES) {
      it(`${c.route}: the success and the error answer as recorded`, async () => {
        const path = `${GOLDEN_DIR}${slugOf(c.route)}.json`;
        const success = await provoke(f, c.success);
        const error = await provoke(f, c.error);
        // A success is 2xx and an error a legacy error, whatever is recorded.
        expect(success.status, `${c.route} success: ${JSON.stringify(success.body)}`).toBeLessThan(300);
        expect(error.status, `${c.route} error: ${JSON.stringify(error.body)}`).toBeGreaterThanOrEqual(400);
        if (RECORD) {
          const golden: Golden = { route: c.route, success: answerOf(c.route, c.success, success, false), error: answerOf(c.route, c.error, error, true) };
          const text = `${JSON.stringify(golden, null, 2)}\n`;
          mkdirSync(GOLDEN_DIR, { recursive: true });
          if (!existsSync(path) || readFileSync(path, 'utf8') !== text) writeFileSync(path, text);
        }
        expect(existsSync(path), `${c.route}: no golden file ${path} (record with PMAPI_GOLDEN_RECORD=1)`).toBe(true);
        const golden = JSON.parse(readFileSync(path, 'utf8')) as Golden;
        expect(golden.route).toBe(c.route);
        const diffs = [...differences(c.route, 'success', golden.success, c.success, success), ...differences(c.route, 'error', golden.error, c.error, error)];
        expect(diffs).toEqual([]);
      });
    }
  });
}
