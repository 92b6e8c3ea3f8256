import { sql, type Migration } from 'kysely';
import type { DialectSupport } from '../dialect';

/**
 * Rate-limit counters and blocks need no crash safety (a crash may forget a
 * window's counts), so where tables can be unlogged they are: the one
 * statement a rate-limited request costs then commits without waiting for a
 * WAL flush (docs/not-shown.md, "Rate limits").
 */
export function unloggedRateLimits(d: DialectSupport): Migration {
  return {
    async up(db) {
      if (!d.capabilities.unloggedTables) return;
      for (const table of ['rate_counters', 'rate_blocks']) await sql`alter table ${sql.table(table)} set unlogged`.execute(db);
    },
  };
}
