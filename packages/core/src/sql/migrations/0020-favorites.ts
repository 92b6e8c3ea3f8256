import type { Migration } from 'kysely';
import type { DialectSupport } from '../dialect';
import { favoriteFolderResource, favoriteResource } from '../../resources/favorite.resource';
import { createTable, tableOf, type Cols } from './table';

/** The common actor columns, which a resource with member stamps (`memberStamps`: favorite folders) does not carry. */
const ACTOR_COLUMNS = ['created_by_actor_id?', 'updated_by_actor_id?', 'created_by_actor_type?', 'updated_by_actor_type?'];

function withoutActors(cols: Cols): Cols {
  const out = { ...cols };
  for (const c of ACTOR_COLUMNS) delete out[c];
  return out;
}

/** Favorite folders and favorites: tables from the declarations, indexed for a member's sidebar and for a target's favorites. */
export function favorites(d: DialectSupport): Migration {
  return {
    async up(db) {
      await createTable(db, d, favoriteFolderResource.table, withoutActors(tableOf(favoriteFolderResource))).execute();
      await db.schema.createIndex('favorite_folders_owner_order').on('favorite_folders').columns(['team_id', 'created_by_id', 'order', 'id']).execute();
      await createTable(db, d, favoriteResource.table, tableOf(favoriteResource)).execute();
      await db.schema.createIndex('favorites_owner_folder_order').on('favorites').columns(['team_id', 'created_by_id', 'favorite_folder_id', 'order', 'id']).execute();
      await db.schema.createIndex('favorites_target').on('favorites').columns(['target_id', 'target_type']).execute();
      await db.schema.createIndex('favorites_folder').on('favorites').columns(['favorite_folder_id']).execute();
    },
  };
}
