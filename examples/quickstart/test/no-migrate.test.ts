import { describe, it, expect } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { main as pmapi } from '../../../packages/cli/src/index';
import { run } from '../../../test/processes';

/** Issue 16: "the quickstart and the library keep applying [migrations] on open unless told not to". */
const main = fileURLToPath(new URL('../dist/main.js', import.meta.url));

/** Run the built quickstart until it prints its JSON line (then stop it; graceful shutdown is operable.test.ts's) or exits. */
const start = (args: string[]) => run(main, ['--port', '0', '--json', '--no-webhook-worker', ...args], { stopAtFirstLine: true });

describe('quickstart --no-migrate (issue 16)', () => {
  it('refuses a database that is behind in one line naming pmapi migrate; after pmapi migrate it starts', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pmapi-qs-nomigrate-'));
    try {
      const db = join(dir, 'pm.db');
      const refused = await start(['--db', db, '--no-migrate']);
      expect(refused.code).toBe(1);
      expect(refused.stdout).toBe('');
      expect(refused.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^pmapi quickstart: pmapi: the database is behind: \d+ pending migrations \(0001_foundation, .*\)\. .*run `pmapi migrate --db <database>`/)]);

      expect(await pmapi(['migrate', '--db', db], { out: () => {}, err: () => {} }, {})).toBe(0);
      const started = await start(['--db', db, '--no-migrate']);
      expect(JSON.parse(started.stdout.split('\n')[0]!).baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
