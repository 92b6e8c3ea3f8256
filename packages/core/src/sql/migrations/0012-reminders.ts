import type { Migration } from 'kysely';
import type { DialectSupport } from '../dialect';
import { reminderResource } from '../../resources/reminder.resource';
import { createTable, tableOf } from './table';

/** Reminders: the table from the declaration, indexed for a member's list by date, a task's reminders, and the job's due scan. */
export function reminders(d: DialectSupport): Migration {
  return {
    async up(db) {
      await createTable(db, d, reminderResource.table, tableOf(reminderResource)).execute();
      await db.schema.createIndex('reminders_owner_date').on('reminders').columns(['team_id', 'created_by_id', 'date', 'id']).execute();
      await db.schema.createIndex('reminders_task').on('reminders').columns(['task_id', 'type']).execute();
      await db.schema.createIndex('reminders_due').on('reminders').columns(['fired_at', 'date']).execute();
    },
  };
}
