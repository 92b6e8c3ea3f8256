import type { OpResult } from '../presenters/v3';
import type { Engine } from './engine';
import type { PendingEvent, Principal, WriteContext } from './context';
import { checkKey, fingerprintOf, once } from './idempotency';
import { liveWebhooksAhead } from '../sql/queries/webhooks';
import { isLostUpdate } from '../sql/repo';
import { ProblemError } from '../errors/problem';

/** What a mutation needs of its request: the parsed body and the Idempotency-Key, with the method and URL that fingerprint it. */
export interface MutationRequest {
  method: string;
  url: string;
  body: unknown;
  idempotencyKey: string | undefined;
}

/**
 * A mutation, for every presenter (v3 and legacy v1.0): one transaction
 * holding the change, its events and its idempotency record. A replayed
 * answer carries `idempotency-replayed: true`.
 */
export async function runMutation(engine: Engine, principal: Principal, req: MutationRequest, op: (ctx: WriteContext, body: unknown) => Promise<OpResult>): Promise<OpResult> {
  const { body, idempotencyKey: key } = req;
  if (key !== undefined) checkKey(key);
  const { result, replayed } = await engine.store.transaction(async (trx): Promise<{ result: OpResult; replayed: boolean }> => {
    const events: PendingEvent[] = [];
    const ctx = engine.writeContext(principal, trx, events);
    // On Postgres the team's webhooks are read with the first statement, so the events and their jobs can leave with the commit.
    const ahead = await liveWebhooksAhead(trx, engine.store.dialect, principal.teamId);
    const run = async (): Promise<OpResult> => {
      const r = await op(ctx, body);
      await engine.flushEvents(trx, principal, events, ctx.now, ahead);
      return r;
    };
    if (key === undefined) return { result: await run(), replayed: false };
    return once(trx, engine.store.dialect, {
      scope: `${principal.teamId}:${principal.memberId}`, key, fingerprint: fingerprintOf(req.method.toUpperCase(), req.url, body), now: ctx.now,
    }, run);
  }).catch((err: unknown) => {
    // An update held to leave with the commit found its row changed (Repo.updateBehind): nothing was committed.
    if (isLostUpdate(err)) throw new ProblemError('stale_write', 'The record changed while this update ran');
    throw err;
  });
  if (replayed) return { ...result, headers: { ...(result.headers ?? {}), 'idempotency-replayed': 'true' } };
  return result;
}
