import type { Kysely } from 'kysely';
import type { DialectSupport } from '../dialect';

/** A remembered Idempotency-Key (spec rule 11) as stored: `status` and `response` are null while its request runs. */
export interface IdempotencyKeyRow {
  scope: string;
  key: string;
  fingerprint: string;
  status: unknown;
  response: unknown;
  created_at: unknown;
}

/** Forget one key if it was created at or before `cutoff` (ms): an expired key may be claimed afresh. */
export async function dropKeyCreatedBy(trx: Kysely<any>, d: DialectSupport, scope: string, key: string, cutoff: number): Promise<void> {
  await trx.deleteFrom('idempotency_keys').where('scope', '=', scope).where('key', '=', key)
    .where('created_at', '<=', d.encode('timestamp', cutoff)).execute();
}

/**
 * Claim a key for a running request (`INSERT … ON CONFLICT DO NOTHING`, no
 * response yet). True when this call inserted it; false when the key is
 * already held (a concurrent writer waits for the holder's commit).
 */
export async function claimKey(
  trx: Kysely<any>, d: DialectSupport, k: { scope: string; key: string; fingerprint: string; now: number },
): Promise<boolean> {
  const claim = await trx.insertInto('idempotency_keys')
    .values({ scope: k.scope, key: k.key, fingerprint: k.fingerprint, status: null, response: null, created_at: d.encode('timestamp', k.now) })
    .onConflict((oc) => oc.columns(['scope', 'key']).doNothing())
    .executeTakeFirst();
  return Number(claim.numInsertedOrUpdatedRows ?? 0) !== 0;
}

/** The stored row of a key, if any. */
export async function keyRow(trx: Kysely<any>, scope: string, key: string): Promise<IdempotencyKeyRow | undefined> {
  const row = await trx.selectFrom('idempotency_keys').selectAll().where('scope', '=', scope).where('key', '=', key).executeTakeFirst();
  return row as IdempotencyKeyRow | undefined;
}

/** Store the response of a claimed key (its status, and body and headers as one JSON value). */
export async function storeKeyResponse(
  trx: Kysely<any>, d: DialectSupport, scope: string, key: string, status: number, response: { body: unknown; headers: Record<string, string> },
): Promise<void> {
  await trx.updateTable('idempotency_keys')
    .set({ status, response: d.encode('json', response) })
    .where('scope', '=', scope).where('key', '=', key).execute();
}

/** Forget every key created at or before `cutoff` (ms); returns how many went. */
export async function deleteKeysCreatedBy(db: Kysely<any>, d: DialectSupport, cutoff: number): Promise<number> {
  const r = await db.deleteFrom('idempotency_keys').where('created_at', '<=', d.encode('timestamp', cutoff)).executeTakeFirst();
  return Number(r.numDeletedRows);
}
