import { sql, type Migration } from 'kysely';
import type { DialectSupport } from '../dialect';

/**
 * Files gain `owner_id`, the member an upload acted for, apart from the
 * public `uploader_id` (null for an OAuth app's uploads, spec "File"),
 * filled from `uploader_id` (every upload before was a member's own). 0010
 * leaves the column out of the table it builds from the declaration, so
 * every database gets it here.
 */
export function fileOwners(d: DialectSupport): Migration {
  return {
    async up(db) {
      await db.schema.alterTable('files').addColumn('owner_id', sql.raw(d.ddl.id)).execute();
      await db.updateTable('files').set((eb) => ({ owner_id: eb.ref('uploader_id') })).execute();
    },
  };
}
