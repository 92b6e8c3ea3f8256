import type { Migration } from 'kysely';
import type { DialectSupport } from '../dialect';
import { goalGroupResource, goalResource } from '../../resources/goal.resource';
import { timeEntryResource } from '../../resources/time-entry.resource';
import { createTable, tableOf } from './table';

/** Goal groups, goals and time entries: tables from the declarations. */
export function goalsAndTime(d: DialectSupport): Migration {
  return {
    async up(db) {
      await createTable(db, d, goalGroupResource.table, tableOf(goalGroupResource)).execute();
      await db.schema.createIndex('goal_groups_team_order').on('goal_groups').columns(['team_id', 'order', 'id']).execute();
      await createTable(db, d, goalResource.table, tableOf(goalResource)).execute();
      await db.schema.createIndex('goals_team_group').on('goals').columns(['team_id', 'group_id']).execute();
      await createTable(db, d, timeEntryResource.table, tableOf(timeEntryResource)).execute();
      await db.schema.createIndex('time_entries_team_member_start').on('time_entries').columns(['team_id', 'member_id', 'start_at', 'id']).execute();
      await db.schema.createIndex('time_entries_task').on('time_entries').columns(['task_id']).execute();
      await db.schema.createIndex('time_entries_project_start').on('time_entries').columns(['project_id', 'start_at', 'id']).execute();
      // The workspace-wide list in its default order (-startAt).
      await db.schema.createIndex('time_entries_team_start').on('time_entries').columns(['team_id', 'start_at', 'id']).execute();
    },
  };
}
