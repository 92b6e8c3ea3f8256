import { sql, type Migration } from 'kysely';
import type { DialectSupport } from '../dialect';

/**
 * A label's `type` (0 or 1): the legacy v1.0 label field (spec "Legacy label
 * (tag)"), kept on the one label resource so a legacy write is a v3 write
 * (docs/not-shown.md "Legacy v1.0 surface"). Existing labels are type 0.
 */
export function labelType(d: DialectSupport): Migration {
  return {
    async up(db) {
      await db.schema.alterTable('labels').addColumn('type', sql.raw(d.ddl.integer), (c) => c.notNull().defaultTo(0)).execute();
    },
  };
}
