import type { Kysely } from 'kysely';
import type { DialectSupport } from '../dialect';

/**
 * Due recurring rules across workspaces (the recurring-task job): active rows
 * whose next run is at or before `now`, earliest first, at most `limit`.
 * Table and column names come from the declaration.
 */
export async function dueRecurringRules(
  db: Kysely<any>, d: DialectSupport,
  o: { table: string; activeColumn: string; nextRunColumn: string; now: number; limit: number },
): Promise<Array<{ id: string; teamId: string }>> {
  const rows = await db.selectFrom(o.table).select(['id', 'team_id'])
    .where(o.activeColumn, '=', d.encode('boolean', true) as any)
    .where(o.nextRunColumn, '<=', d.encode('timestamp', o.now) as any)
    .orderBy(o.nextRunColumn).orderBy('id').limit(o.limit).execute();
  return rows.map((r) => ({ id: r.id as string, teamId: r.team_id as string }));
}
