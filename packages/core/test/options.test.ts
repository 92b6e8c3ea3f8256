import { describe, it, expect } from 'vitest';
import { createPmapi } from '@pmapi/core';
import { openSqliteStore } from '@pmapi/adapter-sqlite';

/** Issue 16, "Operable": createPmapi options are validated, each bad one named. */
describe('createPmapi options validation (issue 16)', () => {
  // Passes the store check; validation runs before the store is used, so no database is needed.
  const fakeStore = { db: {}, dialect: {}, close: async () => undefined } as any;

  it('a missing store names options.store', async () => {
    await expect(createPmapi({} as any)).rejects.toThrow(/^pmapi: options\.store is required: must be an opened store/);
    await expect(createPmapi(undefined as any)).rejects.toThrow(/pmapi: createPmapi needs an options object/);
    await expect(createPmapi({ store: 'file.db' } as any)).rejects.toThrow(/^pmapi: options\.store must be an opened store/);
  });

  it('an unknown key (a typo) is refused, with the option it resembles', async () => {
    await expect(createPmapi({ store: fakeStore, rateLimitter: false } as any)).rejects.toThrow(/pmapi: options\.rateLimitter is not an option \(did you mean options\.rateLimiter\?\)/);
    await expect(createPmapi({ store: fakeStore, zzzzzzzzzz: 1 } as any)).rejects.toThrow(/pmapi: options\.zzzzzzzzzz is not an option; known options: store, /);
  });

  it("basePath without a leading '/' (or with a query, '//') is refused naming the option", async () => {
    await expect(createPmapi({ store: fakeStore, basePath: 'api/v3' })).rejects.toThrow(/pmapi: options\.basePath must start with "\/" \(got 'api\/v3'; did you mean '\/api\/v3'\?\)/);
    await expect(createPmapi({ store: fakeStore, basePath: '/api?v=3' })).rejects.toThrow(/pmapi: options\.basePath must be a URL path/);
    await expect(createPmapi({ store: fakeStore, basePath: '/api//v3' })).rejects.toThrow(/options\.basePath/);
  });

  it('values of the wrong type name the option; every bad option is listed', async () => {
    await expect(createPmapi({ store: fakeStore, searchTimeoutMs: '5s' } as any)).rejects.toThrow(/pmapi: options\.searchTimeoutMs must be a number/);
    await expect(createPmapi({ store: fakeStore, onError: 'log' } as any)).rejects.toThrow(/pmapi: options\.onError must be a function/);
    await expect(createPmapi({ store: fakeStore, onRequest: 1 } as any)).rejects.toThrow(/pmapi: options\.onRequest must be a function/);
    await expect(createPmapi({ store: fakeStore, webhookSender: {} } as any)).rejects.toThrow(/pmapi: options\.webhookSender must be a function \(createWebhookSender\(\) of @pmapi\/webhooks\)/);
    await expect(createPmapi({ store: fakeStore, webhooks: { allowLoopbak: true } } as any)).rejects.toThrow(/^pmapi: options\.webhooks\.allowLoopbak is not an option$/);
    await expect(createPmapi({ store: fakeStore, webhooks: { allowLoopback: 'yes' } } as any)).rejects.toThrow(/^pmapi: options\.webhooks\.allowLoopback must be true or false$/);
    await expect(createPmapi({ store: fakeStore, rateLimiter: true } as any)).rejects.toThrow(/pmapi: options\.rateLimiter must be createRateLimiter/);
    await expect(createPmapi({ store: fakeStore, docsBaseUrl: 'docs' } as any)).rejects.toThrow(/pmapi: options\.docsBaseUrl must be an absolute URL/);
    const err = await createPmapi({ store: fakeStore, basePath: 'v3', secret: 5 } as any).catch((e: Error) => e);
    expect((err as Error).message.split('\n')).toHaveLength(2);
  });

  it('valid options (a trailing slash on basePath included, explicit undefined) are accepted', async () => {
    const store = await openSqliteStore();
    const api = await createPmapi({ store, basePath: '/pm/api/v3/', rateLimiter: undefined, onRequest: () => undefined, webhookSender: async () => ({ ok: true, status: 204, durationMs: 1, error: null }) });
    const res = await api.handle({ method: 'GET', url: '/pm/api/v3/health', headers: {} });
    expect(res.status).toBe(200);
    await api.close();
  });
});

describe("README 'Operating it': onRequest with a pino-style logger (issue 16)", () => {
  it('logger.info(info, "request") receives one record per request, without the token', async () => {
    const lines: [unknown, string][] = [];
    const logger = { info: (obj: unknown, msg: string) => lines.push([obj, msg]) }; // pino's info(obj, msg)
    const store = await openSqliteStore();
    const api = await createPmapi({ store, onRequest: (info) => logger.info(info, 'request') });
    await api.handle({ method: 'GET', url: '/api/v3/tasks', headers: { authorization: 'Bearer pm_secret_value' } });
    expect(lines).toEqual([[expect.objectContaining({ method: 'GET', route: null, status: 401, workspace: null }), 'request']]);
    expect(JSON.stringify(lines)).not.toContain('pm_secret_value');
    await api.close();
  });
});
