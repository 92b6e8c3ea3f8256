import { sql, type Migration } from 'kysely';
import type { DialectSupport } from '../dialect';
import { common } from './table';

/**
 * Personal access tokens become a declared resource: `access_tokens` gains
 * the common columns every resource carries (spec "Conventions"). Existing
 * tokens were last changed when they were created; OAuth access tokens
 * (kind 'oauth') share the table and leave these columns null.
 */
export function personalAccessTokens(d: DialectSupport): Migration {
  return {
    async up(db) {
      for (const [raw, kind] of Object.entries(common)) {
        const column = raw.replace(/\?$/, '');
        if (column === 'id' || column === 'team_id' || column === 'created_at') continue;
        await db.schema.alterTable('access_tokens').addColumn(column, sql.raw(d.ddl[kind])).execute();
      }
      await db.updateTable('access_tokens').set((eb) => ({ updated_at: eb.ref('created_at') })).execute();
    },
  };
}
