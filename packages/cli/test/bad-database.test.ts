import { afterAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../src/index';

// Issue 16 "Operable" for `pmapi migrate`: a database that cannot be opened (a folder, a file that is not
// SQLite, a folder that does not exist, a Postgres server that refuses) is one line naming the command and
// exit 1 — no stack trace, nothing created, the file left as it was. (Bad arguments: migrate.test.ts.)
async function pmapi(...args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (l) => out.push(...l.split('\n')), err: (l) => err.push(l) }, {});
  return { code, out, err };
}

describe('pmapi migrate: a database it cannot open is one line and exit 1 (issue 16)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pmapi-cli-bad-db-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const oneLine = (r: { code: number; out: string[]; err: string[] }, what: string) => {
    expect(r.code, what).toBe(1);
    expect(r.err, what).toHaveLength(1);
    expect(r.err[0], what).toMatch(/^pmapi migrate: \S/);
    expect(r.err[0], what).not.toMatch(/\n|\s+at\s/);
    expect(r.out.filter((l) => l !== ''), what).toEqual([]);
  };

  it('a folder, a text file and a path under a missing folder: refused, nothing created or changed', async () => {
    const folder = join(dir, 'folder');
    mkdirSync(folder);
    oneLine(await pmapi('migrate', '--db', folder), 'folder');

    const text = join(dir, 'notes.txt');
    writeFileSync(text, 'not a database\n'.repeat(100));
    const before = readFileSync(text);
    for (const args of [['--db', text], ['--db', text, '--print']]) oneLine(await pmapi('migrate', ...args), args.join(' '));
    expect(readFileSync(text).equals(before)).toBe(true);

    const missing = join(dir, 'missing', 'pm.db');
    oneLine(await pmapi('migrate', '--db', missing), 'missing folder');
    expect(existsSync(join(dir, 'missing'))).toBe(false);
  });

  it('a Postgres server that refuses the connection (127.0.0.1:1)', async () => {
    oneLine(await pmapi('migrate', '--db', 'postgres://postgres@127.0.0.1:1/pm'), 'refused');
  });
});
