import { beforeAll, afterAll } from 'vitest';
import { createPmapi, type Pmapi } from '@pmapi/core';
import type { DialectSupport } from '@pmapi/core/sql';
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
 * Two APIs over the harness's store: the harness's own, counting each JSON
 * row shape the store builds, and one whose store builds none (every page
 * from rows). Same data, same secret, same clock.
 */
export async function twins(h: Harness): Promise<{ api: Pmapi; built: { count: number }; restore: () => void }> {
  const built = { count: 0 };
  const d = h.store.dialect as { jsonObject?: DialectSupport['jsonObject'] };
  const jsonObject = d.jsonObject;
  if (jsonObject) {
    d.jsonObject = (fields) => {
      built.count++;
      return jsonObject.call(d, fields);
    };
  }
  const api = await createPmapi({ store: { ...h.store, dialect: { ...h.store.dialect, jsonObject: undefined } }, clock: h.clock, rateLimiter: false });
  return { api, built, restore: () => { d.jsonObject = jsonObject; } };
}

