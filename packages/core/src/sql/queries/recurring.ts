import type { Kysely } from 'kysely';
import type { DialectSupport } from '../dialect';

/**
 * Due recurring rules across workspaces (the recurring-task job): active rows
 * whose next run is at or before `now` and whose project is not in the trash,
 * earliest first (then by id), strictly after `after` in that order when
 * given (keyset paging: a run reads batch after batch without seeing a rule
 * twice), at most `limit`. Table and column names come from the declarations.
 */
export async function dueRecurringRules(
  db: Kysely<any>, d: DialectSupport,
  o: {
    table: string; activeColumn: string; nextRunColumn: string; projectColumn: string; projectsTable: string;
    now: number; limit: number; after?: { nextRunAt: number; id: string };
  },
): Promise<Array<{ id: string; teamId: string; nextRunAt: number }>> {
  const r = (c: string) => `r.${c}`;
  let q = db.selectFrom(`${o.table} as r`)
    .innerJoin(`${o.projectsTable} as p`, (j) => j.onRef('p.id', '=', r(o.projectColumn) as any).onRef('p.team_id', '=', 'r.team_id' as any))
    .select(['r.id as id', 'r.team_id as team_id', `${r(o.nextRunColumn)} as next_run_at` as any])
    .where(r(o.activeColumn) as any, '=', d.encode('boolean', true) as any)
    .where(r(o.nextRunColumn) as any, '<=', d.encode('timestamp', o.now) as any)
    .where('p.purge_at' as any, 'is', null);
  if (o.after) {
    const at = d.encode('timestamp', o.after.nextRunAt) as any;
    const id = o.after.id;
    q = q.where((eb: any) => eb.or([eb(r(o.nextRunColumn), '>', at), eb.and([eb(r(o.nextRunColumn), '=', at), eb('r.id', '>', id)])]));
  }
  const rows = await q.orderBy(r(o.nextRunColumn) as any).orderBy('r.id' as any).limit(o.limit).execute();
  return rows.map((row: any) => ({ id: row.id as string, teamId: row.team_id as string, nextRunAt: d.decode('timestamp', row.next_run_at) as number }));
}
