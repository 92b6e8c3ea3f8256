import { sql, type CompiledQuery, type Compilable, type QueryResult, type Kysely, type ExpressionBuilder, type Expression, type SqlBool, type SelectQueryBuilder, type RawBuilder } from 'kysely';
import { compileCached, execute, executeTogether, holdOrRun, holdStatement } from './statement-cache';
import type { ColumnInfo, Rec, StorageKind, StoredResource as Resource } from './shape';
import { limitInlined, limitOf, type DialectSupport, type JsonColumn } from './dialect';
import type { Condition, ListPlan } from './plan';
import { compileMapper, mapperMode, type MapperMode } from '../codegen/mapper';
import { iso } from '../clock/index';
import type { JsonRowMemo, JsonRowRead } from './json-memo';

/** A statement held by SqlRepo.together until the gathered ones are sent. */
type Gathered = { query: CompiledQuery; resolve: (r: QueryResult<any>) => void; reject: (err: unknown) => void };

/** The key under which a record read with `links` carries its relations' ids: `{ [kind]: ids }`, kind = `{resource}.{relation}`. */
export const LINKS = '@links';

/**
 * A row lock, where the dialect has them (`capabilities.forUpdate`; SQLite
 * serialises writers instead):
 * - `update` (`FOR NO KEY UPDATE`): the row is about to change; writers of it take turns;
 * - `delete` (`FOR UPDATE`): the row is about to go (with its dependants);
 * - `share` (`FOR KEY SHARE`): a write is about to reference the row. A
 *   concurrent delete waits until that write commits, then sees (and
 *   cascades or clears) the new reference; writers that only change the row
 *   (`update`) are not held up, so a write that references a row and then
 *   changes it cannot deadlock with another doing the same.
 */
export type RowLock = 'update' | 'delete' | 'share';

/** What a `links` read selects beside a resource's rows: each relation's link kind and the column its ids come back under. */
const linkSpecsOf = new WeakMap<Resource, ReadonlyArray<{ kind: string; alias: string }>>();
function linkSpecs(res: Resource): ReadonlyArray<{ kind: string; alias: string }> {
  let specs = linkSpecsOf.get(res);
  if (!specs) linkSpecsOf.set(res, (specs = Object.values(res.relationFields).map((rel, i) => ({ kind: `${res.name}.${rel}`, alias: `__l${i}` }))));
  return specs;
}

/** Failures of {@link Repo.updateBehind}'s statements that found no row to update. */
const lostUpdates = new WeakSet<object>();

/** Whether `err` is an update held by {@link Repo.updateBehind} that found its row changed: the transaction did not commit; answer 409 stale_write. */
export function isLostUpdate(err: unknown): boolean {
  return typeof err === 'object' && err !== null && lostUpdates.has(err);
}

function hasLinks(res: Resource): boolean {
  return linkSpecs(res).length > 0;
}

/** The column a `links` read selects all of a row's relation ids under where the dialect reads them together (`allLinkIds`). */
const ALL_LINKS = '__links';

/** Ids as a links column holds them: JSON text, or already parsed. */
const idsOf = (v: unknown): string[] => (typeof v === 'string' ? JSON.parse(v) : v ?? []) as string[];

/** A row's relation ids by link kind, from the column(s) a `links` read selected: one per relation, or all together. */
function linksByKind(res: Resource, row: Record<string, unknown>, together: boolean): Record<string, string[]> {
  const byKind: Record<string, string[]> = {};
  for (const l of linkSpecs(res)) byKind[l.kind] = together ? [] : idsOf(row[l.alias]);
  const all = together ? row[ALL_LINKS] : '[]';
  if (all === '[]') return byKind;
  // "<kind> <related id>", each kind's in link order: a kind never holds a space, so the first one ends it.
  for (const s of idsOf(all)) {
    const at = s.indexOf(' ');
    byKind[s.slice(0, at)]?.push(s.slice(at + 1));
  }
  return byKind;
}

/** The column a `links` read selects a relation's ids under. */
function linkAlias(res: Resource, kind: string): string {
  const spec = linkSpecs(res).find((l) => l.kind === kind);
  if (!spec) throw new Error(`pmapi: ${res.name} has no relation '${kind}'`);
  return spec.alias;
}

/**
 * A row printer; `links`: the row's relation ids by kind, when the caller has
 * split them already; `open`: without the object's closing brace (a page
 * printer appends keys to it).
 */
type RowPrint = (row: Record<string, unknown>, links?: Record<string, string[]>, open?: boolean) => string;

/**
 * Where a row is written: `text` writes text as it is, `str` a value as
 * JSON.stringify prints it, `byte` one byte (ASCII). A page's rows go into
 * UTF-8 bytes (services/serialize.ts ByteParts), a single row into text.
 */
export interface ByteSink {
  text(text: string): void;
  str(value: unknown): void;
  byte(c: number): void;
}

/** A row written into a sink as {@link RowPrint} prints it with `open` (no closing brace). */
type RowWrite = (out: ByteSink, row: Record<string, unknown>, links?: Record<string, string[]>) => void;

/**
 * One key of a printed row: its text up to the value (`{"id":`, `,"name":`)
 * and where the value comes from: a column decoded as its kind; a column of
 * a relation's ids (JSON text, or an array); or one relation's ids split
 * from the column holding all of the row's (`DialectSupport.allLinkIds`).
 */
type PrintedField =
  | { key: string; column: string; kind: StorageKind }
  | { key: string; idsColumn: string }
  | { key: string; idsOf: string };

/**
 * How a driver's row (with its `links` columns) is printed as the response
 * JSON of these keys: each value decoded and printed as JSON.stringify prints
 * it in the rows path (instants as ISO 8601), with no object built on the way.
 * Generated once per shape as straight-line code (no call per field), or,
 * where the runtime refuses generated code (codegen/mapper.ts `mapperMode`),
 * the same steps as closures. Printing a row is writing it into text.
 */
export function compileRowJson(res: Resource, fields: readonly JsonColumn[], d: DialectSupport, mode: MapperMode = mapperMode()): { print: RowPrint; write: RowWrite } {
  const together = !!d.allLinkIds && fields.some((f) => f.links !== undefined);
  const plan = fields.map((f, i): PrintedField => {
    const key = `${i === 0 ? '{' : ','}${JSON.stringify(f.name)}:`;
    if (f.links === undefined) return { key, column: f.column, kind: f.kind };
    const alias = linkAlias(res, f.links); // throws for a relation the resource does not have
    return together ? { key, idsOf: f.links } : { key, idsColumn: alias };
  });
  const steps = mode === 'generated' ? generatedSteps(plan, d) : closureSteps(plan, d);
  const write: RowWrite = together
    ? (out, row, given) => steps(out, row, given ?? linksByKind(res, row, true))
    : (out, row) => steps(out, row, undefined);
  const print: RowPrint = (row, links, open) => {
    const text = new TextSink();
    write(text, row, links);
    if (!open) text.byte(0x7d);
    return text.done();
  };
  return { print, write };
}

type Steps = (out: ByteSink, row: Record<string, unknown>, links: Record<string, string[]> | undefined) => void;

const QUOTE = 0x22;

/** {@link compileRowJson}'s steps as one generated function. */
function generatedSteps(plan: readonly PrintedField[], d: DialectSupport): Steps {
  // Every name and key enters the code as a JSON string literal (also a JavaScript one).
  const lit = (v: string) => JSON.stringify(v);
  const lines = plan.map((f) => {
    const key = `o.text(${lit(f.key)});`;
    if ('idsOf' in f) return `${key} ids(o, links[${lit(f.idsOf)}]);`;
    if ('idsColumn' in f) return `${key} x = row[${lit(f.idsColumn)}]; if (typeof x === 'string') o.text(x); else ids(o, x ?? []);`;
    const col = lit(f.column);
    if (f.kind === 'text') return `${key} if ((x = row[${col}]) == null) o.text('null'); else o.str(x);`;
    if (f.kind === 'timestamp') {
      const text = d.isoInstants ? `typeof x === 'string' ? x : ` : '';
      return `${key} if ((x = row[${col}]) == null) o.text('null'); else { o.byte(${QUOTE}); o.text(${text}iso(d.decode('timestamp', x))); o.byte(${QUOTE}); }`;
    }
    return `${key} if ((x = row[${col}]) == null) o.text('null'); else o.text(S(d.decode(${lit(f.kind)}, x)) ?? 'null');`;
  });
  // eslint-disable-next-line @typescript-eslint/no-implied-eval
  const make = new Function('S', 'iso', 'd', 'ids', `return (o, row, links) => { let x; ${lines.join(' ')} };`);
  return make(JSON.stringify, iso, d, writeIds) as Steps;
}

/** {@link generatedSteps} as closures, one a field. */
function closureSteps(plan: readonly PrintedField[], d: DialectSupport): Steps {
  const asText = !!d.isoInstants;
  const parts = plan.map((f): Steps => {
    const { key } = f;
    if ('idsOf' in f) {
      const kind = f.idsOf;
      return (o, _row, links) => {
        o.text(key);
        writeIds(o, links![kind]!);
      };
    }
    if ('idsColumn' in f) {
      const column = f.idsColumn;
      return (o, row) => {
        o.text(key);
        const v = row[column];
        if (typeof v === 'string') o.text(v);
        else writeIds(o, (v ?? []) as unknown[]);
      };
    }
    const { column, kind } = f;
    return (o, row) => {
      o.text(key);
      const v = row[column];
      if (v == null) o.text('null');
      else if (kind === 'text') o.str(v);
      else if (kind === 'timestamp') {
        o.byte(QUOTE);
        o.text(asText && typeof v === 'string' ? v : iso(d.decode(kind, v) as number));
        o.byte(QUOTE);
      } else o.text(JSON.stringify(d.decode(kind, v)) ?? 'null');
    };
  });
  return (o, row, links) => {
    for (const part of parts) part(o, row, links);
  };
}

/** A sink collecting text, joined once: a flat string, where += would leave a rope the socket write must flatten. */
class TextSink implements ByteSink {
  private readonly parts: string[] = [];
  text(text: string): void {
    this.parts.push(text);
  }
  str(value: unknown): void {
    this.parts.push(JSON.stringify(value) ?? 'null');
  }
  byte(c: number): void {
    this.parts.push(String.fromCharCode(c));
  }
  done(): string {
    return this.parts.join('');
  }
}

/** Relation ids as JSON.stringify prints the array. */
export function writeIds(out: ByteSink, ids: readonly unknown[]): void {
  out.byte(0x5b);
  for (let i = 0; i < ids.length; i++) {
    if (i > 0) out.byte(0x2c);
    out.str(ids[i] ?? null);
  }
  out.byte(0x5d);
}

/** A list row as JSON text, with what paging needs beside it. */
export interface JsonRow {
  id: string;
  /** The row's value of the sort field, decoded. */
  sort: unknown;
  /** The row's JSON, where the database built it. */
  json?: string;
  /**
   * Where the row was printed here instead (a store that prints rows:
   * `jsonFromRows`): writes its JSON without the closing brace into a page's
   * bytes, so a page can append keys to it.
   */
  write?: (out: ByteSink) => void;
  /** The values of the extra selections asked for, in order: a column's raw value, or a relation's ids (an array, or its JSON text where the database built it). */
  extra?: unknown[];
}

/** A value selected beside a row's JSON: a column (raw), or a relation's ids (JSON text, `DialectSupport.linkIds`). */
export type JsonExtra = { column: string } | { links: string };

/** How a JSON row shape is made: the database's json_object expression, or a printer of the driver's row (`jsonFromRows`). */
type JsonMaker = { key: string; expr?: RawBuilder<string>; print?: RowPrint; write?: RowWrite };

/** Each JSON row shape's maker (per resource, by dialect and keys); null where the store can make neither. */
const jsonMakers = new WeakMap<Resource, Map<string, JsonMaker | null>>();

/** A number per resource declaration, for statement-cache keys (two registries may both declare a `task`). */
const resourceKeys = new WeakMap<Resource, number>();
function resourceKey(res: Resource): number {
  let k = resourceKeys.get(res);
  if (k === undefined) resourceKeys.set(res, (k = nextResourceKey++));
  return k;
}
let nextResourceKey = 1;

/** Most values bound in one IN (…) list (SQLite and Postgres both cap bound parameters). */
const CHUNK = 500;

type Decoder = (row: Record<string, unknown>) => Rec;
const decoders = new WeakMap<Resource, WeakMap<DialectSupport, Decoder>>();

/** A row decoder specialised for one resource (codegen/mapper.ts: one object literal, or closures where eval is refused). */
export function compileDecoder(res: Resource, d: DialectSupport, mode?: MapperMode): Decoder {
  const fields = res.columns.map((c) => ({
    out: c.key,
    from: c.column,
    ...(c.kind === 'text' ? {} : { convert: (v: unknown) => (v === null || v === undefined ? null : d.decode(c.kind, v)) }),
  }));
  return compileMapper(fields, mode) as Decoder;
}

/**
 * The generic storage operations the engine needs, compiled once with kysely
 * for every dialect. Every method is scoped to one workspace (`teamId`).
 */
export class Repo {
  /**
   * How many statements this repository ran that change rows (inserts,
   * updates, deletes, links): a caller that keeps a row it just wrote can
   * tell whether anything was written since, and read it again only then.
   */
  writes = 0;

  constructor(
    readonly db: Kysely<any>,
    readonly dialect: DialectSupport,
    /** Rows `getManyJson` remembers between requests (json-memo.ts): only on the store's own handle, never in a transaction. */
    private readonly memo?: JsonRowMemo,
  ) {}

  /** The statements a {@link together} call is gathering (undefined: statements run as they come). */
  private gathering: Gathered[] | undefined;

  /** Run a fixed-shape statement (statement-cache.ts), or hold it for the {@link together} call gathering them. */
  private run<R>(shape: string, params: unknown[], build: () => Compilable<R>): Promise<QueryResult<R>> {
    const query = compileCached(this.dialect.name, shape, params, build);
    const gathering = this.gathering;
    if (!gathering) return execute<R>(this.db, query);
    return new Promise((resolve, reject) => gathering.push({ query, resolve, reject }));
  }

  /**
   * The first statement of each repository call `calls` makes (synchronously)
   * sent to the database together, in the order of the calls: on Postgres in
   * one write, answered in order (inside a transaction each sees what the
   * ones before it did, exactly as one after another); elsewhere one after
   * another. One round trip instead of one each, e.g. a counter bump and the
   * read that must follow its lock. A call's later statements, and statements
   * not of a fixed shape, run as usual once the gathered ones are sent. When
   * one fails, the calls after it fail with that same error; the failure of
   * the first failing call (in call order) is thrown, once every call is done.
   *
   * @example const [n, m] = await repo.together(() => [repo.increment(…), repo.max(…)]);
   */
  async together<T extends readonly unknown[]>(calls: () => { [K in keyof T]: Promise<T[K]> }): Promise<T> {
    if (this.gathering) throw new Error('pmapi: repository together() calls do not nest');
    const gathered: Gathered[] = [];
    this.gathering = gathered;
    let pending: { [K in keyof T]: Promise<T[K]> };
    try {
      pending = calls();
    } finally {
      this.gathering = undefined;
    }
    // Every call's outcome is taken up below, failures included; the first failing call (in call order) is thrown.
    const all = Promise.allSettled(pending).then((settled) => {
      const failed = settled.find((r) => r.status === 'rejected');
      if (failed) throw failed.reason;
      return settled.map((r) => (r as PromiseFulfilledResult<unknown>).value) as unknown as T;
    });
    all.catch(() => undefined);
    if (gathered.length === 1) execute(this.db, gathered[0]!.query).then(gathered[0]!.resolve, gathered[0]!.reject);
    else if (gathered.length > 1) {
      try {
        const answers = await executeTogether(this.db, gathered.map((g) => g.query), { pipeline: !!this.dialect.capabilities.pipeline });
        answers.forEach((a, i) => (a.status === 'fulfilled' ? gathered[i]!.resolve(a.value) : gathered[i]!.reject(a.reason)));
      } catch (err) {
        for (const g of gathered) g.reject(err);
      }
    }
    return all;
  }

  /** Row (snake_case, encoded) → engine record (camelCase, JS values). */
  decode(res: Resource, row: Record<string, unknown>): Rec {
    let fn = decoders.get(res)?.get(this.dialect);
    if (!fn) {
      fn = compileDecoder(res, this.dialect);
      if (!decoders.has(res)) decoders.set(res, new WeakMap());
      decoders.get(res)!.set(this.dialect, fn);
    }
    return fn(row);
  }

  private encodeValues(res: Resource, rec: Record<string, unknown>): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    const d = this.dialect;
    for (const c of res.columns) {
      if (!(c.key in rec)) continue;
      const v = rec[c.key];
      out[c.column] = v === null || v === undefined ? null : d.encode(c.kind, v);
    }
    return out;
  }

  /**
   * Insert a row. `behind`: inside a transaction whose connection can hold it
   * (Postgres), the insert leaves with the transaction's next statement
   * instead of on its own round trip, and its failure (a duplicate, say) is
   * that statement's failure: for a caller that needs nothing back and does
   * not handle the insert's own errors.
   */
  async insert(res: Resource, teamId: string, rec: Record<string, unknown>, opts: { behind?: boolean } = {}): Promise<void> {
    const values = { ...this.encodeValues(res, rec), team_id: teamId, ...res.fixed };
    const cols = Object.keys(values);
    this.writes++;
    const shape = `insert:${res.table}:${cols.join(',')}`;
    const build = () => this.db.insertInto(res.table).values(values);
    if (opts.behind && this.dialect.capabilities.pipeline && !this.gathering) return holdOrRun(this.db, compileCached(this.dialect.name, shape, Object.values(values), build));
    await this.run(shape, Object.values(values), build);
  }

  /**
   * One row by id. Trashed rows only with `includeTrashed`; `lock` takes a row
   * lock where the dialect has them ({@link RowLock}; `true` is `update`).
   */
  async get(res: Resource, teamId: string, id: string, opts: { includeTrashed?: boolean; lock?: boolean | RowLock; links?: boolean } = {}): Promise<Rec | undefined> {
    // A string no id can be (a path segment like `%00`) is simply not found: no statement runs.
    if (!res.isId(id)) return undefined;
    const live = res.softDelete && !opts.includeTrashed;
    const lock = this.rowLock(opts.lock === true ? 'update' : opts.lock || undefined);
    const links = !!opts.links && hasLinks(res);
    const row = await this.rawGet(res, teamId, id, { live, lock, links });
    return row ? this.decodeLinked(res, row, links) : undefined;
  }

  /** One row by id as the driver gives it (`select *`, with the relation ids where the resource has any, unless told). */
  private async rawGet(res: Resource, teamId: string, id: string, o: { live?: boolean; lock?: RowLock | undefined; links?: boolean } = {}): Promise<Record<string, unknown> | undefined> {
    const live = o.live ?? res.softDelete;
    const lock = o.lock;
    const links = o.links ?? hasLinks(res);
    const key = `get:${res.table}#${resourceKey(res)}:${live}:${lock}:${links}`;
    const r = await this.run<Record<string, unknown>>(key, [id, teamId, ...fixedValues(res)], () => {
      let q = fixed(res, this.withLinks(res, this.db.selectFrom(res.table).selectAll(), links).where('id', '=', id).where('team_id', '=', teamId));
      if (live) q = q.where('purge_at', 'is', null);
      q = withRowLock(q, lock);
      return q;
    });
    return r.rows[0];
  }

  /** The row lock to take where the dialect has row locks (`capabilities.forUpdate`); none where writers are serialised. */
  private rowLock(lock: RowLock | undefined): RowLock | undefined {
    return lock && this.dialect.capabilities.forUpdate ? lock : undefined;
  }

  /**
   * Select a resource's relation ids with its rows (one scalar subquery per
   * relation, `DialectSupport.linkIds`): a read that will show the rows then
   * needs no separate links statement. The decoded record carries them under
   * {@link LINKS}, kind → ids.
   */
  private withLinks<Q extends SelectQueryBuilder<any, any, any>>(res: Resource, q: Q, links: boolean): Q {
    return links && hasLinks(res) ? (q.select(this.linkColumns(res)) as Q) : q;
  }

  /** The relation id subqueries of {@link withLinks}, aliased as {@link linkSpecs} names them (a select list or a RETURNING list). */
  private linkColumns(res: Resource) {
    const specs = linkSpecs(res);
    const d = this.dialect;
    if (d.allLinkIds) return [d.allLinkIds(specs.map((l) => l.kind), `${res.table}.id`).as(ALL_LINKS)];
    return specs.map((l) => d.linkIds(l.kind, `${res.table}.id`).as(l.alias));
  }

  private decodeLinked(res: Resource, row: Record<string, unknown>, links: boolean): Rec {
    const rec = this.decode(res, row);
    if (links) (rec as Record<string, unknown>)[LINKS] = linksByKind(res, row, !!this.dialect.allLinkIds);
    return rec;
  }

  /** Hold a row lock on `table.id` until the transaction ends (a no-op where writers are serialised). */
  async lock(table: string, id: string): Promise<void> {
    if (!this.dialect.capabilities.forUpdate) return;
    // An `update` lock ({@link RowLock}): holders take turns, and rows merely referenced (key-share locked) do not hold them up.
    await this.run(`lock:${table}`, [id], () => this.db.selectFrom(table).select('id').where('id', '=', id).forNoKeyUpdate());
  }

  /** Live rows with these ids (order not kept); `lock` locks them ({@link RowLock}). */
  async getMany(res: Resource, teamId: string, ids: readonly string[], extra?: Condition[], opts: { links?: boolean; lock?: RowLock } = {}): Promise<Rec[]> {
    const links = !!opts.links && hasLinks(res);
    const rows = await this.rawMany(res, teamId, ids, extra, links, this.rowLock(opts.lock));
    return rows.map((r) => this.decodeLinked(res, r, links));
  }

  /** Live rows with these ids as the driver gives them ({@link CHUNK} ids a statement), with the relation ids unless told. */
  private async rawMany(res: Resource, teamId: string, ids: readonly string[], extra?: Condition[], links = hasLinks(res), lock?: RowLock): Promise<Record<string, unknown>[]> {
    ids = ids.filter((id) => res.isId(id));
    if (ids.length === 0) return [];
    if (ids.length > CHUNK) {
      const out: Record<string, unknown>[] = [];
      for (let i = 0; i < ids.length; i += CHUNK) out.push(...(await this.rawMany(res, teamId, ids.slice(i, i + CHUNK), extra, links, lock)));
      return out;
    }
    const build = () => {
      let q = fixed(res, this.withLinks(res, this.db.selectFrom(res.table).selectAll(), links).where('team_id', '=', teamId).where('id', 'in', ids as string[]));
      if (res.softDelete) q = q.where('purge_at', 'is', null);
      if (extra?.length) q = q.where((eb) => eb.and(extra.map((c) => this.condition(eb, c))));
      q = withRowLock(q, lock);
      return q;
    };
    if (extra?.length) return (await build().execute()) as Record<string, unknown>[];
    // Without extra conditions the SQL depends only on the resource and the number of ids: compiled once.
    const key = `many:${res.table}#${resourceKey(res)}:${links}:${ids.length}:${lock ?? ''}`;
    return (await this.run<Record<string, unknown>>(key, [teamId, ...ids, ...fixedValues(res)], build)).rows;
  }

  /** Live rows whose `column` is one of `values`. */
  async findBy(res: Resource, teamId: string, column: string, values: readonly unknown[], opts: { orderBy?: string; limit?: number; includeTrashed?: boolean; lock?: RowLock } = {}): Promise<Rec[]> {
    if (values.length > CHUNK && !opts.limit && !opts.orderBy) {
      const out: Rec[] = [];
      for (let i = 0; i < values.length; i += CHUNK) out.push(...(await this.findBy(res, teamId, column, values.slice(i, i + CHUNK), opts)));
      return out;
    }
    if (values.length === 0) return [];
    let q = fixed(res, this.db.selectFrom(res.table).selectAll().where('team_id', '=', teamId).where(column, 'in', values as any[]));
    if (res.softDelete && !opts.includeTrashed) q = q.where('purge_at', 'is', null);
    if (opts.orderBy) q = q.orderBy(opts.orderBy).orderBy('id');
    if (opts.limit) q = q.limit(limitOf(this.dialect, opts.limit));
    q = withRowLock(q, this.rowLock(opts.lock));
    const rows = await q.execute();
    return rows.map((r) => this.decode(res, r));
  }

  /**
   * Live rows whose fields equal the given values, by field name and in
   * engine form (the repository encodes them): the way resource hooks read,
   * with no column names or dialect encoding of their own. `null` matches
   * SQL NULL; `orderBy` names fields (`-order` descending), then id.
   *
   * @example await ctx.repo.findWhere(statuses, teamId, { projectId, archived: false }, { orderBy: ['order'], limit: 1 })
   */
  async findWhere(res: Resource, teamId: string, where: Record<string, unknown>, opts: { orderBy?: string[]; limit?: number; exceptId?: string } = {}): Promise<Rec[]> {
    let q = fixed(res, this.db.selectFrom(res.table).selectAll().where('team_id', '=', teamId));
    for (const [field, v] of Object.entries(where)) {
      const column = res.columnOf[field];
      if (!column) throw new Error(`pmapi: ${res.name} has no stored field '${field}'`);
      const kind = res.fields[field]!.kind;
      q = v === null || v === undefined ? q.where(column, 'is', null) : q.where(column, '=', this.dialect.encode(kind, v) as any);
    }
    if (res.softDelete) q = q.where('purge_at', 'is', null);
    if (opts.exceptId) q = q.where('id', '!=', opts.exceptId);
    for (const o of opts.orderBy ?? []) {
      const desc = o.startsWith('-');
      q = q.orderBy(res.columnOf[desc ? o.slice(1) : o]!, desc ? 'desc' : 'asc');
    }
    if (opts.orderBy) q = q.orderBy('id');
    if (opts.limit) q = q.limit(limitOf(this.dialect, opts.limit));
    const rows = await q.execute();
    return rows.map((r) => this.decode(res, r));
  }

  /** Add `by` to an integer field of one row and return the new value (one atomic statement); undefined when no such row. */
  async increment(res: Resource, teamId: string, id: string, field: string, by = 1): Promise<number | undefined> {
    const column = res.columnOf[field]!;
    this.writes++;
    const r = await this.run<Record<string, unknown>>(`increment:${res.table}:${column}`, [by, id, teamId], () =>
      this.db.updateTable(res.table).set((eb) => ({ [column]: eb(column, '+', by) }))
        .where('id', '=', id).where('team_id', '=', teamId).returning(column));
    const row = r.rows[0];
    return row ? Number(row[column]) : undefined;
  }

  /** A page of rows for a list plan: keyset after the boundary, one extra row to tell hasMore. */
  async list(plan: ListPlan, teamId: string, take: number, opts: { links?: boolean } = {}): Promise<Rec[]> {
    const links = !!opts.links && hasLinks(plan.resource);
    return (await this.rowsPage(plan, teamId, take, links)).map((r) => this.decodeLinked(plan.resource, r, links));
  }

  /** A page as the driver gives its rows (`select *`, with the relation ids when `links`). */
  private async rowsPage(plan: ListPlan, teamId: string, take: number, links: boolean): Promise<Record<string, unknown>[]> {
    const res = plan.resource;
    return (await this.runPage<Record<string, unknown>>(plan, teamId, take, links ? '*+links' : '*', (q) => this.withLinks(res, q.selectAll(), links))).rows;
  }

  /**
   * The same page as {@link list}, each row as its response JSON built by the
   * database (`DialectSupport.jsonObject`) beside its id and decoded sort
   * value (for the next cursor). Undefined where the store cannot build it.
   */
  async listJson(plan: ListPlan, teamId: string, take: number, fields: readonly JsonColumn[], extras: readonly JsonExtra[] = []): Promise<JsonRow[] | undefined> {
    const res = plan.resource;
    const json = this.jsonOf(res, fields);
    if (!json) return undefined;
    const { column, kind } = plan.sort;
    const decodeSort = (v: unknown) => (v === null || v === undefined ? null : this.dialect.decode(kind, v));
    if (json.print) {
      // Rows as the rows path reads them (the same statement), printed here.
      const rows = await this.rowsPage(plan, teamId, take, hasLinks(res));
      const together = !!this.dialect.allLinkIds && extras.some((x) => 'links' in x);
      const pick = extras.map((x): ((r: Record<string, unknown>, links?: Record<string, string[]>) => unknown) => {
        if (!('links' in x)) return (r) => r[x.column];
        const alias = linkAlias(res, x.links);
        // Split here already: the ids themselves (the page printer takes an array or its JSON text).
        return together ? (_r, links) => links![x.links] : (r) => r[alias];
      });
      const write = json.write!;
      return rows.map((r) => {
        const links = together ? linksByKind(res, r, true) : undefined;
        const row: JsonRow = { id: r.id as string, sort: decodeSort(r[column]), write: (out) => write(out, r, links) };
        if (extras.length > 0) row.extra = pick.map((p) => p(r, links));
        return row;
      });
    }
    const table = res.table;
    const extraKey = extras.map((x) => ('links' in x ? `l:${x.links}` : `c:${x.column}`)).join(',');
    const { rows } = await this.runPage<Record<string, unknown>>(plan, teamId, take, `json:${json.key}|${extraKey}`, (q) =>
      q.select(['id', sql.ref(column).as('__sort'), json.expr!.as('__json'),
        ...extras.map((x, i) => ('links' in x ? this.dialect.linkIds(x.links, `${table}.id`) : sql.ref(x.column)).as(`__x${i}`))]));
    const out: JsonRow[] = new Array(rows.length);
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i]!;
      out[i] = { id: r.id as string, sort: decodeSort(r.__sort), json: r.__json as string };
      if (extras.length) out[i]!.extra = extras.map((_, k) => r[`__x${k}`]);
    }
    return out;
  }

  /**
   * Live rows with these ids as their response JSON built by the database,
   * each beside the fields `keep` names (decoded: what access checks read);
   * order not kept. Null where the store cannot build it. With a memo
   * (json-memo.ts), rows unchanged since an earlier request are answered from
   * it and only the others are read (one statement, or none).
   */
  async getManyJson(res: Resource, teamId: string, ids: readonly string[], fields: readonly JsonColumn[], keep: readonly string[]): Promise<JsonRowRead[] | null> {
    const json = this.jsonOf(res, fields);
    if (!json) return null;
    const memo = this.memo;
    if (!memo) return this.readManyJson(res, teamId, ids, json, keep);
    // Read before the statement: a write between the two makes an entry older than it is, never newer.
    const stamp = memo.stamp(res);
    const prefix = `${res.table}#${resourceKey(res)}:${keep.join(',')}:${json.key}\0${teamId}\0`;
    const out: JsonRowRead[] = [];
    const missing: string[] = [];
    for (const id of ids) {
      const hit = memo.get(prefix + id, stamp);
      if (hit) out.push(hit);
      else missing.push(id);
    }
    if (missing.length === 0) return out;
    for (const row of await this.readManyJson(res, teamId, missing, json, keep)) {
      memo.set(prefix + (row.rec.id as string), stamp, row);
      out.push(row);
    }
    return out;
  }

  private async readManyJson(res: Resource, teamId: string, ids: readonly string[], json: JsonMaker, keep: readonly string[]): Promise<JsonRowRead[]> {
    if (json.print) {
      const rows = await this.rawMany(res, teamId, ids);
      return rows.map((row) => ({ rec: this.decode(res, row), json: json.print!(row) }));
    }
    const cols = columnsOf(res, keep);
    const out: JsonRowRead[] = [];
    const valid = ids.filter((id) => res.isId(id));
    for (let i = 0; i < valid.length; i += CHUNK) {
      const chunk = valid.slice(i, i + CHUNK);
      // Compiled once per resource, shape and number of ids (the json_object expression is large to compile).
      const key = `manyjson:${res.table}#${resourceKey(res)}:${keep.join(',')}:${json.key}:${chunk.length}`;
      const r = await this.run<Record<string, unknown>>(key, [teamId, ...chunk, ...fixedValues(res)], () => {
        let q = fixed(res, this.jsonSelect(res, cols, json.expr!).where('team_id', '=', teamId).where('id', 'in', chunk));
        if (res.softDelete) q = q.where('purge_at', 'is', null);
        return q;
      });
      for (const row of r.rows) out.push({ rec: this.keepOf(cols, row), json: row.__json as string });
    }
    return out;
  }

  /** Select a row's database-built JSON as `__json`, beside the given columns under their field names. */
  private jsonSelect(res: Resource, cols: readonly ColumnInfo[], json: RawBuilder<string>) {
    return this.db.selectFrom(res.table).select([...cols.map((c) => sql.ref(c.column).as(c.key)), json.as('__json')]);
  }

  private keepOf(cols: readonly ColumnInfo[], row: Record<string, unknown>): Rec {
    const rec: Record<string, unknown> = {};
    for (const c of cols) {
      const v = row[c.key];
      rec[c.key] = v === null || v === undefined || c.kind === 'text' ? v ?? null : this.dialect.decode(c.kind, v);
    }
    return rec as Rec;
  }

  /**
   * One live row by id as its response JSON built by the database, beside
   * the fields `keep` names (decoded: what access checks read). `null` where
   * the store cannot build it (the caller reads the row instead); undefined
   * when there is no such row.
   */
  async getJson(res: Resource, teamId: string, id: string, fields: readonly JsonColumn[], keep: readonly string[]): Promise<{ rec: Rec; json: string } | undefined | null> {
    const json = this.jsonOf(res, fields);
    if (!json) return null;
    if (!res.isId(id)) return undefined;
    if (json.print) {
      const row = await this.rawGet(res, teamId, id);
      return row && { rec: this.decode(res, row), json: json.print(row) };
    }
    const cols = columnsOf(res, keep);
    const r = await this.run<Record<string, unknown>>(`getjson:${res.table}#${resourceKey(res)}:${keep.join(',')}:${json.key}`, [id, teamId, ...fixedValues(res)], () => {
      let q = fixed(res, this.jsonSelect(res, cols, json.expr!).where('id', '=', id).where('team_id', '=', teamId));
      if (res.softDelete) q = q.where('purge_at', 'is', null);
      return q;
    });
    const row = r.rows[0];
    if (!row) return undefined;
    return { rec: this.keepOf(cols, row), json: row.__json as string };
  }

  /**
   * How a row shape's JSON is made: the json_object expression (built once
   * per resource, dialect and keys), or a printer of the driver's row where
   * the store prints rows instead (`jsonFromRows`); undefined where neither.
   */
  private jsonOf(res: Resource, fields: readonly JsonColumn[]): JsonMaker | undefined {
    const d = this.dialect;
    if (!d.jsonObject && !d.jsonFromRows) return undefined;
    const key = fields.map((f) => f.name).join(',');
    // Keyed by how the dialect makes JSON too: two stores of one dialect may differ (one without jsonObject).
    const cacheKey = `${d.name}|${d.jsonObject ? 'sql' : 'rows'}|${key}`;
    let byShape = jsonMakers.get(res);
    if (!byShape) jsonMakers.set(res, (byShape = new Map()));
    let maker = byShape.get(cacheKey);
    if (maker === undefined) {
      const expr = d.jsonObject ? d.jsonObject(fields, res.table) : undefined;
      if (expr) maker = { key, expr };
      else if (d.jsonObject) maker = null;
      else maker = { key, ...compileRowJson(res, fields, d) };
      if (byShape.size < 200) byShape.set(cacheKey, maker);
    }
    return maker ?? undefined;
  }

  /**
   * Run a page query: the SQL text is compiled by kysely once per shape of
   * the plan (resource, selection, conditions' operators and list lengths,
   * sort, boundary) and re-run with this plan's values, bound in the order
   * {@link pageParams} predicts (the statement cache checks the prediction).
   */
  private runPage<R>(plan: ListPlan, teamId: string, take: number, selection: string, select: (q: SelectQueryBuilder<any, any, {}>) => SelectQueryBuilder<any, any, any>) {
    // A LIMIT written into the statement (dialect.ts limitOf) is part of its shape.
    const shape = `page:${plan.resource.table}#${resourceKey(plan.resource)}:${selection}:${pageShape(plan)}${limitInlined(this.dialect, take) ? `:limit ${take}` : ''}`;
    return this.run<R>(shape, this.pageParams(plan, teamId, take), () => select(this.pageQuery(plan, teamId, take)));
  }

  /** The values a page query binds, in kysely's order: where (team, fixed, conditions), keyset boundary, limit (unless written in: dialect.ts limitOf), offset. */
  private pageParams(plan: ListPlan, teamId: string, take: number): unknown[] {
    const d = this.dialect;
    const out: unknown[] = [teamId, ...fixedValues(plan.resource)];
    const push = (c: Condition): void => {
      if ('any' in c) {
        for (const x of c.any) push(x);
        return;
      }
      const enc = (v: unknown) => (v === null ? null : d.encode(c.kind, v));
      if (c.linkKind) out.push(c.linkKind, ...(c.op === 'in' ? (c.value as string[]) : [c.value]));
      else if (c.op === 'in') out.push(...(c.value as unknown[]).map(enc));
      else if (c.op === 'contains' || c.op === 'startsWith') out.push(likePattern(c.op, c.value));
      else if (c.op === 'null' || c.op === 'notNull' || (c.op === 'eq' && c.value === null)) return;
      else out.push(enc(c.value));
    };
    for (const c of plan.conditions) push(c);
    const b = plan.after;
    if (b) {
      if (b.value === null || b.value === undefined) out.push(b.id);
      else out.push(d.encode(plan.sort.kind, b.value), b.id);
    }
    if (!limitInlined(d, take)) out.push(take);
    if (plan.offset) out.push(plan.offset);
    return out;
  }

  private pageQuery(plan: ListPlan, teamId: string, take: number) {
    const { resource: res, sort } = plan;
    const dir = sort.desc ? 'desc' : 'asc';
    let q = this.db.selectFrom(res.table).where((eb) => this.where(eb, plan, teamId));
    if (plan.after) {
      const b = plan.after;
      q = q.where((eb) => this.keyset(eb, plan, b.value, b.id));
    }
    // Nulls sort as the largest value on both databases: last ascending, first descending.
    if (sort.nullable) q = q.orderBy(sql`(${sql.ref(sort.column)} is null)`, dir);
    q = q.orderBy(sort.column, dir).orderBy('id', dir).limit(limitOf(this.dialect, take));
    // Skipped rows are passed over by the database, before any JSON or relation is built for them.
    return plan.offset ? q.offset(plan.offset) : q;
  }

  async count(plan: ListPlan, teamId: string): Promise<number> {
    const row = await this.db
      .selectFrom(plan.resource.table)
      .select((eb) => eb.fn.countAll().as('n'))
      .where((eb) => this.where(eb, plan, teamId))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  private where(eb: ExpressionBuilder<any, any>, plan: ListPlan, teamId: string): Expression<SqlBool> {
    const parts: Expression<SqlBool>[] = [eb('team_id', '=', teamId)];
    for (const [column, v] of Object.entries(plan.resource.fixed ?? {})) parts.push(eb(column, '=', v));
    if (plan.resource.softDelete && !plan.includeTrashed) parts.push(eb('purge_at', 'is', null));
    for (const c of plan.conditions) parts.push(this.condition(eb, c));
    return eb.and(parts);
  }

  private keyset(eb: ExpressionBuilder<any, any>, plan: ListPlan, value: unknown, id: string): Expression<SqlBool> {
    const { column, desc, nullable, kind } = plan.sort;
    const cmp = desc ? '<' : '>';
    const col = eb.ref(column);
    if (value === null || value === undefined) {
      // Boundary is in the null block.
      const inNullBlock = eb.and([eb(col, 'is', null), eb('id', cmp, id)]);
      return desc ? eb.or([inNullBlock, eb(col, 'is not', null)]) : inNullBlock;
    }
    const v = this.dialect.encode(kind, value);
    const after = eb(eb.refTuple(column, 'id'), cmp, eb.tuple(v, id));
    if (!nullable) return after;
    return desc ? eb.and([eb(col, 'is not', null), after]) : eb.or([after, eb(col, 'is', null)]);
  }

  condition(eb: ExpressionBuilder<any, any>, c: Condition): Expression<SqlBool> {
    const d = this.dialect;
    if ('any' in c) return eb.or(c.any.map((x) => this.condition(eb, x)));
    if (c.linkKind) {
      const ids = c.op === 'in' ? (c.value as string[]) : [c.value as string];
      return eb.exists(
        eb.selectFrom('links as l').select(sql.lit(1).as('one'))
          .where('l.kind', '=', c.linkKind).whereRef('l.parent_id', '=', c.column as any)
          .where('l.related_id', 'in', ids),
      );
    }
    const col = eb.ref(c.column);
    const enc = (v: unknown) => (v === null ? null : d.encode(c.kind, v));
    switch (c.op) {
      case 'eq':
        return c.value === null ? eb(col, 'is', null) : eb(col, '=', enc(c.value));
      case 'ne':
        return eb(col, '<>', enc(c.value));
      case 'in':
        return eb(col, 'in', (c.value as unknown[]).map(enc));
      case 'gt':
        return eb(col, '>', enc(c.value));
      case 'gte':
        return eb(col, '>=', enc(c.value));
      case 'lt':
        return eb(col, '<', enc(c.value));
      case 'lte':
        return eb(col, '<=', enc(c.value));
      case 'null':
        return eb(col, c.value ? 'is' : 'is not', null);
      case 'notNull':
        return eb(col, c.value ? 'is not' : 'is', null);
      case 'contains':
      case 'startsWith': {
        return sql<SqlBool>`${d.fold(col)} like ${likePattern(c.op, c.value)} escape '\\'`;
      }
    }
  }

  /** Update one row; with `guardUpdatedAt` only if it still carries that stamp. Returns whether a row changed. */
  async update(res: Resource, teamId: string, id: string, values: Record<string, unknown>, guardUpdatedAt?: number): Promise<boolean> {
    const { key, params, build } = this.guardedUpdate(res, teamId, id, values, guardUpdatedAt);
    const r = await this.run(`update:${key}`, params, build);
    return Number(r.numAffectedRows ?? 0) > 0;
  }

  /**
   * {@link update}, answering the row as stored afterwards, with its
   * relations' ids (as a `links` read carries them); undefined when no row
   * changed. Saves reading the row back.
   */
  async updateReturning(res: Resource, teamId: string, id: string, values: Record<string, unknown>, guardUpdatedAt?: number): Promise<Rec | undefined> {
    const { key, params, build } = this.guardedUpdate(res, teamId, id, values, guardUpdatedAt);
    const links = hasLinks(res);
    const r = await this.run<Record<string, unknown>>(`update-returning:${key}#${resourceKey(res)}`, params, () =>
      (links ? build().returningAll().returning(this.linkColumns(res)) : build().returningAll()));
    const row = r.rows[0];
    return row ? this.decodeLinked(res, row, links) : undefined;
  }

  /**
   * Whether this repository can hold writes to leave with the transaction's
   * next statement (a transaction on a store that pipelines, Postgres, and
   * not gathering a {@link together} call): {@link updateBehind} can then
   * spare an update its round trip, given the row read with its links.
   */
  get holdsWrites(): boolean {
    return !!this.dialect.capabilities.pipeline && this.db.isTransaction && !this.gathering;
  }

  /**
   * Update a row this transaction has locked and not written since it read
   * it (`current`, read with its links): the row as stored is then known
   * without reading it back, `current` with `values` over it, and the UPDATE
   * is held to leave with the transaction's next statement (its commit at
   * the latest) instead of on its own round trip. Should the row not match
   * after all (written behind the repository's back), the statement fails
   * and so does the transaction ({@link isLostUpdate}: answered as a stale
   * write). Undefined where the stored row could differ from that (a JSON
   * value: jsonb reorders keys; an instant finer than a millisecond) or the
   * update cannot be held ({@link holdsWrites}): use {@link updateReturning}.
   */
  async updateBehind(res: Resource, teamId: string, id: string, values: Record<string, unknown>, current: Rec): Promise<Rec | undefined> {
    if (!this.holdsWrites || (hasLinks(res) && !(LINKS in current))) return undefined;
    const stored: Rec = { ...current };
    for (const c of res.columns) {
      if (!(c.key in values)) continue;
      const v = values[c.key];
      if (v !== null && v !== undefined && (c.kind === 'json' || (c.kind === 'timestamp' && !Number.isSafeInteger(v)))) return undefined;
      (stored as Record<string, unknown>)[c.key] = v ?? null;
    }
    const { key, params, build } = this.guardedUpdate(res, teamId, id, values, current.updatedAt as number | undefined);
    // One row or an error (division by zero): a commit must never go with an update that changed nothing.
    const query = compileCached(this.dialect.name, `update-behind:${key}`, params, () =>
      this.db.with('u', () => build().returning(sql.lit(1).as('one'))).selectNoFrom(sql<number>`1 / (select count(*) from u)`.as('one')));
    const held = await holdStatement(this.db, query);
    const answer = held ? held.answer : execute(this.db, query);
    answer.catch((err: unknown) => {
      if (typeof err === 'object' && err !== null && (err as { code?: unknown }).code === '22012') lostUpdates.add(err);
    });
    if (!held) await answer;
    return stored;
  }

  /** The UPDATE both of the above run (counted as a write), its cache key and the values it binds. */
  private guardedUpdate(res: Resource, teamId: string, id: string, values: Record<string, unknown>, guardUpdatedAt?: number) {
    const set = this.encodeValues(res, values);
    const guard = guardUpdatedAt === undefined ? undefined : this.dialect.encode('timestamp', guardUpdatedAt);
    const params = [...Object.values(set), id, teamId, ...(guard === undefined ? [] : [guard])];
    this.writes++;
    const build = () => {
      const q = this.db.updateTable(res.table).set(set).where('id', '=', id).where('team_id', '=', teamId);
      return guard === undefined ? q : q.where('updated_at', '=', guard);
    };
    return { key: `${res.table}:${Object.keys(set).join(',')}:${guard !== undefined}`, params, build };
  }

  async destroy(res: Resource, teamId: string, ids: readonly string[]): Promise<void> {
    for (let i = CHUNK; i < ids.length; i += CHUNK) await this.destroy(res, teamId, ids.slice(i, i + CHUNK));
    if (ids.length > CHUNK) ids = ids.slice(0, CHUNK);
    if (ids.length === 0) return;
    this.writes++;
    await this.db.deleteFrom(res.table).where('team_id', '=', teamId).where('id', 'in', ids as string[]).execute();
  }

  /** Largest value of a numeric column among rows matching `column = value` (live rows only). */
  async max(res: Resource, teamId: string, target: string, where: Record<string, unknown>): Promise<number | null> {
    const entries = Object.entries(where);
    const shape = `max:${res.table}:${target}:${entries.map(([k, v]) => `${k}${v === null ? '~' : '='}`).join(',')}`;
    const params = [teamId, ...entries.filter(([, v]) => v !== null).map(([, v]) => v)];
    const r = await this.run<{ m: unknown }>(shape, params, () => {
      let q = this.db.selectFrom(res.table).select((eb) => eb.fn.max(target).as('m')).where('team_id', '=', teamId);
      for (const [k, v] of entries) q = v === null ? q.where(k, 'is', null) : q.where(k, '=', v as any);
      if (res.softDelete) q = q.where('purge_at', 'is', null);
      return q;
    });
    const row = r.rows[0];
    return row?.m === null || row?.m === undefined ? null : Number(row.m);
  }

  // --- many-to-many links -------------------------------------------------

  /** related ids per parent id, in insertion order. */
  async linksOf(kind: string, parentIds: readonly string[]): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>();
    if (parentIds.length === 0) return out;
    const rows = await this.db.selectFrom('links').select(['parent_id', 'related_id'])
      .where('kind', '=', kind).where('parent_id', 'in', parentIds as string[])
      .orderBy('created_at').orderBy('related_id').execute();
    for (const r of rows) {
      const list = out.get(r.parent_id);
      if (list) list.push(r.related_id);
      else out.set(r.parent_id, [r.related_id]);
    }
    return out;
  }

  /** related ids per kind and parent id, for several relations at once (one query). */
  async linksFor(kinds: readonly string[], parentIds: readonly string[]): Promise<Map<string, Map<string, string[]>>> {
    const out = new Map<string, Map<string, string[]>>();
    for (const k of kinds) out.set(k, new Map());
    if (kinds.length === 0 || parentIds.length === 0) return out;
    const { rows } = await this.run<{ kind: string; parent_id: string; related_id: string }>(`links:${kinds.length}:${parentIds.length}`, [...kinds, ...parentIds], () =>
        this.db.selectFrom('links').select(['kind', 'parent_id', 'related_id'])
          .where('kind', 'in', kinds as string[]).where('parent_id', 'in', parentIds as string[])
          .orderBy('created_at').orderBy('related_id'));
    for (const r of rows) {
      const byParent = out.get(r.kind)!;
      const list = byParent.get(r.parent_id);
      if (list) list.push(r.related_id);
      else byParent.set(r.parent_id, [r.related_id]);
    }
    return out;
  }

  /** Of these parents, the ones linked to `relatedId` through links of `kind` (one query). */
  async linkedTo(kind: string, parentIds: readonly string[], relatedId: string): Promise<Set<string>> {
    if (parentIds.length === 0) return new Set();
    const rows = await this.db.selectFrom('links').select('parent_id')
      .where('kind', '=', kind).where('related_id', '=', relatedId).where('parent_id', 'in', parentIds as string[]).execute();
    return new Set(rows.map((r) => r.parent_id as string));
  }

  /** The parents linked to `relatedId` through links of `kind`, in id order (one query on the links_related index). */
  async parentsOf(kind: string, relatedId: string): Promise<string[]> {
    const rows = await this.db.selectFrom('links').select('parent_id')
      .where('kind', '=', kind).where('related_id', '=', relatedId).orderBy('parent_id').execute();
    return rows.map((r) => r.parent_id as string);
  }

  /** The links of these parents with when each was made (ms), in insertion order. */
  async linkRows(kind: string, parentIds: readonly string[]): Promise<Array<{ parentId: string; relatedId: string; createdAt: number }>> {
    if (parentIds.length === 0) return [];
    const rows = await this.db.selectFrom('links').select(['parent_id', 'related_id', 'created_at'])
      .where('kind', '=', kind).where('parent_id', 'in', parentIds as string[])
      .orderBy('created_at').orderBy('related_id').execute();
    return rows.map((r) => ({ parentId: r.parent_id, relatedId: r.related_id, createdAt: this.dialect.decode('timestamp', r.created_at) as number }));
  }

  /** Link ids not yet linked; returns those actually added. */
  async addLinks(kind: string, teamId: string, parentId: string, ids: readonly string[], now: number): Promise<string[]> {
    if (ids.length === 0) return [];
    const existing = new Set((await this.linksOf(kind, [parentId])).get(parentId) ?? []);
    const fresh = [...new Set(ids)].filter((i) => !existing.has(i));
    if (fresh.length === 0) return [];
    const ts = this.dialect.encode('timestamp', now);
    this.writes++;
    await this.db.insertInto('links')
      .values(fresh.map((related_id) => ({ kind, parent_id: parentId, related_id, team_id: teamId, created_at: ts })))
      .onConflict((oc) => oc.doNothing())
      .execute();
    return fresh;
  }

  /** Unlink ids; returns those that were linked. */
  async removeLinks(kind: string, parentId: string, ids: readonly string[]): Promise<string[]> {
    if (ids.length === 0) return [];
    const existing = new Set((await this.linksOf(kind, [parentId])).get(parentId) ?? []);
    const gone = [...new Set(ids)].filter((i) => existing.has(i));
    if (gone.length === 0) return [];
    this.writes++;
    await this.db.deleteFrom('links').where('kind', '=', kind).where('parent_id', '=', parentId).where('related_id', 'in', gone).execute();
    return gone;
  }

  /** Drop every link of these parents (any relation whose kind starts with `kindPrefix`), or pointing at `relatedIds`. */
  async dropLinks(opts: { kinds: string[]; parentIds?: readonly string[]; relatedIds?: readonly string[] }): Promise<void> {
    if (opts.kinds.length === 0) return;
    this.writes++;
    if (opts.parentIds?.length) {
      await this.db.deleteFrom('links').where('kind', 'in', opts.kinds).where('parent_id', 'in', opts.parentIds as string[]).execute();
    }
    if (opts.relatedIds?.length) {
      await this.db.deleteFrom('links').where('kind', 'in', opts.kinds).where('related_id', 'in', opts.relatedIds as string[]).execute();
    }
  }
}

/** The stored columns of these fields. */
function columnsOf(res: Resource, keys: readonly string[]): ColumnInfo[] {
  return keys.map((k) => res.columns.find((c) => c.key === k)!);
}

/** The values of a resource's fixed columns, in the order {@link fixed} binds them. */
function fixedValues(res: Resource): string[] {
  return res.fixed ? Object.values(res.fixed) : [];
}

/** Restrict a query to the rows of the resource's kind (its fixed column values). */
function fixed<Q extends { where(column: string, op: '=', value: string): Q }>(res: Resource, q: Q): Q {
  for (const [column, v] of Object.entries(res.fixed ?? {})) q = q.where(column, '=', v);
  return q;
}

/** The LIKE pattern of a `contains` or `startsWith` condition (case-folded, wildcards escaped). */
function likePattern(op: 'contains' | 'startsWith', value: unknown): string {
  const needle = escapeLike(String(value).toLowerCase());
  return op === 'contains' ? `%${needle}%` : `${needle}%`;
}

/** What of a list plan shapes its SQL text (not its values): see Repo.pageParams for the values. */
function pageShape(plan: ListPlan): string {
  let key = `${plan.includeTrashed ? 't' : 'l'}|${plan.sort.column}:${plan.sort.desc ? 'd' : 'a'}:${plan.sort.nullable ? 'n' : ''}|`;
  const add = (c: Condition): void => {
    if ('any' in c) {
      key += 'any(';
      for (const x of c.any) add(x);
      key += ');';
      return;
    }
    key += `${c.linkKind ?? ''}>${c.column}:${c.op}`;
    if (c.op === 'in') key += `#${(c.value as unknown[]).length}`;
    else if (c.op === 'eq' && c.value === null) key += '=null';
    else if (c.op === 'null' || c.op === 'notNull') key += `=${!!c.value}`;
    key += ';';
  };
  for (const c of plan.conditions) add(c);
  if (plan.after) key += plan.after.value === null || plan.after.value === undefined ? '|after-null' : '|after';
  if (plan.offset) key += '|offset';
  return key;
}

/** Escape `%`, `_` and `\` for a LIKE pattern with `ESCAPE '\'`. */
export function escapeLike(s: string): string {
  return s.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** The locking clause of a {@link RowLock}. */
function withRowLock<Q extends SelectQueryBuilder<any, any, any>>(q: Q, lock: RowLock | undefined): Q {
  if (lock === 'update') return q.forNoKeyUpdate() as Q;
  if (lock === 'delete') return q.forUpdate() as Q;
  if (lock === 'share') return q.forKeyShare() as Q;
  return q;
}
