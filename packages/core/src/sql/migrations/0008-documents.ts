import type { Migration } from 'kysely';
import type { DialectSupport } from '../dialect';
import { documentFolderResource, documentResource } from '../../resources/document.resource';
import { createTable, tableOf } from './table';

/** Documents and document folders: tables from the declarations. */
export function documents(d: DialectSupport): Migration {
  return {
    async up(db) {
      await createTable(db, d, documentFolderResource.table, tableOf(documentFolderResource)).execute();
      await db.schema.createIndex('document_folders_project_order').on('document_folders').columns(['project_id', 'order', 'id']).execute();
      await db.schema.createIndex('document_folders_parent').on('document_folders').columns(['parent_id']).execute();
      await createTable(db, d, documentResource.table, tableOf(documentResource)).execute();
      await db.schema.createIndex('documents_project_updated').on('documents').columns(['project_id', 'updated_at', 'id']).execute();
      await db.schema.createIndex('documents_team_updated').on('documents').columns(['team_id', 'updated_at', 'id']).execute();
      await db.schema.createIndex('documents_folder').on('documents').columns(['folder_id']).execute();
    },
  };
}
