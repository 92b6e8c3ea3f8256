import type { Migration } from 'kysely';
import type { DialectSupport } from '../dialect';
import { formResource } from '../../resources/form.resource';
import { createTable, tableOf } from './table';

/** Forms: the table from the declaration (questions live in the row, so they go with it). */
export function forms(d: DialectSupport): Migration {
  return {
    async up(db) {
      await createTable(db, d, formResource.table, tableOf(formResource)).execute();
      await db.schema.createIndex('forms_team_created').on('forms').columns(['team_id', 'created_at', 'id']).execute();
      await db.schema.createIndex('forms_project').on('forms').columns(['project_id']).execute();
      // releaseFormTargets looks forms up by target on every list or status delete and project purge.
      await db.schema.createIndex('forms_target_status').on('forms').columns(['target_status_id']).execute();
      await db.schema.createIndex('forms_target_list').on('forms').columns(['target_list_id']).execute();
    },
  };
}
