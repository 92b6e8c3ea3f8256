/*
 * Issue 17 "The contract", custom operations' request bodies: each one is described by the zod schema its
 * handler parses with (declared on the route as `body`), so the document lists the real fields; a route that
 * takes no body has no requestBody. Fails when a route forgets to declare its body (it would be documented
 * as a bare "JSON object") or when the declared schema is not the one the handler enforces.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPmapi, type Pmapi } from '@pmapi/core';
import { openSqliteStore } from '@pmapi/adapter-sqlite';

let api: Pmapi;
let doc: any;
beforeAll(async () => {
  api = await createPmapi({ store: await openSqliteStore(), rateLimiter: false });
  doc = api.openapi();
});
afterAll(() => api.close());

const resolve = (s: any): any => (s?.$ref ? resolve(doc.components.schemas[String(s.$ref).split('/').pop()!]) : s);
const bodyOf = (path: string, method = 'post') => resolve(doc.paths[path][method].requestBody?.content['application/json'].schema);
/** Custom operations: not the standard ones generated from the declarations (list/create/get/update/delete/restore/relations). */
const STANDARD = /^(list|create|get|update|delete|restore|add|remove|removeVia)[A-Z]/;

describe('custom operations: request bodies (issue 17)', () => {
  it('every custom POST/PUT/PATCH either takes no body or lists the fields of its body', () => {
    const seen: string[] = [];
    for (const [path, ops] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(ops)) {
        if (!['post', 'put', 'patch'].includes(method) || STANDARD.test(op.operationId)) continue;
        seen.push(`${method} ${path}`);
        if (!op.requestBody) {
          expect(op.description, `${method} ${path}`).toMatch(/Takes no body/);
          continue;
        }
        const schema = bodyOf(path, method);
        expect(Object.keys(schema.properties ?? {}).length, `${method} ${path} body has no properties`).toBeGreaterThan(0);
        expect(schema.type, `${method} ${path}`).toBe('object');
        expect(schema.additionalProperties, `${method} ${path}: bodies are validated exactly`).toBe(false);
      }
    }
    expect(seen).toEqual(expect.arrayContaining(['post /tasks/tree', 'post /files/from-url', 'post /projects/{id}/transfer', 'post /chats/self']));
    expect(doc.paths['/chats/self'].post.requestBody).toBeUndefined();
    expect(doc.paths['/webhooks/{id}/rotate-secret'].post.requestBody).toBeUndefined();
  });

  it('known operations list their real fields, required ones required', () => {
    const edit = bodyOf('/documents/{id}/edit-text');
    expect(Object.keys(edit.properties).sort()).toEqual(['expectedUpdatedAt', 'newText', 'oldText', 'replaceAll']);
    expect(edit.required.sort()).toEqual(['newText', 'oldText']);
    expect(edit.properties.replaceAll).toEqual({ type: 'boolean' });
    const attach = bodyOf('/tasks/{id}/attach-document');
    expect(resolve(attach.properties.documentId)).toMatchObject({ type: 'string', pattern: '^[0-9A-Za-z_!]+$' });
    expect(attach.required).toEqual(['documentId']);
    const upload = bodyOf('/files/upload-url');
    expect(upload.properties.size).toMatchObject({ type: 'integer', minimum: 0 });
    const fromContent = bodyOf('/files/from-content');
    expect(fromContent.properties.encoding).toEqual({ type: 'string', enum: ['utf8', 'base64'] });
    expect(fromContent.required.sort()).toEqual(['content', 'name']);
    expect(bodyOf('/projects/{id}/transfer').required).toEqual(['ownerId']);
  });

  it('the task tree body is a task create body with nested subtasks of the same shape', () => {
    const tree = bodyOf('/tasks/tree');
    expect(tree.properties.name).toMatchObject({ type: 'string', minLength: 1 });
    expect(tree.required).toEqual(['name']);
    expect(tree.properties.subtasks).toEqual({ type: 'array', items: { $ref: '#/components/schemas/TaskTreeNode' } });
    const create = resolve(doc.paths['/tasks'].post.requestBody.content['application/json'].schema);
    expect(Object.keys(tree.properties).filter((k) => k !== 'subtasks').sort()).toEqual(Object.keys(create.properties).sort());
  });

  it('the documented body is the one the handler enforces: a key outside it is refused, its limits hold', async () => {
    const ws = await api.admin.createWorkspace({ name: 'T', owner: { name: 'O', email: 'o@x.invalid' } });
    const { token } = await api.admin.issueToken(ws.ownerMemberId, { name: 't', scopes: ['files:write'] });
    const call = (url: string, body: unknown) =>
      api.handle({ method: 'POST', url: `/api/v3/${url}`, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const documented = Object.keys(bodyOf('/files/upload-url').properties);
    const extra = await call('files/upload-url', { size: 1, notDocumented: 1 });
    expect(extra.status).toBe(400);
    expect(JSON.parse(String(extra.body)).errors.map((e: any) => e.field)).toContain('notDocumented');
    expect(documented).not.toContain('notDocumented');
    const negative = await call('files/upload-url', { size: -1 });
    expect(negative.status).toBe(400);
    expect(bodyOf('/files/upload-url').properties.size.minimum).toBe(0);
  });
});
