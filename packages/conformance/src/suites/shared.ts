import { beforeAll, afterAll } from 'vitest';
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
