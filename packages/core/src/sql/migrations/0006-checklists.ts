import type { Migration } from 'kysely';
import type { DialectSupport } from '../dialect';
import { checklistItemResource, checklistResource } from '../../resources/checklist.resource';
import { createTable, tableOf } from './table';

/** Checklists and their items: tables from the declarations. */
export function checklists(d: DialectSupport): Migration {
  return {
    async up(db) {
      await createTable(db, d, checklistResource.table, tableOf(checklistResource)).execute();
      await db.schema.createIndex('checklists_task_order').on('checklists').columns(['task_id', 'order', 'id']).execute();
      await createTable(db, d, checklistItemResource.table, tableOf(checklistItemResource)).execute();
      await db.schema.createIndex('checklist_items_checklist_order').on('checklist_items').columns(['checklist_id', 'order', 'id']).execute();
    },
  };
}
