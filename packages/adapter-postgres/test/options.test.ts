import { describe, it, expect } from 'vitest';
import { openPostgresStore } from '@pmapi/adapter-postgres';

/** Issue 16, "Operable": a malformed Postgres URL is refused naming the option, before any connection. */
describe('openPostgresStore: a malformed connection string names the option (issue 16)', () => {
  it('refuses a wrong scheme, a scheme without //, a non-URL and a malformed URL, never echoing the password', async () => {
    await expect(openPostgresStore({ connectionString: 'postgress://127.0.0.1/x' })).rejects.toThrow(/^pmapi: openPostgresStore options\.connectionString must be a postgres:\/\/.* it starts 'postgress:'$/);
    await expect(openPostgresStore({ connectionString: 'postgres:/oops' })).rejects.toThrow(/options\.connectionString must be a postgres:\/\//);
    await expect(openPostgresStore({ connectionString: 'just words' })).rejects.toThrow(/options\.connectionString must be a postgres:\/\/[^']*URL$/);
    const err = await openPostgresStore({ connectionString: 'postgres://u:secret@127.0.0.1:99999999/db' }).catch((e: Error) => e);
    expect((err as Error).message).toMatch(/options\.connectionString must be a postgres:\/\//);
    expect((err as Error).message).not.toContain('secret');
  });

  it('names DATABASE_URL when the string came from there', async () => {
    const saved = process.env.DATABASE_URL;
    process.env.DATABASE_URL = 'mysql://127.0.0.1/x';
    try {
      await expect(openPostgresStore({})).rejects.toThrow(/^pmapi: openPostgresStore DATABASE_URL must be a postgres:\/\//);
    } finally {
      if (saved === undefined) delete process.env.DATABASE_URL;
      else process.env.DATABASE_URL = saved;
    }
  });
});
