import { describe, it, inject } from 'vitest';
import { randomBytes } from 'node:crypto';
import { runConformance } from '@pmapi/conformance';
import { openPostgresStore } from '@pmapi/adapter-postgres';

const url = inject('pgUrl');

if (!url) {
  describe.skip('[postgres] conformance suite — SKIPPED: no Postgres reachable; set DATABASE_URL', () => {
    it('needs a Postgres server', () => {});
  });
} else {
  runConformance({
    name: 'postgres',
    // Each harness works in a schema of its own, dropped when it closes.
    async open(o) {
      const schema = `h_${randomBytes(6).toString('hex')}`;
      const store = await openPostgresStore({ connectionString: url, schema, max: o?.max ?? 6, onQuery: o?.onQuery });
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
