import { sql, type Migration } from 'kysely';
import type { DialectSupport } from '../dialect';
import { createTable } from './table';

/** Access control and limits: rate-limit counters and blocks shared by every process. */
export function accessAndLimits(d: DialectSupport): Migration {
  return {
    async up(db) {
      await createTable(db, d, 'rate_counters', { key: 'text', window_start: 'bigint', count: 'bigint' }, ['key', 'window_start']).execute();
      await createTable(db, d, 'rate_blocks', { key: 'text', until: 'bigint' }, ['key']).execute();
      await db.schema.alterTable('access_tokens').addColumn('last_used_at', sql.raw(d.ddl.timestamp)).execute();
    },
  };
}

