import Database from 'better-sqlite3';
import { CompiledQuery, Kysely, SqliteDialect, SqliteDriver, sql, type DatabaseConnection, type DatabaseIntrospector, type Driver, type Expression, type LogEvent, type QueryResult } from 'kysely';
import type { DialectSupport, JsonColumn, MigrationRunner, MigrationTap, SqlStore } from '@pmapi/core/sql';
import { assertMigrated, checkOptionNames, migrate, pendingMigrations, previewMigrations, runDirectly, statementLog, type DirectRun } from '@pmapi/core/sql';
import type { StorageKind } from '@pmapi/core';
import { sqliteRateLimitStore } from './rate-limits';
import { groupCommit } from './group-commit';
import { rowReader, type ReadRows } from './rows';
import { PrefixedSqliteIntrospector, TablePrefixPlugin, checkTablePrefix, tableNames, type TableNames } from './table-prefix';

export { sqliteRateLimitStore, type SqliteRateLimitStoreOptions } from './rate-limits';
export { TABLE_PREFIX_PATTERN } from './table-prefix';

/** SQLite writers must take the write lock up front: BEGIN IMMEDIATE (kysely issues a plain BEGIN). */
class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}

class ImmediateSqliteDialect extends SqliteDialect {
  constructor(private readonly cfg: ConstructorParameters<typeof SqliteDialect>[0], private readonly names?: TableNames) {
    super(cfg);
  }
  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.cfg);
  }
  /** With a table prefix: pmapi's tables by the names its code uses, the host's not at all (see table-prefix.ts). */
  override createIntrospector(db: Kysely<any>): DatabaseIntrospector {
    return this.names ? new PrefixedSqliteIntrospector(db, this.names) : super.createIntrospector(db);
  }
}

/** How pmapi's storage kinds live in SQLite: instants as integer ms, booleans as 0/1, JSON as text. */
export const sqliteDialectSupport: DialectSupport = {
  name: 'sqlite',
  ddl: { text: 'text', id: 'text', number: 'real', integer: 'integer', bigint: 'integer', boolean: 'integer', timestamp: 'integer', json: 'text' },
  encode(kind: StorageKind, v: unknown): unknown {
    switch (kind) {
      case 'boolean':
        return v ? 1 : 0;
      case 'json':
        return JSON.stringify(v);
      default:
        return v;
    }
  },
  decode(kind: StorageKind, v: unknown): unknown {
    switch (kind) {
      case 'boolean':
        return v === 1 || v === 1n || v === true;
      case 'json':
        return typeof v === 'string' ? JSON.parse(v) : v;
      case 'timestamp':
      case 'number':
      case 'integer':
        return Number(v);
      default:
        return v;
    }
  },
  linkIds: (kind, parentId) => linkIds(kind, parentId),
  jsonObject: (fields, table) => (fields.length <= MAX_JSON_KEYS ? sql<string>`json_object(${sql.join(fields.map((f) => jsonEntry(f, table)))})` : undefined),
  // Unicode-aware lower case, registered on the connection (SQLite's lower() folds ASCII only).
  fold: (e: Expression<unknown>) => sql<string>`pm_fold(${e})`,
  // A bound LIMIT makes SQLite compile the statement again on every run (see `inlineLimit`).
  inlineLimit: true,
  capabilities: { forUpdate: false, multiProcess: false },
  isUniqueViolation: (err) => (err as { code?: string })?.code === 'SQLITE_CONSTRAINT_UNIQUE' || (err as { code?: string })?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY',
  isUnavailable: (err) => ['SQLITE_BUSY', 'SQLITE_LOCKED', 'SQLITE_IOERR', 'SQLITE_CANTOPEN'].includes((err as { code?: string })?.code ?? ''),
  isSchemaMismatch: (err) => (err as { code?: string })?.code === 'SQLITE_ERROR' && /^no such (table|column)\b/.test(String((err as { message?: string })?.message ?? '')),
};

/** json_object takes two arguments a key; SQLite's default limit on a function's arguments is 1000. */
const MAX_JSON_KEYS = 400;

/** Instants SQLite's datetime() prints exactly as Date#toISOString does (from 1970 to the end of year 9999); others go through pm_iso. */
const LAST_ISO_MS = 253402300799999;

/**
 * One `'key', value` pair of a row's json_object, printing the value as
 * JSON.stringify prints the decoded value. SQLite's own number text differs
 * from JavaScript's (`2.0`, `1.0e+21`), so reals that are whole numbers print
 * as integers and the rest go through pm_json_number (JavaScript's printer);
 * instants outside datetime()'s exact range go through pm_iso; a relation's
 * ids come from one indexed subquery on `links` per row.
 */
function jsonEntry(f: JsonColumn, table: string) {
  // json() keeps the array JSON across the subquery boundary.
  if (f.links !== undefined) return sql`${sql.lit(f.name)}, json(${linkIds(f.links, `${table}.id`)})`;
  const c = sql.ref(f.column);
  let value;
  switch (f.kind) {
    case 'timestamp':
      // datetime(…, 'subsec') is twice as fast as the equivalent strftime format.
      value = sql`case when ${c} between 0 and ${sql.lit(LAST_ISO_MS)} then replace(datetime(${c} / 1000.0, 'unixepoch', 'subsec'), ' ', 'T') || 'Z' when ${c} is not null then pm_iso(${c}) end`;
      break;
    case 'boolean':
      value = sql`case when ${c} then json('true') when ${c} is not null then json('false') end`;
      break;
    case 'number':
      value = sql`case when ${c} = cast(${c} as integer) and abs(${c}) < 1e15 then cast(${c} as integer) when ${c} is not null then json(pm_json_number(${c})) end`;
      break;
    case 'json':
      value = sql`json(${c})`;
      break;
    default:
      value = c;
  }
  return sql`${sql.lit(f.name)}, ${value}`;
}

/**
 * A row's ids of one relation, in link order, as JSON text: one indexed
 * subquery. The rows are ordered in an inner query the covering index
 * links(kind, parent_id, created_at, related_id) already yields in order, and
 * aggregated outside it: SQLite never flattens an ordered subquery into an
 * aggregate, so the array keeps that order without a sort. (An ORDER BY inside
 * json_group_array builds a temporary b-tree per row: a 51-row page spent a
 * third of its time there.)
 */
function linkIds(kind: string, parentId: string) {
  return sql`(select json_group_array(related_id) from (select l.related_id from ${sql.table('links')} as l where l.kind = ${sql.lit(kind)} and l.parent_id = ${sql.ref(parentId)} order by l.created_at, l.related_id))`;
}

/**
 * The table a data-changing statement writes, read from its text: `insert
 * [or …] into t`, `replace into t`, `update [or …] t`, `delete from t`, with
 * `t` plain or double-quoted. Anything else that may write (a statement
 * opening with WITH, a schema-qualified name, DDL, a pragma, a comment
 * first) answers undefined: it may have written anything.
 */
const WRITE_TARGET = /^\s*(?:insert(?:\s+or\s+[a-z]+)?\s+into|replace\s+into|update(?:\s+or\s+[a-z]+)?|delete\s+from)\s+(?:"((?:[^"]|"")+)"|([A-Za-z_][A-Za-z0-9_$]*))(?![A-Za-z0-9_$]|\s*\.)/i;

/** Statements that change no row: read-only ones and transaction control. */
const READS = Symbol('reads');
/** A pragma that sets something: every write from then on counts as a write to any table. */
const SETS_PRAGMA = Symbol('sets pragma');
const TRANSACTION_CONTROL = /^\s*(?:begin|commit|end|rollback|savepoint|release)\b/i;
/** A pragma given a value (`pragma foreign_keys = on`, `pragma foreign_keys(1)`): it may change how writes spread. */
const PRAGMA_SET = /^\s*pragma\s+[\w."]+\s*[=(]/i;

function writeTarget(sqlText: string): string | undefined {
  const m = WRITE_TARGET.exec(sqlText);
  if (!m) return undefined;
  // SQLite compares identifiers without regard to ASCII case.
  return (m[1] !== undefined ? m[1].replace(/""/g, '"') : m[2]!).toLowerCase();
}

/**
 * kysely prepares every query anew; better-sqlite3 statements are reusable, so
 * keep the most recent ones by SQL text (a bounded LRU). kysely's driver runs
 * each statement synchronously right after preparing it, so preparing is where
 * the connection counts the statements that may change the database as they
 * run (the store's changeStamp): by the table each writes, or as `anyWrites`
 * when the table cannot be told.
 *
 * A write can reach other tables than the one it names only through a
 * trigger (pmapi's connection keeps foreign keys, hence cascades, off). While
 * the database has a trigger, or after this connection ran a pragma that
 * changes state (foreign_keys = on, …), every write counts as `anyWrites`.
 * The trigger check runs at open and again after a write whose table cannot
 * be told (DDL); a trigger created by another connection is a commit that
 * moves PRAGMA data_version, which the stamp checks (and then asks again).
 */
function cachingDatabase(raw: Database.Database, max = 500) {
  const cache = new Map<string, CachedStatement>();
  // A TEMP trigger (created on this connection through store.db) lives in sqlite_temp_master.
  const hasTrigger = raw.prepare("select exists (select 1 from sqlite_master where type = 'trigger') or exists (select 1 from sqlite_temp_master where type = 'trigger')").pluck();
  let exact = !hasTrigger.get();
  let recheck = false;
  let latched = false;
  const self = {
    /** Writes to each table (lower-cased stored names), and writes that may have touched any table. */
    tableWrites: new Map<string, number>(),
    anyWrites: 0,
    /** Ask the schema for triggers again before the next write. */
    recheckTriggers() {
      recheck = true;
    },
    prepare(sqlText: string) {
      let entry = cache.get(sqlText);
      if (entry) {
        cache.delete(sqlText);
      } else {
        const stmt = raw.prepare(sqlText);
        // A pragma that sets something counts as read-only to SQLite; BEGIN IMMEDIATE takes the write lock (so
        // SQLite calls it not read-only) but changes no row.
        const target = PRAGMA_SET.test(sqlText) ? SETS_PRAGMA : stmt.readonly || TRANSACTION_CONTROL.test(sqlText) ? READS : writeTarget(sqlText);
        entry = new CachedStatement(stmt, target);
        if (cache.size >= max) cache.delete(cache.keys().next().value!);
      }
      cache.set(sqlText, entry);
      if (entry.target !== READS) {
        if (recheck && !latched) {
          recheck = false;
          exact = !hasTrigger.get();
        }
        const target = entry.target;
        if (typeof target !== 'string' || !exact) {
          self.anyWrites++;
          // A pragma may have turned foreign keys (cascades) on: judge no write exactly again. DDL may have created a trigger.
          if (target === SETS_PRAGMA) {
            latched = true;
            exact = false;
          } else if (target === undefined) recheck = true;
        } else {
          self.tableWrites.set(target, (self.tableWrites.get(target) ?? 0) + 1);
        }
      }
      return entry;
    },
    close() {
      cache.clear();
      raw.close();
    },
  };
  return self;
}

/**
 * A statement of the connection's cache, as kysely's SQLite driver and
 * `directRun` use it: rows are built by `rowReader` (rows.ts), the same
 * objects better-sqlite3 makes, in less time.
 */
class CachedStatement {
  readonly reader: boolean;
  private read: ReadRows | undefined;
  constructor(
    private readonly stmt: Database.Statement,
    /** The table its writes change, as the change stamp counts them (cachingDatabase). */
    readonly target: string | typeof READS | typeof SETS_PRAGMA | undefined,
  ) {
    this.reader = stmt.reader;
  }
  all(params: readonly unknown[]): Record<string, unknown>[] {
    return (this.read ??= rowReader(this.stmt))(params);
  }
  run(params: readonly unknown[]): Database.RunResult {
    return this.stmt.run(params as unknown[]);
  }
  iterate(params: readonly unknown[]): IterableIterator<unknown> {
    return this.stmt.iterate(params as unknown[]);
  }
}

/**
 * A statement run on the connection at once (core statement-cache.ts
 * `runDirectly`): exactly what kysely's SQLite driver does with it — the
 * connection's cached prepared statement, rows for a statement that returns
 * them, else the changes and the last row id as bigints — and logged as the
 * store's kysely instance logs it, without kysely's chain of async calls.
 * The SQL is kysely's compiled text, plugins (the table prefix) applied; the
 * prefix plugin leaves results as they are.
 */
function directRun(connection: ReturnType<typeof cachingDatabase>, log: ((e: LogEvent) => void) | undefined): DirectRun {
  return (query) => {
    const started = log ? performance.now() : 0;
    const stmt = connection.prepare(query.sql);
    let result: QueryResult<unknown>;
    if (stmt.reader) {
      result = { rows: stmt.all(query.parameters) };
    } else {
      const { changes, lastInsertRowid } = stmt.run(query.parameters);
      result = { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
    }
    log?.({ level: 'query', query, queryDurationMillis: performance.now() - started });
    return result;
  };
}

/**
 * The store's changeStamp for some tables: moves with every statement this
 * connection runs that may write one of them (or may have written anything),
 * and with every commit by another connection (another process, or another
 * store on the same file), which PRAGMA data_version reports (about 0.1 µs in
 * memory, a few on a file). The tables are pmapi's names; with a prefix they
 * are counted by their stored names.
 */
function changeStamp(raw: Database.Database, connection: ReturnType<typeof cachingDatabase>, names: TableNames | undefined) {
  const dataVersion = raw.prepare('pragma data_version').pluck();
  let seen = dataVersion.get() as number;
  let others = 0;
  // On a file the pragma opens and closes a read transaction (file locks, the write-ahead log's index): about
  // 15 µs on a VM, paid by every request's token lookup. Its answer is kept until the microtasks already queued
  // when it was read have run: the requests http-node hands on in one turn read it in one synchronous stretch,
  // so they share one read. A commit by another connection within that stretch is concurrent with requests
  // whose bytes had already arrived, and the next stretch sees it.
  let fresh = false;
  const stale = () => {
    fresh = false;
  };
  const othersStamp = () => {
    if (fresh) return others;
    fresh = true;
    queueMicrotask(stale);
    const v = dataVersion.get() as number;
    if (v !== seen) {
      seen = v;
      others++;
      // Another connection may have created a trigger.
      connection.recheckTriggers();
    }
    return others;
  };
  return (tables: readonly string[]): (() => number) => {
    const stored = tables.map((t) => (names ? names.stored(t) : t).toLowerCase());
    return () => {
      // Every counter only grows, so the sum moves whenever any of them does.
      let n = othersStamp() + connection.anyWrites;
      for (const t of stored) n += connection.tableWrites.get(t) ?? 0;
      return n;
    };
  };
}

export interface SqliteStoreOptions {
  /** A file path, or `:memory:` (default). */
  filename?: string;
  /** How long a writer waits for another process's lock, ms (default 5000). */
  busyTimeoutMs?: number;
  /** Called with the SQL of every query executed (diagnostics, query-count tests). */
  onQuery?: (sql: string, durationMs: number) => void;
  /**
   * Where the shared rate-limit counters live (`createRateLimiter({ store: 'database' })`):
   * default `<filename>-limits` beside the database, or the process's memory for `:memory:`.
   * Every process sharing the database must use the same file.
   */
  rateLimitFile?: string;
  /**
   * Apply pending migrations on open (default true). With false nothing is
   * applied, and a database that lacks any migration is refused at open with a
   * PendingMigrationsError naming them: apply them with `pmapi migrate --db <file>`
   * (@pmapi/cli) as a deployment step.
   */
  migrate?: boolean;
  /**
   * Share the host application's SQLite file: every table, index and
   * migration-bookkeeping table pmapi creates (and the rate-limit counters'
   * tables) is named with this prefix, and every statement pmapi runs uses the
   * prefixed names, so the host's own `tasks`, `users`, … are left alone.
   * Through `store.db`, pmapi's tables keep their plain names (`tasks`): the
   * store renames them on the way to the file, and its introspection lists
   * only pmapi's tables. Must match {@link TABLE_PREFIX_PATTERN} (e.g. `'pm_'`);
   * default: no prefix.
   */
  tablePrefix?: string;
}

/** Every SqliteStoreOptions key: any other is refused (a typo such as `filname` would open `:memory:`). */
const SQLITE_OPTIONS = ['filename', 'busyTimeoutMs', 'onQuery', 'rateLimitFile', 'migrate', 'tablePrefix'] as const satisfies ReadonlyArray<keyof SqliteStoreOptions>;
type _AllSqliteOptions = Exclude<keyof SqliteStoreOptions, (typeof SQLITE_OPTIONS)[number]> extends never ? true : never;
const _allSqliteOptions: _AllSqliteOptions = true;
void _allSqliteOptions;

/**
 * Open (and migrate) a SQLite database for pmapi.
 *
 * @example
 * const store = await openSqliteStore();                       // in memory
 * const store = await openSqliteStore({ filename: 'pm.db' });   // a file, in WAL mode
 * const store = await openSqliteStore({ filename: 'app.db', tablePrefix: 'pm_' }); // beside the host's tables
 */
export async function openSqliteStore(o: SqliteStoreOptions = {}): Promise<SqlStore> {
  checkOptionNames('openSqliteStore', o, SQLITE_OPTIONS);
  if (o.migrate !== undefined && typeof o.migrate !== 'boolean') throw new TypeError('pmapi: openSqliteStore options.migrate must be true or false');
  return openSqlite(o, o.migrate === false ? 'check' : 'apply');
}

/**
 * pmapi's migrations on a SQLite file without opening a store: list the
 * pending ones, apply them, or preview their SQL (what `pmapi migrate` runs).
 *
 * @example
 * const m = await openSqliteMigrations({ filename: 'pm.db' });
 * try { console.log(await m.apply()); } finally { await m.close(); }
 */
export async function openSqliteMigrations(o: Omit<SqliteStoreOptions, 'migrate'> = {}): Promise<MigrationRunner> {
  checkOptionNames('openSqliteMigrations', o, SQLITE_OPTIONS.filter((k) => k !== 'migrate'));
  const tap: MigrationTap = {};
  const store = await openSqlite(o, 'none', tap);
  return {
    pending: () => pendingMigrations(store.db, store.dialect),
    apply: () => migrate(store.db, store.dialect),
    preview: () => previewMigrations(store.db, store.dialect, tap),
    close: () => store.close(),
  };
}

/** Open the database; `apply` pending migrations, `check` that none is pending (migrate: false), or leave them (`none`). */
async function openSqlite(o: SqliteStoreOptions, migrations: 'apply' | 'check' | 'none', tap?: MigrationTap): Promise<SqlStore> {
  // Checked before the file is touched.
  const prefix = checkTablePrefix(o.tablePrefix);
  const names = prefix ? tableNames(prefix) : undefined;
  const filename = o.filename ?? ':memory:';
  const raw = new Database(filename);
  raw.pragma(`busy_timeout = ${o.busyTimeoutMs ?? 5000}`);
  if (filename !== ':memory:') raw.pragma('journal_mode = WAL');
  raw.pragma('synchronous = NORMAL');
  raw.pragma('foreign_keys = OFF');
  // Temporary b-trees (RETURNING, a sort without an index) in memory, not in files: every write with
  // RETURNING used one, at the cost of creating a file each time (a two-row upsert: 33 µs → 4.5 µs).
  raw.pragma('temp_store = MEMORY');
  raw.function('pm_fold', { deterministic: true }, (s: unknown) => (typeof s === 'string' ? s.toLowerCase() : s) as string);
  // The fast read path's fallbacks (jsonEntry): JavaScript's own printing of a number and of an instant.
  raw.function('pm_json_number', { deterministic: true }, (n: unknown) => (typeof n === 'number' ? JSON.stringify(n) : null));
  raw.function('pm_iso', { deterministic: true }, (ms: unknown) => (typeof ms === 'number' && Number.isFinite(new Date(ms).getTime()) ? new Date(ms).toISOString() : null));
  const connection = cachingDatabase(raw);
  const log = statementLog(o.onQuery, tap);
  const db = new Kysely<any>({
    dialect: new ImmediateSqliteDialect({ database: connection }, names),
    ...(names ? { plugins: [new TablePrefixPlugin(names)] } : {}),
    ...log,
  });
  const run = directRun(connection, typeof log.log === 'function' ? log.log : undefined);
  // Outside a transaction a statement runs at once unless a transaction holds the connection: it would run inside
  // that one. Inside store.transaction's transactions, always (group-commit.ts).
  runDirectly(db, (q) => (raw.inTransaction ? undefined : run(q)));
  // The statement cache (core sql/statement-cache.ts) keeps SQL text by dialect name: a prefixed store's text differs.
  const dialect: DialectSupport = names ? { ...sqliteDialectSupport, name: `sqlite:${prefix}` } : sqliteDialectSupport;
  try {
    if (migrations === 'apply') await migrate(db, dialect);
    else if (migrations === 'check') await assertMigrated(db, dialect);
  } catch (err) {
    await db.destroy();
    throw err;
  }
  let limits: ReturnType<typeof sqliteRateLimitStore> | undefined;
  return {
    db,
    dialect,
    transaction: groupCommit(db, raw, run),
    changeStamp: changeStamp(raw, connection, names),
    rateLimitStore: () => (limits ??= sqliteRateLimitStore(o.rateLimitFile ?? (filename === ':memory:' ? ':memory:' : `${filename}-limits`), {
      ...(o.busyTimeoutMs === undefined ? {} : { busyTimeoutMs: o.busyTimeoutMs }),
      ...(prefix ? { tablePrefix: prefix } : {}),
    })),
    close: async () => {
      limits?.close();
      await db.destroy();
    },
  };
}
