import type { Migration } from 'kysely';
import type { DialectSupport } from '../dialect';
import { customFieldResource } from '../../resources/custom-field.resource';
import { createTable, tableOf } from './table';

/** Custom fields: the table from the declaration (values live in the rows of tasks, lists and projects). */
export function customFields(d: DialectSupport): Migration {
  return {
    async up(db) {
      await createTable(db, d, customFieldResource.table, tableOf(customFieldResource)).execute();
      await db.schema.createIndex('custom_fields_team_name').on('custom_fields').columns(['team_id', 'name', 'id']).execute();
      await db.schema.createIndex('custom_fields_project').on('custom_fields').columns(['project_id', 'name', 'id']).execute();
    },
  };
}
