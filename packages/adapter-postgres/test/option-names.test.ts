import { describe, it, expect } from 'vitest';
import { openPostgresMigrations, openPostgresStore } from '@pmapi/adapter-postgres';

// Issue 16 "Operable": typos are not accepted. An unknown key used to be ignored, so `{ url: … }` quietly opened
// the default connection (DATABASE_URL / PGHOST / localhost) instead of the database meant. Refused before connecting.
describe('openPostgresStore: an unknown option is refused naming it (issue 16)', () => {
  it('refuses a typo with a did-you-mean, before any connection is made', async () => {
    const opts = { connectionString: 'postgres://postgres@127.0.0.1:1/none', conectionString: 'x' } as never;
    await expect(openPostgresStore(opts)).rejects.toThrow(/^pmapi: openPostgresStore options\.conectionString is not an option \(did you mean options\.connectionString\?\); known options: pool, connectionString, schema/);
    await expect(openPostgresStore({ url: 'postgres://127.0.0.1/x' } as never)).rejects.toThrow(/^pmapi: openPostgresStore options\.url is not an option; known options: /);
    await expect(openPostgresStore({ shema: 'pm' } as never)).rejects.toThrow(/did you mean options\.schema\?/);
    await expect(openPostgresMigrations({ migrate: false } as never)).rejects.toThrow(/^pmapi: openPostgresMigrations options\.migrate is not an option/);
    await expect(openPostgresStore('postgres://127.0.0.1/x' as never)).rejects.toThrow(/^pmapi: openPostgresStore takes an options object$/);
  });
});
