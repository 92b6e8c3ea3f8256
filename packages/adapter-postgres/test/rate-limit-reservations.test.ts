// Counts reserved for a busy client by the Postgres database rate limiter (issue 11; spec "Limits"): two stores on
// one schema stand for two processes on one database.
import { inject } from 'vitest';
import { randomBytes } from 'node:crypto';
import { sqlRateLimitStore } from '@pmapi/core';
import { rateLimitReservationsSuite } from '@pmapi/conformance';
import { openPostgresStore } from '@pmapi/adapter-postgres';

const url = inject('pgUrl');

if (url) {
  rateLimitReservationsSuite('postgres', async () => {
    const schema = `rr_${randomBytes(6).toString('hex')}`;
    const one = await openPostgresStore({ connectionString: url, schema, max: 4 });
    const two = await openPostgresStore({ connectionString: url, schema, max: 4 });
    return {
      a: sqlRateLimitStore(one),
      b: sqlRateLimitStore(two),
      close: async () => {
        await two.close();
        await one.db.schema.dropSchema(schema).cascade().execute();
        await one.close();
      },
    };
  });
}
