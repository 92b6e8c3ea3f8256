import { inject } from 'vitest';
import { randomBytes } from 'node:crypto';
import type { SqlStore } from '@pmapi/core/sql';
import { openSqliteStore } from '@pmapi/adapter-sqlite';
import { openPostgresStore } from '@pmapi/adapter-postgres';

/** The stores the front-end tests run on: SQLite always, Postgres when one is reachable (a schema each, dropped on close). */
export function frontEndStores(): { name: string; open: () => Promise<SqlStore> }[] {
  const url = inject('pgUrl');
  const out: { name: string; open: () => Promise<SqlStore> }[] = [{ name: 'sqlite', open: () => openSqliteStore() }];
  if (url) {
    out.push({
      name: 'postgres',
      async open() {
        const schema = `fe_${randomBytes(6).toString('hex')}`;
        const store = await openPostgresStore({ connectionString: url, schema, max: 4 });
        return {
          ...store,
          async close() {
            await store.db.schema.dropSchema(schema).cascade().execute();
            await store.close();
          },
        };
      },
    });
  }
  return out;
}
