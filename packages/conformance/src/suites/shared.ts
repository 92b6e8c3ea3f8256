import { beforeAll, afterAll } from 'vitest';
import { createPmapi, type Pmapi } from '@pmapi/core';
import { harness, type Harness, type StoreFactory } from '../kit';

/** Helpers several suites share. */

/** Run `fn` and return the outbox events it added (by eventId, so ordering within equal timestamps does not matter). */
export async function during<T>(h: Harness, fn: () => Promise<T>): Promise<{ result: T; events: any[] }> {
  const seen = new Set((await h.outbox()).map((e) => e.eventId));
  const result = await fn();
  const events = (await h.outbox()).filter((e) => !seen.has(e.eventId));
  return { result, events };
}

/** The events of one type (and aggregate, when given). */
export function ofType(events: any[], type: string, aggregateId?: string): any[] {
  return events.filter((e) => e.type === type && (aggregateId === undefined || e.aggregateId === aggregateId));
}

/** A fresh harness for the enclosing describe: call inside `describe`, read it inside tests. */
export function harnessPerDescribe(factory: StoreFactory): () => Harness {
  let h: Harness;
  beforeAll(async () => {
    h = await harness(factory);
  });
  afterAll(() => h.close());
  return () => h;
}

/**
 * A second API over the harness's store whose store builds no JSON (every
 * page from rows: the one path every store has). Same data, same secret, same
 * clock: its answers must equal the harness API's byte for byte.
 */
export async function rowsTwin(h: Harness): Promise<Pmapi> {
  return createPmapi({ store: { ...h.store, dialect: { ...h.store.dialect, jsonObject: undefined, jsonFromRows: false } }, clock: h.clock, rateLimiter: false });
}

/**
 * GET `url` (under /api/v3) through the harness API and through its rows twin
 * as `token`: both answers, and whether the two ran different statements
 * (the harness API took the fast path).
 */
export async function bothPaths(h: Harness, twin: Pmapi, url: string, token: string) {
  const req = { method: 'GET', url: `/api/v3${url}`, headers: { authorization: `Bearer ${token}`, 'x-request-id': 'same' } };
  let fast: Awaited<ReturnType<Pmapi['handle']>> | undefined;
  let rows: Awaited<ReturnType<Pmapi['handle']>> | undefined;
  const qa = await h.countQueries(async () => { fast = await h.api.handle(req); });
  const qb = await h.countQueries(async () => { rows = await twin.handle(req); });
  return { fast: fast!, rows: rows!, tookFastPath: qa.join('\n') !== qb.join('\n') };
}

/**
 * `count` more projects copied from the project `templateId` (so the same
 * members open them), written straight to the store: through the API this
 * would take long. Ids are `prefix` plus a zero-padded number.
 */
export async function copyProjects(h: Harness, templateId: string, count: number, prefix: string): Promise<void> {
  const row = await h.store.db.selectFrom('projects').selectAll().where('id', '=', templateId).executeTakeFirstOrThrow();
  // JSON columns come back parsed on some drivers: write them back as JSON text.
  const raw = Object.fromEntries(Object.entries(row).map(([k, v]) => [k, v !== null && typeof v === 'object' && !(v instanceof Date) ? JSON.stringify(v) : v]));
  const rows = Array.from({ length: count }, (_, i) => ({ ...raw, id: `${prefix}${String(i).padStart(6, '0')}`, name: `${prefix} ${i}`, nice_id: `${prefix.slice(0, 3).toUpperCase()}${i}` }));
  for (let i = 0; i < rows.length; i += 100) await h.store.db.insertInto('projects').values(rows.slice(i, i + 100)).execute();
}
