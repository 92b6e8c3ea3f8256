import { CompiledQuery, createQueryId, type Compilable, type Kysely, type QueryResult } from 'kysely';

/*
 * The statement cache of the storage layer (private to sql/): fixed-shape
 * queries are compiled by kysely once and re-run as SQL text.
 */

/** SQL text of fixed-shape queries (with its query node), by dialect and shape; null marks a shape whose parameters we cannot predict. */
const shapes = new Map<string, { sql: string; query: CompiledQuery['query'] } | null>();

function sameParams(a: readonly unknown[], b: readonly unknown[]): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i] || (v instanceof Date && b[i] instanceof Date && v.getTime() === (b[i] as Date).getTime()));
}

/**
 * A query whose SQL depends only on `shape`, compiled by kysely the first
 * time and afterwards the cached SQL text with fresh `params` (listed in the
 * order kysely binds them). The first compilation checks that order; a
 * mismatch leaves the shape uncached, so a wrong guess costs speed, never
 * correctness.
 */
export function compileCached<R>(dialect: string, shape: string, params: unknown[], build: () => Compilable<R>): CompiledQuery<R> {
  const key = `${dialect}|${shape}`;
  const known = shapes.get(key);
  // What CompiledQuery.raw builds, without its five Object.freeze calls a statement: the query node is built once per shape.
  if (known) return { sql: known.sql, query: known.query, parameters: params, queryId: createQueryId() };
  const compiled = build().compile();
  if (known === undefined && shapes.size < 5000) shapes.set(key, sameParams(compiled.parameters, params) ? { sql: compiled.sql, query: CompiledQuery.raw(compiled.sql).query } : null);
  return compiled;
}

/** Run a fixed-shape query ({@link compileCached}). */
export async function runCached<R>(db: Kysely<any>, dialect: string, shape: string, params: unknown[], build: () => Compilable<R>): Promise<QueryResult<R>> {
  return execute<R>(db, compileCached(dialect, shape, params, build));
}

/**
 * A store's way to run a compiled statement on `db`'s connection at once,
 * synchronously, without kysely's executor (its chain of async calls costs
 * about 1.5 µs a statement, as much as a small SQLite statement itself): the
 * answer exactly as kysely's driver gives it, or undefined where it cannot
 * run now (kysely then runs it, waiting its turn for the connection). It must
 * log the statement as the store's kysely instance logs queries.
 */
export type DirectRun = (query: CompiledQuery) => QueryResult<unknown> | undefined;

const directRuns = new WeakMap<Kysely<any>, DirectRun>();

/**
 * Let {@link execute} run statements on `db` (a store's kysely instance, or
 * a transaction of it) through `run`; undefined stops it. The SQLite adapter
 * does this: one connection, statements that run synchronously.
 */
export function runDirectly(db: Kysely<any>, run: DirectRun | undefined): void {
  if (run) directRuns.set(db, run);
  else directRuns.delete(db);
}

/** Run a compiled statement on `db`: at once where its store can ({@link runDirectly}), else through kysely. */
export function execute<R>(db: Kysely<any>, query: CompiledQuery<R>): Promise<QueryResult<R>> {
  const run = directRuns.get(db);
  if (run) {
    let answer: QueryResult<unknown> | undefined;
    try {
      answer = run(query);
    } catch (err) {
      return Promise.reject(err);
    }
    if (answer) return Promise.resolve(answer as QueryResult<R>);
  }
  return db.executeQuery<R>(query);
}

/**
 * A connection that can send several statements in one write (Postgres's
 * pipeline: each statement with its own Sync, answered in order; inside a
 * transaction they run in order in it, each seeing what the ones before it
 * did). The Postgres adapter's connections have it.
 */
export interface TogetherConnection {
  /** Undefined: this connection cannot (the caller runs them one after another). */
  together(queries: readonly CompiledQuery[]): Promise<Array<PromiseSettledResult<QueryResult<unknown>>>> | undefined;
}

const canTogether = (c: object): c is TogetherConnection => typeof (c as Partial<TogetherConnection>).together === 'function';

/**
 * A connection that can hold a statement back until the next one it sends
 * (the same write; a transaction's `commit` at the latest). The Postgres
 * adapter's connections have it.
 */
export interface HoldingConnection {
  /** Undefined: this statement cannot be held (run it now). Should a held statement fail, the one it leaves with fails with its error. */
  hold(query: CompiledQuery): Promise<QueryResult<unknown>> | undefined;
  /** Send what is held now, on its own. */
  sendHeld(): Promise<void>;
}

const canHold = (c: object): c is HoldingConnection => typeof (c as Partial<HoldingConnection>).hold === 'function';

/**
 * Hold `query` on the connection of the transaction `db`, to leave in one
 * write with the transaction's next statement (at the latest its `commit`):
 * for a statement whose answer nothing needs before then (an insert whose
 * row is already known, a read wanted later). Undefined where it cannot be
 * held (not a transaction, a store without it): then run it now. The answer
 * settles when the statement is answered; should it fail, the statement it
 * left with fails with the same error, so the transaction never commits
 * without it.
 */
export async function holdStatement(db: Kysely<any>, query: CompiledQuery): Promise<{ answer: Promise<QueryResult<unknown>> } | undefined> {
  if (!db.isTransaction) return undefined;
  // Wrapped: the consumer must not wait for the answer, which comes only once the next statement is sent.
  const held = await db.getExecutor().provideConnection(async (c) => {
    const answer = canHold(c) ? c.hold(query) : undefined;
    return answer && { answer };
  });
  held?.answer.catch(() => undefined);
  return held;
}

/** Hold `query` ({@link holdStatement}) where the transaction's connection can, else run it now. */
export async function holdOrRun(db: Kysely<any>, query: CompiledQuery): Promise<void> {
  if (!(await holdStatement(db, query))) await execute(db, query);
}

/** Send now whatever `db`'s transaction holds ({@link holdStatement}). */
export async function sendHeld(db: Kysely<any>): Promise<void> {
  if (!db.isTransaction) return;
  await db.getExecutor().provideConnection(async (c) => (canHold(c) ? c.sendHeld() : undefined));
}

/**
 * Run `queries` in order on `db` (a transaction: on its connection), sent in
 * one write where the connection can ({@link TogetherConnection}), one after
 * another otherwise. The answers come in order; once one statement fails,
 * every later one is answered with that same failure (inside a transaction
 * they could not have run: the transaction is aborted), so the failure a
 * caller sees is the one that happened, never a consequence of it.
 */
export async function executeTogether(db: Kysely<any>, queries: readonly CompiledQuery[], o: { pipeline?: boolean } = {}): Promise<Array<PromiseSettledResult<QueryResult<unknown>>>> {
  let answers: Array<PromiseSettledResult<QueryResult<unknown>>> | undefined;
  // `pipeline: false` (the store's capabilities say it cannot): no need to ask the connection.
  if (queries.length > 1 && o.pipeline !== false) answers = await db.getExecutor().provideConnection(async (c) => (canTogether(c) ? c.together(queries) : undefined));
  if (!answers) {
    answers = [];
    for (const q of queries) {
      try {
        answers.push({ status: 'fulfilled', value: await execute(db, q) });
      } catch (reason) {
        answers.push({ status: 'rejected', reason });
        break;
      }
    }
  }
  const failed = answers.find((a) => a.status === 'rejected');
  if (!failed) return answers;
  const at = answers.indexOf(failed);
  return queries.map((_, i) => (i < at ? answers[i]! : failed));
}

/** Shapes whose parameter order was mispredicted, so kysely compiles them on every run (a speed bug, never a wrong answer; tests assert none). */
export function uncachedShapes(): string[] {
  return [...shapes].filter(([, v]) => v === null).map(([k]) => k);
}
