import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { createPmapi, errorCodes, type Pmapi } from '@pmapi/core';
import { openSqliteStore } from '@pmapi/adapter-sqlite';

// Spec v3 "Errors" (RFC 7807 problem details) for the reference surfaces added in issue 17: GET /openapi.json,
// /errors, /errors/{code} and /versioning are outside api.routes(), so the route fuzz
// (packages/conformance/src/suites/fuzz-routes.ts) never reaches them. Hostile paths, methods and headers
// get a 4xx problem with its code (or the page), never a 500. They read no stored data: one store is enough.
const BASE = '/api/v3';
const PATHS = [
  '/openapi.json', '/openapi.json/', '/openapi.json?x=%ZZ', '/openapi.json%00',
  '/errors', '/errors/', '/errors?fields=%ZZ', '/errors/%ZZ', '/errors/%ED%A0%80', '/errors/a%2Fb', '/errors/..',
  '/errors/conflict/x', `/errors/${'a'.repeat(10_000)}`, '/errors/__proto__', '/errors/constructor', '/errors/toString',
  '/versioning', '/versioning/', '/versioning?%ZZ=1', '/versioning%00',
];
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE', 'FOO'];
const HEADERS: Record<string, string>[] = [
  {}, { accept: 'text/markdown' }, { accept: '\u0000' }, { 'if-none-match': 'x'.repeat(9000) }, { 'if-none-match': '*' },
  { authorization: 'Bearer nope' }, { authorization: 'garbage' }, { 'content-type': 'application/json' },
];

describe('v3 Errors: the reference pages answer hostile input with a problem, never a 500 (issue 17)', () => {
  let api: Pmapi;
  beforeAll(async () => {
    api = await createPmapi({ store: await openSqliteStore(), rateLimiter: false });
  });
  afterAll(() => api?.close());

  it('every path × method × header set: 2xx/304, or a 4xx problem (application/json) whose code is a documented one and matches the status', async () => {
    const seen = new Set<number>();
    for (const path of PATHS) for (const method of METHODS) for (const headers of HEADERS) {
      const label = `${method} ${path.slice(0, 60)} ${JSON.stringify(headers).slice(0, 40)}`;
      const r = await api.handle({ method, url: `${BASE}${path}`, headers, body: method === 'POST' ? '{bad' : undefined });
      seen.add(r.status);
      expect(r.status, label).toBeLessThan(500);
      if (r.status < 400) continue;
      expect(String(r.headers['content-type']), label).toMatch(/^application\/json/); // spec v3 "Errors": served as application/json
      if (method === 'HEAD') continue;
      const body = JSON.parse(String(r.body)) as { code: keyof typeof errorCodes; status: number };
      expect(Object.keys(errorCodes), label).toContain(body.code);
      expect(body.status, label).toBe(r.status);
      expect(errorCodes[body.code].status, label).toBe(r.status);
      if (r.status === 405) expect(r.headers['allow'], label).toBe('GET, HEAD');
    }
    // The walk reached the pages and both refusals (it is not vacuous).
    expect([...seen].sort()).toEqual(expect.arrayContaining([200, 404, 405]));
  });
});
