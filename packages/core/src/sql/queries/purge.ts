import type { Kysely } from 'kysely';
import type { DialectSupport } from '../dialect';

/**
 * Soft-deleted rows of `table`, in every workspace, whose purge time is at or
 * before `now`: the oldest first, at most `limit` (one purge batch). Raw rows.
 */
export async function rowsDueForPurge(
  trx: Kysely<any>, d: DialectSupport, table: string, now: number, limit: number,
): Promise<Record<string, unknown>[]> {
  return trx.selectFrom(table).selectAll()
    .where('purge_at', '<=', d.encode('timestamp', now))
    .orderBy('purge_at').limit(limit).execute();
}
