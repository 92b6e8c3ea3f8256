import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import { ProblemError } from '../errors/problem';
import type { DialectSupport } from '../sql/dialect';
import { claimKey, deleteKeysCreatedBy, dropKeyCreatedBy, keyRow, storeKeyResponse } from '../sql/queries/idempotency';
import type { OpResult } from './engine';

/** How long a key is remembered (spec rule 11). */
export const IDEMPOTENCY_TTL_MS = 10 * 60 * 1000;
export const IDEMPOTENCY_KEY_MAX = 250;

export function checkKey(key: string): void {
  if (key.length === 0 || key.length > IDEMPOTENCY_KEY_MAX || !/^[\x21-\x7e]+$/.test(key)) {
    throw new ProblemError('validation_failed', `Idempotency-Key must be 1-${IDEMPOTENCY_KEY_MAX} visible ASCII characters`, {
      errors: [{ field: 'Idempotency-Key', code: 'invalid_key', message: `1-${IDEMPOTENCY_KEY_MAX} visible ASCII characters` }],
    });
  }
}

/** Fingerprint of a request: method, path with query, and the body with its keys sorted. */
export function fingerprintOf(method: string, url: string, body: unknown): string {
  return createHash('sha256').update(`${method} ${url}\n${canonical(body)}`).digest('hex');
}

function canonical(v: unknown): string {
  if (v === undefined) return '';
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  const keys = Object.keys(v).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`).join(',')}}`;
}

/**
 * Run a mutation at most once per key (spec rule 11), inside the caller's
 * transaction: the key is claimed first (`INSERT … ON CONFLICT DO NOTHING`)
 * and its response stored by the same commit as the change, so a concurrent
 * request with the key waits for that commit and then replays. A failed
 * mutation rolls its claim back with it.
 */
export async function once(
  trx: Kysely<any>,
  d: DialectSupport,
  o: { scope: string; key: string; fingerprint: string; now: number },
  run: () => Promise<OpResult>,
): Promise<{ result: OpResult; replayed: boolean }> {
  await dropKeyCreatedBy(trx, d, o.scope, o.key, o.now - IDEMPOTENCY_TTL_MS);
  if (!(await claimKey(trx, d, o))) {
    const row = await keyRow(trx, o.scope, o.key);
    if (!row) throw new ProblemError('idempotency_key_in_progress', 'A request with this Idempotency-Key is still running; retry shortly');
    if (row.fingerprint !== o.fingerprint) {
      throw new ProblemError('idempotency_key_reused', 'This Idempotency-Key was used with a different request');
    }
    if (row.status === null) throw new ProblemError('idempotency_key_in_progress', 'A request with this Idempotency-Key is still running; retry shortly');
    const stored = d.decode('json', row.response) as { body?: unknown; headers?: Record<string, string> };
    // A bodiless response (204) was stored with body null: replay it bodiless.
    return { result: { status: Number(row.status), body: stored.body ?? undefined, headers: stored.headers }, replayed: true };
  }
  const result = await run();
  const kept = result.replay ?? result;
  await storeKeyResponse(trx, d, o.scope, o.key, kept.status, { body: kept.body ?? null, headers: kept.headers ?? {} });
  return { result, replayed: false };
}

/** Forget keys past their time. */
export async function sweepKeys(db: Kysely<any>, d: DialectSupport, now: number): Promise<number> {
  return deleteKeysCreatedBy(db, d, now - IDEMPOTENCY_TTL_MS);
}
