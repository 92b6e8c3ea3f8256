import type { Migration } from 'kysely';

/**
 * A row's links are read by parent first: `links_parent` leads with
 * `parent_id`, then kind and link order, so all of a row's relations come
 * from one index range (one probe per row where the store reads them
 * together, `DialectSupport.allLinkIds`), and one relation's ids for one
 * parent still come in link order without a sort. It replaces
 * `links_parent_order` (kind first), which served only the second (issue 11).
 */
export function linksByParent(): Migration {
  return {
    async up(db) {
      // Both only where needed: applied again (a database that forgot it), it changes nothing.
      await db.schema.createIndex('links_parent').ifNotExists().on('links').columns(['parent_id', 'kind', 'created_at', 'related_id']).execute();
      await db.schema.dropIndex('links_parent_order').ifExists().execute();
    },
  };
}
