/*
 * Issue 17 "The contract", component names: a host's resource named like a schema the document writes itself
 * (`problem` → Problem, the body of every error answer) or like another resource's create body (`taskCreate` →
 * TaskCreate) must not replace it. The host's record of a document-owned name is `{Name}Record`; a body whose
 * name a record holds stays inline.
 */
import { describe, expect, it } from 'vitest';
import SwaggerParser from '@apidevtools/swagger-parser';
import { builtinResources, defineResource, f, openApiDocument, Registry } from '@pmapi/core';

const host = (name: string, path: string) =>
  defineResource({ name, path, fields: { title: f.string({ max: 100 }) }, filters: {}, defaultSort: 'createdAt', expand: {} });

describe('OpenAPI component names with host resources (issue 17)', () => {
  const doc: any = openApiDocument({
    registry: new Registry([...builtinResources, host('problem', 'problems'), host('taskCreate', 'task-creates')]),
    routes: [],
    extraPermissions: () => [],
  });
  const schemaOf = (s: any): any => (s?.$ref ? schemaOf(doc.components.schemas[String(s.$ref).split('/').pop()!]) : s);
  const answerOf = (r: any): any => schemaOf((r.$ref ? doc.components.responses[String(r.$ref).split('/').pop()!] : r).content['application/json'].schema);

  it('a resource named problem does not replace the problem body', () => {
    expect(doc.components.schemas.Problem.required).toEqual(['type', 'title', 'status', 'detail', 'instance', 'code', 'requestId', 'docsUrl']);
    expect(answerOf(doc.paths['/tasks/{id}'].get.responses['404']).required).toContain('code');
    const record = answerOf(doc.paths['/problems/{id}'].get.responses['200']);
    expect(record.description).toMatch(/^A problem record/);
    expect(doc.components.schemas.ProblemRecord).toBe(record);
  });

  it("a resource named like another resource's create body keeps its record; the body goes inline", () => {
    expect(answerOf(doc.paths['/task-creates/{id}'].get.responses['200']).description).toMatch(/^A taskCreate record/);
    const body = schemaOf(doc.paths['/tasks'].post.requestBody.content['application/json'].schema);
    expect(body.properties).toHaveProperty('name');
    expect(body.required).toContain('name');
  });

  it('stays valid OpenAPI 3.1', async () => {
    await expect(SwaggerParser.validate(structuredClone(doc))).resolves.toBeTruthy();
  });
});
