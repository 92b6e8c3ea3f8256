// Issue 16: "Migrations as a command: `pmapi migrate --db …` applies them and `--print` shows the SQL for review;
// the quickstart and the library keep applying them on open unless told not to." On SQLite and Postgres (a scratch
// schema, dropped afterwards): --print leaves the database as it was, migrate applies and then says up to date, and a
// store opened with migrate: false refuses a database that is behind, naming what is pending.
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import pg from 'pg';
import { createPmapi } from '@pmapi/core';
import { PendingMigrationsError, migrations, type SqlStore } from '@pmapi/core/sql';
import { openSqliteStore, sqliteDialectSupport } from '@pmapi/adapter-sqlite';
import { openPostgresStore } from '@pmapi/adapter-postgres';
import { main, USAGE } from '../src/index';

const pgUrl = inject('pgUrl');
/** Every migration name, in order (the same list on both stores). */
const ALL = Object.keys(migrations(sqliteDialectSupport));
const FIRST = ALL[0]!;
const LAST = ALL[ALL.length - 1]!;
/**
 * The migration the "behind" test takes back by hand: it adds a column, so --print has DDL to show. Every
 * migration after it is taken back too (forgotten), since they run in order; each of them only adds what a
 * database lacks (sql/migrations/index.ts), so applying it again is safe.
 */
const MACROS = '0029_oauth_family_macros';
const BEHIND = ALL.slice(ALL.indexOf(MACROS));
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** Runs `pmapi <args>` in-process with no DATABASE_URL; stdout and stderr as lines. */
async function pmapi(...args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (l) => out.push(...l.split('\n')), err: (l) => err.push(l) }, {});
  return { code, out, text: out.join('\n'), err };
}

interface Target {
  name: string;
  /** `--db …` and, on Postgres, `--schema …`. */
  args: string[];
  /** Tables in pmapi's place (the file, or the schema); null when the schema does not exist. */
  tables(): Promise<string[] | null>;
  /** Undo MACROS by hand (drop its column) and forget it and every later migration: the database is BEHIND. */
  undoBehind(): Promise<void>;
  hasMacrosColumn(): Promise<boolean>;
  /** Record (or forget) a migration this code does not know: the database is ahead, as in a rolling deploy. */
  future(add: boolean): Promise<void>;
  open(migrate: boolean): Promise<SqlStore>;
  cleanup(): Promise<void>;
}

function sqliteTarget(): Target {
  const dir = mkdtempSync(join(tmpdir(), 'pmapi-cli-'));
  const filename = join(dir, 'pm.db');
  const withDb = <T>(fn: (d: Database.Database) => T): T => {
    const d = new Database(filename);
    try {
      return fn(d);
    } finally {
      d.close();
    }
  };
  return {
    name: 'sqlite',
    args: ['--db', filename],
    tables: async () => withDb((d) => (d.prepare("select name from sqlite_master where type = 'table' order by name").all() as { name: string }[]).map((r) => r.name)),
    undoBehind: async () =>
      withDb((d) => {
        d.exec('alter table oauth_families drop column macros');
        for (const name of BEHIND) d.prepare('delete from pmapi_migrations where name = ?').run(name);
      }),
    hasMacrosColumn: async () => withDb((d) => (d.prepare('pragma table_info(oauth_families)').all() as { name: string }[]).some((c) => c.name === 'macros')),
    future: async (add) =>
      withDb((d) => void (add ? d.prepare("insert into pmapi_migrations (name, timestamp) values ('9999_future', '2099-01-01T00:00:00.000Z')").run() : d.exec("delete from pmapi_migrations where name = '9999_future'"))),
    open: (migrate) => openSqliteStore({ filename, migrate }),
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  };
}

function postgresTarget(url: string): Target {
  const schema = `cli_${randomBytes(4).toString('hex')}`;
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  return {
    name: 'postgres',
    args: ['--db', url, '--schema', schema],
    tables: async () => {
      const s = await pool.query('select 1 from information_schema.schemata where schema_name = $1', [schema]);
      if (s.rowCount === 0) return null;
      return (await pool.query('select table_name from information_schema.tables where table_schema = $1 order by 1', [schema])).rows.map((r) => r.table_name as string);
    },
    undoBehind: async () => {
      await pool.query(`alter table ${schema}.oauth_families drop column macros`);
      await pool.query(`delete from ${schema}.pmapi_migrations where name = any($1)`, [BEHIND]);
    },
    hasMacrosColumn: async () =>
      (await pool.query("select 1 from information_schema.columns where table_schema = $1 and table_name = 'oauth_families' and column_name = 'macros'", [schema])).rowCount === 1,
    future: async (add) =>
      void (await pool.query(add ? `insert into ${schema}.pmapi_migrations (name, timestamp) values ('9999_future', '2099-01-01T00:00:00.000Z')` : `delete from ${schema}.pmapi_migrations where name = '9999_future'`)),
    open: (migrate) => openPostgresStore({ connectionString: url, schema, migrate }),
    cleanup: async () => {
      await pool.query(`drop schema if exists ${schema} cascade`);
      await pool.end();
    },
  };
}

const targets: [string, () => Target][] = [['sqlite', sqliteTarget]];
if (pgUrl) targets.push(['postgres', () => postgresTarget(pgUrl)]);

describe.each(targets)('[%s] pmapi migrate and migrate: false (issue 16)', (name, make) => {
  let t: Target;
  beforeAll(() => {
    t = make();
    // An empty SQLite file that exists: --print runs against it (in a rolled-back transaction), not an in-memory stand-in.
    if (name === 'sqlite') writeFileSync(t.args[1]!, '');
  });
  afterAll(() => t.cleanup());

  it('--print on an empty database shows the CREATE TABLE statements of every migration and leaves the database empty', async () => {
    const r = await pmapi('migrate', ...t.args, '--print');
    expect(r.err).toEqual([]);
    expect(r.code).toBe(0);
    expect(r.out[0]).toBe(`-- pmapi migrate --print: ${ALL.length} pending migrations; nothing was applied.`);
    expect(r.text).toContain('data-dependent statements (backfills) are shown as they would run');
    expect(r.text).toMatch(/^create table "workspaces" \(/m);
    expect(r.text).toMatch(/^create table "tasks" \(/m);
    // Every pending migration has its heading, in order.
    const headings = r.out.filter((l) => /^-- \d{4}_/.test(l)).map((l) => l.slice(3));
    expect(headings).toEqual(ALL);
    // Nothing written: no tables (on Postgres not even the schema), not kysely's bookkeeping either.
    expect(await t.tables()).toEqual(name === 'sqlite' ? [] : null);
  });

  it('a store opened with migrate: false on the empty database refuses, naming the pending migrations and pmapi migrate', async () => {
    const err = await t.open(false).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(PendingMigrationsError);
    expect((err as PendingMigrationsError).pending).toEqual(ALL);
    expect((err as Error).message).toMatch(new RegExp(`^pmapi: the database is behind: ${ALL.length} pending migrations \\(${FIRST}, .*${LAST}\\)\\. .*run \`pmapi migrate --db <database>\``));
    expect(await t.tables()).toEqual(name === 'sqlite' ? [] : null);
  });

  it('migrate applies every migration, printing each; run again it is up to date; then migrate: false opens and serves requests', async () => {
    const r = await pmapi('migrate', ...t.args);
    expect(r.err).toEqual([]);
    expect(r.code).toBe(0);
    expect(r.out).toEqual([...ALL.map((m) => `applied ${m}`), `pmapi migrate: ${ALL.length} migrations applied`]);
    expect(await t.tables()).toEqual(expect.arrayContaining(['workspaces', 'tasks', 'outbox', 'pmapi_migrations']));

    const again = await pmapi('migrate', ...t.args);
    expect(again).toMatchObject({ code: 0, out: ['pmapi migrate: up to date (no pending migrations)'], err: [] });
    const print = await pmapi('migrate', ...t.args, '--print');
    expect(print).toMatchObject({ code: 0, out: ['-- pmapi migrate --print: the database is up to date; no pending migrations, nothing to print.'], err: [] });

    const api = await createPmapi({ store: await t.open(false) });
    try {
      const ws = await api.admin.createWorkspace({ name: 'Migrated', owner: { name: 'Ada' } });
      const { token } = await api.admin.issueToken(ws.ownerMemberId, { scopes: ['read'] });
      const res = await api.handle({ method: 'GET', url: '/api/v3/members', headers: { authorization: `Bearer ${token}` } });
      expect(res.status).toBe(200);
      expect(JSON.parse(res.body as string).data.map((m: { name: string }) => m.name)).toEqual(['Ada']);
    } finally {
      await api.close();
    }
  });

  it('migrations behind: migrate: false names just them, --print shows just their SQL and changes nothing, migrate applies just them', async () => {
    await t.undoBehind();
    const err = await t.open(false).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((err as PendingMigrationsError).pending).toEqual(BEHIND);
    expect((err as Error).message).toContain(`${plural(BEHIND.length, 'pending migration')} (${BEHIND.join(', ')})`);

    const print = await pmapi('migrate', ...t.args, '--print');
    expect(print.code).toBe(0);
    expect(print.out.filter((l) => /^-- \d{4}_/.test(l))).toEqual(BEHIND.map((n) => `-- ${n}`));
    expect(print.out).toContain('alter table "oauth_families" add column "macros" ' + (name === 'sqlite' ? 'text;' : 'jsonb;'));
    expect(await t.hasMacrosColumn()).toBe(false);

    const r = await pmapi('migrate', ...t.args);
    expect(r.out).toEqual([...BEHIND.map((n) => `applied ${n}`), `pmapi migrate: ${plural(BEHIND.length, 'migration')} applied`]);
    expect(await t.hasMacrosColumn()).toBe(true);
    await (await t.open(false)).close();
  });

  it('a database ahead of the code (a migration it does not know) still opens with migrate: false', async () => {
    await t.future(true);
    try {
      const store = await t.open(false);
      await store.close();
    } finally {
      await t.future(false);
    }
  });
});

describe('pmapi: bad arguments are one line and exit 2 (issue 16)', () => {
  it('a malformed or unknown-scheme --db is refused before anything is opened or created', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pmapi-cli-args-'));
    const cwd = process.cwd();
    try {
      process.chdir(dir);
      for (const [db, scheme] of [['postgress:/oops', 'postgress'], ['postgres:/oops', 'postgres'], ['mysql://127.0.0.1/pm', 'mysql']] as const) {
        const r = await pmapi('migrate', '--db', db);
        expect(r.code, db).toBe(2);
        expect(r.err, db).toEqual([`pmapi: --db starts with '${scheme}:' but is not a postgres:// (or postgresql://) URL; give postgres://user@host:5432/database or a SQLite file path such as ./pmapi.db`]);
        expect(r.out).toEqual([]);
      }
      const badPort = await pmapi('migrate', '--db', 'postgres://u:secret@127.0.0.1:99999999/pm');
      expect(badPort.code).toBe(2);
      expect(badPort.err).toEqual([expect.stringMatching(/^pmapi: --db is not a valid postgres:\/\/ URL/)]);
      expect(badPort.err[0]).not.toContain('secret');
      // Not one of them was taken as a SQLite file name.
      expect(existsSync(join(dir, 'postgress:'))).toBe(false);
      expect(existsSync(join(dir, 'postgress:', 'oops'))).toBe(false);
    } finally {
      process.chdir(cwd);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('unknown flags, commands and missing values name the problem; --schema is refused for SQLite', async () => {
    expect(await pmapi('migrate', '--db', 'x.db', '--force')).toMatchObject({ code: 2, err: ["pmapi: unknown option '--force' (pmapi --help lists the options)"], out: [] });
    expect(await pmapi('migrate', '--db')).toMatchObject({ code: 2, err: ["pmapi: option '--db' needs a value (pmapi --help)"] });
    expect(await pmapi('migrate')).toMatchObject({ code: 2, err: ['pmapi: --db is required (a postgres:// URL or a SQLite file path), or set DATABASE_URL'] });
    expect(await pmapi()).toMatchObject({ code: 2, err: ['pmapi: no command given; the command is migrate (pmapi --help)'] });
    expect(await pmapi('migrat', '--db', 'x.db')).toMatchObject({ code: 2, err: ["pmapi: unknown command 'migrat'; the command is migrate (pmapi --help)"] });
    expect(await pmapi('migrate', '--db', 'x.db', '--schema', 'pm')).toMatchObject({ code: 2, err: ['pmapi: --schema is for Postgres; a SQLite file has no schemas (--table-prefix shares a file)'] });
    expect(await pmapi('migrate', '--db', 'postgres://127.0.0.1/pm', '--table-prefix', 'pm_')).toMatchObject({ code: 2, err: ['pmapi: --table-prefix is for SQLite; on Postgres give pmapi a schema of its own with --schema'] });
    for (const bad of ['pm-', 'sqlite_pm', '9pm']) {
      expect(await pmapi('migrate', '--db', 'x.db', '--table-prefix', bad)).toMatchObject({ code: 2, err: [expect.stringMatching(new RegExp(`^pmapi: --table-prefix must match .* got '${bad}'$`))] });
    }
    expect(await pmapi('migrate', '--db', 'postgres://127.0.0.1/pm', '--schema', 'Bad-Name')).toMatchObject({ code: 2, err: ["pmapi: --schema must be a lower-case identifier (letters, digits, _; at most 63), got 'Bad-Name'"] });
    // Without --db, DATABASE_URL is used, and named when it is wrong.
    const fromEnv: string[] = [];
    expect(await main(['migrate'], { out: () => {}, err: (l) => fromEnv.push(l) }, { DATABASE_URL: 'postgress://127.0.0.1/pm' })).toBe(2);
    expect(fromEnv).toEqual([expect.stringMatching(/^pmapi: DATABASE_URL starts with 'postgress:'/)]);
  });

  it('--help prints the usage and exits 0', async () => {
    for (const args of [['--help'], ['migrate', '--help'], ['-h']]) {
      const r = await pmapi(...args);
      expect(r).toMatchObject({ code: 0, err: [] });
      expect(r.text).toBe(USAGE);
    }
    expect(USAGE).toMatch(/^Usage: pmapi migrate --db <postgres-url \| sqlite-path> \[--schema <name> \| --table-prefix <p>\] \[--print\]/);
  });

  it('--print on a SQLite file that does not exist does not create it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pmapi-cli-new-'));
    try {
      const file = join(dir, 'new.db');
      const r = await pmapi('migrate', '--db', file, '--print');
      expect(r.code).toBe(0);
      expect(r.text).toContain('--db does not exist yet: shown as it would run on a new, empty file');
      expect(r.text).toMatch(/^create table "workspaces" \(/m);
      expect(existsSync(file)).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the stores refuse a migrate option that is not a boolean, naming it', async () => {
    await expect(openSqliteStore({ migrate: 'no' as unknown as boolean })).rejects.toThrow(/^pmapi: openSqliteStore options\.migrate must be true or false$/);
    await expect(openPostgresStore({ connectionString: 'postgres://127.0.0.1/pm', migrate: 0 as unknown as boolean })).rejects.toThrow(/^pmapi: openPostgresStore options\.migrate must be true or false$/);
  });
});

describe('[sqlite] pmapi migrate --table-prefix: pmapi beside the host in its file (issue 16)', () => {
  it("--print shows prefixed names and writes nothing; migrate creates only prefixed tables and leaves the host's; the store opens with migrate: false", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pmapi-cli-prefix-'));
    const file = join(dir, 'host.db');
    const sqlite = () => new Database(file);
    try {
      const host = sqlite();
      host.exec("create table tasks (handle text primary key, done integer); insert into tasks values ('host-task', 0)");
      host.close();
      const names = () => {
        const d = sqlite();
        try {
          return (d.prepare("select name from sqlite_master where type = 'table' order by name").all() as { name: string }[]).map((r) => r.name);
        } finally {
          d.close();
        }
      };

      const print = await pmapi('migrate', '--db', file, '--table-prefix', 'pm_', '--print');
      expect(print.code).toBe(0);
      expect(print.text).toMatch(/^create table "pm_tasks" \(/m);
      expect(print.text).not.toMatch(/^create table "tasks"/m);
      expect(names()).toEqual(['tasks']);

      const r = await pmapi('migrate', '--db', file, '--table-prefix', 'pm_');
      expect(r.out.at(-1)).toBe(`pmapi migrate: ${ALL.length} migrations applied`);
      const after = names();
      expect(after.filter((n) => !n.startsWith('pm_'))).toEqual(['tasks']);
      expect(after).toEqual(expect.arrayContaining(['pm_tasks', 'pm_workspaces', 'pm_pmapi_migrations']));
      expect((await pmapi('migrate', '--db', file, '--table-prefix', 'pm_')).out).toEqual(['pmapi migrate: up to date (no pending migrations)']);

      // The prefix is part of the database's identity: without it the file has none of pmapi's migrations.
      await expect(openSqliteStore({ filename: file, migrate: false })).rejects.toBeInstanceOf(PendingMigrationsError);
      const store = await openSqliteStore({ filename: file, tablePrefix: 'pm_', migrate: false });
      const api = await createPmapi({ store });
      try {
        const ws = await api.admin.createWorkspace({ name: 'Beside', owner: { name: 'Ada' } });
        expect(ws.ownerMemberId).toBeTruthy();
      } finally {
        await api.close();
      }
      const d = sqlite();
      expect(d.prepare('select * from tasks').all()).toEqual([{ handle: 'host-task', done: 0 }]);
      d.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

const bin = fileURLToPath(new URL('../dist/bin.js', import.meta.url));

describe('the built pmapi bin (issue 16)', () => {
  it('exits 2 with one line on stderr for a malformed URL, 0 with the usage for --help', async () => {
    expect(existsSync(bin), 'packages/cli is built (pnpm --filter @pmapi/cli build)').toBe(true);
    const bad = await promisify(execFile)(process.execPath, [bin, 'migrate', '--db', 'postgress:/oops'], { encoding: 'utf8' }).then(
      () => undefined,
      (e: { code: number; stdout: string; stderr: string }) => e,
    );
    expect(bad?.code).toBe(2);
    expect(bad?.stdout).toBe('');
    expect(bad?.stderr.trimEnd().split('\n')).toEqual([expect.stringMatching(/^pmapi: --db starts with 'postgress:' but is not a postgres:\/\//)]);
    const help = await promisify(execFile)(process.execPath, [bin, '--help'], { encoding: 'utf8' });
    expect(help.stdout.trimEnd()).toBe(USAGE);
  });
});
