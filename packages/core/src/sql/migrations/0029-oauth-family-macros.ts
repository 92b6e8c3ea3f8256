import { sql, type Migration } from 'kysely';
import type { DialectSupport } from '../dialect';

/**
 * The macros (`read`, `write`, `delete`) an OAuth consent literally asked
 * for, kept on its refresh-token family beside the expanded, role-clamped
 * ceiling: the legacy v1.0 surface lets a token act as a macro holder only
 * when its consent asked for that macro (docs/not-shown.md "Legacy v1.0
 * surface", Macros held by OAuth tokens). Null for families consented before
 * this column existed (judged from their expanded scopes, as before).
 */
export function oauthFamilyMacros(d: DialectSupport): Migration {
  return {
    async up(db) {
      await db.schema.alterTable('oauth_families').addColumn('macros', sql.raw(d.ddl.json)).execute();
    },
  };
}
