import { sql, type Migration } from 'kysely';
import type { DialectSupport } from '../dialect';
import { reminderResource } from '../../resources/reminder.resource';
import { OVERDUE_CHECKS_TABLE } from '../queries/reminders';
import { createTable, tableOf } from './table';

/**
 * Reminders: the table from the declaration, indexed for a member's list by
 * date, a task's reminders, the job's due scan and its overdue scans; the
 * job's marker rows (tasks past their dueAt checked with nobody to remind);
 * and the tasks index the overdue scan walks (not completed, by dueAt).
 */
export function reminders(d: DialectSupport): Migration {
  return {
    async up(db) {
      await createTable(db, d, reminderResource.table, tableOf(reminderResource)).execute();
      await db.schema.createIndex('reminders_owner_date').on('reminders').columns(['team_id', 'created_by_id', 'date', 'id']).execute();
      await db.schema.createIndex('reminders_task').on('reminders').columns(['task_id', 'type']).execute();
      await db.schema.createIndex('reminders_type_task').on('reminders').columns(['type', 'task_id']).execute();
      await db.schema.createIndex('reminders_due').on('reminders').columns(['fired_at', 'date']).execute();
      await db.schema.createTable(OVERDUE_CHECKS_TABLE)
        .addColumn('task_id', sql.raw(d.ddl.id), (c) => c.primaryKey())
        .addColumn('team_id', sql.raw(d.ddl.id), (c) => c.notNull())
        .addColumn('due_at', sql.raw(d.ddl.timestamp), (c) => c.notNull())
        .execute();
      await db.schema.createIndex('tasks_overdue_scan').on('tasks').columns(['due_at', 'id'])
        .where(sql.ref('completed'), '=', d.encode('boolean', false) as never).execute();
    },
  };
}
