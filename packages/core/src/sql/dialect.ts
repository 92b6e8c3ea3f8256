import { sql, type Kysely, type RawBuilder, type Expression } from 'kysely';
import type { StorageKind } from './shape';
import type { RateLimitStore } from '../limits/rules';

/**
 * What an adapter supplies besides its Kysely instance: how values of each
 * storage kind travel, the DDL types, and the few behaviours that differ.
 * Shared code never branches on the dialect's name (kysely's DialectAdapter
 * is the model).
 */
export interface DialectSupport {
  readonly name: string;
  /** DDL type of each storage kind (plus `id` for key columns, `bigint` for counters). */
  readonly ddl: Record<StorageKind | 'id' | 'bigint', string>;
  encode(kind: StorageKind, value: unknown): unknown;
  decode(kind: StorageKind, value: unknown): unknown;
  /**
   * Optional: one row's response object as JSON text, built by the database
   * (the read fast path: no row becomes a JavaScript object). The text must be
   * byte for byte what `JSON.stringify` prints for the decoded row as v3 shows
   * it: keys in the order given, instants as ISO 8601 UTC with milliseconds,
   * booleans as `true`/`false`, numbers as JavaScript prints them, JSON
   * columns inline. Answers undefined for a shape it cannot build (the caller
   * then reads rows); a store without it always reads rows.
   */
  jsonObject?(fields: readonly JsonColumn[], table: string): RawBuilder<string> | undefined;
  /**
   * The ids a row's many-to-many relation of `kind` links it to, as one
   * scalar subquery over `links` (`parentId` names the row's id column): a
   * JSON array (text or parsed) in link order — created_at, then related id.
   */
  linkIds(kind: string, parentId: string): RawBuilder<unknown>;
  /**
   * Optional: all of a row's links of these kinds as one scalar subquery, for
   * a store where one subquery per relation costs the database more than
   * splitting their ids apart here: a JSON array (text or parsed) of
   * `"<kind> <related id>"` strings, each kind's in link order. Where given,
   * a read of rows with their relations selects this one column instead of
   * one `linkIds` per relation.
   */
  allLinkIds?(kinds: readonly string[], parentId: string): RawBuilder<unknown>;
  /**
   * The driver hands instants over as ISO 8601 UTC text with milliseconds
   * (`2026-01-02T03:04:05.678Z`, what `Date.prototype.toISOString` prints)
   * wherever it can: a printer of rows copies such a value as it is.
   */
  isoInstants?: boolean;
  /**
   * Where there is no `jsonObject`: print each row's response JSON straight
   * from the driver's row (no record and no response object in between),
   * the same bytes the rows path gives. Off, pages are built from records.
   */
  jsonFromRows?: boolean;
  /**
   * A LIMIT is written into the statement as a number, not bound
   * ({@link limitOf}). SQLite's planner reads a bound LIMIT's value (for its
   * ORDER BY … LIMIT plans) and marks the statement to be compiled again
   * whenever that parameter is bound again, which better-sqlite3 does on
   * every run: a prepared page statement was compiled anew on every request.
   */
  inlineLimit?: boolean;
  /** One case rule for `contains` and `startsWith` on both databases. */
  fold(expr: Expression<unknown>): RawBuilder<string>;
  readonly capabilities: {
    /** `SELECT … FOR UPDATE` locks rows (Postgres); SQLite serialises writers instead. */
    forUpdate: boolean;
    /** Several processes may share the database. */
    multiProcess: boolean;
    /** `WITH x AS (INSERT …) SELECT …` runs the insert (Postgres): saves a round trip inside write transactions. */
    writableCte?: boolean;
    /**
     * Tables can be unlogged (Postgres): a transaction that writes only such
     * tables commits without waiting for a WAL flush. Rate-limit counters
     * live there; a database crash empties them.
     */
    unloggedTables?: boolean;
    /**
     * A transaction's connection sends statements together and holds one back
     * until the next (statement-cache.ts `executeTogether`, `holdStatement`):
     * Postgres, unless opened with `prepare: false`. Where false, nothing asks.
     */
    pipeline?: boolean;
  };
  /** A unique constraint refused the write. */
  isUniqueViolation(err: unknown): boolean;
  /** The database cannot be reached or dropped the connection: answer 503. */
  isUnavailable(err: unknown): boolean;
  /**
   * Optional: run `fn` with every statement it issues cancelled by the
   * server once it runs longer than `ms` milliseconds (Postgres: a
   * transaction-local statement_timeout); such a cancellation is
   * `isStatementTimeout`. Where absent (SQLite runs a statement to its end
   * in-process), callers check the elapsed time between statements instead.
   */
  withStatementTimeout?<T>(db: Kysely<any>, ms: number, fn: (db: Kysely<any>) => Promise<T>): Promise<T>;
  /** The server cancelled a statement at the deadline `withStatementTimeout` set. */
  isStatementTimeout?(err: unknown): boolean;
  /**
   * A statement named a table or column the database does not have: a
   * resource declared without its migration (answered 400
   * resource_misconfigured: retrying will not help).
   */
  isSchemaMismatch?(err: unknown): boolean;
  /**
   * Take a named lock for the rest of the transaction if nobody holds it
   * (background jobs: one runner at a time across processes); the name is
   * taken within the schema in use (Postgres). Absent where
   * write transactions are serialised anyway (SQLite).
   */
  tryLock?(trx: Kysely<any>, name: string): Promise<boolean>;
}

/**
 * One key of a JSON row: its response name and where its value lives — a
 * column of the row (and how the column is stored), or the ids a
 * many-to-many relation links the row to (`links`: the link kind), as a JSON
 * array in link order (created_at, then related id).
 */
export type JsonColumn =
  | { name: string; column: string; kind: StorageKind; links?: undefined }
  | { name: string; links: string };

/** An opened database the core can work on. Adapters return one. */
export interface SqlStore {
  readonly db: Kysely<any>;
  /**
   * Optional: the same database as `db`, for statements outside a
   * transaction that hold no session state (reads, and single statements
   * that commit on their own): the store may send the concurrent ones
   * together. Postgres sends every such statement of one run of the
   * microtask queue on one connection in one write, each with its own Sync
   * (an error fails only its statement). A transaction begun on it runs on a
   * connection of its own, as on `db`. Used for authentication and read
   * requests; absent, `db` serves them.
   */
  readonly reads?: Kysely<any>;
  readonly dialect: DialectSupport;
  /** Run `fn` in one write transaction (SQLite: BEGIN IMMEDIATE). */
  transaction<T>(fn: (trx: Kysely<any>) => Promise<T>): Promise<T>;
  /**
   * Optional: where this store keeps shared rate-limit counters, if not in
   * `rate_counters`/`rate_blocks` through `db` (createRateLimiter's
   * `store: 'database'`). SQLite keeps them beside the database file, off the
   * main write-ahead log; the store closes it with itself.
   */
  rateLimitStore?(): RateLimitStore;
  /**
   * Optional: a change stamp. `changeStamp(tables)` answers a function whose
   * number stays the same exactly as long as no row of those tables (pmapi's
   * names) can have changed since it was last read: a write through `db` that
   * may touch one of them (this process) or any commit by another connection
   * (another process) moves it. With
   * it, rows that only writes change (a token's lookup) are remembered between
   * requests instead of read again. SQLite provides it (write counters kept
   * by table as statements are prepared, and `PRAGMA data_version`); a store
   * that cannot tell leaves it out, and nothing is remembered.
   */
  changeStamp?(tables: readonly string[]): () => number;
  close(): Promise<void>;
}

/**
 * A LIMIT of `n` as the dialect takes it: the number written into the
 * statement where `inlineLimit` (one prepared statement per page size, reused
 * as it is), else bound. Only a non-negative safe integer is ever written in.
 */
export function limitOf(dialect: DialectSupport, n: number): number | RawBuilder<number> {
  return limitInlined(dialect, n) ? sql.lit(n) : n;
}

/** Whether {@link limitOf} writes `n` into the statement (then it is part of a cached statement's shape, not of its values). */
export function limitInlined(dialect: DialectSupport, n: number): boolean {
  return dialect.inlineLimit === true && Number.isSafeInteger(n) && n >= 0;
}
