import type { Kysely } from 'kysely';
import type { DialectSupport } from '../dialect';
import { compileCached, holdOrRun, runCached } from '../statement-cache';
import { liveWebhooksParams, selectLiveWebhooks, type LiveWebhook } from './webhooks';

/**
 * Write a batch of outbox rows (`params` are their values, in column order).
 * With `webhooksOf` (a team id) and a dialect with writable CTEs, the same
 * statement also returns the team's live webhooks for the delivery queue.
 */
export async function insertOutbox(
  trx: Kysely<any>, d: DialectSupport, batch: Record<string, unknown>[], params: unknown[], webhooksOf?: string,
): Promise<LiveWebhook[] | undefined> {
  if (webhooksOf !== undefined && d.capabilities.writableCte) {
    const r = await runCached(trx, d.name, `outbox+webhooks:${batch.length}`, [...params, ...liveWebhooksParams(d, webhooksOf)],
      () => selectLiveWebhooks(trx.with('o', (db) => db.insertInto('outbox').values(batch)), d, webhooksOf));
    return r.rows as LiveWebhook[];
  }
  await runCached(trx, d.name, `outbox:${batch.length}`, params, () => trx.insertInto('outbox').values(batch));
  return undefined;
}

/** Write a batch of outbox rows, held to leave with the transaction's next statement where the connection can hold it (holdStatement). */
export async function insertOutboxBehind(trx: Kysely<any>, d: DialectSupport, batch: Record<string, unknown>[], params: unknown[]): Promise<void> {
  await holdOrRun(trx, compileCached(d.name, `outbox:${batch.length}`, params, () => trx.insertInto('outbox').values(batch)));
}
