import { CompiledQuery, type Compilable, type Kysely, type QueryResult } from 'kysely';

/*
 * The statement cache of the storage layer (private to sql/): fixed-shape
 * queries are compiled by kysely once and re-run as SQL text.
 */

/** SQL text of fixed-shape queries, by dialect and shape; null marks a shape whose parameters we cannot predict. */
const shapes = new Map<string, string | null>();

function sameParams(a: readonly unknown[], b: readonly unknown[]): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i] || (v instanceof Date && b[i] instanceof Date && v.getTime() === (b[i] as Date).getTime()));
}

/**
 * Run a query whose SQL depends only on `shape`, compiling it with kysely the
 * first time and reusing the SQL text afterwards with fresh `params` (listed
 * in the order kysely binds them). The first compilation checks that order;
 * a mismatch leaves the shape uncached, so a wrong guess costs speed, never
 * correctness.
 */
export async function runCached<R>(db: Kysely<any>, dialect: string, shape: string, params: unknown[], build: () => Compilable<R>): Promise<QueryResult<R>> {
  const key = `${dialect}|${shape}`;
  const text = shapes.get(key);
  if (text) return db.executeQuery<R>(CompiledQuery.raw(text, params));
  const compiled = build().compile();
  if (text === undefined && shapes.size < 5000) shapes.set(key, sameParams(compiled.parameters, params) ? compiled.sql : null);
  return db.executeQuery<R>(compiled);
}

/** Shapes whose parameter order was mispredicted, so kysely compiles them on every run (a speed bug, never a wrong answer; tests assert none). */
export function uncachedShapes(): string[] {
  return [...shapes].filter(([, v]) => v === null).map(([k]) => k);
}
