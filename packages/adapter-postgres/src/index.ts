import pg from 'pg';
import { createHash } from 'node:crypto';
import { Kysely, sql, type Expression } from 'kysely';
import type { DialectSupport, MigrationRunner, MigrationTap, SqlStore } from '@pmapi/core/sql';
import { assertMigrated, checkOptionNames, migrate, pendingMigrations, previewMigrations, statementLog } from '@pmapi/core/sql';
import type { StorageKind } from '@pmapi/core';
import { pipelinedDialect, togetherDialect, type PooledConnection, type StatementLogger } from './together';

/** SQLSTATE classes and driver errors that mean "the database is not there right now": answer 503. */
const UNAVAILABLE_STATES = /^(08|57P0|53300|40P01|40001|57014|55P03)/;
const UNAVAILABLE_MESSAGES = /cached plan must not change result type|Connection terminated|connection error|timeout exceeded|Query read timeout|Connection ended|not queryable|not currently accepting connections|the database system is|ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT/i;

function errCode(err: unknown): string {
  return String((err as { code?: unknown })?.code ?? '');
}

/**
 * How pmapi's storage kinds live in Postgres: instants as `timestamptz(3)`
 * (milliseconds, so `expectedUpdatedAt` round-trips), text with the "C"
 * collation (byte order, as on SQLite), JSON as `jsonb`.
 */
export function postgresDialectSupport(opts: { icu: boolean; pipeline?: boolean }): DialectSupport {
  return {
    name: 'postgres',
    ddl: {
      text: 'text collate "C"', id: 'text collate "C"', number: 'double precision', integer: 'integer', bigint: 'bigint',
      boolean: 'boolean', timestamp: 'timestamptz(3)', json: 'jsonb',
    },
    encode(kind: StorageKind, v: unknown): unknown {
      switch (kind) {
        case 'timestamp':
          return new Date(v as number);
        case 'json':
          return JSON.stringify(v);
        default:
          return v;
      }
    },
    decode(kind: StorageKind, v: unknown): unknown {
      switch (kind) {
        case 'timestamp':
          return v instanceof Date ? v.getTime() : Date.parse(String(v));
        case 'number':
        case 'integer':
          return typeof v === 'number' ? v : Number(v);
        case 'boolean':
          return v === true || v === 't';
        case 'json':
          return typeof v === 'string' && (v.startsWith('[') || v.startsWith('{')) ? JSON.parse(v) : v;
        default:
          return v;
      }
    },
    // Postgres builds no JSON here (json_agg measured slower than plain rows with the server sharing the core): rows are printed in JS.
    jsonFromRows: true,
    // As text, so the driver does not parse what is printed as it comes: array_to_json writes `["a","b"]`,
    // the bytes JSON.stringify writes (json_agg's text has a space after each comma). The ids come in the
    // index's order (links_parent), so the array needs no sort.
    linkIds: (kind, parentId) =>
      sql`array_to_json(array(select l.related_id from links as l where l.kind = ${sql.lit(kind)} and l.parent_id = ${sql.ref(parentId)} order by l.created_at, l.related_id))::text`,
    // A row's relations together: one index range (links_parent) per row instead of one subquery per relation,
    // which measured about half the server's work for a 50-row page of tasks (five relations).
    allLinkIds: (kinds, parentId) =>
      sql`array_to_json(array(select l.kind || ' ' || l.related_id from links as l where l.parent_id = ${sql.ref(parentId)} and l.kind in (${sql.join(kinds.map((k) => sql.lit(k)))}) order by l.kind, l.created_at, l.related_id))::text`,
    // pmapi's statements read timestamptz as ISO text (instantText below).
    isoInstants: true,
    // Unicode lower case through ICU when the server has it (lower() under "C" folds ASCII only).
    fold: (e: Expression<unknown>) => (opts.icu ? sql<string>`lower(${e} collate "und-x-icu")` : sql<string>`lower(${e})`),
    capabilities: { forUpdate: true, multiProcess: true, writableCte: true, unloggedTables: true, pipeline: opts.pipeline ?? false },
    isUniqueViolation: (err) => errCode(err) === '23505',
    isUnavailable: (err) =>
      UNAVAILABLE_STATES.test(errCode(err)) ||
      ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND'].includes(errCode(err)) ||
      (err instanceof Error && UNAVAILABLE_MESSAGES.test(err.message)),
    async withStatementTimeout(db, ms, fn) {
      // SET LOCAL: the deadline ends with the (read) transaction, whichever way it ends.
      return db.transaction().execute(async (trx) => {
        await sql`select set_config('statement_timeout', ${String(Math.max(1, Math.ceil(ms)))}, true)`.execute(trx);
        return fn(trx);
      });
    },
    // 57014 query_canceled: what statement_timeout raises.
    isStatementTimeout: (err) => errCode(err) === '57014',
    // 42P01 undefined_table, 42703 undefined_column.
    isSchemaMismatch: (err) => errCode(err) === '42P01' || errCode(err) === '42703',
    async tryLock(trx, name) {
      // Named within the schema in use: deployments (and test schemas) sharing one database do not hold each other up.
      const r = await sql<{ ok: boolean }>`select pg_try_advisory_xact_lock(hashtext(${`pmapi:${name}:`} || current_schema())) as ok`.execute(trx);
      return r.rows[0]?.ok === true;
    },
  };
}

const defaultInstant = pg.types.getTypeParser(pg.types.builtins.TIMESTAMPTZ, 'text');
/** timestamptz text in UTC as the server prints it: date, time, up to six fraction digits, `+00`. */
const UTC_TEXT = /^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d)(?:\.(\d{1,6}))?\+00$/;

/**
 * A timestamptz value as ISO 8601 text with milliseconds, the wire format:
 * `2026-01-02 03:04:05.6+00` becomes `2026-01-02T03:04:05.600Z`, by moving
 * characters (the fraction cut to milliseconds, as a Date would). Anything
 * else (another offset, a year past 9999, BC, infinity) is parsed as the
 * driver does. Saves a Date per instant read and another per instant printed.
 */
export function instantText(text: string): unknown {
  const m = UTC_TEXT.exec(text);
  if (m === null) return defaultInstant(text);
  const f = m[3];
  return `${m[1]}T${m[2]}.${f === undefined ? '000' : f.length >= 3 ? f.slice(0, 3) : f.padEnd(3, '0')}Z`;
}

/** The type parsers of pmapi's own statements: the driver's, with timestamptz as {@link instantText}. */
const PMAPI_TYPES = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === pg.types.builtins.TIMESTAMPTZ && format !== 'binary' ? instantText : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

/** A statement held back to leave with the next one sent on its connection, and its answer's settlers. */
type Held = { sql: string; values: unknown[]; resolve: (r: unknown) => void; reject: (err: unknown) => void };

/** The statement name of `begin`, prepared once per connection. */
const BEGIN_STATEMENT = 'pmapi_begin';

type Connection = { stream: { cork?(): void; uncork?(): void }; parsedStatements: Record<string, string>; bind(c: unknown): void; execute(c: unknown): void; describe(c: unknown): void };
type Field = { name: string; dataTypeID: number; format?: string };
type RowParser = (data: Array<string | null>) => Record<string, unknown>;
type ResultInternals = { fields: Field[]; _parsers: unknown[]; _prebuiltEmptyResultObject: object; _types: unknown; _rowMode?: string; parseRow: RowParser };
type QueryInternals = {
  submit(connection: Connection): Error | null;
  prepare(connection: Connection): void;
  handleCommandComplete(msg: unknown, connection: Connection): void;
  handleRowDescription(msg: { fields: Field[] }): void;
  values?: unknown;
  name?: string;
  queryMode?: string;
  types?: unknown;
  _result: ResultInternals;
};
type QueryConfig = pg.QueryConfig & { queryMode?: 'extended'; callback?: (err: Error | undefined, res: pg.QueryResult) => void };

/** What the driver built from a named statement's last row description, by the type parsers it used. */
const described = new WeakMap<object, Map<string, { fields: Field[]; parsers: unknown[]; empty: object; parseRow: RowParser | undefined }>>();

/**
 * A row parser for one description: an object literal of its columns, each
 * through its parser (what the driver's parseRow does key by key, with the
 * shape known once). Undefined where code cannot be generated (a runtime
 * that forbids it), for binary columns, or a column named `__proto__`.
 */
function compileRowParser(fields: Field[], parsers: unknown[]): RowParser | undefined {
  if (fields.some((f) => (f.format !== undefined && f.format !== 'text') || f.name === '__proto__')) return undefined;
  try {
    const props = fields.map((f, i) => `${JSON.stringify(f.name)}: d[${i}] === null ? null : p[${i}](d[${i}])`);
    return new Function('p', `return (d) => ({ ${props.join(', ')} });`)(parsers) as RowParser;
  } catch {
    return undefined;
  }
}

function sameFields(a: Field[], b: Field[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i]!.name !== b[i]!.name || a[i]!.dataTypeID !== b[i]!.dataTypeID || a[i]!.format !== b[i]!.format) return false;
  return true;
}

/** A statement that returns no rows (Postgres answered its Describe with NoData). */
const NO_ROWS = Symbol('no rows');

/**
 * What each connection's own Describe answers said of its named statements:
 * the row description, or {@link NO_ROWS}. A statement prepared on a
 * connection keeps the result type it was described with there (should a
 * schema change alter it, Postgres refuses to run the statement: "cached plan
 * must not change result type"), so once described it need not be again.
 */
const shapes = new WeakMap<Connection, Map<string, Field[] | typeof NO_ROWS>>();

/** Note what `connection` answered its Describe of statement `name` with (at most 1,000 statements a connection). */
function rememberShape(connection: Connection, name: string, shape: Field[] | typeof NO_ROWS): void {
  let mine = shapes.get(connection);
  if (!mine) shapes.set(connection, (mine = new Map()));
  if (mine.size < 1000) mine.set(name, shape);
}

/** Connections whose `describe` pmapi can skip for one statement (see {@link DescribedQuery}). */
const skipping = new WeakMap<Connection, { skip: boolean }>();
function describeSwitch(connection: Connection): { skip: boolean } {
  let sw = skipping.get(connection);
  if (!sw) {
    sw = { skip: false };
    const flag = sw;
    const describe = connection.describe.bind(connection);
    // Set once per connection (its shape stays the same afterwards).
    connection.describe = (msg: unknown) => {
      if (!flag.skip) describe(msg);
    };
    skipping.set(connection, sw);
  }
  return sw;
}

/**
 * A named statement's query. The driver describes every execution's rows
 * (Describe, answered with a RowDescription the driver parses, looks up a
 * parser for each column of and builds a row template from): the same work
 * each time for a prepared statement. Here a statement this connection has
 * described before is not described again: its description is applied as the
 * answer would have been. The parsers and row builder are made once per
 * statement and set of type parsers, and reused while the description is the
 * same (a changed one is built afresh).
 */
class DescribedQuery extends (pg.Query as unknown as new (text: string, values?: unknown[], callback?: QueryConfig['callback']) => QueryInternals) {
  /** The connection this query described its rows on (undefined: it did not, or they were known). */
  private describedOn: Connection | undefined;
  private sawRows = false;

  constructor(config: QueryConfig, callback: NonNullable<QueryConfig['callback']>) {
    // Given a config object, the driver first copies it property by property (getOwnPropertyDescriptors) on
    // every query; given text, values and callback it builds its own, and the rest is set here.
    super(config.text, config.values, callback);
    if (config.name) this.name = config.name;
    if (config.queryMode) this.queryMode = config.queryMode;
    if (config.types) this.types = this._result._types = config.types;
  }

  override prepare(connection: Connection): void {
    const name = this.name;
    const known = name && this._result._types && !this._result._rowMode && connection.parsedStatements[name] !== undefined
      ? shapes.get(connection)?.get(name)
      : undefined;
    if (known === undefined) {
      if (name) this.describedOn = connection;
      return super.prepare(connection);
    }
    const sw = describeSwitch(connection);
    sw.skip = true;
    try {
      super.prepare(connection);
    } finally {
      sw.skip = false;
    }
    if (known !== NO_ROWS) this.handleRowDescription({ fields: known });
  }

  override handleRowDescription(msg: { fields: Field[] }): void {
    this.sawRows = true;
    const result = this._result;
    const types = result._types;
    const name = this.name;
    if (!name || !types || result._rowMode || (result as { command?: unknown } & ResultInternals).command) return super.handleRowDescription(msg);
    if (this.describedOn) rememberShape(this.describedOn, name, msg.fields);
    let byName = described.get(types);
    const known = byName?.get(name);
    if (known && (known.fields === msg.fields || sameFields(known.fields, msg.fields))) {
      super.handleRowDescription({ fields: [] });
      result.fields = msg.fields;
      result._parsers = known.parsers;
      result._prebuiltEmptyResultObject = known.empty;
      if (known.parseRow) result.parseRow = known.parseRow;
      return;
    }
    super.handleRowDescription(msg);
    if (!byName) described.set(types, (byName = new Map()));
    if (byName.size < 1000) {
      const parseRow = compileRowParser(msg.fields, result._parsers);
      byName.set(name, { fields: msg.fields, parsers: result._parsers, empty: result._prebuiltEmptyResultObject, parseRow });
      if (parseRow) result.parseRow = parseRow;
    }
  }

  override handleCommandComplete(msg: unknown, connection: Connection): void {
    // Described, and no RowDescription came: the statement returns no rows.
    if (this.describedOn && !this.sawRows && this.name && this._result._types && !this._result._rowMode) rememberShape(this.describedOn, this.name, NO_ROWS);
    super.handleCommandComplete(msg, connection);
  }
}


/**
 * A transaction's first statement with its `begin` in front, in one message
 * train and one round trip: Bind and Execute of the prepared `begin`, then the
 * statement's own messages and its Sync (extended protocol; Postgres runs
 * them in order and the `begin` makes the rest an explicit transaction). The
 * `begin`'s completion is not the statement's result. Should the statement
 * fail, the transaction is aborted, and the rollback the caller sends ends it.
 */
class BeginThenQuery extends DescribedQuery {
  private begun = false;
  override submit(connection: Connection): Error | null {
    if (this.values !== undefined && !Array.isArray(this.values)) return super.submit(connection);
    connection.stream.cork?.();
    try {
      connection.bind({ portal: '', statement: BEGIN_STATEMENT, values: [] });
      connection.execute({ portal: '', rows: 0 });
      return super.submit(connection);
    } finally {
      connection.stream.uncork?.();
    }
  }
  override handleCommandComplete(msg: unknown, connection: Connection): void {
    if (!this.begun) {
      this.begun = true;
      return;
    }
    super.handleCommandComplete(msg, connection);
  }
}

/** Run a statement as one of pmapi's query kinds (a {@link DescribedQuery} or a {@link BeginThenQuery}). */
function submit(client: pg.PoolClient, Kind: typeof DescribedQuery, config: QueryConfig): Promise<pg.QueryResult> {
  return new Promise((resolve, reject) => {
    client.query(new Kind(config, (err, res) => (err ? reject(err) : resolve(res))) as unknown as pg.Submittable);
  });
}

/**
 * kysely sends every query unnamed, so Postgres parses and plans it each
 * time. Hand it clients that name the statements the library runs again and
 * again (seen a few times, deterministic names, at most `max` of them), so
 * each connection prepares them once. Off with `prepare: false` (pgbouncer
 * in transaction mode).
 */
function preparingPool(pool: pg.Pool, o: { prepare: boolean; searchPath?: string; ownsPool: boolean }, max = 400) {
  const seen = new Map<string, number>();
  const names = new Map<string, string>();
  const nameOf = (text: string): string | undefined => {
    const known = names.get(text);
    if (known) return known;
    if (names.size >= max || text.length > 8000 || /^\s*(begin|commit|rollback|savepoint|release)/i.test(text)) return undefined;
    const n = (seen.get(text) ?? 0) + 1;
    if (n < 3) {
      if (seen.size < 10_000) seen.set(text, n);
      return undefined;
    }
    seen.delete(text);
    // The schema is part of the name: a plan prepared for one schema's tables is never reused for another's.
    const name = `pmapi_${createHash('sha1').update(`${o.searchPath ?? ''}\n${text}`).digest('hex').slice(0, 20)}`;
    names.set(text, name);
    return name;
  };
  const wrappers = new WeakMap<pg.PoolClient, unknown>();
  /** The host's search_path of each connection checked out, to give back on release. */
  const hostPaths = new WeakMap<pg.PoolClient, string>();
  return {
    async connect() {
      const client = await pool.connect();
      if (o.searchPath) {
        // The host's pool: point this checkout at pmapi's schema, remembering the host's setting (one statement),
        // and give the connection back as it came (release below).
        try {
          const r = await client.query("select current_setting('search_path') as prev, set_config('search_path', $1, false)", [o.searchPath]);
          hostPaths.set(client, r.rows[0].prev as string);
        } catch (err) {
          client.release(err as Error);
          throw err;
        }
      }
      let w = wrappers.get(client);
      if (!w) {
        // pmapi's type parsers: set on the connection where the pool is pmapi's own (a statement sent as a plain
        // string then needs no config object), given with each statement on a host's connection (its queries keep its own).
        const types = o.ownsPool ? undefined : PMAPI_TYPES;
        if (o.ownsPool) (client as unknown as { setTypeParser(oid: number, format: 'text', parse: (s: string) => unknown): void }).setTypeParser(pg.types.builtins.TIMESTAMPTZ, 'text', instantText);
        // A migration by another process can invalidate a prepared `select *` ("cached plan must not change
        // result type"): that connection is then discarded instead of going back to the pool.
        let stale = false;
        // A `begin` not sent yet: it goes with the transaction's first statement (BeginThenQuery).
        let beginPending = false;
        // Statements held to leave with the next one sent on this connection (`hold`).
        let held: Held[] = [];
        const noteStale = (err: { code?: string }) => {
          if (err?.code === '0A000') stale = true;
          throw err;
        };
        const parsed = () => (client as unknown as { connection: Connection }).connection.parsedStatements;
        const run = (config: unknown, values?: unknown[]): Promise<unknown> => {
          if (o.prepare && typeof config === 'string') {
            const name = nameOf(config);
            if (name) return submit(client, DescribedQuery, { name, text: config, values: values as unknown[], ...(types ? { types } : {}) }).catch(noteStale);
          }
          return types && typeof config === 'string' ? client.query({ text: config, values, types }) : client.query(config as string, values);
        };
        /**
         * pg's pipeline mode: each statement is written as it is queued, with its own Sync, and the answers are
         * matched in order; corked, they leave in one write. A transaction's `begin` not sent yet goes first.
         */
        const pipelined = (items: ReadonlyArray<{ sql: string; values: unknown[] }>): Promise<Array<PromiseSettledResult<unknown>>> => {
          const c = client as unknown as { pipeline?: boolean; connection: Connection };
          c.pipeline = true;
          c.connection.stream.cork?.();
          let sent: Array<Promise<unknown>>;
          let begun: Promise<unknown> | undefined;
          try {
            if (beginPending) {
              beginPending = false;
              begun = client.query({ name: BEGIN_STATEMENT, text: 'begin' });
              begun.catch(() => undefined);
            }
            sent = items.map((st) => run(st.sql, st.values));
          } finally {
            c.connection.stream.uncork?.();
          }
          return Promise.allSettled(sent)
            .then(async (answers) => {
              if (begun) {
                try {
                  await begun;
                } catch (reason) {
                  // Without their transaction the statements' answers mean nothing: all of them fail as it did.
                  return answers.map((): PromiseSettledResult<unknown> => ({ status: 'rejected', reason }));
                }
              }
              return answers;
            })
            .finally(() => {
              c.pipeline = false;
            });
        };
        /** Settle held statements with their answers (the first ones of `answers`); the first failure among them, if any. */
        const settleHeld = (batch: Held[], answers: Array<PromiseSettledResult<unknown>>): PromiseRejectedResult | undefined => {
          let failed: PromiseRejectedResult | undefined;
          batch.forEach((h, i) => {
            const a = answers[i]!;
            if (a.status === 'fulfilled') h.resolve(a.value);
            else {
              failed ??= a;
              h.reject(a.reason);
            }
          });
          return failed;
        };
        /**
         * A statement with the held ones in front, in one write. A held statement that failed fails it too,
         * with that statement's error: inside a transaction it could not have done its work (a `commit` then
         * ends the transaction as a rollback).
         */
        const withHeld = (text: string, values: unknown[]): Promise<unknown> => {
          const batch = held;
          held = [];
          return pipelined([...batch, { sql: text, values }]).then((answers) => {
            const failed = settleHeld(batch, answers);
            if (failed) throw failed.reason;
            const own = answers[batch.length]!;
            if (own.status === 'rejected') throw own.reason;
            return own.value;
          });
        };
        const dropHeld = (why: string) => {
          const batch = held;
          held = [];
          for (const h of batch) h.reject(new Error(why));
        };
        w = {
          query(config: unknown, values?: unknown[]) {
            if (held.length > 0) {
              // A rollback drops what was held (it would be undone anyway); anything else takes it along.
              if (config === 'rollback') dropHeld('pmapi: rolled back before the statement was sent');
              else if (typeof config === 'string') return withHeld(config, values ?? []);
            }
            if (beginPending) {
              beginPending = false;
              // Nothing ran in the transaction: there is nothing to end.
              if (config === 'commit' || config === 'rollback') return Promise.resolve({ command: config.toUpperCase(), rowCount: null, rows: [] });
              if (typeof config === 'string' && parsed()[BEGIN_STATEMENT] !== undefined) {
                const name = nameOf(config);
                return submit(client, BeginThenQuery, { text: config, values: values as unknown[], ...(name ? { name } : {}), ...(types ? { types } : {}), queryMode: 'extended' }).catch((err: { code?: string }) => {
                  // 26000: the prepared `begin` is gone from the server (a pooler reset the session): prepare it again next time.
                  if (err?.code === '26000') delete parsed()[BEGIN_STATEMENT];
                  return noteStale(err);
                });
              }
              // The first time on this connection, `begin` is prepared and run on its own; the statement waits for it.
              return client.query({ name: BEGIN_STATEMENT, text: 'begin' }).then(() => run(config, values));
            }
            if (o.prepare && config === 'begin') {
              beginPending = true;
              return Promise.resolve({ command: 'BEGIN', rowCount: null, rows: [] });
            }
            return run(config, values);
          },
          together(statements: ReadonlyArray<{ sql: string; parameters: readonly unknown[] }>) {
            const batch = held;
            held = [];
            return pipelined([...batch, ...statements.map((st) => ({ sql: st.sql, values: [...st.parameters] }))]).then((answers) => {
              const failed = settleHeld(batch, answers);
              const own = answers.slice(batch.length);
              return failed ? own.map(() => failed) : own;
            });
          },
          hold(sql: string, parameters: readonly unknown[]) {
            return new Promise<unknown>((resolve, reject) => held.push({ sql, values: [...parameters], resolve, reject }));
          },
          async sendHeld() {
            if (held.length === 0) return;
            const batch = held;
            held = [];
            settleHeld(batch, await pipelined(batch));
          },
          release(err?: Error | boolean) {
            beginPending = false;
            dropHeld('pmapi: the connection was released before the statement was sent');
            const fault = err ?? (stale ? new Error('pmapi: prepared statements invalidated by a schema change') : undefined);
            if (!o.searchPath || fault) {
              client.release(fault);
              return;
            }
            // The host's own queries on this connection must see their own search_path again.
            client.query("select set_config('search_path', $1, false)", [hostPaths.get(client) ?? '']).then(() => client.release(), (e: Error) => client.release(e));
          },
        };
        wrappers.set(client, w);
      }
      return w;
    },
    // A pool the host passed in is the host's to end.
    end: () => (o.ownsPool ? pool.end() : Promise.resolve()),
  };
}

export interface PostgresStoreOptions {
  /**
   * A pg Pool of the host application to use. The store never ends it (close
   * only lets go of it); with `schema`, each connection pmapi checks out is
   * pointed at that schema and reset when given back, so the host's own
   * queries keep their search_path. Default: a pool of pmapi's own, made from
   * `connectionString`, which close ends.
   */
  pool?: pg.Pool;
  /** Default: `process.env.DATABASE_URL`. */
  connectionString?: string;
  /** Schema to work in (created if missing); default the connection's search_path. */
  schema?: string;
  /** Client-side timeout of every query, ms (default 10 000). */
  queryTimeoutMs?: number;
  /** How long to wait for a connection, ms (default 5 000). */
  connectionTimeoutMs?: number;
  /** Pool size (default 10). */
  max?: number;
  /**
   * Name repeated statements so each connection prepares them once, and send the statements of concurrent
   * requests outside transactions together (SqlStore.reads). Default true; false for pgbouncer transaction
   * pooling: unnamed statements, each sent on its own.
   */
  prepare?: boolean;
  /** Called with the SQL and duration of every query. */
  onQuery?: (sql: string, durationMs: number) => void;
  /** Errors of idle or broken connections (they never crash the process). Default: ignored. */
  onConnectionError?: (err: Error) => void;
  /**
   * Apply pending migrations on open (default true; under an advisory lock, so
   * several processes may open at once). With false nothing is applied, and a
   * database (schema) that lacks any migration is refused at open with a
   * PendingMigrationsError naming them: apply them with
   * `pmapi migrate --db <url> [--schema s]` (@pmapi/cli) as a deployment step.
   */
  migrate?: boolean;
}

/** Every PostgresStoreOptions key: any other is refused (a typo such as `url` would open the default connection). */
const POSTGRES_OPTIONS = ['pool', 'connectionString', 'schema', 'queryTimeoutMs', 'connectionTimeoutMs', 'max', 'prepare', 'onQuery', 'onConnectionError', 'migrate'] as const satisfies ReadonlyArray<keyof PostgresStoreOptions>;
type _AllPostgresOptions = Exclude<keyof PostgresStoreOptions, (typeof POSTGRES_OPTIONS)[number]> extends never ? true : never;
const _allPostgresOptions: _AllPostgresOptions = true;
void _allPostgresOptions;

/** What `schema` must match: a lower-case Postgres identifier, used unquoted. */
export const POSTGRES_SCHEMA_PATTERN = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * A connection string must be a postgres:// or postgresql:// URL (issue 16): a typo
 * (`postgress:/x`, `postgres:/x`) is refused naming the option, not left to the
 * driver's message. The string itself is not echoed (it may hold a password).
 */
function checkConnectionString(value: string | undefined, name: string): void {
  const given = value ?? process.env.DATABASE_URL;
  if (given === undefined || given === '') return; // pg's own defaults (PGHOST, ...)
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(given)?.[1];
  let ok = scheme !== undefined && /^postgres(ql)?$/i.test(scheme) && /^[A-Za-z]+:\/\//.test(given);
  if (ok) {
    try {
      new URL(given);
    } catch {
      ok = false;
    }
  }
  if (!ok) {
    throw new Error(`pmapi: openPostgresStore ${name} must be a postgres://user@host:port/database (or postgresql://) URL${scheme ? `; it starts '${scheme}:'` : ''}`);
  }
}

/**
 * Open (and migrate) a Postgres database for pmapi. Safe to call from several
 * processes at once: migrations run under an advisory lock.
 *
 * @example
 * const store = await openPostgresStore({ connectionString: 'postgres://postgres@127.0.0.1:5432/pm' });
 */
export async function openPostgresStore(o: PostgresStoreOptions = {}): Promise<SqlStore> {
  checkOptionNames('openPostgresStore', o, POSTGRES_OPTIONS);
  if (o.migrate !== undefined && typeof o.migrate !== 'boolean') throw new TypeError('pmapi: openPostgresStore options.migrate must be true or false');
  return (await openPostgres(o, o.migrate === false ? 'check' : 'apply')).store;
}

/**
 * pmapi's migrations on a Postgres database (schema) without opening a store:
 * list the pending ones, apply them under the migration lock, or preview their
 * SQL (what `pmapi migrate` runs).
 *
 * @example
 * const m = await openPostgresMigrations({ connectionString: 'postgres://postgres@127.0.0.1:5432/pm', schema: 'pm' });
 * try { console.log(await m.apply()); } finally { await m.close(); }
 */
export async function openPostgresMigrations(o: Omit<PostgresStoreOptions, 'migrate'> = {}): Promise<MigrationRunner> {
  checkOptionNames('openPostgresMigrations', o, POSTGRES_OPTIONS.filter((k) => k !== 'migrate'));
  const tap: MigrationTap = {};
  const { store, schema, applyMigrations } = await openPostgres({ ...o, max: 1 }, 'none', tap);
  return {
    pending: () => pendingMigrations(store.db, store.dialect, { schema }),
    apply: applyMigrations,
    preview: () =>
      previewMigrations(store.db, store.dialect, tap, {
        schema,
        // The same lock as apply, held to the end of the transaction; the schema too is created only in it (rolled back).
        beforeEach: async (trx) => {
          await sql`select pg_advisory_xact_lock(hashtext('pmapi:migrate'))`.execute(trx);
          if (o.schema) await sql`create schema if not exists ${sql.id(schema)}`.execute(trx);
        },
      }),
    close: () => store.close(),
  };
}

/** Open the pool; `apply` pending migrations, `check` that none is pending (migrate: false), or leave them (`none`). */
async function openPostgres(o: PostgresStoreOptions, migrations: 'apply' | 'check' | 'none', tap?: MigrationTap) {
  if (o.schema !== undefined && !POSTGRES_SCHEMA_PATTERN.test(o.schema)) throw new Error(`pmapi: invalid schema name '${o.schema}'`);
  if (!o.pool) checkConnectionString(o.connectionString, o.connectionString !== undefined ? 'options.connectionString' : 'DATABASE_URL');
  const onConnErr = o.onConnectionError ?? (() => {});
  const pool =
    o.pool ??
    new pg.Pool({
      connectionString: o.connectionString ?? process.env.DATABASE_URL,
      max: o.max ?? 10,
      connectionTimeoutMillis: o.connectionTimeoutMs ?? 5000,
      // The server cancels a statement at the timeout (clean rollback); the client gives up a little later.
      statement_timeout: o.queryTimeoutMs ?? 10_000,
      query_timeout: (o.queryTimeoutMs ?? 10_000) + 2000,
      ...(o.schema ? { options: `-c search_path=${o.schema}` } : {}),
    });
  // A client killed under us (pg_terminate_backend, a restart) emits 'error': without a listener it crashes the process.
  pool.on('error', onConnErr);
  const onConnect = (client: pg.PoolClient) => client.on('error', onConnErr);
  pool.on('connect', onConnect);
  // A host's pool has its own search_path: pmapi's schema is set per checkout (preparingPool).
  const hostSchema = o.pool && o.schema ? o.schema : undefined;
  // Always through preparingPool, even with prepare: false: kysely's driver ends the pool it is given on destroy,
  // and a host's pool is not pmapi's to end.
  const checkouts = preparingPool(pool, { prepare: o.prepare !== false, ownsPool: !o.pool, ...(hostSchema ? { searchPath: hostSchema } : {}) });
  const logging = statementLog(o.onQuery, tap);
  // A transaction's statements may go together (core's Repo.together, holdStatement); not with prepare: false, where a
  // pooler in transaction mode may not take a pipeline. The dialect's capabilities say the same (below).
  const pipeline = o.prepare !== false;
  const pooled = checkouts as unknown as { connect(): Promise<PooledConnection>; end(): Promise<void> };
  const db = new Kysely<any>({ dialect: pipelinedDialect(pooled, logging.log as StatementLogger, pipeline), ...logging });
  // Statements outside transactions sent together (together.ts). Not with prepare: false, the setting for a pooler
  // in transaction mode, which may not keep a pipeline's statements on one server connection.
  const reads = !pipeline ? undefined : new Kysely<any>({
    dialect: togetherDialect(pooled, pipelinedDialect(pooled, logging.log as StatementLogger, true).createDriver()),
    ...logging,
  });
  const close = async () => {
    await reads?.destroy();
    await db.destroy();
    if (o.pool) {
      pool.off('error', onConnErr);
      pool.off('connect', onConnect);
    }
  };
  // Both set first thing in the try below, which closes the store (and lets go of a host's pool) when opening fails.
  let dialect: DialectSupport;
  let schema: string;
  // One migrator at a time across processes (kysely's own lock comes after it creates its tables). Only applying
  // migrations creates the schema, under the lock: migrate: false and --print write nothing.
  const applyMigrations = (): Promise<string[]> =>
    db.connection().execute(async (conn) => {
      await sql`select pg_advisory_lock(hashtext('pmapi:migrate'))`.execute(conn);
      try {
        if (o.schema) await sql`create schema if not exists ${sql.id(o.schema)}`.execute(conn);
        return await migrate(conn, dialect, { schema });
      } finally {
        await sql`select pg_advisory_unlock(hashtext('pmapi:migrate'))`.execute(conn);
      }
    });
  try {
    const probe = await pool.query(`select exists (select 1 from pg_collation where collname = 'und-x-icu') as icu`);
    dialect = postgresDialectSupport({ icu: probe.rows[0]?.icu === true, pipeline });
    schema = o.schema ?? (await sql<{ s: string }>`select current_schema() as s`.execute(db)).rows[0]!.s;
    if (migrations === 'apply') await applyMigrations();
    else if (migrations === 'check') await assertMigrated(db, dialect, { schema });
  } catch (err) {
    await close();
    throw err;
  }
  const store: SqlStore = { db, ...(reads ? { reads } : {}), dialect, transaction: (fn) => db.transaction().execute(fn), close };
  return { store, schema, applyMigrations };
}
