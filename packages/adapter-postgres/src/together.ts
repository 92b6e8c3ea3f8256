import type pg from 'pg';
import { setImmediate } from 'node:timers';
import {
  PostgresAdapter, PostgresDriver, PostgresIntrospector, PostgresQueryCompiler,
  type CompiledQuery, type DatabaseConnection, type Dialect, type Driver, type Kysely, type LogEvent, type QueryResult, type TransactionSettings,
} from 'kysely';

/** A checked-out connection of the store's pool (preparingPool in index.ts). */
export interface PooledConnection {
  query(text: string, values?: unknown[]): Promise<unknown>;
  /** The statements sent at once, in one write, each answered on its own (an error fails only its statement). */
  together(statements: ReadonlyArray<{ sql: string; parameters: readonly unknown[] }>): Promise<Array<PromiseSettledResult<unknown>>>;
  /**
   * Hold a statement back: it leaves in the same write as the next statement
   * sent on this connection (a transaction's `commit` at the latest), or
   * with `sendHeld`. Its answer settles then; should it fail, the statement
   * it left with fails with the same error.
   */
  hold(sql: string, parameters: readonly unknown[]): Promise<unknown>;
  /** Send the held statements now, on their own (nothing when none is held). */
  sendHeld(): Promise<void>;
  release(err?: Error | boolean): void;
}

/** Node's own setImmediate, taken when the module loads: fake timers a test installs later do not hold statements back. */
const laterTurn: (fn: () => void) => void = setImmediate;

/** At most this many statements go in one write; more wait for the next connection. */
const MOST_TOGETHER = 32;

/**
 * The driver of the store's `reads` (SqlStore.reads): a statement sent
 * outside a transaction waits for the end of the event loop's turn
 * (setImmediate), and every statement sent by then (the concurrent
 * requests', which move in step: http-node hands a turn's requests on
 * together) goes to Postgres on one connection, in one write, each with its
 * own Sync. The turn, not the run of the microtask queue: a request's
 * statements reach the driver after different numbers of awaits (the rate
 * limiter's count goes through its own queue, the read it lets start beside it
 * through the engine), and waiting for the microtasks alone sent them in
 * separate writes, each waking a Postgres backend. Each is its own implicit transaction, as on a connection of its
 * own, and an error fails only its statement; but the round trip, the
 * checkout, the socket write and the server's wake-up are paid once for
 * them. A transaction begun on `reads` takes a connection of its own, as on
 * `db`.
 */
class TogetherDriver implements Driver {
  private pending: Array<{ query: CompiledQuery; resolve: (r: QueryResult<unknown>) => void; reject: (err: unknown) => void }> = [];

  constructor(
    private readonly pool: { connect(): Promise<PooledConnection> },
    /** kysely's driver over the same pool: what a transaction runs on. */
    private readonly direct: Driver,
  ) {}

  async init(): Promise<void> {
    await this.direct.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    return new LazyConnection(this, this.direct);
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const c = connection as LazyConnection;
    await this.direct.beginTransaction(await c.own(), settings);
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await this.direct.commitTransaction(await (connection as LazyConnection).own());
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await this.direct.rollbackTransaction(await (connection as LazyConnection).own());
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    const owned = (connection as LazyConnection).owned;
    if (owned) await this.direct.releaseConnection(owned);
  }

  /** The pool is the store's `db`'s, ended with it. */
  async destroy(): Promise<void> {}

  send(query: CompiledQuery): Promise<QueryResult<unknown>> {
    return new Promise((resolve, reject) => {
      if (this.pending.push({ query, resolve, reject }) === 1) laterTurn(() => void this.flush());
    });
  }

  private async flush(): Promise<void> {
    const all = this.pending;
    this.pending = [];
    for (let i = 0; i < all.length; i += MOST_TOGETHER) void this.sendTogether(all.slice(i, i + MOST_TOGETHER));
  }

  private async sendTogether(batch: typeof this.pending): Promise<void> {
    let connection: PooledConnection;
    try {
      connection = await this.pool.connect();
    } catch (err) {
      for (const p of batch) p.reject(err);
      return;
    }
    let answers: Array<PromiseSettledResult<unknown>>;
    try {
      answers = batch.length === 1
        ? await Promise.allSettled([connection.query(batch[0]!.query.sql, [...batch[0]!.query.parameters])])
        : await connection.together(batch.map((p) => p.query));
    } catch (err) {
      // Nothing could be sent (the connection was not usable): every statement fails, as it would have alone.
      connection.release(err instanceof Error ? err : true);
      for (const p of batch) p.reject(err);
      return;
    }
    connection.release();
    batch.forEach((p, i) => {
      const a = answers[i]!;
      if (a.status === 'fulfilled') p.resolve(kyselyResult(a.value as pg.QueryResult));
      else p.reject(a.reason);
    });
  }
}

/** kysely's reading of a pg result (its PostgresConnection's). */
function kyselyResult(r: pg.QueryResult): QueryResult<unknown> {
  const { command, rowCount, rows } = r;
  return {
    numAffectedRows: command === 'INSERT' || command === 'UPDATE' || command === 'DELETE' || command === 'MERGE' ? BigInt(rowCount ?? 0) : undefined,
    rows: rows ?? [],
  };
}

/** A connection of `reads`: its statements go together with others', until a transaction gives it one of its own. */
class LazyConnection implements DatabaseConnection {
  owned: DatabaseConnection | undefined;

  constructor(
    private readonly driver: TogetherDriver,
    private readonly direct: Driver,
  ) {}

  async own(): Promise<DatabaseConnection> {
    this.owned ??= await this.direct.acquireConnection();
    return this.owned;
  }

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (this.owned) return this.owned.executeQuery<R>(query);
    return this.driver.send(query) as Promise<QueryResult<R>>;
  }

  async *streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    yield* (await this.own()).streamQuery<R>(query, chunkSize);
  }

  /** Held only in a transaction (its own connection); outside one, never. */
  hold(query: CompiledQuery): Promise<QueryResult<unknown>> | undefined {
    return this.owned && 'hold' in this.owned ? (this.owned as PipelinedConnection).hold(query) : undefined;
  }

  async sendHeld(): Promise<void> {
    if (this.owned && 'sendHeld' in this.owned) await (this.owned as PipelinedConnection).sendHeld();
  }

  /** In a transaction, on its connection; outside one, each statement goes with the others of the moment. */
  together(queries: readonly CompiledQuery[]): Promise<Array<PromiseSettledResult<QueryResult<unknown>>>> | undefined {
    if (this.owned && 'together' in this.owned) return (this.owned as PipelinedConnection).together(queries);
    return Promise.allSettled(queries.map((q) => this.executeQuery<unknown>(q)));
  }
}

/** kysely's log function of a store (statementLog), told of the statements sent together, which bypass kysely's own logging. */
export type StatementLogger = ((event: LogEvent) => void) | undefined;

/**
 * A connection of the store's `db`: kysely's PostgresConnection's reading of
 * results, plus `together` (core's TogetherConnection): a transaction's
 * statements sent in one write (pg's pipeline mode; see PooledConnection).
 */
class PipelinedConnection implements DatabaseConnection {
  constructor(
    readonly client: PooledConnection,
    private readonly log: StatementLogger,
    /** false: one statement after another (a pooler in transaction mode may not take a pipeline). */
    private readonly pipeline: boolean,
  ) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    return kyselyResult((await this.client.query(query.sql, [...query.parameters])) as pg.QueryResult) as QueryResult<R>;
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('pmapi: streaming is not used on Postgres');
  }

  /** core's TogetherConnection: undefined where statements are not pipelined (core runs them in turn). */
  together(queries: readonly CompiledQuery[]): Promise<Array<PromiseSettledResult<QueryResult<unknown>>>> | undefined {
    return this.pipeline ? this.pipelined(queries) : undefined;
  }

  private async pipelined(queries: readonly CompiledQuery[]): Promise<Array<PromiseSettledResult<QueryResult<unknown>>>> {
    const started = performance.now();
    const answers = await this.client.together(queries);
    if (this.log) {
      const ms = performance.now() - started;
      for (const q of queries) this.log({ level: 'query', query: q, queryDurationMillis: ms });
    }
    return answers.map((a) => (a.status === 'fulfilled' ? { status: 'fulfilled', value: kyselyResult(a.value as pg.QueryResult) } : a));
  }

  /** core's HoldingConnection: undefined where statements are not pipelined (the caller runs it now). */
  hold(query: CompiledQuery): Promise<QueryResult<unknown>> | undefined {
    if (!this.pipeline) return undefined;
    this.log?.({ level: 'query', query, queryDurationMillis: 0 });
    return this.client.hold(query.sql, query.parameters).then((r) => kyselyResult(r as pg.QueryResult));
  }

  sendHeld(): Promise<void> {
    return this.client.sendHeld();
  }
}

/**
 * kysely's Postgres driver over the store's checkouts, whose connections
 * are {@link PipelinedConnection}s (begin, commit and savepoints as kysely
 * runs them).
 */
class PipelinedDriver extends PostgresDriver {
  private readonly connections = new WeakMap<PooledConnection, PipelinedConnection>();

  constructor(
    private readonly checkouts: { connect(): Promise<PooledConnection>; end(): Promise<void> },
    private readonly log: StatementLogger,
    private readonly pipeline: boolean,
  ) {
    super({ pool: checkouts as unknown as pg.Pool });
  }

  override async acquireConnection(): Promise<DatabaseConnection> {
    const client = await this.checkouts.connect();
    let c = this.connections.get(client);
    if (!c) this.connections.set(client, (c = new PipelinedConnection(client, this.log, this.pipeline)));
    return c;
  }

  override async releaseConnection(connection: DatabaseConnection): Promise<void> {
    (connection as PipelinedConnection).client.release();
  }
}

/** The dialect of a store's `db`: kysely's Postgres dialect whose connections can send statements together. */
export function pipelinedDialect(checkouts: { connect(): Promise<PooledConnection>; end(): Promise<void> }, log: StatementLogger, pipeline: boolean): Dialect {
  return {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new PipelinedDriver(checkouts, log, pipeline),
    createIntrospector: (db: Kysely<any>) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  };
}

/** The dialect of a store's `reads`, over the pool its `db` uses (`direct`: that dialect's driver, not yet initialised). */
export function togetherDialect(pool: { connect(): Promise<PooledConnection> }, direct: Driver): Dialect {
  return {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new TogetherDriver(pool, direct),
    createIntrospector: (db: Kysely<any>) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  };
}
