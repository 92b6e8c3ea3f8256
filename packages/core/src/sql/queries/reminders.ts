import type { Kysely } from 'kysely';
import type { DialectSupport } from '../dialect';
import type { StoredResource } from '../shape';

/*
 * The reminders job's scans (jobs/reminders.ts), across every workspace:
 * rows as the driver gives them (the caller decodes them with Repo.decode).
 * Columns are named through the declarations (`columnOf`), values encoded by
 * the dialect.
 */

type Row = Record<string, unknown>;

/** Overdue reminders whose task is completed, or whose task's dueAt is cleared or no longer their date (at most `limit`). */
export async function staleOverdueReminders(db: Kysely<any>, d: DialectSupport, rem: StoredResource, tasks: StoredResource, limit: number): Promise<Row[]> {
  const rc = rem.columnOf;
  const tc = tasks.columnOf;
  return db.selectFrom(`${rem.table} as r`).innerJoin(`${tasks.table} as t`, 't.id', `r.${rc.taskId}`).selectAll('r')
    .where(`r.${rc.type}`, '=', 'overdue')
    .where((eb) => eb.or([
      eb(`t.${tc.completed}`, '=', d.encode('boolean', true) as any),
      eb(`t.${tc.dueAt}`, 'is', null),
      eb(`t.${tc.dueAt}`, '<>', eb.ref(`r.${rc.date}`)),
    ]))
    .orderBy('r.id').limit(limit).execute() as Promise<Row[]>;
}

/**
 * Tasks whose dueAt is at or before `now`, not completed, with no overdue
 * reminder dated their current dueAt; in id order after `after` (at most `limit`).
 */
export async function tasksNeedingOverdue(
  db: Kysely<any>, d: DialectSupport, rem: StoredResource, tasks: StoredResource, now: number, after: string, limit: number,
): Promise<Row[]> {
  const rc = rem.columnOf;
  const tc = tasks.columnOf;
  return db.selectFrom(`${tasks.table} as t`).selectAll('t')
    .where(`t.${tc.dueAt}`, '<=', d.encode('timestamp', now) as any)
    .where(`t.${tc.completed}`, '=', d.encode('boolean', false) as any)
    .where('t.id', '>', after)
    .where((eb) => eb.not(eb.exists(eb.selectFrom(`${rem.table} as r`).select('r.id')
      .whereRef(`r.${rc.taskId}`, '=', 't.id').where(`r.${rc.type}`, '=', 'overdue').whereRef(`r.${rc.date}`, '=', `t.${tc.dueAt}`))))
    .orderBy('t.id').limit(limit).execute() as Promise<Row[]>;
}

/** Reminders that have not fired and whose date is at or before `now`, earliest first (at most `limit`). */
export async function dueReminders(db: Kysely<any>, d: DialectSupport, rem: StoredResource, now: number, limit: number): Promise<Row[]> {
  const rc = rem.columnOf;
  return db.selectFrom(rem.table).selectAll()
    .where(rc.firedAt!, 'is', null).where(rc.date!, '<=', d.encode('timestamp', now) as any)
    .orderBy(rc.date!).orderBy('id').limit(limit).execute() as Promise<Row[]>;
}
