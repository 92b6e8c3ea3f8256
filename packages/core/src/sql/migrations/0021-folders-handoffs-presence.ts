import { sql, type Migration } from 'kysely';
import type { DialectSupport } from '../dialect';
import { projectFolderResource } from '../../resources/project-folder.resource';
import { taskHandoffResource } from '../../resources/task-handoff.resource';
import { presenceStatusResource } from '../../resources/presence-status.resource';
import { createTable, tableOf } from './table';

/**
 * Project folders, task handoffs and presence statuses (issue 14 part b):
 * tables from the declarations. The outbox gains what the activity feed
 * (routes/activity.ts) scopes by: `audience` (the members a private record's
 * event is for, as `,id1,id2,`; null: everyone who may read the resource)
 * and `member_id` (the member whose request wrote the event), with an index
 * for the feed's newest-first keyset pages. Earlier events, whose audience
 * was never recorded, are shown to nobody.
 */
export function foldersHandoffsPresence(d: DialectSupport): Migration {
  return {
    async up(db) {
      await createTable(db, d, projectFolderResource.table, tableOf(projectFolderResource)).execute();
      await db.schema.createIndex('project_folders_portfolio_order').on('project_folders').columns(['portfolio_id', 'order', 'id']).execute();
      await createTable(db, d, taskHandoffResource.table, tableOf(taskHandoffResource)).execute();
      await db.schema.createIndex('task_handoffs_task').on('task_handoffs').columns(['task_id']).execute();
      await createTable(db, d, presenceStatusResource.table, tableOf(presenceStatusResource)).execute();
      // One presence status per member.
      await db.schema.createIndex('presence_statuses_member').unique().on('presence_statuses').columns(['team_id', 'member_id']).execute();
      await db.schema.alterTable('outbox').addColumn('audience', sql.raw(d.ddl.text)).execute();
      await db.schema.alterTable('outbox').addColumn('member_id', sql.raw(d.ddl.id)).execute();
      // Events recorded before now carry no audience: shown to nobody, rather than a private record's event to everyone.
      await db.updateTable('outbox').set({ audience: ',' }).execute();
      await db.schema.createIndex('outbox_team_created').on('outbox').columns(['team_id', 'created_at', 'id']).execute();
      await db.schema.createIndex('project_folder_of_projects').on('projects').columns(['project_folder_id']).execute();
    },
  };
}
