/*
 * Issue 17 "The contract": the OpenAPI 3.1 document a real API serves at GET /api/v3/openapi.json is
 * valid OpenAPI 3.1 for a stock validator (@apidevtools/swagger-parser: the 3.1 meta-schema plus
 * its structural checks, all $refs resolvable), is served without authentication with an ETag, and
 * holds the whole v3 surface: every route of the route table, with the scope it needs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import SwaggerParser from '@apidevtools/swagger-parser';
import { createPmapi, type Pmapi } from '@pmapi/core';
import { openSqliteStore } from '@pmapi/adapter-sqlite';

let api: Pmapi;
let served: { status: number; headers: Record<string, string>; body: any };

beforeAll(async () => {
  api = await createPmapi({ store: await openSqliteStore(), rateLimiter: false });
  const res = await api.handle({ method: 'GET', url: '/api/v3/openapi.json', headers: {} });
  served = { status: res.status, headers: res.headers, body: JSON.parse(String(res.body)) };
});
afterAll(() => api.close());

describe('OpenAPI document (issue 17)', () => {
  it('is served without authentication, as JSON, with an ETag that answers 304', async () => {
    expect(served.status).toBe(200);
    expect(served.headers['content-type']).toMatch(/^application\/json/);
    expect(served.headers.etag).toMatch(/^"[^"]+"$/);
    const again = await api.handle({ method: 'GET', url: '/api/v3/openapi.json', headers: { 'if-none-match': served.headers.etag } });
    expect(again.status).toBe(304);
    expect(again.body).toBeUndefined();
    const post = await api.handle({ method: 'POST', url: '/api/v3/openapi.json', headers: {} });
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe('GET, HEAD');
    expect(api.openapi()).toBe(api.openapi());
    expect(served.body.paths['/openapi.json'].get.security).toEqual([]);
  });

  it('follows basePath: served under it, and the server URL is it', async () => {
    const other = await createPmapi({ store: await openSqliteStore(), rateLimiter: false, basePath: '/pm/v3' });
    try {
      const res = await other.handle({ method: 'GET', url: '/pm/v3/openapi.json', headers: {} });
      expect(res.status).toBe(200);
      expect(JSON.parse(String(res.body)).servers).toEqual([{ url: '/pm/v3' }]);
      const head = await other.handle({ method: 'HEAD', url: '/pm/v3/openapi.json', headers: {} });
      expect(head.status).toBe(200);
      expect(head.body).toBeUndefined();
      expect(head.headers.etag).toBe(res.headers.etag);
    } finally {
      await other.close();
    }
  });

  it('validates as OpenAPI 3.1 with a stock validator', async () => {
    expect(served.body.openapi).toBe('3.1.0');
    // validate() dereferences in place: give it a copy.
    await expect(SwaggerParser.validate(structuredClone(served.body))).resolves.toBeTruthy();
  });

  it('a broken document is refused by the same validator (the lint can fail)', async () => {
    const broken = structuredClone(served.body);
    broken.paths['/tasks'].get.responses['200'] = { $ref: '#/components/responses/NoSuchThing' };
    await expect(SwaggerParser.validate(broken)).rejects.toThrow();
    const noInfo = structuredClone(served.body);
    delete noInfo.info;
    await expect(SwaggerParser.validate(noInfo)).rejects.toThrow(/info/);
    const badParam = structuredClone(served.body);
    badParam.paths['/tasks'].get.parameters.push({ name: 'x', in: 'nowhere' });
    await expect(SwaggerParser.validate(badParam)).rejects.toThrow();
  });

  it('describes every route of the route table, with the scope it needs', () => {
    const paths = served.body.paths as Record<string, Record<string, any>>;
    for (const r of api.routes()) {
      const op = paths[r.path]?.[r.method.toLowerCase()];
      expect(op, `${r.method} ${r.path}`).toBeDefined();
      expect(op.security, `${r.method} ${r.path}`).toEqual([{ bearerAuth: [r.scope] }]);
      if (!r.ownRecords) expect(op['x-required-permissions']).toEqual([r.scope, ...r.permissions]);
    }
  });

  it('lists filters with their operators, paging, expand and fields on lists; webhooks for every event', () => {
    const list = served.body.paths['/tasks'].get;
    // Shared parameters are components (issue 17, document size): resolve each $ref to the parameter's own name.
    const names = list.parameters.map((p: any) => (p.$ref ? served.body.components.parameters[p.$ref.split('/').pop()].name : p.name));
    for (const n of ['cursor', 'limit', 'includeTotal', 'sort', 'expand', 'fields']) expect(names).toContain(n);
    for (const [filter, def] of Object.entries(api.registry.get('task').filters)) {
      for (const op of def.ops) expect(names).toContain(`${filter}[${op}]`);
    }
    expect(Object.keys(served.body.webhooks)).toContain('task.created');
    expect(served.body.webhooks['task.created'].post.requestBody.content['application/json'].schema.allOf[0]).toEqual({ $ref: '#/components/schemas/EventEnvelope' });
    expect(served.body.components.schemas.Problem.required).toEqual(['type', 'title', 'status', 'detail', 'instance', 'code', 'requestId', 'docsUrl']);
  });

  it('writes shared pieces once, as components (document size)', () => {
    const doc = served.body;
    // Was about 890 KB with every filter, id parameter, record answer and instant schema written inline (and without the
    // keys request bodies accept and ignore, which now add about 45 KB).
    expect(JSON.stringify(doc).length).toBeLessThan(830_000);
    const list = doc.paths['/tasks'].get;
    expect(list.parameters.every((p: any) => typeof p.$ref === 'string' || p.in !== 'query' || !/\[/.test(p.name))).toBe(true);
    // A filter every resource means the same by is one component (createdAt[gt] of tasks and of projects).
    const refOf = (path: string, name: string) => doc.paths[path].get.parameters.find((p: any) => p.$ref && doc.components.parameters[p.$ref.split('/').pop()].name === name)?.$ref;
    expect(refOf('/tasks', 'createdById[eq]')).toBeDefined();
    expect(refOf('/tasks', 'createdById[eq]')).toBe(refOf('/documents', 'createdById[eq]'));
    expect(doc.paths['/tasks/{id}'].get.responses['200']).toEqual({ $ref: '#/components/responses/Task' });
    expect(doc.paths['/tasks/{id}'].patch.responses['200']).toEqual({ $ref: '#/components/responses/Task' });
    expect(doc.paths['/tasks/{id}'].get.parameters[0]).toEqual({ $ref: '#/components/parameters/path.id' });
    expect(JSON.stringify(doc.paths)).not.toMatch(/"format":"date-time","pattern"/);
    expect(doc.paths['/tasks'].post.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/TaskCreate' });
    expect(doc.paths['/tasks/{id}'].patch.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/TaskUpdate' });
    const payloadOf = (event: string) => doc.webhooks[event].post.requestBody.content['application/json'].schema.allOf[1].properties.payload;
    expect(payloadOf('task.created')).toEqual({ $ref: '#/components/schemas/TaskEventPayload' });
    expect(payloadOf('task.updated')).toEqual(payloadOf('task.created'));
    expect(doc.components.schemas.TaskEventPayload).toEqual({ type: 'object', properties: { task: { $ref: '#/components/schemas/Task' } }, required: ['task'] });
  });
});
