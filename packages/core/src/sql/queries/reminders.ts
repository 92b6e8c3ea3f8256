import { sql, type Expression, type ExpressionBuilder, type Kysely, type SqlBool } from 'kysely';
import type { DialectSupport } from '../dialect';
import type { StoredResource } from '../shape';

/*
 * The reminders job's scans (jobs/reminders.ts), across every workspace:
 * rows as the driver gives them (the caller decodes them with Repo.decode).
 * Columns of the declared resources are named through the declarations
 * (`columnOf`), values encoded by the dialect; `projects`, `members`,
 * `roles` and `links` by their fixed names (as sql/queries/projects.ts).
 */

type Row = Record<string, unknown>;

/** Marker rows: a task past its dueAt that was checked and had nobody to remind (not scanned again for that dueAt). */
export const OVERDUE_CHECKS_TABLE = 'reminder_overdue_checks';

/**
 * The SQL form of "member `m` may open project `p`" (services/access.ts
 * `canOpen` and `seesAll`): the member's role holds `viewAllProjects` (the
 * built-in owner and manager, or an editable role listing it), or the member
 * owns the project, or is not a guest and the project is public or
 * workspace-wide, or is one of its members. `m` and `p` are aliases of
 * `members` and `projects` rows in the enclosing query.
 */
function canOpen(eb: ExpressionBuilder<any, any>, d: DialectSupport, m: string, p: string): Expression<SqlBool> {
  return eb.or([
    eb(`${p}.owner_id`, '=', eb.ref(`${m}.id`)),
    eb.and([eb(`${m}.role`, '<>', 'client'), eb(`${p}.access_type`, 'in', ['public', 'workspace'])]),
    eb.exists(eb.selectFrom('links as pl').select('pl.related_id')
      .where('pl.kind', '=', 'project.members').whereRef('pl.parent_id', '=', `${p}.id`).whereRef('pl.related_id', '=', `${m}.id`)),
    eb.exists(eb.selectFrom('roles as ro').select('ro.id').whereRef('ro.id', '=', `${m}.role_id`).where((e) => e.or([
      e.and([e('ro.editable', '=', bool(d, false)), e('ro.name', 'in', ['owner', 'manager'])]),
      e(sql<string>`cast(ro.permissions as text)`, 'like', '%"viewAllProjects"%'),
    ]))),
  ]);
}

/** Booleans as the dialect stores them (for comparisons in `canOpen`'s callers). */
function bool(d: DialectSupport, v: boolean): any {
  return d.encode('boolean', v);
}

/**
 * Reminders that no longer hold (at most `limit`). Overdue ones: their task
 * is gone (a delete that raced the job), completed, archived, without a
 * dueAt or with another one than their date; its project is trashed or
 * archived; or their recipient is no longer one (not an assignee, or not
 * the creator of a task without assignees), no longer an active member, or
 * can no longer open the project. Custom ones: their task is gone, or their
 * creator is no longer a member or can no longer open the project.
 */
export async function staleReminders(db: Kysely<any>, d: DialectSupport, rem: StoredResource, tasks: StoredResource, limit: number): Promise<Row[]> {
  const rc = rem.columnOf;
  const tc = tasks.columnOf;
  const assignees = (eb: ExpressionBuilder<any, any>) => eb.selectFrom('links as al').select('al.related_id')
    .where('al.kind', '=', 'task.assignees').whereRef('al.parent_id', '=', 't.id');
  return db.selectFrom(`${rem.table} as r`)
    .leftJoin(`${tasks.table} as t`, 't.id', `r.${rc.taskId}`)
    .leftJoin('projects as p', 'p.id', `t.${tc.projectId}`)
    .leftJoin('members as m', 'm.id', `r.${rc.createdById}`)
    .selectAll('r')
    .where((eb) => eb.or([
      eb('t.id', 'is', null),
      eb('p.id', 'is', null),
      eb('m.id', 'is', null),
      eb.not(canOpen(eb, d, 'm', 'p')),
      eb.and([eb(`r.${rc.type}`, '=', 'overdue'), eb.or([
        eb(`t.${tc.completed}`, '=', bool(d, true)),
        eb(`t.${tc.archived}`, '=', bool(d, true)),
        eb(`t.${tc.dueAt}`, 'is', null),
        eb(`t.${tc.dueAt}`, '<>', eb.ref(`r.${rc.date}`)),
        eb('p.purge_at', 'is not', null),
        eb('p.archived', '=', bool(d, true)),
        eb('m.active', '<>', bool(d, true)),
        // An assignee no more, or (no assignees) not the task's creator.
        eb.and([eb.exists(assignees(eb)), eb(`r.${rc.createdById}`, 'not in', assignees(eb))]),
        eb.and([eb.not(eb.exists(assignees(eb))), eb.or([eb(`t.${tc.createdById}`, 'is', null), eb(`t.${tc.createdById}`, '<>', eb.ref(`r.${rc.createdById}`))])]),
      ])]),
    ]))
    .orderBy('r.id').limit(limit).execute() as Promise<Row[]>;
}

/**
 * Tasks whose dueAt is at or before `now`, not completed nor archived, in a
 * live (not trashed) project that is not archived, with no overdue reminder
 * dated their current dueAt and not already checked for that dueAt (a marker
 * row of {@link OVERDUE_CHECKS_TABLE}); in id order after `after` (at most `limit`).
 */
export async function tasksNeedingOverdue(
  db: Kysely<any>, d: DialectSupport, rem: StoredResource, tasks: StoredResource, now: number, after: string, limit: number,
): Promise<Row[]> {
  const rc = rem.columnOf;
  const tc = tasks.columnOf;
  return db.selectFrom(`${tasks.table} as t`).innerJoin('projects as p', 'p.id', `t.${tc.projectId}`).selectAll('t')
    .where(`t.${tc.dueAt}`, '<=', d.encode('timestamp', now) as any)
    // A literal, so the partial index tasks_overdue_scan (migration 0012) applies.
    .where(`t.${tc.completed}`, '=', sql.lit(bool(d, false)))
    .where(`t.${tc.archived}`, '=', bool(d, false))
    .where('p.purge_at', 'is', null)
    .where('p.archived', '=', bool(d, false))
    .where('t.id', '>', after)
    .where((eb) => eb.not(eb.exists(eb.selectFrom(`${rem.table} as r`).select('r.id')
      .where(`r.${rc.type}`, '=', 'overdue').whereRef(`r.${rc.taskId}`, '=', 't.id').whereRef(`r.${rc.date}`, '=', `t.${tc.dueAt}`))))
    .where((eb) => eb.not(eb.exists(eb.selectFrom(`${OVERDUE_CHECKS_TABLE} as c`).select('c.task_id')
      .whereRef('c.task_id', '=', 't.id').whereRef('c.due_at', '=', `t.${tc.dueAt}`))))
    .orderBy('t.id').limit(limit).execute() as Promise<Row[]>;
}

/**
 * Who is told that these tasks are overdue, in one statement: each task's
 * assignees, or its creator when it has none, that are active members able
 * to open the task's project. Pairs (task id, member id).
 */
export async function overdueRecipients(db: Kysely<any>, d: DialectSupport, tasks: StoredResource, taskIds: readonly string[]): Promise<Array<{ taskId: string; memberId: string }>> {
  if (taskIds.length === 0) return [];
  const tc = tasks.columnOf;
  const rows = await db.selectFrom(`${tasks.table} as t`)
    .innerJoin('projects as p', 'p.id', `t.${tc.projectId}`)
    .innerJoin('members as m', (j) => j.onRef('m.team_id', '=', 't.team_id').on((eb) => eb.or([
      eb.exists(eb.selectFrom('links as al').select('al.related_id')
        .where('al.kind', '=', 'task.assignees').whereRef('al.parent_id', '=', 't.id').whereRef('al.related_id', '=', 'm.id')),
      eb.and([
        eb.not(eb.exists(eb.selectFrom('links as an').select('an.related_id').where('an.kind', '=', 'task.assignees').whereRef('an.parent_id', '=', 't.id'))),
        eb('m.id', '=', eb.ref(`t.${tc.createdById}`)),
      ]),
    ])))
    .select(['t.id as task_id', 'm.id as member_id'])
    .where('t.id', 'in', taskIds as string[])
    .where('m.active', '=', bool(d, true))
    .where((eb) => canOpen(eb, d, 'm', 'p'))
    .orderBy('t.id').orderBy('m.id').execute();
  return rows.map((r) => ({ taskId: r.task_id as string, memberId: r.member_id as string }));
}

/** Mark these tasks checked for their current dueAt: nobody was to be reminded (one statement). */
export async function markOverdueChecked(db: Kysely<any>, d: DialectSupport, rows: ReadonlyArray<{ taskId: string; teamId: string; dueAt: number }>): Promise<void> {
  if (rows.length === 0) return;
  await db.insertInto(OVERDUE_CHECKS_TABLE)
    .values(rows.map((r) => ({ task_id: r.taskId, team_id: r.teamId, due_at: d.encode('timestamp', r.dueAt) })))
    .onConflict((oc) => oc.column('task_id').doUpdateSet((eb) => ({ due_at: eb.ref('excluded.due_at'), team_id: eb.ref('excluded.team_id') })))
    .execute();
}

/** Drop marker rows whose task is gone (at most `limit` a call). */
export async function dropOrphanOverdueChecks(db: Kysely<any>, tasks: StoredResource, limit: number): Promise<void> {
  const orphans = db.selectFrom(`${OVERDUE_CHECKS_TABLE} as c`).select('c.task_id')
    .where((e) => e.not(e.exists(e.selectFrom(`${tasks.table} as t`).select('t.id').whereRef('t.id', '=', 'c.task_id')))).limit(limit);
  await db.deleteFrom(OVERDUE_CHECKS_TABLE).where('task_id', 'in', orphans).execute();
}

/** Reminders that have not fired and whose date is at or before `now`, earliest first (at most `limit`). */
export async function dueReminders(db: Kysely<any>, d: DialectSupport, rem: StoredResource, now: number, limit: number): Promise<Row[]> {
  const rc = rem.columnOf;
  return db.selectFrom(rem.table).selectAll()
    .where(rc.firedAt!, 'is', null).where(rc.date!, '<=', d.encode('timestamp', now) as any)
    .orderBy(rc.date!).orderBy('id').limit(limit).execute() as Promise<Row[]>;
}

/** How many custom reminders a member has (on one task, when `taskId` is given). */
export async function countCustomReminders(db: Kysely<any>, rem: StoredResource, teamId: string, memberId: string, taskId?: string): Promise<number> {
  const rc = rem.columnOf;
  let q = db.selectFrom(rem.table).select((eb) => eb.fn.countAll().as('n'))
    .where('team_id', '=', teamId).where(rc.createdById!, '=', memberId).where(rc.type!, '=', 'custom');
  if (taskId !== undefined) q = q.where(rc.taskId!, '=', taskId);
  const row = await q.executeTakeFirstOrThrow();
  return Number(row.n);
}
