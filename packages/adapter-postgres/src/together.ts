import type pg from 'pg';
import {
  PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler,
  type CompiledQuery, type DatabaseConnection, type Dialect, type Driver, type Kysely, type QueryResult, type TransactionSettings,
} from 'kysely';

/** A checked-out connection of the store's pool (preparingPool in index.ts). */
export interface PooledConnection {
  query(text: string, values?: unknown[]): Promise<unknown>;
  /** The statements sent at once, in one write, each answered on its own (an error fails only its statement). */
  together(statements: ReadonlyArray<{ sql: string; parameters: readonly unknown[] }>): Promise<Array<PromiseSettledResult<unknown>>>;
  release(err?: Error | boolean): void;
}

/** At most this many statements go in one write; more wait for the next connection. */
const MOST_TOGETHER = 32;

/**
 * The driver of the store's `reads` (SqlStore.reads): a statement sent
 * outside a transaction waits for the end of the current run of the
 * microtask queue, and every statement sent by then (the concurrent
 * requests', which move in step: http-node hands a turn's requests on
 * together) goes to Postgres on one connection, in one write, each with its
 * own Sync. Each is its own implicit transaction, as on a connection of its
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
      if (this.pending.push({ query, resolve, reject }) === 1) queueMicrotask(() => void this.flush());
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
