import { describe, it, expect, afterAll } from 'vitest';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteMigrations, openSqliteStore } from '@pmapi/adapter-sqlite';

// Issue 16 "Operable": typos are not accepted. `openSqliteStore({ filname: 'app.db' })` used to open an in-memory
// database (the default), so every write was lost at restart without a word. Refused before any file is touched.
describe('openSqliteStore: an unknown option is refused naming it (issue 16)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pmapi-opt-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('refuses a typo with a did-you-mean and creates nothing', async () => {
    const file = join(dir, 'app.db');
    await expect(openSqliteStore({ filname: file } as never)).rejects.toThrow(/^pmapi: openSqliteStore options\.filname is not an option \(did you mean options\.filename\?\); known options: filename, busyTimeoutMs, onQuery, rateLimitFile, migrate, tablePrefix$/);
    await expect(openSqliteStore({ filename: file, tablePrefx: 'pm_' } as never)).rejects.toThrow(/options\.tablePrefx is not an option \(did you mean options\.tablePrefix\?\)/);
    await expect(openSqliteStore({ filename: file, path: 'x' } as never)).rejects.toThrow(/^pmapi: openSqliteStore options\.path is not an option; known/);
    expect(existsSync(file)).toBe(false);
    await expect(openSqliteMigrations({ filename: file, migrate: true } as never)).rejects.toThrow(/^pmapi: openSqliteMigrations options\.migrate is not an option/);
    await expect(openSqliteStore('app.db' as never)).rejects.toThrow(/^pmapi: openSqliteStore takes an options object$/);
    expect(existsSync(file)).toBe(false);
  });

  it('every documented option is still accepted', async () => {
    const store = await openSqliteStore({ filename: join(dir, 'ok.db'), busyTimeoutMs: 100, onQuery: () => {}, rateLimitFile: join(dir, 'ok.limits'), migrate: true, tablePrefix: 'pm_' });
    await store.close();
  });
});
