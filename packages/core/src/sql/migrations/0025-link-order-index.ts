import type { Migration } from 'kysely';

/**
 * Relation ids are read in link order (`created_at`, then `related_id`) for
 * one parent at a time: every GET and list page does it once per relation per
 * row. The primary key (kind, parent_id, related_id) finds the links but
 * leaves `created_at` in the table; this index holds all four, so the read is
 * one ordered index range and never visits the table (issue 11).
 */
export function linkOrderIndex(): Migration {
  return {
    async up(db) {
      await db.schema.createIndex('links_parent_order').on('links').columns(['kind', 'parent_id', 'created_at', 'related_id']).execute();
    },
  };
}
