import Database from 'better-sqlite3';
import { CompiledQuery, Kysely, SqliteDialect, SqliteDriver, sql, type DatabaseConnection, type Driver, type Expression } from 'kysely';
import type { DialectSupport, SqlStore } from '@pmapi/core/sql';
import { migrate } from '@pmapi/core/sql';
import type { StorageKind } from '@pmapi/core';

/** SQLite writers must take the write lock up front: BEGIN IMMEDIATE (kysely issues a plain BEGIN). */
class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}

class ImmediateSqliteDialect extends SqliteDialect {
  constructor(private readonly cfg: ConstructorParameters<typeof SqliteDialect>[0]) {
    super(cfg);
  }
  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.cfg);
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
  // Unicode-aware lower case, registered on the connection (SQLite's lower() folds ASCII only).
  fold: (e: Expression<unknown>) => sql<string>`pm_fold(${e})`,
  capabilities: { forUpdate: false, multiProcess: false },
  isUniqueViolation: (err) => (err as { code?: string })?.code === 'SQLITE_CONSTRAINT_UNIQUE' || (err as { code?: string })?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY',
  isUnavailable: (err) => ['SQLITE_BUSY', 'SQLITE_LOCKED', 'SQLITE_IOERR', 'SQLITE_CANTOPEN'].includes((err as { code?: string })?.code ?? ''),
};

/**
 * kysely prepares every query anew; better-sqlite3 statements are reusable, so
 * keep the most recent ones by SQL text (a bounded LRU).
 */
function cachingDatabase(raw: Database.Database, max = 500) {
  const cache = new Map<string, Database.Statement>();
  return {
    prepare(sqlText: string) {
      let stmt = cache.get(sqlText);
      if (stmt) {
        cache.delete(sqlText);
      } else {
        stmt = raw.prepare(sqlText);
        if (cache.size >= max) cache.delete(cache.keys().next().value!);
      }
      cache.set(sqlText, stmt);
      return stmt;
    },
    close() {
      cache.clear();
      raw.close();
    },
  };
}

export interface SqliteStoreOptions {
  /** A file path, or `:memory:` (default). */
  filename?: string;
  /** How long a writer waits for another process's lock, ms (default 5000). */
  busyTimeoutMs?: number;
  /** Called with the SQL of every query executed (diagnostics, query-count tests). */
  onQuery?: (sql: string, durationMs: number) => void;
}

/**
 * Open (and migrate) a SQLite database for pmapi.
 *
 * @example
 * const store = await openSqliteStore();                       // in memory
 * const store = await openSqliteStore({ filename: 'pm.db' });   // a file, in WAL mode
 */
export async function openSqliteStore(o: SqliteStoreOptions = {}): Promise<SqlStore> {
  const filename = o.filename ?? ':memory:';
  const raw = new Database(filename);
  raw.pragma(`busy_timeout = ${o.busyTimeoutMs ?? 5000}`);
  if (filename !== ':memory:') raw.pragma('journal_mode = WAL');
  raw.pragma('synchronous = NORMAL');
  raw.pragma('foreign_keys = OFF');
  raw.function('pm_fold', { deterministic: true }, (s: unknown) => (typeof s === 'string' ? s.toLowerCase() : s) as string);
  const onQuery = o.onQuery;
  const db = new Kysely<any>({
    dialect: new ImmediateSqliteDialect({ database: cachingDatabase(raw) }),
    ...(onQuery ? { log: (e) => { if (e.level === 'query') onQuery(e.query.sql, e.queryDurationMillis); } } : {}),
  });
  await migrate(db, sqliteDialectSupport);
  return {
    db,
    dialect: sqliteDialectSupport,
    transaction: (fn) => db.transaction().execute(fn),
    close: () => db.destroy(),
  };
}
