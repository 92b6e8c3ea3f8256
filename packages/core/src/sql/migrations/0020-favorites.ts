import type { Migration } from 'kysely';
import type { DialectSupport } from '../dialect';
import { favoriteFolderResource, favoriteResource } from '../../resources/favorite.resource';
import { createTable, tableOf } from './table';

/** Favorite folders (member stamps, no actor columns: tableOf leaves them out) and favorites: tables from the declarations, indexed for a member's sidebar and for a target's favorites. */
export function favorites(d: DialectSupport): Migration {
  return {
    async up(db) {
      await createTable(db, d, favoriteFolderResource.table, tableOf(favoriteFolderResource)).execute();
      await db.schema.createIndex('favorite_folders_owner_order').on('favorite_folders').columns(['team_id', 'created_by_id', 'order', 'id']).execute();
      await createTable(db, d, favoriteResource.table, tableOf(favoriteResource)).execute();
      await db.schema.createIndex('favorites_owner_folder_order').on('favorites').columns(['team_id', 'created_by_id', 'favorite_folder_id', 'order', 'id']).execute();
      await db.schema.createIndex('favorites_target').on('favorites').columns(['target_id', 'target_type']).execute();
      await db.schema.createIndex('favorites_folder').on('favorites').columns(['favorite_folder_id']).execute();
    },
  };
}
