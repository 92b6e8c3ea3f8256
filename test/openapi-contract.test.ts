/*
 * Issue 17: the conformance kit checks every v3 reply against the served OpenAPI document
 * (packages/conformance/src/contract.ts). These tests show the check can fail: a status the
 * operation does not describe, a body that drifts from the record schema, a success on a path
 * the document does not have, and a fields[...] selection (only id required) — on a real API.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPmapi, type Pmapi } from '@pmapi/core';
import { openSqliteStore } from '@pmapi/adapter-sqlite';
import { createContract, type Contract } from '../packages/conformance/src/contract';

let api: Pmapi;
let contract: Contract;
let token: string;

async function call(method: string, path: string, body?: unknown) {
  const url = `/api/v3${path}`;
  const res = await api.handle({
    method, url, headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined,
  });
  return { url, reply: { status: res.status, headers: res.headers, body: res.body === undefined ? undefined : JSON.parse(String(res.body)) } };
}

beforeAll(async () => {
  api = await createPmapi({ store: await openSqliteStore(), rateLimiter: false });
  const ws = await api.admin.createWorkspace({ name: 'C', owner: { name: 'Owner', email: 'o@c.test' } });
  token = (await api.admin.issueToken(ws.ownerMemberId, { scopes: ['read', 'write', 'delete'] })).token;
  contract = createContract(api.openapi());
});
afterAll(() => api.close());

describe('reply contract (issue 17)', () => {
  it('accepts the replies the document describes, errors included', async () => {
    const created = await call('POST', '/projects', { name: 'Contract' });
    expect(created.reply.status).toBe(201);
    contract.checkReply('POST', created.url, created.reply);
    const list = await call('GET', '/projects?limit=5&includeTotal=true');
    contract.checkReply('GET', list.url, list.reply);
    const missing = await call('GET', '/projects/nope');
    expect(missing.reply.status).toBe(404);
    contract.checkReply('GET', missing.url, missing.reply);
    const unknown = await call('GET', '/no-such-thing');
    contract.checkReply('GET', unknown.url, unknown.reply);
    const health = await call('GET', '/health');
    expect(health.reply.status).toBe(200);
    contract.checkReply('GET', health.url, health.reply);
    const doc = await call('GET', '/openapi.json');
    contract.checkReply('GET', doc.url, doc.reply);
    const deleted = await call('DELETE', `/projects/${created.reply.body.id}`);
    expect(deleted.reply.status).toBe(204);
    contract.checkReply('DELETE', deleted.url, deleted.reply);
  });

  it('refuses a status the operation does not describe', async () => {
    const got = await call('GET', '/projects');
    expect(() => contract.checkReply('GET', got.url, { ...got.reply, status: 201 })).toThrow(/status 201 is not described for GET \/projects/);
  });

  it('refuses a body that drifts from the record schema (missing key, wrong type, unknown key)', async () => {
    const { url, reply } = await call('POST', '/projects', { name: 'Drift' });
    const { name: _n, ...noName } = reply.body;
    expect(() => contract.checkReply('POST', url, { ...reply, body: noName })).toThrow(/must have required property 'name'/);
    expect(() => contract.checkReply('POST', url, { ...reply, body: { ...reply.body, createdAt: 12 } })).toThrow(/createdAt must be string/);
    expect(() => contract.checkReply('POST', url, { ...reply, body: { ...reply.body, surprise: 1 } })).toThrow(/additional properties/);
    expect(() => contract.checkReply('POST', url, { ...reply, body: { ...reply.body, id: undefined } })).toThrow();
  });

  it('refuses a problem body without its required members, and a success where no operation exists', async () => {
    const { url, reply } = await call('GET', '/projects/nope');
    const { requestId: _r, ...broken } = reply.body;
    expect(() => contract.checkReply('GET', url, { ...reply, body: broken })).toThrow(/requestId/);
    expect(() => contract.checkReply('GET', '/api/v3/no-such-thing', { status: 200, headers: { 'content-type': 'application/json' }, body: {} })).toThrow(/no operation/);
    expect(() => contract.checkReply('GET', url, { ...reply, status: 403 })).toThrow(/problem status 404 differs from the HTTP status/);
    expect(() => contract.checkReply('GET', url, { ...reply, body: { ...reply.body, type: 'other' } })).toThrow(/differs from its code/);
  });

  it('with fields[...] only id is required; without, the full record is', async () => {
    const made = await call('POST', '/projects', { name: 'Sparse' });
    const sparse = await call('GET', `/projects/${made.reply.body.id}?fields[projects]=name`);
    expect(Object.keys(sparse.reply.body).sort()).toEqual(['id', 'name']);
    contract.checkReply('GET', sparse.url, sparse.reply);
    expect(() => contract.checkReply('GET', `/api/v3/projects/${made.reply.body.id}`, sparse.reply)).toThrow(/required property/);
  });

  it('checks an accepted request body against the operation\'s request body: a server that accepts what the document refuses fails', async () => {
    const body = { name: '  Spaced  ', id: 'ignored', createdAt: 'ignored' };
    const created = await call('POST', '/projects', body);
    expect(created.reply.status).toBe(201);
    // Server-assigned keys are accepted and ignored (rule 1): the document lists them (Ignored), so this passes.
    contract.checkReply('POST', created.url, created.reply, body);
    const doc = structuredClone(api.openapi()) as any;
    delete doc.components.schemas.ProjectCreate.properties.createdAt;
    expect(() => createContract(doc).checkReply('POST', created.url, created.reply, body)).toThrow(/accepted a request body the document's request body refuses[\s\S]*createdAt/);
    // A refused request (4xx) is not held to the request schema; its problem reply is checked as usual.
    const bad = await call('POST', '/projects', { nope: 1 });
    expect(bad.reply.status).toBe(400);
    contract.checkReply('POST', bad.url, bad.reply, { nope: 1 });
    // A name trimmed before its length check may be longer as sent.
    const padded = { name: `${' '.repeat(300)}Padded${' '.repeat(300)}` };
    const ok = await call('POST', '/projects', padded);
    expect(ok.reply.status).toBe(201);
    contract.checkReply('POST', ok.url, ok.reply, padded);
  });
});
