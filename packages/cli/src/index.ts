import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { parseDatabaseArg } from '@pmapi/core';
import type { MigrationPreview, MigrationRunner } from '@pmapi/core/sql';
import { TABLE_PREFIX_PATTERN, openSqliteMigrations } from '@pmapi/adapter-sqlite';
import { POSTGRES_SCHEMA_PATTERN, openPostgresMigrations } from '@pmapi/adapter-postgres';

export const USAGE = `Usage: pmapi migrate --db <postgres-url | sqlite-path> [--schema <name> | --table-prefix <p>] [--print]

Applies pmapi's pending database migrations and prints each one applied
(for stores opened with migrate: false, a deployment step).

Options:
  --db URL|PATH    postgres:// (or postgresql://) URL, or a SQLite file path
                   (default: DATABASE_URL)
  --schema NAME    Postgres schema pmapi's tables live in (default: the connection's search_path)
  --table-prefix P SQLite: the prefix of pmapi's tables in a file it shares with the host
                   (as openSqliteStore({ tablePrefix }); default none)
  --print          apply nothing: print the SQL of the pending migrations for review
  --help           this text

Exit status: 0 done (or up to date), 1 the database or a migration failed, 2 bad arguments.`;

/** Where main writes: stdout and stderr by default, strings in tests. */
export interface CliIo {
  out(line: string): void;
  err(line: string): void;
}

const processIo: CliIo = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
};

/** A mistake on the command line: one line on stderr, exit 2. */
class UsageError extends Error {}

/** Postgres statements of a migration may take a while on a large database: no 10-second statement timeout here. */
const MIGRATION_TIMEOUT_MS = 60 * 60_000;

interface MigrateArgs {
  db: string;
  dbName: string;
  schema: string | undefined;
  tablePrefix: string | undefined;
  print: boolean;
}

function parse(argv: string[], env: NodeJS.ProcessEnv): MigrateArgs | 'help' {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: {
        db: { type: 'string' },
        schema: { type: 'string' },
        'table-prefix': { type: 'string' },
        print: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
      allowPositionals: true,
      strict: true,
    });
  } catch (err) {
    const e = err as { code?: string; message: string };
    const opt = /'(-{1,2}[\w-]+)/.exec(e.message)?.[1];
    if (e.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') throw new UsageError(`unknown option '${opt ?? e.message}' (pmapi --help lists the options)`);
    if (e.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') throw new UsageError(`option '${opt ?? '?'}' needs a value (pmapi --help)`);
    throw new UsageError(e.message.split('\n')[0]!);
  }
  const { values, positionals } = parsed;
  if (values.help) return 'help';
  const [command, ...rest] = positionals;
  if (command === undefined) throw new UsageError('no command given; the command is migrate (pmapi --help)');
  if (command !== 'migrate') throw new UsageError(`unknown command '${command}'; the command is migrate (pmapi --help)`);
  if (rest.length > 0) throw new UsageError(`unexpected argument '${rest[0]}' (pmapi --help)`);
  const db = values.db ?? env.DATABASE_URL;
  if (db === undefined) throw new UsageError('--db is required (a postgres:// URL or a SQLite file path), or set DATABASE_URL');
  if (values.schema !== undefined && !POSTGRES_SCHEMA_PATTERN.test(values.schema)) {
    throw new UsageError(`--schema must be a lower-case identifier (letters, digits, _; at most 63), got '${values.schema}'`);
  }
  const prefix = values['table-prefix'];
  if (prefix !== undefined && (!TABLE_PREFIX_PATTERN.test(prefix) || /^sqlite_/i.test(prefix))) {
    throw new UsageError(`--table-prefix must match ${TABLE_PREFIX_PATTERN} and not start with 'sqlite_', got '${prefix}'`);
  }
  return { db, dbName: values.db !== undefined ? '--db' : 'DATABASE_URL', schema: values.schema, tablePrefix: prefix, print: values.print };
}

/** The SQL of the pending migrations, for review: comments say what it is and how it was found. */
function printPreview(previews: MigrationPreview[], io: CliIo, note: string | undefined): void {
  io.out(`-- pmapi migrate --print: ${previews.length} pending migration${previews.length === 1 ? '' : 's'}; nothing was applied.`);
  io.out('-- Found by running them inside a transaction that was rolled back, so this is exactly the SQL');
  io.out('-- `pmapi migrate` would run; data-dependent statements (backfills) are shown as they would run');
  io.out("-- against this database now. kysely's bookkeeping (pmapi_migrations tables) is not shown.");
  if (note) io.out(`-- ${note}`);
  for (const p of previews) {
    io.out('');
    io.out(`-- ${p.name}`);
    if (p.statements.length === 0) io.out('-- (no statements against this database)');
    for (const s of p.statements) {
      io.out(`${s.sql.trimEnd()};`);
      if (s.parameters.length > 0) io.out(`-- parameters: ${JSON.stringify(s.parameters, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))}`);
    }
  }
}

async function migrateCommand(a: MigrateArgs, io: CliIo): Promise<number> {
  let target;
  try {
    target = parseDatabaseArg(a.db, a.dbName);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  if (target.kind === 'sqlite' && a.schema !== undefined) throw new UsageError('--schema is for Postgres; a SQLite file has no schemas (--table-prefix shares a file)');
  if (target.kind === 'postgres' && a.tablePrefix !== undefined) throw new UsageError('--table-prefix is for SQLite; on Postgres give pmapi a schema of its own with --schema');
  const prefix = a.tablePrefix !== undefined ? { tablePrefix: a.tablePrefix } : {};
  let runner: MigrationRunner;
  let note: string | undefined;
  if (target.kind === 'postgres') {
    runner = await openPostgresMigrations({
      connectionString: target.connectionString,
      ...(a.schema !== undefined ? { schema: a.schema } : {}),
      queryTimeoutMs: MIGRATION_TIMEOUT_MS,
    });
  } else if (a.print && target.filename !== ':memory:' && !existsSync(target.filename)) {
    // --print creates nothing: a file that does not exist yet is previewed as the empty database it would be.
    runner = await openSqliteMigrations({ filename: ':memory:', ...prefix });
    note = `${a.dbName} does not exist yet: shown as it would run on a new, empty file (which --print did not create).`;
  } else {
    runner = await openSqliteMigrations({ filename: target.filename, ...prefix });
  }
  try {
    if (a.print) {
      const previews = await runner.preview();
      if (previews.length === 0) io.out('-- pmapi migrate --print: the database is up to date; no pending migrations, nothing to print.');
      else printPreview(previews, io, note);
      return 0;
    }
    const applied = await runner.apply();
    if (applied.length === 0) {
      io.out('pmapi migrate: up to date (no pending migrations)');
    } else {
      for (const name of applied) io.out(`applied ${name}`);
      io.out(`pmapi migrate: ${applied.length} migration${applied.length === 1 ? '' : 's'} applied`);
    }
    return 0;
  } finally {
    await runner.close();
  }
}

/**
 * The `pmapi` command. Resolves to the exit status: 0 done, 1 the database
 * or a migration failed, 2 bad arguments (one line on stderr naming the
 * problem; `--help` prints the usage).
 *
 * @example
 * process.exitCode = await main(process.argv.slice(2));
 */
export async function main(argv: string[], io: CliIo = processIo, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  try {
    const args = parse(argv, env);
    if (args === 'help') {
      io.out(USAGE);
      return 0;
    }
    return await migrateCommand(args, io);
  } catch (err) {
    if (err instanceof UsageError) {
      io.err(`pmapi: ${err.message}`);
      return 2;
    }
    // A store's own errors already start "pmapi: ".
    // (A refused connection to a host with several addresses is an AggregateError with an empty message: its code then.)
    const msg = (err instanceof Error ? err.message || (err as { code?: string }).code : undefined) || String(err);
    io.err(msg.startsWith('pmapi') ? msg.split('\n')[0]! : `pmapi migrate: ${msg.split('\n')[0]}`);
    return 1;
  }
}
